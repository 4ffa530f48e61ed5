package bpe

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// reps are characters of every class the splitter tells apart, and of the
// characters its patterns name; the last two are unknown to Go's tables.
var reps = []rune{
	'a', 'z', 's', 't', 'r', 'e', 'v', 'm', 'l', 'd', 'A', 'Z', 'S', 'T', 'R', 'E', 'L', 'D',
	'ſ', 'K', 'ǅ', 'ʰ', '中', 'か', 0x0301, 0x0903, 0x20dd,
	'0', '9', '²', '٣', 'Ⅻ',
	' ', '\t', '\v', '\f', 0x85, 0xa0, 0x3000, 0x2028, '\r', '\n',
	'\'', '/', '.', ',', '(', '"', '-', '€', '😀', 0x200d, 0, 0xe000,
	0x10D40, 0x0295,
}

// nonSpaceReps are what the reference may take an unknown character for:
// a character of any class but white space.
var nonSpaceReps = []rune{'a', 'A', 'ǅ', 'ʰ', '中', 0x0301, 0x0903, '0', '²', 'Ⅻ', '.', '€', 0x200d}

// patchedClasses returns a copy of the class table with the classes of
// some characters replaced.
func patchedClasses(over map[rune]uint8) *classTable {
	base := classes()
	t := &classTable{index: slices.Clone(base.index), blocks: slices.Clone(base.blocks)}
	for r, c := range over {
		b := r >> classBlockBits
		from := int(t.index[b]) << classBlockBits
		blk := slices.Clone(t.blocks[from : from+1<<classBlockBits])
		blk[r&(1<<classBlockBits-1)] = c
		t.index[b] = uint16(len(t.blocks) >> classBlockBits)
		t.blocks = append(t.blocks, blk...)
	}
	return t
}

// hypothesis is one way the reference may classify the unknown characters
// of a text: each gets the classes of a known character.
type hypothesis struct {
	sp  splitter
	voc *vocab
}

func newHypothesis(tk *Tokenizer, over map[rune]uint8) *hypothesis {
	return &hypothesis{sp: splitter{cls: patchedClasses(over), o200k: tk.sp.o200k}, voc: tk.voc}
}

// randomHypothesis classifies each unknown character of text as a random
// non-space character.
func randomHypothesis(r *rand.Rand, tk *Tokenizer, text string) *hypothesis {
	over := map[rune]uint8{}
	for _, c := range text {
		if classes().of(c)&cUnknown != 0 {
			over[c] = classes().of(nonSpaceReps[r.IntN(len(nonSpaceReps))])
		}
	}
	return newHypothesis(tk, over)
}

// pieces splits text as the hypothesis does.
func (h *hypothesis) pieces(text string) []string {
	var out []string
	for i := 0; i < len(text); {
		e := h.sp.next(text, i)
		out = append(out, text[i:e])
		i = e
	}
	return out
}

// count is the reference's count under the hypothesis: every piece exact.
func (h *hypothesis) count(text string) int {
	n := 0
	for _, p := range h.pieces(text) {
		n += h.voc.count(p)
	}
	return n
}

func endsAt(pieces []string, pos int) bool {
	at := 0
	for _, p := range pieces {
		at += len(p)
		if at == pos {
			return true
		}
	}
	return pos == 0
}

// substitutions returns text with each unknown character of window
// replaced, in turn, by every non-space representative (all of them when
// there are none), as the texts the reference may see.
func substitutions(window []rune) [][]rune {
	out := [][]rune{slices.Clone(window)}
	for i, c := range window {
		if classes().of(c)&cUnknown == 0 {
			continue
		}
		var next [][]rune
		for _, w := range out {
			for _, s := range nonSpaceReps {
				v := slices.Clone(w)
				v[i] = s
				next = append(next, v)
			}
		}
		out = next
	}
	return out
}

// TestBoundaryRules checks every claim of syncPoint, boundary and the
// window rule on every pair (and triple) of representative characters,
// whatever the reference takes their unknown characters for, in random
// surroundings, against the splitter in both encodings: a claimed boundary
// is a piece boundary, and at a sync point the text also splits as its two
// halves do apart.
func TestBoundaryRules(t *testing.T) {
	toks := []*Tokenizer{load(t, O200kBase), load(t, CL100kBase)}
	r := rand.New(rand.NewPCG(17, 3))
	cls := classes()
	claims := map[string]int{}
	check := func(window []rune, at int, sync bool, rule string) {
		claims[rule]++
		for range 6 {
			pre, post := genText(r, 5), genText(r, 5)
			for _, w := range substitutions(window) {
				text := pre + string(w) + post
				pos := len(pre) + len(string(w[:at]))
				for _, tk := range toks {
					ps := splitterPieces(tk, text)
					if !endsAt(ps, pos) {
						t.Fatalf("%s: %s claims a boundary in %q after %q (of %q), but the pieces are %q",
							tk.Encoding(), rule, string(w), string(w[:at]), string(window), ps)
					}
					if sync {
						apart := append(splitterPieces(tk, text[:pos]), splitterPieces(tk, text[pos:])...)
						if !slices.Equal(ps, apart) {
							t.Fatalf("%s: sync point in %q: whole %q, apart %q", tk.Encoding(), text, ps, apart)
						}
					}
				}
			}
		}
	}
	for _, a := range reps {
		for _, b := range reps {
			ca, cb := cls.of(a), cls.of(b)
			if syncPoint(ca, cb, b) {
				check([]rune{a, b}, 1, true, "syncPoint")
			} else if boundary(ca, cb, b) {
				check([]rune{a, b}, 1, false, "boundary")
			}
			for _, x := range reps {
				var w window
				w.push(cls.of(x), x)
				w.push(ca, a)
				w.push(cb, b)
				if w.boundary() && !boundary(ca, cb, b) {
					check([]rune{x, a, b}, 2, false, "window")
				}
			}
		}
	}
	t.Logf("claims checked: %v", claims)
	for _, rule := range []string{"syncPoint", "boundary", "window"} {
		if claims[rule] == 0 {
			t.Errorf("no claim of %s checked", rule)
		}
	}
}

// Count must never be below the reference's count, whatever class the
// reference gives the characters Go's tables do not know: checked against
// the splitter with those characters classified at random (each as a
// character of some class but white space).
func TestCountUnknownNeverUnder(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 4))
	for _, enc := range encodings {
		tk := load(t, enc)
		checked := 0
		for range 2500 {
			text := genUnicode(r, 30)
			if r.IntN(4) == 0 {
				text = strings.Repeat(text, 2+r.IntN(30))
			}
			if !utf8.ValidString(text) || known(text) {
				continue
			}
			checked++
			got := tk.Count(text)
			for range 3 {
				h := randomHypothesis(r, tk, text)
				if want := h.count(text); got < want {
					t.Fatalf("%s: Count(%+q) = %d, below %d for one classification of its unknown characters", enc, text, got, want)
				}
			}
		}
		if checked < 600 {
			t.Errorf("%s: only %d texts with unknown characters", enc, checked)
		}
	}
}

// The stretch counted bytewise is the word (or line) around an unknown
// character, not the whole text.
func TestCountUnknownStretches(t *testing.T) {
	tk := load(t, O200kBase)
	plain := "The applicant's net monthly income is EUR 3,450."
	for _, tt := range []struct {
		before, stretch, after string
	}{
		{plain, " x\U00010D40y", " " + plain},
		{plain + "\n", "x\U00010D40y\n", plain},
		{plain + "\n", "\U00010D40\n\n", plain},
		{"", "\U00010D40", ""},
		{"", "x\U00010D40y", " " + plain},
	} {
		text := tt.before + tt.stretch + tt.after
		if got, want := tk.Count(text), tk.Count(tt.before)+len(tt.stretch)+tk.Count(tt.after); got != want {
			t.Errorf("Count(%q) = %d, want %d: %q counted bytewise, the rest exactly", text, got, want, tt.stretch)
		}
	}
}
