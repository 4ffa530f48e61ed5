package bpe

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/contextasm/contextasm/truncate"
)

// additivePieces are chosen to stress the pre-tokenizer at line starts and
// ends: white space of several kinds, slashes, punctuation runs, numbers,
// contractions, CJK, emoji, the word joiner neutralisation inserts.
var additivePieces = []string{
	"hello", " world", "。", "中文字符", "/path", " ", "\t", "\n", "\r\n", "\r", "}", "{",
	"<rule id=\"x\">", "</rule>", "123", "4567", "'s", "'LL", "é", "ção", "!!", "...", "  ",
	"//", "a/b", "\u2060", "\u3000", "\u00a0", "x", "Ä", "ß", "😀", "\\", "\"", ":", "-", "—",
	"【硬性规则】", "【/硬性规则】", "\u0085", "\v", "\f", "<|endoftext|>",
}

func randomLines(r *rand.Rand) []string {
	lines := make([]string, 1+r.IntN(4))
	for i := range lines {
		var b strings.Builder
		for range 1 + r.IntN(8) {
			b.WriteString(additivePieces[r.IntN(len(additivePieces))])
		}
		lines[i] = b.String()
	}
	return lines
}

// TestLineAdditive checks the promise behind LineAdditive: lines that start
// cleanly count, with their newlines, exactly as the whole text does. As a
// control, lines that do not start cleanly must break the sum at least
// sometimes: otherwise the generator would not be testing anything.
func TestLineAdditive(t *testing.T) {
	for _, enc := range []string{O200kBase, CL100kBase} {
		tok, err := Load(enc)
		if err != nil {
			t.Fatal(err)
		}
		if !tok.LineAdditive() {
			t.Fatal("LineAdditive() = false")
		}
		r := rand.New(rand.NewPCG(7, 11))
		clean, unclean, uncleanDiffer := 0, 0, 0
		for range 12000 {
			lines := randomLines(r)
			isClean := true
			for _, l := range lines[1:] {
				isClean = isClean && truncate.StartsLineCleanly(l)
			}
			sum := 0
			for _, l := range lines {
				sum += tok.Count(l + "\n")
			}
			whole := tok.Count(strings.Join(lines, "\n") + "\n")
			switch {
			case isClean:
				clean++
				if whole != sum {
					t.Fatalf("%s: %q counts %d whole but %d by lines", enc, lines, whole, sum)
				}
			default:
				unclean++
				if whole != sum {
					uncleanDiffer++
				}
			}
		}
		t.Logf("%s: %d clean cases all additive; %d of %d unclean cases not additive", enc, clean, uncleanDiffer, unclean)
		if clean < 3000 || uncleanDiffer == 0 {
			t.Errorf("%s: generator too weak: %d clean, %d unclean that differ", enc, clean, uncleanDiffer)
		}
	}
}

func FuzzLineAdditive(f *testing.F) {
	f.Add("</rule>", "<rule id=\"x\">")
	f.Add("a  ", "b")
	f.Add("x.", "/y")
	f.Add("中文。", "【硬性规则】")
	tok, err := Load(O200kBase)
	if err != nil {
		f.Fatal(err)
	}
	cl, err := Load(CL100kBase)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		if !utf8.ValidString(a) || !utf8.ValidString(b) || !truncate.StartsLineCleanly(b) {
			return
		}
		for _, tk := range []*Tokenizer{tok, cl} {
			whole := tk.Count(a + "\n" + b + "\n")
			if sum := tk.Count(a+"\n") + tk.Count(b+"\n"); whole != sum {
				t.Fatalf("%s: %q + %q: whole %d, lines %d", tk.Encoding(), a, b, whole, sum)
			}
		}
	})
}
