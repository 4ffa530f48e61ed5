package tokens

import (
	"math"
	"unicode/utf8"

	"github.com/contextasm/contextasm/outcome"
	"github.com/contextasm/contextasm/truncate"
)

// approximationOf says how a family's counts are estimated from the
// reports learned so far.
func approximationOf(family string, ratio float64, reports int) *outcome.Approximation {
	if reports == 0 {
		return &outcome.Approximation{Family: family, Basis: outcome.BasisBytes}
	}
	return &outcome.Approximation{Family: family, Basis: outcome.BasisO200k, Ratio: ratio, Reports: reports}
}

// Approx counts for a model without a local tokenizer, never under
// what the provider would count as far as the reports it learned from tell:
// one token per UTF-8 byte until usage is reported (the most any byte-level
// or byte-fallback BPE makes of a text), then the o200k_base count times the
// largest ratio of reported to o200k_base tokens seen recently, rounded up.
// It is not line-additive nor lower-bounded: the assembly counts its final
// text with it.
type Approx struct {
	o200k truncate.Counter // cached o200k_base counts
	// ratio is fixed-point, in 1/ratioScale; 0 means count bytes.
	ratio int64
}

const ratioScale = 1 << 16

func newApprox(a *outcome.Approximation, o200k truncate.Counter) *Approx {
	c := &Approx{o200k: o200k}
	if a.Basis == outcome.BasisO200k {
		c.ratio = int64(math.Ceil(a.Ratio * ratioScale)) // rounding up keeps it an over-estimate
	}
	return c
}

// Count returns the estimate of text's tokens.
func (c *Approx) Count(text string) int {
	if c.ratio == 0 {
		return len(text)
	}
	n := int64(c.o200k.Count(text))
	return int((n*c.ratio + ratioScale - 1) / ratioScale)
}

// Cut keeps what counts at most maxTokens: whole characters up to
// maxTokens bytes, or the o200k_base cut to maxTokens/ratio tokens (whose
// scaled count, rounded up, is at most maxTokens).
func (c *Approx) Cut(text string, maxTokens int) string {
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

// Ratio returns the fixed-point ratio c scales o200k_base counts by, in
// 1/65,536 (0: it counts bytes): what a memo of its counts is keyed by.
func (c *Approx) Ratio() int64 { return c.ratio }
