package contextasm

import (
	"fmt"

	"github.com/contextasm/contextasm/learned"
	"github.com/contextasm/contextasm/outcome"
)

// Approximation says how an approximate counter estimated an assembly's
// counts; see [outcome.Approximation].
type Approximation = outcome.Approximation

// Count returns the number of tokens of text in an encoding, counted as an
// assembly counts: a built-in encoding, an approximate one (with the
// margin learned so far, which the returned Approximation describes), or a
// tokenizer file (a path relative to the working directory). Counts are
// cached like an assembly's.
func (e *Engine) Count(encoding, text string) (int, *Approximation, error) {
	return e.tokens.Count(encoding, text)
}

// ReportUsage teaches the approximate counter of res's encoding the input
// tokens the provider counted for the call that sent res.Text (Anthropic's
// usage.input_tokens, Gemini's usageMetadata.promptTokenCount), or for a
// chat format res.Text and its messages: later
// assemblies with that encoding count o200k_base tokens times the largest
// ratio of reported to o200k_base tokens among the last
// learned.UsageWindow reports. Report the usage of calls whose prompt
// held res.Text; what else the prompt held only makes the ratio larger,
// the counts safer. The Engine keeps the reports in memory; Usage returns
// them to keep across restarts. For an Anthropic request that carried
// tools and whose encoding is exact, it teaches the tools count's margin
// instead (docs/tools.md#the-budget). It returns an error wrapping
// ErrInvalid for any other Result whose encoding is not approximate.
func (e *Engine) ReportUsage(res *Result, inputTokens int) error {
	if res == nil {
		return fmt.Errorf("%w: ReportUsage needs the Result of an assembly", ErrInvalid)
	}
	return e.reportUsage(res, inputTokens)
}

// ReportUsageText is ReportUsage for any text the provider counted: a host
// can seed an approximate encoding before its first assembly by asking the
// provider to count a sample of its memory (Anthropic's count_tokens,
// Gemini's countTokens) — until the first report, an approximate encoding
// counts one token per byte, which keeps far less than the budget allows.
func (e *Engine) ReportUsageText(encoding, text string, inputTokens int) error {
	if err := e.tokens.Report(encoding, text, inputTokens); err != nil {
		return err
	}
	e.last.forget() // the memoised output was counted with the old margin
	return nil
}

// Usage returns a copy of the usage approximate encodings learned from
// (Config.Usage and every report since), for the host to keep: give it
// back as Config.Usage to a later Engine.
func (e *Engine) Usage() learned.UsageLog { return e.tokens.Usage() }
