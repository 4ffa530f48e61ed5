package bpe

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestLowerBound checks that LowerBound never exceeds the real count, in
// both encodings, on adversarial mixtures, and that it is not vacuous on
// ordinary prose (it must prune something to be worth having).
func TestLowerBound(t *testing.T) {
	pieces := append(slicesClone(additivePieces), "it's", "don't", "WeIRD", "x²", "½", "١٢٣", "a\u0301", "'", "''", "(", "((", "(x", " (x", "e.g.", "3.14159", "1234567")
	for _, enc := range []string{O200kBase, CL100kBase} {
		tok, err := Load(enc)
		if err != nil {
			t.Fatal(err)
		}
		r := rand.New(rand.NewPCG(3, 5))
		for range 20000 {
			var b strings.Builder
			for range 1 + r.IntN(12) {
				b.WriteString(pieces[r.IntN(len(pieces))])
			}
			s := b.String()
			if lb, n := LowerBound(s), tok.Count(s); lb > n {
				t.Fatalf("%s: LowerBound(%q) = %d > count %d", enc, s, lb, n)
			}
		}
		prose := "The applicant's net monthly income is EUR 3,450 and existing debt payments are EUR 1,120. " +
			"O cliente prefere respostas em português europeu, com um resumo curto no fim."
		if lb, n := LowerBound(prose), tok.Count(prose); 2*lb < n {
			t.Errorf("%s: LowerBound of prose is %d of %d tokens: too weak to prune", enc, lb, n)
		}
	}
}

func FuzzLowerBound(f *testing.F) {
	for _, s := range []string{"it's 1234 (x) — 中文。", "a\u0301b", "''x", "", "  12"} {
		f.Add(s)
	}
	tok, err := Load(O200kBase)
	if err != nil {
		f.Fatal(err)
	}
	cl, err := Load(CL100kBase)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) || len(s) > 4096 {
			return
		}
		lb := LowerBound(s)
		if n := tok.Count(s); lb > n {
			t.Fatalf("o200k: LowerBound(%q) = %d > %d", s, lb, n)
		}
		if n := cl.Count(s); lb > n {
			t.Fatalf("cl100k: LowerBound(%q) = %d > %d", s, lb, n)
		}
	})
}

func slicesClone(s []string) []string { return append([]string(nil), s...) }
