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
	n := 0
	stretchDigits, run := 0, 0 // tokens owed to digit runs in the stretch; the current run's length
	var w window
	var prevNode *joinNode // the previous character's join node, when looked up
	prevLooked := false
	for i := 0; i < len(text); {
		r, size := decode(text, i)
		c := cls.of(r)
		w.push(c, r)
		var node *joinNode
		looked := false
		if i > 0 {
			cut := w.boundary()
			if !cut && (r >= utf8.RuneSelf || w.ar >= utf8.RuneSelf) {
				if !prevLooked {
					prevNode = jt.nodes[w.ar]
				}
				node, looked = jt.nodes[r], true
				cut = !jt.joinable(w.ar, prevNode, r, node) && !jt.bridged(w.ar, r, node)
			}
			if cut {
				stretchDigits += (run + 2) / 3
				n += max(1, stretchDigits)
				stretchDigits, run = 0, 0
			}
		}
		prevNode, prevLooked = node, looked
		if c&cNumber != 0 && c&cUnknown == 0 {
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

// window holds the classes and characters of the last three characters
// read: x, then a, then b; x is absent (ok false) at the start.
type window struct {
	xc, ac, bc uint8
	xr, ar, br rune
	n          int
}

func (w *window) push(c uint8, r rune) {
	w.xc, w.ac, w.bc = w.ac, w.bc, c
	w.xr, w.ar, w.br = w.ar, w.br, r
	w.n++
}

// boundary reports whether every token ends between a and b (see the
// function boundary), or between a and b because punctuation precedes: a
// letter after two punctuation characters (neither white space, letter,
// digit nor mark, and the first not '/') does not start a piece with them,
// since the first is in a punctuation piece that takes the second (the
// first cannot be in a [\r\n/]* tail or, before punctuation, open a word).
func (w *window) boundary() bool {
	if boundary(w.ac, w.bc, w.br) {
		return true
	}
	return w.n >= 3 && w.bc&cLetter != 0 && w.bc&cUnknown == 0 &&
		isPurePunct(w.xc) && w.xr != '/' && isPurePunct(w.ac)
}

// isPurePunct reports a known character that is neither white space,
// letter, digit nor mark.
func isPurePunct(c uint8) bool { return c&(cSpace|cLetter|cNumber|cMark|cUnknown) == 0 }

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
