package bpe

import (
	"encoding/binary"
	"flag"
	"os"
	"slices"
	"testing"
	"unicode/utf8"
)

var update = flag.Bool("update", false, "rewrite joins.bin from the vocabularies")

// tokenJoins calls fn with the two sides of every character boundary
// inside tok (see joins.go): a character, or partialSide of the bytes
// there when tok holds only part of it.
func tokenJoins(tok string, fn func(left, right uint32)) {
	b := []byte(tok)
	for k := 1; k < len(b); k++ {
		if !utf8.RuneStart(b[k]) {
			continue // not a character boundary
		}
		j := k - 1
		for j >= 0 && !utf8.RuneStart(b[j]) {
			j--
		}
		var left uint32
		switch {
		case j < 0:
			if k >= utf8.UTFMax {
				continue // no character ends with this many continuation bytes
			}
			left = partialSide(b[:k])
		default:
			r, size := utf8.DecodeRune(b[j:k])
			if r == utf8.RuneError && size <= 1 || j+size != k {
				continue // the character before k does not end at k: not a boundary of valid text
			}
			left = uint32(r)
		}
		var right uint32
		if r, size := utf8.DecodeRune(b[k:]); r == utf8.RuneError && size <= 1 {
			if utf8.FullRune(b[k:]) || len(b)-k >= utf8.UTFMax {
				continue // not the start of a character of valid text
			}
			right = partialSide(b[k:])
		} else {
			right = uint32(r)
		}
		fn(left, right)
	}
}

// buildJoins is joins.bin's content for the vocabularies: every pair of
// sides neither of which is an ASCII character (LowerBound leaves pairs
// with an ASCII side to its rules).
func buildJoins(vocabs ...*vocab) []byte {
	set := map[uint64]bool{}
	for _, v := range vocabs {
		for tok := range v.ranks {
			tokenJoins(tok, func(l, r uint32) {
				if l < utf8.RuneSelf || r < utf8.RuneSelf {
					return // LowerBound asks about pairs of non-ASCII characters only
				}
				set[uint64(l)<<32|uint64(r)] = true
			})
		}
	}
	keys := make([]uint64, 0, len(set))
	for k := range set {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var out []byte
	prev := uint64(0)
	for _, k := range keys {
		out = binary.AppendUvarint(out, k-prev)
		prev = k
	}
	return out
}

// TestJoinTable checks joins.bin against the vocabularies, and joinable
// against every token: no token of either vocabulary spans a boundary
// joinable calls unspanned. Partial sides are checked with every character
// they stand for. This is the soundness of the boundaries LowerBound takes
// from the table: every tokenization is made of vocabulary tokens.
func TestJoinTable(t *testing.T) {
	o, c := load(t, O200kBase), load(t, CL100kBase)
	built := buildJoins(o.voc, c.voc)
	if *update {
		if err := os.WriteFile("joins.bin", built, 0o644); err != nil {
			t.Fatal(err)
		}
	} else if string(built) != joinsBin {
		t.Fatalf("joins.bin is not what the vocabularies give (%d bytes, want %d): run go test -run TestJoinTable -update", len(joinsBin), len(built))
	}
	tab := joins()
	side := func(s uint32, fill func([]byte) []rune) []rune {
		if s&sidePartial == 0 {
			return []rune{rune(s)}
		}
		return fill(sideBytes(s))
	}
	checked := 0
	for _, v := range []*vocab{o.voc, c.voc} {
		for tok := range v.ranks {
			tokenJoins(tok, func(l, r uint32) {
				if l < utf8.RuneSelf || r < utf8.RuneSelf {
					return
				}
				lefts, rights := side(l, charsEndingWith), side(r, charsStartingWith)
				check := func(c1, c2 rune) {
					checked++
					if !tab.joinable(c1, tab.node(c1), c2, tab.node(c2)) {
						t.Fatalf("token %q spans %q|%q, which joinable calls a boundary", tok, c1, c2)
					}
				}
				if len(lefts) > 1 && len(rights) > 1 {
					// Both sides partial (ten pairs): every character of
					// each side, with a character of the other in turn.
					for i := range max(len(lefts), len(rights)) {
						check(lefts[i%len(lefts)], rights[i%len(rights)])
					}
					return
				}
				for _, c1 := range lefts {
					for _, c2 := range rights {
						check(c1, c2)
					}
				}
			})
		}
	}
	t.Logf("joins.bin: %d bytes, %d characters with joins; %d character pairs checked", len(joinsBin), len(tab.nodes)-1, checked)
}

// charsStartingWith returns every character whose encoding starts with
// the proper prefix p.
func charsStartingWith(p []byte) []rune {
	var out []rune
	for n := len(p) + 1; n <= utf8.UTFMax; n++ {
		b := make([]byte, n)
		copy(b, p)
		var fill func(i int)
		fill = func(i int) {
			if i == n {
				if _, size := utf8.DecodeRune(b); size == n {
					r, _ := utf8.DecodeRune(b)
					out = append(out, r)
				}
				return
			}
			for c := 0x80; c < 0xc0; c++ {
				b[i] = byte(c)
				fill(i + 1)
			}
		}
		fill(len(p))
	}
	return out
}

// charsEndingWith returns every character whose encoding ends with the
// proper suffix s (continuation bytes).
func charsEndingWith(s []byte) []rune {
	var out []rune
	for n := len(s) + 1; n <= utf8.UTFMax; n++ {
		b := make([]byte, n)
		copy(b[n-len(s):], s)
		var fill func(i int)
		fill = func(i int) {
			if i == n-len(s) {
				if _, size := utf8.DecodeRune(b); size == n {
					r, _ := utf8.DecodeRune(b)
					out = append(out, r)
				}
				return
			}
			lo, hi := 0x80, 0xc0
			if i == 0 {
				lo, hi = 0xc2, 0xf5
			}
			for c := lo; c < hi; c++ {
				b[i] = byte(c)
				fill(i + 1)
			}
		}
		fill(0)
	}
	return out
}
