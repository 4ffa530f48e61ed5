package bpe

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// Hostile runs must be counted without the tokenizer's quadratic stall, and
// never under-counted. (A stall shows as this test timing out.)
func TestHostileContent(t *testing.T) {
	const mib = 1 << 20
	for _, enc := range []string{O200kBase, CL100kBase} {
		tok, err := Load(enc)
		if err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct{ name, text string }{
			{"1 MiB of one letter", strings.Repeat("a", mib)},
			{"1 MiB of spaces", strings.Repeat(" ", mib)},
			{"1 MiB of dots", strings.Repeat(".", mib)},
			{"1 MiB of one CJK character", strings.Repeat("中", mib/3)},
			{"normal text around a long run", "Dear customer, " + strings.Repeat("z", 100_000) + " regards."},
		} {
			n := tok.Count(tc.text)
			if n <= 0 || n > len(tc.text) {
				t.Errorf("%s %s: count %d outside (0, %d]", enc, tc.name, n, len(tc.text))
			}
			cut := tok.Cut(tc.text, 1000)
			if !strings.HasPrefix(tc.text, cut) || !utf8.ValidString(cut) || tok.Count(cut) > 1000 || cut == "" {
				t.Errorf("%s %s: cut of %d bytes counts %d", enc, tc.name, len(cut), tok.Count(cut))
			}
		}
	}
}

// Where exact counting is still affordable, the bounded count is never
// below it, and equals it when no piece is long.
func TestBoundedCountNeverUnderCounts(t *testing.T) {
	for _, enc := range []string{O200kBase, CL100kBase} {
		tok, err := Load(enc)
		if err != nil {
			t.Fatal(err)
		}
		for _, text := range []string{
			strings.Repeat("a", 3000),
			strings.Repeat(" ", 3000) + "x",
			"intro " + strings.Repeat("é", 1600) + " outro",
			strings.Repeat("!?", 1500),
			strings.Repeat("中文", 600),
			strings.Repeat("aA", 1600),                               // long run of letters, short pieces
			strings.Repeat("word ", 700) + strings.Repeat("9", 3000), // long but harmless
		} {
			exact := len(tok.enc.EncodeOrdinary(text))
			got := tok.Count(text)
			if got < exact {
				t.Errorf("%s: %q…: bounded %d < exact %d", enc, text[:12], got, exact)
			}
			if mayHaveLongPiece(text) && tok.boundedCount(text) != got {
				t.Errorf("%s: Count does not use the bounded path", enc)
			}
			longest := 0
			tok.pieces(text, func(p string) bool { longest = max(longest, len(p)); return true })
			if longest <= MaxPieceBytes && got != exact {
				t.Errorf("%s: %q…: no long piece (longest %d) yet %d != exact %d", enc, text[:12], longest, got, exact)
			}
		}
	}
}

func BenchmarkCountHostile(b *testing.B) {
	tok, err := Load(O200kBase)
	if err != nil {
		b.Fatal(err)
	}
	normal := strings.Repeat("The applicant's net income is EUR 3,450 a month. ", 1<<20/50)
	for _, bc := range []struct{ name, text string }{
		{"normal-1MiB", normal},
		{"one-letter-1MiB", strings.Repeat("a", 1<<20)},
		{"spaces-1MiB", strings.Repeat(" ", 1<<20)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(bc.text)))
			for b.Loop() {
				tok.Count(bc.text)
			}
		})
	}
}
