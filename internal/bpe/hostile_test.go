package bpe

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// hostileTexts are texts with a piece far longer than MaxPieceBytes, each
// of a different kind: a run of one class, and runs the patterns take
// whole though no class runs long (o200k_base's punctuation takes any
// [\r\n/]* after it: newlines separated by slashes).
func hostileTexts(size int) []struct{ name, text string } {
	fill := func(unit string) string { return strings.Repeat(unit, size/len(unit)) }
	return []struct{ name, text string }{
		{"one letter", fill("a")},
		{"spaces", fill(" ")},
		{"dots", fill(".")},
		{"one CJK character", fill("中")},
		{"newlines and slashes", fill("\n/")},
		{"slash newline slash", fill("/\n/")},
		{"newline runs and slashes", fill("\n\n\n/")},
		{"dot then newlines and slashes", "." + fill("\n/")},
		{"crlf and slashes", fill("\r\n/")},
		{"spaces and newlines", fill(" \n")},
		{"marks", fill("\u0301")},
		{"letter and mark", fill("e\u0301")},
		{"upper and lower", fill("aA")},
		{"normal text around a long run", "Dear customer, " + strings.Repeat("z", size/2) + " regards."},
	}
}

// Hostile runs must be counted without the tokenizer's quadratic stall, and
// never under-counted. (Before, 1 MiB of newlines and slashes took over 10
// minutes: this test timed out.)
func TestHostileContent(t *testing.T) {
	for _, enc := range encodings {
		tk := load(t, enc)
		for _, tc := range hostileTexts(1 << 20) {
			n := tk.Count(tc.text)
			if n <= 0 || n > len(tc.text) {
				t.Errorf("%s %s: count %d outside (0, %d]", enc, tc.name, n, len(tc.text))
			}
			cut := tk.Cut(tc.text, 1000)
			if !strings.HasPrefix(tc.text, cut) || !utf8.ValidString(cut) || tk.Count(cut) > 1000 || cut == "" {
				t.Errorf("%s %s: cut of %d bytes counts %d", enc, tc.name, len(cut), tk.Count(cut))
			}
		}
	}
}

// Every piece the splitter makes goes to BPE only if it is at most
// MaxPieceBytes long, so counting does at most len(text)·MaxPieceBytes
// merge steps (the scan's bound; the heap's is lower); a longer piece
// counts one token per byte. Checked on the hostile texts and on every
// pair of atoms repeated, which makes the long pieces the patterns allow.
func TestEveryPieceBounded(t *testing.T) {
	check := func(tk *Tokenizer, name, text string) {
		t.Helper()
		sum, work, long := 0, 0, 0
		tk.units(text, func(u string, bytewise bool) bool {
			if bytewise {
				sum += len(u)
				long++
				return true
			}
			if len(u) > MaxPieceBytes {
				t.Fatalf("%s %s: a piece of %d bytes goes to BPE", tk.Encoding(), name, len(u))
			}
			sum += tk.voc.count(u)
			work += len(u) * len(u)
			return true
		})
		if got := tk.Count(text); got != sum {
			t.Fatalf("%s %s: Count %d, units %d", tk.Encoding(), name, got, sum)
		}
		if work > len(text)*MaxPieceBytes {
			t.Fatalf("%s %s: %d merge steps for %d bytes", tk.Encoding(), name, work, len(text))
		}
	}
	for _, enc := range encodings {
		tk := load(t, enc)
		for _, tc := range hostileTexts(64 << 10) {
			check(tk, tc.name, tc.text)
		}
		for _, a := range genAtoms {
			for _, b := range []string{"\n", "/", " ", ".", "a", "A", "'", "\u0301", "1", "\r\n", "中"} {
				check(tk, a+b, strings.Repeat(a+b, (MaxPieceBytes+64)/len(a+b)+1))
			}
		}
	}
}

// Where exact counting is still affordable, the bounded count is never
// below it, and equals it when no piece is long.
func TestBoundedCountNeverUnderCounts(t *testing.T) {
	for _, enc := range encodings {
		tk := load(t, enc)
		o := loadOracle(t, enc)
		for _, text := range []string{
			strings.Repeat("a", 3000),
			strings.Repeat(" ", 3000) + "x",
			"intro " + strings.Repeat("é", 1600) + " outro",
			strings.Repeat("!?", 1500),
			strings.Repeat("中文", 600),
			strings.Repeat("aA", 1600),                               // long run of letters, short pieces
			strings.Repeat("word ", 700) + strings.Repeat("9", 3000), // long but harmless
			strings.Repeat("\n/", 1500),
		} {
			exact := len(o.enc.EncodeOrdinary(text))
			got := tk.Count(text)
			if got < exact {
				t.Errorf("%s: %q…: bounded %d < exact %d", enc, text[:12], got, exact)
			}
			longest := 0
			for _, p := range splitterPieces(tk, text) {
				longest = max(longest, len(p))
			}
			if longest <= MaxPieceBytes && got != exact {
				t.Errorf("%s: %q…: no long piece (longest %d) yet %d != exact %d", enc, text[:12], longest, got, exact)
			}
		}
	}
}

func BenchmarkCountHostile(b *testing.B) {
	tk := load(b, O200kBase)
	normal := strings.Repeat("The applicant's net income is EUR 3,450 a month. ", 1<<20/50)
	cases := []struct{ name, text string }{{"normal", normal}}
	for _, tc := range hostileTexts(1 << 20) {
		switch tc.name {
		case "one letter", "spaces", "newlines and slashes", "slash newline slash":
			cases = append(cases, tc)
		}
	}
	for _, bc := range cases {
		b.Run(strings.ReplaceAll(bc.name, " ", "-")+"-1MiB", func(b *testing.B) {
			b.SetBytes(int64(len(bc.text)))
			for b.Loop() {
				tk.Count(bc.text)
			}
		})
	}
}

// TestCutLongPieceExact cuts a run longer than MaxPieceBytes to rooms
// smaller and larger than the run: the cut counts exactly what it holds
// (it used to hold as many bytes as the room and count one token per
// byte: 3,000 bytes of "a", 188 tokens, counted 3,000), and keeps what
// fits of its first MaxPieceBytes bytes.
func TestCutLongPieceExact(t *testing.T) {
	for _, enc := range encodings {
		tk, or := load(t, enc), loadOracle(t, enc)
		for _, c := range []struct {
			text string
			run  int // bytes of its long run
		}{{strings.Repeat("a", 40832), 40832}, {"Intro text. " + strings.Repeat("=", 9000), 9000}, {strings.Repeat("ab", 5000) + " end", 10000}} {
			text := c.text
			// Rooms that end the cut inside the run (a room of the
			// run's bytes takes it whole, as counted).
			for _, m := range []int{1, 50, 200, 3000, c.run - 1} {
				cut := tk.Cut(text, m)
				got := tk.Count(cut)
				if got > m || !strings.HasPrefix(text, cut) {
					t.Fatalf("%s: Cut(%.20q…, %d) counts %d", enc, text, m, got)
				}
				if hasLongPiece(tk, cut) {
					t.Errorf("%s: Cut(%.20q…, %d) = %d bytes, with a piece counted bytewise (%d tokens)", enc, text, m, len(cut), got)
				}
				if exact := len(or.tokenLens(cut)); got != exact {
					t.Errorf("%s: Cut(%.20q…, %d) counts %d, exactly %d", enc, text, m, got, exact)
				}
				if len(cut) < min(len(text), MaxPieceBytes/2) && got < m/2 {
					t.Errorf("%s: Cut(%.20q…, %d) keeps %d bytes, %d tokens: more fits", enc, text, m, len(cut), got)
				}
			}
		}
	}
}
