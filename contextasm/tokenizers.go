package contextasm

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/contextasm/contextasm/internal/assemble"
	"github.com/contextasm/contextasm/internal/bpe"
	"github.com/contextasm/contextasm/internal/tokfile"
	"github.com/contextasm/contextasm/contextasm/internal/tokload"
	"github.com/contextasm/contextasm/learned"
	"github.com/contextasm/contextasm/outcome"
	"github.com/contextasm/contextasm/template"
)

// Approximation says how an approximate counter estimated an assembly's
// counts; see [outcome.Approximation].
type Approximation = outcome.Approximation

// counterFor returns the tokenizer a template counts with and the tag its
// counts are cached under: Config.Counter when set; the tokenizer file the
// template names; o200k_base for an approximate encoding (its counts are
// scaled on top, see approxCounter); else the built-in encoding.
func (e *Engine) counterFor(tpl *template.Template) (Counter, byte, error) {
	switch {
	case e.cfg.Counter != nil:
		return e.cfg.Counter, 0, nil
	case tpl.TokenizerFile() != "":
		return e.fileTokenizer(tpl.TokenizerFile(), tpl.Encoding())
	case tpl.Approximate():
		tok, err := e.tokenizer(bpe.O200kBase)
		return tok, tagOf(bpe.O200kBase, false), err
	}
	tok, err := e.tokenizer(tpl.Encoding())
	return tok, tagOf(tpl.Encoding(), false), err
}

// preload loads Config.Encoding: a built-in encoding, o200k_base for an
// approximate one, or a tokenizer file (a path relative to the working
// directory).
func (e *Engine) preload(enc string) error {
	switch {
	case strings.HasPrefix(enc, "sha256:"):
		return nil // a template's file, by identity: loaded on first use
	case strings.HasPrefix(enc, template.ApproxPrefix):
		_, err := e.tokenizer(bpe.O200kBase)
		return err
	case slices.Contains(template.Encodings(), enc):
		_, err := e.tokenizer(enc)
		return err
	}
	id, err := tokfile.Identity(enc)
	if err != nil {
		return fmt.Errorf("contextasm: Config.Encoding %q is no built-in encoding: %w", enc, err)
	}
	_, _, err = e.fileTokenizer(enc, id)
	return err
}

// Count returns the number of tokens of text in an encoding, counted as an
// assembly counts: a built-in encoding, an approximate one (with the
// margin learned so far, which the returned Approximation describes), or a
// tokenizer file (a path relative to the working directory). Counts are
// cached like an assembly's.
func (e *Engine) Count(encoding, text string) (int, *Approximation, error) {
	var (
		tok    Counter
		tag    byte
		err    error
		approx *Approximation
	)
	switch {
	case e.cfg.Counter != nil:
		tok = e.cfg.Counter
	case strings.HasPrefix(encoding, template.ApproxPrefix):
		approx = e.approximationFor(strings.TrimPrefix(encoding, template.ApproxPrefix))
		tok, err = e.tokenizer(bpe.O200kBase)
		tag = tagOf(bpe.O200kBase, false)
	case slices.Contains(template.Encodings(), encoding):
		tok, err = e.tokenizer(encoding)
		tag = tagOf(encoding, false)
	default:
		var id string
		if id, err = tokfile.Identity(encoding); err == nil {
			tok, tag, err = e.fileTokenizer(encoding, id)
		}
	}
	if err != nil {
		return 0, nil, err
	}
	var c Counter = &cachedCounter{tok: tok, cache: e.counts, plans: e.plans, tag: tag}
	if approx != nil {
		c = newApproxCounter(approx, c)
	}
	return c.Count(text), approx, nil
}

// fileTokenizer loads a template's tokenizer file (shared process-wide by
// identity) and gives it a cache tag of its own: 3 and up, one per identity
// this Engine has counted with.
func (e *Engine) fileTokenizer(path, id string) (Counter, byte, error) {
	e.tokMu.Lock()
	defer e.tokMu.Unlock()
	if t, ok := e.tokenizers[id]; ok {
		return t, e.fileTags[id], nil
	}
	if len(e.fileTags) >= 253 {
		return nil, 0, fmt.Errorf("%w: more than 253 tokenizer files in one Engine", ErrInvalid)
	}
	t, err := tokload.LoadAs(path, id)
	if err != nil {
		return nil, 0, fmt.Errorf("contextasm: %w", err)
	}
	if e.fileTags == nil {
		e.fileTags = make(map[string]byte)
	}
	e.fileTags[id] = byte(3 + len(e.fileTags))
	e.tokenizers[id] = t
	return t, e.fileTags[id], nil
}

// approximation returns how an approximate template's counts are estimated
// now, from the usage learned so far; nil for other templates.
func (e *Engine) approximation(tpl *template.Template) *Approximation {
	if !tpl.Approximate() || e.cfg.Counter != nil {
		return nil
	}
	return e.approximationFor(strings.TrimPrefix(tpl.Encoding(), template.ApproxPrefix))
}

func (e *Engine) approximationFor(family string) *Approximation {
	e.usageMu.Lock()
	ratio, n := e.usage.Ratio(family)
	e.usageMu.Unlock()
	return approximationOf(family, ratio, n)
}

func approximationOf(family string, ratio float64, reports int) *Approximation {
	if reports == 0 {
		return &Approximation{Family: family, Basis: outcome.BasisBytes}
	}
	return &Approximation{Family: family, Basis: outcome.BasisO200k, Ratio: ratio, Reports: reports}
}

// approxCounter counts for a model without a local tokenizer, never under
// what the provider would count as far as the reports it learned from tell:
// one token per UTF-8 byte until usage is reported (the most any byte-level
// or byte-fallback BPE makes of a text), then the o200k_base count times the
// largest ratio of reported to o200k_base tokens seen recently, rounded up.
// It is not line-additive nor lower-bounded: the assembly counts its final
// text with it.
type approxCounter struct {
	o200k Counter // cached o200k_base counts
	// ratio is fixed-point, in 1/ratioScale; 0 means count bytes.
	ratio int64
}

const ratioScale = 1 << 16

func newApproxCounter(a *Approximation, o200k Counter) *approxCounter {
	c := &approxCounter{o200k: o200k}
	if a.Basis == outcome.BasisO200k {
		c.ratio = int64(math.Ceil(a.Ratio * ratioScale)) // rounding up keeps it an over-estimate
	}
	return c
}

func (c *approxCounter) Count(text string) int {
	if c.ratio == 0 {
		return len(text)
	}
	n := int64(c.o200k.Count(text))
	return int((n*c.ratio + ratioScale - 1) / ratioScale)
}

// Cut keeps what counts at most maxTokens: whole characters up to
// maxTokens bytes, or the o200k_base cut to maxTokens/ratio tokens (whose
// scaled count, rounded up, is at most maxTokens).
func (c *approxCounter) Cut(text string, maxTokens int) string {
	if maxTokens <= 0 {
		return ""
	}
	if c.ratio == 0 {
		if len(text) <= maxTokens {
			return text
		}
		end := maxTokens
		for end > 0 && !utf8.RuneStart(text[end]) {
			end--
		}
		return text[:end]
	}
	return c.o200k.Cut(text, int(int64(maxTokens)*ratioScale/c.ratio))
}

// approxMemo keys the memo of rendered blocks' counts by the margin too, so
// that counts made under an older margin are not reused.
type approxMemo struct {
	m     assemble.Memo
	ratio int64
}

func (m approxMemo) key(k assemble.MemoKey) assemble.MemoKey {
	for i := range 8 {
		k.Section[i] ^= byte(m.ratio >> (8 * i))
	}
	k.Section[8] ^= 0xA5 // never the plain key, even for ratio 0
	return k
}

func (m approxMemo) Get(k assemble.MemoKey) (int, bool) { return m.m.Get(m.key(k)) }
func (m approxMemo) Add(k assemble.MemoKey, n int)      { m.m.Add(m.key(k), n) }

// ReportUsage teaches the approximate counter of res's encoding the input
// tokens the provider counted for the call that sent res.Text (Anthropic's
// usage.input_tokens, Gemini's usageMetadata.promptTokenCount), or for a
// chat format res.Text and its messages: later
// assemblies with that encoding count o200k_base tokens times the largest
// ratio of reported to o200k_base tokens among the last
// learned.UsageWindow reports. Report the usage of calls whose prompt
// held res.Text; what else the prompt held only makes the ratio larger,
// the counts safer. The Engine keeps the reports in memory; Usage returns
// them to keep across restarts. It returns an error wrapping ErrInvalid for a Result whose encoding is
// not approximate.
func (e *Engine) ReportUsage(res *Result, inputTokens int) error {
	if res == nil {
		return fmt.Errorf("%w: ReportUsage needs the Result of an assembly", ErrInvalid)
	}
	return e.ReportUsageText(res.Encoding, sentText(res), inputTokens)
}

// ReportUsageText is ReportUsage for any text the provider counted: a host
// can seed an approximate encoding before its first assembly by asking the
// provider to count a sample of its memory (Anthropic's count_tokens,
// Gemini's countTokens) — until the first report, an approximate encoding
// counts one token per byte, which keeps far less than the budget allows.
func (e *Engine) ReportUsageText(encoding, text string, inputTokens int) error {
	family, ok := strings.CutPrefix(encoding, template.ApproxPrefix)
	if !ok {
		return fmt.Errorf("%w: ReportUsage: encoding %q is exact, not %sNAME", ErrInvalid, encoding, template.ApproxPrefix)
	}
	tok, err := e.tokenizer(bpe.O200kBase)
	if err != nil {
		return err
	}
	counter := &cachedCounter{tok: tok, cache: e.counts, plans: e.plans, tag: tagOf(bpe.O200kBase, false)}
	e.usageMu.Lock()
	err = e.usage.Observe(family, counter.Count(text), inputTokens)
	e.usageMu.Unlock()
	if err != nil {
		return fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	e.last.forget() // the memoised output was counted with the old margin
	return nil
}

// Usage returns a copy of the usage approximate encodings learned from
// (Config.Usage and every report since), for the host to keep: give it
// back as Config.Usage to a later Engine.
func (e *Engine) Usage() learned.UsageLog {
	e.usageMu.Lock()
	defer e.usageMu.Unlock()
	return e.usage.Clone()
}
