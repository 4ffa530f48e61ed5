package contextasm

import (
	"fmt"
	"strings"

	"github.com/contextasm/contextasm/chat"
	"github.com/contextasm/contextasm/contextasm/internal/toolsel"
	"github.com/contextasm/contextasm/template"
)

// sentText returns what a provider counted of res as one text: the text,
// or for a chat format the system prompt, every value of every message
// (role, content, each call's id, name and arguments, a result's call id)
// and of every tool definition (name, description, schema), a line each.
// The provider's count adds its per-message framing and its tool-use
// prompt, which only makes a ratio learned from it larger; leaving the
// tools out would make the ratio carry them all, as if the text were
// that much longer.
func sentText(res *Result) string {
	if res.Format == 0 {
		return res.Text
	}
	var b strings.Builder
	b.WriteString(res.Text)
	line := func(s string) {
		if s != "" {
			b.WriteByte('\n')
			b.WriteString(s)
		}
	}
	for _, m := range res.messages {
		line(string(m.Role))
		line(m.Content)
		for _, tc := range m.ToolCalls {
			line(tc.ID)
			line(tc.Name)
			line(tc.Arguments)
		}
		line(m.ToolCallID)
	}
	for _, t := range res.toolDefs {
		line(t.Name)
		line(t.Description)
		line(string(t.InputSchema))
	}
	return b.String()
}

// The Anthropic tools margin (docs/tools.md#the-budget): Anthropic
// publishes no rule for counting tool definitions, so a report of a
// request with tools teaches the Engine how far its tools count fell short
// of the provider's, and later Anthropic requests with that encoding count
// their tools part times the largest such ratio of the last
// learned.UsageWindow reports (never less than the count itself). An
// approximate encoding learns no tools margin: its reports include the
// definitions (sentText), so its ratio covers them, and the tools are
// counted with it.

// toolsUsagePrefix starts the key of a tools margin in the usage log; the
// model families of approximate encodings have no ':', so it names none
// of them.
const toolsUsagePrefix = "tools:anthropic:"

// toolsMargin returns what the anthropic-tools count with encoding is
// multiplied by (toolsel.Options.AnthropicScale): the largest ratio
// learned, 0 when none was.
func (e *Engine) toolsMargin(encoding string) float64 {
	if strings.HasPrefix(encoding, template.ApproxPrefix) {
		return 0
	}
	m, _ := e.tokens.Ratio(toolsUsagePrefix + encoding)
	return m
}

// reportUsage is ReportUsage: an approximate encoding learns its ratio
// from the text sent; an exact one, for an Anthropic request with tools,
// learns the tools margin.
func (e *Engine) reportUsage(res *Result, inputTokens int) error {
	sel := anthropicTools(res)
	if sel == nil || strings.HasPrefix(res.Encoding, template.ApproxPrefix) {
		return e.ReportUsageText(res.Encoding, sentText(res), inputTokens)
	}
	if inputTokens <= 0 {
		return fmt.Errorf("%w: ReportUsage: %d input tokens, want a positive count", ErrInvalid, inputTokens)
	}
	// What the provider counted beyond the rest of the request as the
	// Engine counted it is put down to the tools: the whole count then
	// holds for a request like this one, whichever part the Engine's count
	// fell short on.
	over := inputTokens - (res.TotalTokens - res.Tools.Tokens)
	if over <= 0 {
		return nil // the rest's count alone covers the report: nothing to learn
	}
	if err := e.tokens.Observe(toolsUsagePrefix+res.Encoding, sel.Counted, over); err != nil {
		return err
	}
	e.last.forget() // the memoised output was counted with the old margin
	return nil
}

// anthropicTools returns the tools selection of res when it is an
// Anthropic request that carried tools, else nil.
func anthropicTools(res *Result) *toolsel.Result {
	if res.Format != chat.FormatAnthropic || res.Tools == nil || len(res.Tools.Kept) == 0 || res.told == nil || res.told.asm == nil {
		return nil
	}
	if t := res.told.asm.out.Tools; t != nil && t.Selection.Counted > 0 {
		return t.Selection
	}
	return nil
}
