package bpe

import "unicode/utf8"

// LowerBound returns a number of tokens that text has at least, in both
// encodings and wherever it stands: any text that contains text counts at
// least LowerBound(text) tokens, and so does any that contains text with
// word joiners (U+2060) inserted into it, so the bound of a block's content
// holds for the block as rendered, with literals around it and delimiters
// in it neutralised. It is computed in one pass, without tokenizing.
//
// Why it holds: some positions of text are boundaries of every token in
// any tokenization of any text around it, and every stretch between two of
// them holds at least one token of its own, so the count is at least the
// number of stretches. The positions are those the pre-tokenizers always
// split at (see boundary), and those between two characters no token of
// either vocabulary spans (see joins.go): in text without spaces, such as
// Chinese, these are most of the bound. A stretch holding digits holds at
// least ⌈d/3⌉ tokens per run of d digits, since numbers are split in
// threes and no token mixes digits with anything else. TestBoundaryRules
// checks the boundaries against the splitter for every class a character
// can have, TestJoinTable the joins against every token, and TestLowerBound
// and FuzzLowerBound the bound against real counts of texts around random
// contents.
func LowerBound(text string) int {
	if text == "" {
		return 0
	}
	cls, jt := classes(), joins()
	bt := &cls.bounds
	n := 0
	stretchDigits, run := 0, 0 // tokens owed to digit runs in the stretch; the current run's length
	var prev rune              // the previous character
	var prevNode *joinNode     // its join node, when looked up
	prevLooked := false
	state := uint8(bcSpace<<4 | bcSpace) // the previous two characters' categories
	for i := 0; i < len(text); {
		r, size := rune(text[i]), 1
		var cat uint8
		if r < utf8.RuneSelf {
			cat = bt.ascii[r]
		} else {
			r, size = utf8.DecodeRuneInString(text[i:])
			cat = categoryOf(cls.of(r))
		}
		var node *joinNode
		looked := false
		if i > 0 {
			cut := bt.cut[state][cat&15]
			if !cut && r >= utf8.RuneSelf && prev >= utf8.RuneSelf {
				// Two characters that are not ASCII (a pair with an ASCII
				// side is left to the rules: fewer boundaries, still sound).
				if !prevLooked {
					prevNode = jt.node(prev)
				}
				node, looked = jt.node(r), true
				cut = !jt.joinable(prev, prevNode, r, node)
			}
			if cut {
				stretchDigits += (run + 2) / 3
				n += max(1, stretchDigits)
				stretchDigits, run = 0, 0
			}
		}
		prev, prevNode, prevLooked = r, node, looked
		state = state<<4 | cat&15
		if cat == bcDigit {
			run++
		} else if run > 0 {
			stretchDigits += (run + 2) / 3
			run = 0
		}
		i += size
	}
	stretchDigits += (run + 2) / 3
	return n + max(1, stretchDigits)
}

// Boundary categories: what the boundary rules tell characters apart by.
const (
	bcOther      = iota // known, and neither white space, letter, digit nor mark
	bcApostrophe        // '\''
	bcSlash             // '/'
	bcLetter            // known \p{L}
	bcDigit             // known \p{N}
	bcMark              // known \p{M}
	bcSpace             // white space but \r and \n
	bcNewline           // \r or \n
	bcUnknown           // unknown to Go's tables
	numCategories
)

// boundaryTable is the rules of boundary and window.boundary by category,
// for LowerBound's loop.
type boundaryTable struct {
	ascii [utf8.RuneSelf]uint8 // each ASCII character's category
	// cut tells, by the categories of the two characters before (x<<4 | a)
	// and of the next (b), whether every token ends between a and b.
	cut [256][16]bool
}

// categoryOf is the category of a character of classes c, not one of the
// ASCII characters with a category of their own.
func categoryOf(c uint8) uint8 {
	switch {
	case c&cUnknown != 0:
		return bcUnknown
	case c&cNewline != 0:
		return bcNewline
	case c&cSpace != 0:
		return bcSpace
	case c&cNumber != 0:
		return bcDigit
	case c&cLetter != 0:
		return bcLetter
	case c&cMark != 0:
		return bcMark
	}
	return bcOther
}

// isPunctCat reports the categories isPurePunct accepts.
func isPunctCat(cat uint8) bool { return cat <= bcSlash }

func (bt *boundaryTable) build(cls *classTable) {
	// A character of each category, to evaluate the rules on.
	reps := [numCategories]rune{'.', '\'', '/', 'a', '0', 0x0301, ' ', '\n', 0x10D40}
	for c := range rune(utf8.RuneSelf) {
		switch c {
		case '\'':
			bt.ascii[c] = bcApostrophe
		case '/':
			bt.ascii[c] = bcSlash
		default:
			bt.ascii[c] = categoryOf(cls.of(c))
		}
	}
	for x := range numCategories {
		for a, ra := range reps {
			for b, rb := range reps {
				bt.cut[x<<4|a][b] = boundary(cls.of(ra), cls.of(rb), rb) ||
					(b == bcLetter && isPunctCat(uint8(a)) && (x == bcOther || x == bcApostrophe))
			}
		}
	}
}

// boundary reports whether every token ends between a character of
// classes a and one of classes b (rune rb), in both encodings and whatever
// class the reference gives characters marked cUnknown (anything but white
// space). The rules, besides the sync points (see syncPoint):
//
//   - a digit, then anything known but a digit: only \p{N}{1,3} matches
//     digits, and nothing else;
//   - anything known but a digit, then a digit: the same, from the other
//     side;
//   - a letter, then \r or \n: no piece holding a letter goes on into a
//     newline;
//   - a letter, then a character that is neither white space, letter,
//     mark, digit nor an apostrophe: a word's piece (either encoding's)
//     holds only letters and marks, and, in o200k_base, a contraction
//     after them; and such a character cannot start one that the letter
//     is in.
func boundary(a, b uint8, rb rune) bool {
	switch {
	case syncPoint(a, b, rb):
		return true
	case (a|b)&cUnknown != 0:
		return false
	case a&cNumber != 0:
		return b&cNumber == 0
	case b&cNumber != 0:
		return true
	case a&cLetter != 0:
		return b&cNewline != 0 || (b&(cSpace|cLetter|cMark) == 0 && rb != '\'')
	}
	return false
}

// LowerBounded reports whether LowerBound holds for this tokenizer's
// counts: true for the built-in encodings, whose vocabularies' joins it
// knows; false for one made from a rank file (FromRanks).
func (t *Tokenizer) LowerBounded() bool { return t.builtin }
