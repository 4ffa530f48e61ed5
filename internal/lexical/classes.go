package lexical

import (
	"sync"
	"unicode"
	"unicode/utf8"
)

// Character classes the splitter tells apart, from Go's Unicode tables
// (Unicode 15.0): a kind in the low three bits, and flags.
const (
	kSep     uint8 = iota // anything else: ends a word
	kWord                 // a letter or number of a script written with spaces
	kMark                 // a combining mark: it continues what precedes it
	kNoSpace              // a letter of a script written without spaces
	kJoin                 // a hyphen or underscore: joins the parts of a compound
	kApos                 // an apostrophe: a clitic follows, or a new word
	kIgnore               // invisible inside a word (soft hyphen, joiners): skipped there

	kindMask uint8 = 7

	fUpper uint8 = 1 << 3 // an upper- or titlecase letter (camelCase splits)
	fLower uint8 = 1 << 4 // a lowercase letter
	fDigit uint8 = 1 << 5 // a decimal digit: "3,450" and "3.14" stay one word
)

// noSpaceScripts are written without spaces between words: their letters
// are indexed as overlapping bigrams. Hangul is written with spaces, so it
// is not here.
var noSpaceScripts = []*unicode.RangeTable{
	unicode.Han, unicode.Hiragana, unicode.Katakana,
	unicode.Thai, unicode.Lao, unicode.Khmer, unicode.Myanmar,
}

// others are the categories of assigned characters that are not letters,
// marks or numbers (unicode.C would also hold the unassigned).
var others = []*unicode.RangeTable{unicode.P, unicode.S, unicode.Z, unicode.Cc, unicode.Cf, unicode.Co, unicode.Cs}

// classify returns the classes of r, from the tables.
func classify(r rune) uint8 {
	switch r {
	case '-', '_', 0x2010, 0x2011:
		return kJoin
	case '\'', 0x2019:
		return kApos
	case 0x00AD, 0x200C, 0x200D, 0x2060, 0xFEFF:
		// Invisible format characters that may sit inside a word: a soft
		// hyphen, the zero-width (non-)joiners of Persian and Indic words,
		// the word joiner and a stray byte-order mark. Skipping them keeps
		// the word whole ("ig\u2060nore" is the word "ignore").
		return kIgnore
	case 0x30FC, 0xFF70: // ー and its halfwidth form (script Common), inside katakana words
		return kNoSpace
	}
	switch {
	case unicode.IsLetter(r):
		if unicode.In(r, noSpaceScripts...) {
			return kNoSpace
		}
		c := kWord
		if unicode.IsUpper(r) || unicode.IsTitle(r) {
			c |= fUpper
		} else if unicode.IsLower(r) {
			c |= fLower
		}
		return c
	case unicode.IsDigit(r):
		return kWord | fDigit // the digits of Thai and the others stay words
	case unicode.IsNumber(r):
		return kWord
	case unicode.IsMark(r):
		return kMark
	case unicode.In(r, others...):
		return kSep
	}
	// Unassigned in Go's tables: taken as a letter. Most code points
	// assigned since Unicode 15.0 are letters of new scripts, and a symbol
	// taken as a word costs a term, never a lost word.
	return kWord
}

// classTable holds the classes of the Basic Multilingual Plane, computed
// once; characters beyond it (emoji, rare ideographs, new scripts) are
// classified from the tables each time.
type classTable struct{ bmp [0x10000]uint8 }

func (t *classTable) of(r rune) uint8 {
	if r < 0x10000 {
		return t.bmp[r]
	}
	return classify(r)
}

// classes is the process-wide table, built on first use (a few
// milliseconds) and never modified afterwards.
var classes = sync.OnceValue(func() *classTable {
	t := new(classTable)
	for r := range rune(len(t.bmp)) {
		t.bmp[r] = classify(r)
	}
	return t
})

// decode returns the character at text[i:] and its size; an invalid byte
// reads as U+FFFD, one byte long (a separator).
func decode(text string, i int) (rune, int) {
	if c := text[i]; c < utf8.RuneSelf {
		return rune(c), 1
	}
	return utf8.DecodeRuneInString(text[i:])
}
