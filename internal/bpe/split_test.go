package bpe

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/dlclark/regexp2"
)

// foldedPattern is pat with its contractions spelt as the reference folds
// them: ſ matches s too.
func foldedPattern(pat string) string {
	return strings.ReplaceAll(pat, `(?i:'s|'t|'re|'ve|'m|'ll|'d)`, `(?:'[sSſ]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])`)
}

// splitOracles compiles the patterns with ſ folded, for regexp2 to split
// text as the reference does (on characters Go's tables know).
func splitOracles(t testing.TB) map[string]*regexp2.Regexp {
	t.Helper()
	m := map[string]*regexp2.Regexp{}
	for enc, pat := range map[string]string{O200kBase: o200kPattern, CL100kBase: cl100kPattern} {
		folded := foldedPattern(pat)
		if folded == pat {
			t.Fatalf("%s: no contractions to fold in the pattern", enc)
		}
		m[enc] = regexp2.MustCompile(folded, regexp2.None)
	}
	return m
}

func regexpPieces(re *regexp2.Regexp, text string) []string {
	var out []string
	runes := []rune(text)
	m, _ := re.FindRunesMatch(runes)
	for m != nil {
		out = append(out, string(runes[m.Index:m.Index+m.Length]))
		m, _ = re.FindNextMatch(m)
	}
	return out
}

func splitterPieces(tk *Tokenizer, text string) []string {
	var out []string
	for i := 0; i < len(text); {
		e := tk.sp.next(text, i)
		if e <= i || e > len(text) {
			panic("splitter made no progress")
		}
		out = append(out, text[i:e])
		i = e
	}
	return out
}

// TestSplitMatchesRegexp checks the splitter against the encodings'
// patterns run by a backtracking regexp engine, on random text from every
// class the patterns tell apart and on text with arbitrary characters
// (those Go's tables know).
func TestSplitMatchesRegexp(t *testing.T) {
	res := splitOracles(t)
	for _, enc := range encodings {
		tk := load(t, enc)
		r := rand.New(rand.NewPCG(16, 1))
		n := 0
		for i := range 30000 {
			text := genText(r, 24)
			if i%2 == 1 {
				text = genUnicode(r, 24)
			}
			if !known(text) || !utf8.ValidString(text) {
				continue
			}
			n++
			want := regexpPieces(res[enc], text)
			if got := splitterPieces(tk, text); !slices.Equal(got, want) {
				t.Fatalf("%s: pieces of %q:\n got %q\nwant %q", enc, text, got, want)
			}
		}
		if n < 15000 {
			t.Errorf("%s: only %d texts compared", enc, n)
		}
	}
}

func FuzzSplit(f *testing.F) {
	for _, s := range []string{"hello world", "\u0308'ſ'lldd ", "/\n/\n", "  \n  x", "A\u0301bC'S", "١٢٣٤", "\t(x", "ǅungla"} {
		f.Add(s)
	}
	res := splitOracles(f)
	o, c := load(f, O200kBase), load(f, CL100kBase)
	f.Fuzz(func(t *testing.T, text string) {
		if !utf8.ValidString(text) || !known(text) || len(text) > 1<<12 {
			return
		}
		for _, tk := range []*Tokenizer{o, c} {
			want := regexpPieces(res[tk.Encoding()], text)
			if got := splitterPieces(tk, text); !slices.Equal(got, want) {
				t.Fatalf("%s: pieces of %q:\n got %q\nwant %q", tk.Encoding(), text, got, want)
			}
		}
	})
}

// TestTokensMatchTiktokenGo checks whole tokenizations (every token's
// bytes) against tiktoken-go on text where it is right: no ſ, characters
// Go's tables know.
func TestTokensMatchTiktokenGo(t *testing.T) {
	for _, enc := range encodings {
		tk := load(t, enc)
		o := loadOracle(t, enc)
		r := rand.New(rand.NewPCG(16, 2))
		for i := range 6000 {
			text := genText(r, 30)
			if i%2 == 1 {
				text = genUnicode(r, 30)
			}
			if !known(text) || !utf8.ValidString(text) || strings.Contains(text, "ſ") {
				continue
			}
			want := o.tokenLens(text)
			var got []int
			for _, p := range splitterPieces(tk, text) {
				prev := 0
				for _, e := range tk.voc.appendEnds(nil, p) {
					got = append(got, int(e)-prev)
					prev = int(e)
				}
			}
			if !slices.Equal(got, want) {
				t.Fatalf("%s: token lengths of %q:\n got %v\nwant %v", enc, text, got, want)
			}
			if n := tk.Count(text); n != len(want) {
				t.Fatalf("%s: Count(%q) = %d, tiktoken-go %d", enc, text, n, len(want))
			}
		}
	}
}

// BenchmarkSplit finds the pieces of a text of every class the patterns
// tell apart, in both encodings: the splitter alone, without BPE.
func BenchmarkSplit(b *testing.B) {
	text := strings.Repeat("It's the 2026 plan: A memória é útil; 你好，世界。\n\tDON'T  stop —  x/y\r\n  ", 40)
	for _, enc := range encodings {
		b.Run(enc, func(b *testing.B) {
			sp := load(b, enc).sp
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				for i := 0; i < len(text); {
					i = sp.next(text, i)
				}
			}
		})
	}
}
