package bpe

import (
	"sync"
	"unicode"
	"unicode/utf8"
)

// Character classes of the pre-tokenizers' patterns, one bit each, from Go's
// unicode tables.
const (
	cLetter  uint8 = 1 << iota // \p{L}
	cNumber                    // \p{N}
	cMark                      // \p{M}
	cUpper                     // o200k's [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]
	cLower                     // o200k's [\p{Ll}\p{Lm}\p{Lo}\p{M}]
	cSpace                     // \s: Unicode White_Space
	cNewline                   // \r or \n
	// cUnknown marks a character whose class the reference tokenizer may
	// see differently: one unassigned in Go's tables (Unicode 15.0; the
	// reference's may be newer and assign it), or one whose category a
	// later version changed (U+0295, Ll in 15.0, Lo since 16.0). Such a
	// character is never white space (no character has become White_Space
	// since Unicode 6), so it is known to be something else, which is all
	// the boundary rules below rely on.
	cUnknown
)

// classTable maps every code point to its classes: a two-stage table, the
// first stage indexing 128-code-point blocks, identical blocks shared.
type classTable struct {
	index  []uint16
	blocks []uint8
	bounds boundaryTable // LowerBound's rules, by category
}

const classBlockBits = 7

func (t *classTable) of(r rune) uint8 {
	return t.blocks[int(t.index[r>>classBlockBits])<<classBlockBits|int(r&(1<<classBlockBits-1))]
}

// classes returns the process-wide class table, built on first use from
// Go's unicode tables (a few milliseconds) and immutable afterwards.
var classes = sync.OnceValue(buildClasses)

func buildClasses() *classTable {
	all := make([]uint8, unicode.MaxRune+1)
	set := func(tab *unicode.RangeTable, bits uint8) {
		eachRune(tab, func(c rune) { all[c] |= bits })
	}
	// Unassigned until a table below says otherwise.
	for i := range all {
		all[i] = cUnknown
	}
	for _, tab := range []*unicode.RangeTable{unicode.L, unicode.M, unicode.N, unicode.P, unicode.S, unicode.Z, unicode.Cc, unicode.Cf, unicode.Co, unicode.Cs} {
		eachRune(tab, func(c rune) { all[c] = 0 })
	}
	set(unicode.L, cLetter)
	set(unicode.Lu, cUpper)
	set(unicode.Lt, cUpper)
	set(unicode.Ll, cLower)
	set(unicode.Lm, cUpper|cLower)
	set(unicode.Lo, cUpper|cLower)
	set(unicode.M, cMark|cUpper|cLower)
	set(unicode.N, cNumber)
	set(unicode.White_Space, cSpace)
	all['\r'] |= cNewline
	all['\n'] |= cNewline
	all[0x0295] |= cUnknown // ʕ: Ll in Unicode 15.0, Lo since 16.0

	t := &classTable{index: make([]uint16, len(all)>>classBlockBits)}
	seen := make(map[string]uint16)
	for b := range t.index {
		blk := all[b<<classBlockBits : (b+1)<<classBlockBits]
		id, ok := seen[string(blk)]
		if !ok {
			id = uint16(len(t.blocks) >> classBlockBits)
			seen[string(blk)] = id
			t.blocks = append(t.blocks, blk...)
		}
		t.index[b] = id
	}
	t.bounds.build(t)
	return t
}

// eachRune calls fn with every character of tab.
func eachRune(tab *unicode.RangeTable, fn func(rune)) {
	for _, r := range tab.R16 {
		for c := rune(r.Lo); c <= rune(r.Hi); c += rune(r.Stride) {
			fn(c)
		}
	}
	for _, r := range tab.R32 {
		for c := rune(r.Lo); c <= rune(r.Hi); c += rune(r.Stride) {
			fn(c)
		}
	}
}

// decode returns the character at text[i:] and its size; an invalid byte
// reads as U+FFFD, one byte long (the reference sees text as characters,
// and Count sanitises invalid text before it gets here).
func decode(text string, i int) (rune, int) {
	if c := text[i]; c < utf8.RuneSelf {
		return rune(c), 1
	}
	return utf8.DecodeRuneInString(text[i:])
}
