package bpe

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

// referenceCounts returns what the reference may count for text in tk's
// encoding: the count itself when Go's tables know every character, else
// the counts under a few classifications of the unknown ones.
func referenceCounts(r *rand.Rand, tk *Tokenizer, text string) []int {
	if known(text) {
		return []int{tk.Count(text)}
	}
	var out []int
	for _, as := range []rune{'a', 'A', '中', 0x0301, '0', '.'} {
		over := map[rune]uint8{}
		for _, c := range text {
			if classes().of(c)&cUnknown != 0 {
				over[c] = classes().of(as)
			}
		}
		out = append(out, newHypothesis(tk, over).count(text))
	}
	if r != nil {
		out = append(out, randomHypothesis(r, tk, text).count(text))
	}
	return out
}

// TestLowerBound checks that LowerBound(t) never exceeds the count of any
// text around t (a prefix and a suffix at random), in both encodings, for
// any class the reference gives unknown characters; and that it is not
// vacuous on ordinary text.
func TestLowerBound(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	for _, enc := range encodings {
		tk := load(t, enc)
		for i := range 12000 {
			var text string
			switch i % 4 {
			case 0:
				text = genUnicode(r, 16)
			case 1:
				text = genCJK(r, 40)
			default:
				text = genText(r, 16)
			}
			pre, post := "", ""
			if i%2 == 0 {
				pre, post = genText(r, 4), genText(r, 4)
			}
			whole := pre + text + post
			if !utf8.ValidString(whole) {
				continue
			}
			lb := LowerBound(text)
			for _, n := range referenceCounts(r, tk, whole) {
				if lb > n {
					t.Fatalf("%s: LowerBound(%+q) = %d > %d, the count of %+q", enc, text, lb, n, whole)
				}
			}
		}
		for _, text := range []string{
			"The applicant's net monthly income is EUR 3,450 and existing debt payments are EUR 1,120. " +
				"O cliente prefere respostas em português europeu, com um resumo curto no fim.",
			"func (t *Tokenizer) Count(text string) int {\n\tif text == \"\" {\n\t\treturn 0\n\t}\n}",
			"客户要求在周五之前完成转账，并希望了解所有手续费。根据最新的政策，债务收入比超过百分之四十三的申请需要人工审核。",
		} {
			if enc == CL100kBase && !strings.Contains(text, " ") {
				continue // the joins are both vocabularies': cl100k_base splits Chinese finer than o200k_base
			}
			if lb, n := LowerBound(text), tk.Count(text); 10*lb < 7*n {
				t.Errorf("%s: LowerBound(%q) is %d of %d tokens: too weak to prune", enc, text, lb, n)
			}
		}
	}
}

// A run of slashes and newlines is one o200k piece (punctuation takes any
// [\r\n/]* after it): the bound must not count each slash (it said 102
// where the count is 53, so a block that fit was dropped uncounted).
func TestLowerBoundSlashNewlineRuns(t *testing.T) {
	for _, text := range []string{strings.Repeat("/\n/", 101), strings.Repeat("/\n", 500), ".\n/\n/", "x.\n\n//\n/"} {
		for _, enc := range encodings {
			tk := load(t, enc)
			if lb, n := LowerBound(text), tk.Count(text); lb > n {
				t.Errorf("%s: LowerBound(%q) = %d > count %d", enc, text[:min(len(text), 12)], lb, n)
			}
		}
	}
}

func FuzzLowerBound(f *testing.F) {
	for _, s := range []string{"it's 1234 (x) — 中文。", "a\u0301b", "''x", "", "  12", "/\n/\n", "x\U00010D40 9", "((x", "客户要求在周五之前完成转账", "한국어입니다"} {
		f.Add("", s, "")
		f.Add("a", s, "'s")
	}
	toks := []*Tokenizer{load(f, O200kBase), load(f, CL100kBase)}
	f.Fuzz(func(t *testing.T, pre, text, post string) {
		whole := pre + text + post
		if !utf8.ValidString(whole) || len(whole) > 4096 {
			return
		}
		lb := LowerBound(text)
		for _, tk := range toks {
			for _, n := range referenceCounts(nil, tk, whole) {
				if lb > n {
					t.Fatalf("%s: LowerBound(%+q) = %d > %d, the count of %+q", tk.Encoding(), text, lb, n, whole)
				}
			}
		}
	})
}

// Rendering may insert U+2060 WORD JOINER into content (to neutralise a
// delimiter it holds), and the bound of the content must hold for what is
// counted. Every boundary of a rule stays one with a joiner inserted (the
// joiner is punctuation: the rule applies on one side of it), and a join
// boundary, between two characters that are not ASCII, stays one because
// no token joins such a character to the joiner on its left. Checked for
// every character, and on random content with joiners inserted anywhere.
func TestJoinerAlwaysSplits(t *testing.T) {
	tab := joins()
	for c := rune(utf8.RuneSelf); c <= utf8.MaxRune; c++ {
		if utf8.ValidRune(c) && tab.joinable(c, tab.node(c), joiner, tab.node(joiner)) {
			t.Fatalf("a token joins %q to U+2060: a join boundary before a joiner would not hold", c)
		}
	}
	r := rand.New(rand.NewPCG(20, 60))
	for _, enc := range encodings {
		tk := load(t, enc)
		for i := range 4000 {
			text := genText(r, 16)
			if i%2 == 0 {
				text = genCJK(r, 30)
			}
			var b strings.Builder
			b.WriteString(genText(r, 3))
			for _, c := range text {
				if r.IntN(4) == 0 {
					b.WriteString("\u2060")
				}
				b.WriteRune(c)
			}
			b.WriteString(genText(r, 3))
			if lb, n := LowerBound(text), tk.Count(b.String()); lb > n {
				t.Fatalf("%s: LowerBound(%+q) = %d > %d, the count of %+q", enc, text, lb, n, b.String())
			}
		}
	}
}

// window is LowerBound's rules spelt out on the last three characters
// read (x, then a, then b), the specification its category tables are
// checked against (TestBoundaryTable).
type window struct {
	xc, ac, bc uint8
	xr, ar, br rune
	n          int
}

func (w *window) push(c uint8, r rune) {
	w.xc, w.ac, w.bc = w.ac, w.bc, c
	w.xr, w.ar, w.br = w.ar, w.br, r
	w.n++
}

// boundary reports whether every token ends between a and b (see the
// function boundary), or between a and b because punctuation precedes: a
// letter after two punctuation characters (neither white space, letter,
// digit nor mark, and the first not '/') does not start a piece with them,
// since the first is in a punctuation piece that takes the second (the
// first cannot be in a [\r\n/]* tail or, before punctuation, open a word).
func (w *window) boundary() bool {
	if boundary(w.ac, w.bc, w.br) {
		return true
	}
	return w.n >= 3 && w.bc&cLetter != 0 && w.bc&cUnknown == 0 &&
		isPurePunct(w.xc) && w.xr != '/' && isPurePunct(w.ac)
}

// isPurePunct reports a known character that is neither white space,
// letter, digit nor mark.
func isPurePunct(c uint8) bool { return c&(cSpace|cLetter|cNumber|cMark|cUnknown) == 0 }

// TestBoundaryTable checks LowerBound's category tables against the rules
// (window.boundary) on every triple of representative characters.
func TestBoundaryTable(t *testing.T) {
	cls := classes()
	cat := func(r rune) uint8 {
		if r < utf8.RuneSelf {
			return cls.bounds.ascii[r]
		}
		return categoryOf(cls.of(r))
	}
	for _, x := range reps {
		for _, a := range reps {
			for _, b := range reps {
				var w window
				w.push(cls.of(x), x)
				w.push(cls.of(a), a)
				w.push(cls.of(b), b)
				px, pa, pb := cat(x), cat(a), cat(b)
				got := cls.bounds.cut[px<<4|pa][pb]
				if want := w.boundary(); got != want {
					t.Fatalf("%q %q %q: the tables say %v, the rules %v", x, a, b, got, want)
				}
			}
		}
	}
}
