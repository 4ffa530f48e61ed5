package bpe

import (
	_ "embed"
	"encoding/binary"
	"slices"
	"sync"
	"unicode/utf8"
)

// Joins: which two adjacent characters (neither ASCII) a token of the
// built-in vocabularies ever spans. Where no token of o200k_base or cl100k_base holds the end of
// one character and the start of the next, every tokenization of every text
// has a token boundary between them, whatever the pre-tokenizer does. Text
// without spaces (Chinese, Japanese) has few boundaries the pre-tokenizer
// can be sure of, so these make LowerBound tight there.
//
// A token spans the boundary between characters c1 and c2 when its bytes
// hold a suffix of c1's encoding followed by a prefix of c2's; which
// characters those are is exact when the token holds the whole character
// on that side, and otherwise a partial: every character whose encoding
// ends (before the boundary) or starts (after it) with the token's bytes.
// joins.bin lists every such pair of the two vocabularies, each side a
// character or a partial; TestJoinTable rebuilds it from the vocabularies
// (go test -run TestJoinTable -update rewrites it) and checks every
// token's every inner boundary against joinable.

//go:embed joins.bin
var joinsBin string

// A side is a character (its code point) or, with sidePartial set, up to
// three bytes of one: sidePartial | length<<24 | the bytes, big-endian.
const sidePartial = 1 << 31

func partialSide(b []byte) uint32 {
	s := uint32(sidePartial) | uint32(len(b))<<24
	for i, c := range b {
		s |= uint32(c) << (8 * (2 - i))
	}
	return s
}

// joinNode is what the table knows of one character: the characters and
// partials that may follow it inside a token, and the partials that may
// precede it.
type joinNode struct {
	after   []rune   // sorted
	afterP  [][]byte // prefixes of a following character's encoding
	beforeP [][]byte // suffixes of a preceding character's encoding
}

type joinTable struct {
	nodes []joinNode      // nodes[0] is no node
	bmp   []uint16        // the node of each character of the BMP, by code point
	other map[rune]uint16 // the nodes of the other characters
	// both lists the pairs of partials (a suffix of c1, a prefix of c2);
	// bothAfter marks the first bytes of their prefixes.
	both      [][2][]byte
	bothAfter [256]bool
}

// node returns the node of r, nil when the table has none.
func (t *joinTable) node(r rune) *joinNode {
	var i uint16
	if r < 0x10000 {
		i = t.bmp[r]
	} else {
		i = t.other[r]
	}
	if i == 0 {
		return nil
	}
	return &t.nodes[i]
}

// joins returns the process-wide join table, decoded on first use.
var joins = sync.OnceValue(func() *joinTable { return decodeJoins(joinsBin) })

// decodeJoins reads the table: sorted pair keys (left<<32 | right),
// delta-encoded as uvarints.
func decodeJoins(data string) *joinTable {
	t := &joinTable{nodes: make([]joinNode, 1, 4096), bmp: make([]uint16, 0x10000), other: map[rune]uint16{}}
	node := func(r rune) *joinNode {
		i := t.other[r]
		if r < 0x10000 {
			i = t.bmp[r]
		}
		if i == 0 {
			if len(t.nodes) == 1<<16 {
				panic("bpe: joins.bin has too many characters")
			}
			i = uint16(len(t.nodes))
			t.nodes = append(t.nodes, joinNode{})
			if r < 0x10000 {
				t.bmp[r] = i
			} else {
				t.other[r] = i
			}
		}
		return &t.nodes[i]
	}
	var key uint64
	for b := []byte(data); len(b) > 0; {
		d, n := binary.Uvarint(b)
		if n <= 0 {
			panic("bpe: joins.bin is corrupt")
		}
		b = b[n:]
		key += d
		l, r := uint32(key>>32), uint32(key)
		switch {
		case l&sidePartial != 0 && r&sidePartial != 0:
			p := sideBytes(r)
			t.both = append(t.both, [2][]byte{sideBytes(l), p})
			t.bothAfter[p[0]] = true
		case l&sidePartial != 0:
			n := node(rune(r))
			n.beforeP = append(n.beforeP, sideBytes(l))
		case r&sidePartial != 0:
			n := node(rune(l))
			n.afterP = append(n.afterP, sideBytes(r))
		default:
			n := node(rune(l))
			n.after = append(n.after, rune(r)) // in order: the keys are sorted
		}
	}
	return t
}

func sideBytes(s uint32) []byte {
	n := int(s>>24) & 0x7f
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(s >> (8 * (2 - i)))
	}
	return b
}

// joiner is U+2060 WORD JOINER, which rendering may insert into content
// (see package delimit). No character but ASCII ones joins it on its left
// (TestJoinerAlwaysSplits), so inserting it between two characters
// LowerBound takes a join boundary between (neither ASCII) cannot let
// tokens bridge them.
const joiner = 0x2060

// joinable reports whether a token of either vocabulary spans the
// boundary between c1 and c2; n1 and n2 are their nodes (nil when the
// table has none).
func (t *joinTable) joinable(c1 rune, n1 *joinNode, c2 rune, n2 *joinNode) bool {
	if n1 != nil {
		if _, ok := slices.BinarySearch(n1.after, c2); ok {
			return true
		}
	}
	var e1, e2 [utf8.UTFMax]byte
	b1 := e1[:utf8.EncodeRune(e1[:], c1)]
	b2 := e2[:utf8.EncodeRune(e2[:], c2)]
	if n1 != nil {
		for _, p := range n1.afterP {
			if len(p) < len(b2) && string(b2[:len(p)]) == string(p) {
				return true
			}
		}
	}
	if n2 != nil {
		for _, s := range n2.beforeP {
			if len(s) < len(b1) && string(b1[len(b1)-len(s):]) == string(s) {
				return true
			}
		}
	}
	if !t.bothAfter[b2[0]] {
		return false
	}
	for _, ps := range t.both {
		s, p := ps[0], ps[1]
		if len(s) < len(b1) && string(b1[len(b1)-len(s):]) == string(s) &&
			len(p) < len(b2) && string(b2[:len(p)]) == string(p) {
			return true
		}
	}
	return false
}
