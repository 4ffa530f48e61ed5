package tokens

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/contextasm/contextasm/outcome"
)

var errInvalid = errors.New("invalid")

func newCounts(t *testing.T) *Counts {
	t.Helper()
	c, err := New(Config{CacheSize: 1024, Invalid: errInvalid})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// randomText mixes ASCII words, multibyte letters and white space.
func randomText(rng *rand.Rand) string {
	parts := []string{"fee", " ", "rate", "\n", "é", "日本", "🙂", "  ", "APR", "6.9%", "ü"}
	var b strings.Builder
	for range rng.IntN(60) {
		b.WriteString(parts[rng.IntN(len(parts))])
	}
	return b.String()
}

// An approximate counter's cut is a prefix of whole characters that counts
// at most what it was cut to, before any report (bytes) and after (the
// o200k_base count scaled, rounded up).
func TestApproxCutFits(t *testing.T) {
	c := newCounts(t)
	o200k, err := c.builtin("o200k_base")
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for _, a := range []*outcome.Approximation{
		approximationOf("claude", 0, 0),
		approximationOf("claude", 1.13, 2),
		approximationOf("claude", 0.7, 1),
	} {
		ap := newApprox(a, o200k)
		for range 300 {
			text, n := randomText(rng), rng.IntN(40)
			cut := ap.Cut(text, n)
			if !strings.HasPrefix(text, cut) || !utf8.ValidString(cut) {
				t.Fatalf("%+v: Cut(%q, %d) = %q: not a prefix of whole characters", a, text, n, cut)
			}
			if got := ap.Count(cut); got > n {
				t.Fatalf("%+v: Cut(%q, %d) = %q counts %d", a, text, n, cut, got)
			}
			if ap.Count(text) <= n && cut != text && n > 0 {
				t.Fatalf("%+v: Cut(%q, %d) = %q dropped text that fit", a, text, n, cut)
			}
		}
	}
}

// Report learns only for approximate encodings and positive counts; the
// errors wrap Config.Invalid and leave the usage as it was.
func TestReport(t *testing.T) {
	c := newCounts(t)
	if err := c.Report("o200k_base", "x", 3); !errors.Is(err, errInvalid) {
		t.Errorf("an exact encoding: %v, want Invalid", err)
	}
	if err := c.Report("approx:claude", "", 3); !errors.Is(err, errInvalid) {
		t.Errorf("an empty text: %v, want Invalid", err)
	}
	if len(c.Usage()) != 0 {
		t.Errorf("refused reports were learned: %v", c.Usage())
	}
	if err := c.Report("approx:claude", "the rate is fixed", 8); err != nil {
		t.Fatal(err)
	}
	_, a, err := c.Count("approx:claude", "x")
	if err != nil || a.Basis != outcome.BasisO200k || a.Reports != 1 || a.Ratio <= 1 {
		t.Errorf("after one report: %+v, %v", a, err)
	}
}

// Forget drops the whole count, the cuts and the cut plans of a text,
// and keeps everything of other texts.
func TestForget(t *testing.T) {
	c := newCounts(t)
	tok, err := c.builtin("o200k_base")
	if err != nil {
		t.Fatal(err)
	}
	gone, kept := strings.Repeat("the first instalment arrives ", 20), strings.Repeat("fees and the rate ", 20)
	for _, s := range []string{gone, kept} {
		tok.Count(s)
		tok.Cut(s, 7)
	}
	cuts := func(s string) (whole, cut bool) {
		k := tok.key(s)
		_, whole = c.counts.Peek(k)
		k.cut = 8
		_, cut = c.counts.Peek(k)
		return whole, cut
	}
	if w, ct := cuts(gone); !w || !ct || c.CutPlans() != 2 || c.Cached() != 4 {
		t.Fatalf("fixture: whole %v, cut %v, %d plans, %d cached", w, ct, c.CutPlans(), c.Cached())
	}
	c.Forget([]string{gone})
	if w, ct := cuts(gone); w || ct {
		t.Errorf("forgotten text: whole count kept %v, cut kept %v; want neither", w, ct)
	}
	if w, ct := cuts(kept); !w || !ct || c.CutPlans() != 1 || c.Cached() != 2 {
		t.Errorf("other text: whole %v, cut %v, %d plans, %d cached; want both, 1 plan, 2 cached", w, ct, c.CutPlans(), c.Cached())
	}
}
