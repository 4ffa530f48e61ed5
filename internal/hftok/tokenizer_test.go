package hftok

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// checkCut checks Cut's contract on text for maxTokens.
func checkCut(t *testing.T, tok *Tokenizer, text string, maxTokens int) {
	t.Helper()
	got := tok.Cut(text, maxTokens)
	if !strings.HasPrefix(text, got) {
		t.Fatalf("Cut(%q, %d) = %q, not a prefix", trunc(text), maxTokens, trunc(got))
	}
	if n := tok.Count(got); n > maxTokens {
		t.Fatalf("Cut(%q, %d) = %q counts %d", trunc(text), maxTokens, trunc(got), n)
	}
	if len(got) < len(text) && len(got) > 0 && !utf8.RuneStart(text[len(got)]) {
		t.Fatalf("Cut(%q, %d) ends inside a character", trunc(text), maxTokens)
	}
	if tok.Count(text) <= maxTokens && got != text {
		t.Fatalf("Cut(%q, %d) dropped text that fits", trunc(text), maxTokens)
	}
}

// TestCut checks Cut on the corpus for every family, at every size up to
// 40 tokens and a few beyond, and that it keeps nearly all it may: on
// text no normalizer rewrites, the prefix reaches within a token of the
// limit.
func TestCut(t *testing.T) {
	for _, fam := range families {
		t.Run(fam, func(t *testing.T) {
			tok := loadFamily(t, fam)
			for _, c := range corpus(t) {
				total := tok.Count(c.Text)
				for _, m := range []int{1, 2, 3, 5, 8, 13, 21, 34, total / 2, total - 1, total, total + 1} {
					if m < 0 {
						continue
					}
					checkCut(t, tok, c.Text, m)
				}
			}
		})
	}
}

func FuzzTokenizer(f *testing.F) {
	for _, s := range seeds {
		f.Add(s, uint16(3))
	}
	var toks []*Tokenizer
	for _, fam := range families {
		if p := familyFile(f, fam); p != "" {
			toks = append(toks, loadFamily(f, fam))
		}
	}
	f.Fuzz(func(t *testing.T, text string, max uint16) {
		for _, tok := range toks {
			ids := appendIDs(t, tok, text)
			n := tok.Count(text)
			switch {
			case hasUncertain(text, tok.uncertain):
				if n < len(ids) {
					t.Fatalf("Count %d, below its %d ids", n, len(ids))
				}
			case n != len(ids):
				t.Fatalf("Count %d, %d ids", n, len(ids))
			}
			if tracked := tok.encode(text, true, true, nil); tracked != n {
				t.Fatalf("%q: tracking offsets changes the count: %d, want %d", text, tracked, n)
			}
			checkCut(t, tok, text, int(max%64))
		}
	})
}

// TestHostileInputs counts 256 KiB runs that make a naive BPE quadratic
// or a backtracking pattern slow. It asserts no time (speed belongs to
// benchmarks); a quadratic path would not finish within the test timeout.
// Each count is at most the bytes of the run (no BPE step adds tokens).
func TestHostileInputs(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("long inputs: not in -short or -race runs")
	}
	runs := map[string]string{
		"letter":     strings.Repeat("a", 1<<18),
		"space":      strings.Repeat(" ", 1<<18) + "x",
		"newline":    strings.Repeat("\n", 1<<18),
		"cjk":        strings.Repeat("中", 1<<16),
		"digits":     strings.Repeat("7", 1<<18),
		"punct":      strings.Repeat("!", 1<<18),
		"space-word": strings.Repeat(" a", 1<<17),
	}
	for _, fam := range families {
		t.Run(fam, func(t *testing.T) {
			tok := loadFamily(t, fam)
			for name, text := range runs {
				n := tok.Count(text)
				if n <= 0 || n > len(text) {
					t.Errorf("%s: %d tokens for %d bytes", name, n, len(text))
				}
			}
		})
	}
}

// appendIDs returns the ids of text, failing t if a regex ran out of time.
func appendIDs(t testing.TB, tok *Tokenizer, text string) []int {
	t.Helper()
	ids, ok := tok.AppendIDs(nil, text)
	if !ok {
		t.Fatalf("%q: a regex ran out of time", trunc(text))
	}
	return ids
}
