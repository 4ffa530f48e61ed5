package bpe

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// checkJoin asserts JoinDelta's promise for text cut at cuts.
func checkJoin(t *testing.T, tk *Tokenizer, text string, cuts []int) {
	t.Helper()
	sum, from := 0, 0
	for _, c := range cuts {
		if c > from && c < len(text) {
			sum += tk.Count(text[from:c])
			from = c
		}
	}
	sum += tk.Count(text[from:])
	d, ok := tk.JoinDelta(text, cuts)
	if got, want := sum+d, tk.Count(text); !ok || got != want {
		t.Fatalf("%s: %+q cut at %v: parts %d + JoinDelta %d (%v) = %d, whole %d", tk.Encoding(), text, cuts, sum, d, ok, got, want)
	}
}

// randomCuts returns up to n ascending character boundaries of text.
func randomCuts(r *rand.Rand, text string, n int) []int {
	var bounds []int
	for i := range text {
		bounds = append(bounds, i)
	}
	bounds = append(bounds, len(text))
	var cuts []int
	for range r.IntN(n + 1) {
		cuts = append(cuts, bounds[r.IntN(len(bounds))])
	}
	slices.Sort(cuts)
	return cuts
}

// codeLines are lines that do not start cleanly: indented code, slashes,
// white space of every kind at the line start, and lines that do.
var codeLines = []string{
	"\tfmt.Println(x)", "\t\treturn nil", "    indented", "  - item", "// comment", "/path/to", " \u00a0nbsp",
	"\u3000全角", "func main() {", "}", "", " ", "\t", "x := 1", "SELECT * FROM t;", "客户要求在周五之前完成转账",
	"  \n", "/", "//", "\r", "\U00010D40 unknown", "'s", "ſ", strings.Repeat("\n/", 1200),
}

// TestJoinDelta checks that the parts' counts plus JoinDelta are the
// whole's count, for random text cut anywhere and for lines of code joined
// by newlines (the assembler's case); and, as a control, that the sum of
// the parts alone is often wrong, or the test would prove nothing.
func TestJoinDelta(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 21))
	for _, enc := range encodings {
		tk := load(t, enc)
		off := 0
		for i := range 6000 {
			var text string
			switch i % 4 {
			case 0:
				text = genUnicode(r, 30)
			case 1:
				text = genCJK(r, 40)
			case 2:
				text = genText(r, 30)
			default:
				var lines []string
				for range 1 + r.IntN(6) {
					lines = append(lines, codeLines[r.IntN(len(codeLines))])
				}
				text = strings.Join(lines, "\n") + "\n"
				var cuts []int
				at := 0
				for _, l := range lines {
					at += len(l) + 1
					cuts = append(cuts, at)
				}
				checkJoin(t, tk, text, cuts)
				continue
			}
			if !utf8.ValidString(text) {
				continue
			}
			cuts := randomCuts(r, text, 5)
			checkJoin(t, tk, text, cuts)
			sum, from := 0, 0
			for _, c := range cuts {
				sum += tk.Count(text[from:c])
				from = c
			}
			if sum+tk.Count(text[from:]) != tk.Count(text) {
				off++
			}
		}
		if off < 300 {
			t.Errorf("%s: only %d texts whose parts do not add up: the generator is too weak", enc, off)
		}
	}
}

func FuzzJoinDelta(f *testing.F) {
	f.Add("func main() {\n", "\tfmt.Println(1)\n", "}\n")
	f.Add("a  ", "b", "")
	f.Add("x.", "/y", "\n/")
	f.Add("中文", "字符", "。")
	f.Add("x\U00010D40", "9", " y")
	toks := []*Tokenizer{load(f, O200kBase), load(f, CL100kBase)}
	f.Fuzz(func(t *testing.T, a, b, c string) {
		text := a + b + c
		if !utf8.ValidString(a) || !utf8.ValidString(b) || !utf8.ValidString(c) || len(text) > 1<<12 {
			return
		}
		for _, tk := range toks {
			checkJoin(t, tk, text, []int{len(a), len(a) + len(b)})
		}
	})
}

// BenchmarkJoinDelta compares counting an 80 KB text whole (Count) with
// correcting the sum of its lines' counts (JoinDelta), the assembler's
// final count: code whose every line starts with a tab (every join needs
// counting), and prose with one indented block among its lines (one does).
func BenchmarkJoinDelta(b *testing.B) {
	tk := load(b, O200kBase)
	for _, tc := range []struct {
		name string
		line func(i int) string
	}{
		{"code", func(int) string {
			return "\tif err := run(ctx, args); err != nil {\n\t\treturn fmt.Errorf(\"run: %w\", err)\n\t}\n"
		}},
		{"prose-one-indented", func(i int) string {
			if i == 40 {
				return "\tfunc fee(amount float64) float64 { return math.Max(2.5, amount*0.004) }\n"
			}
			return "The applicant's net monthly income is EUR 3,450 and existing debt payments are EUR 1,120.\n"
		}},
	} {
		var sb strings.Builder
		var cuts []int
		for i := 0; sb.Len() < 80<<10; i++ {
			sb.WriteString(tc.line(i))
			cuts = append(cuts, sb.Len())
		}
		text := sb.String()
		b.Run(tc.name+"/Count", func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				tk.Count(text)
			}
		})
		b.Run(tc.name+"/JoinDelta", func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				tk.JoinDelta(text, cuts)
			}
		})
	}
}
