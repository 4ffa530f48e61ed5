package bpe

import "unicode/utf8"

// LowerBound returns a number of tokens that text has at least, in both
// encodings, computed in one pass without tokenizing.
//
// Both pre-tokenizers split text into pieces before BPE, and every piece is
// at least one token. Pieces are counted from below: every maximal run of
// letters (marks included, and apostrophes after a letter, so contractions
// and case changes merge rather than split) lies in at least one piece of
// its own, since no
// other kind of piece holds letters; a run of d digits makes at least
// ⌈d/3⌉ pieces (numbers are split in threes); a run of other non-space
// characters makes at least one piece, unless it is a single character
// right before a letter (which may open the letter's piece). White space is
// not counted. TestLowerBound checks the bound against real counts.
func LowerBound(text string) int {
	n := 0
	prev, run := classSpace, 0
	flush := func(next int) {
		switch prev {
		case classLetter:
			n++
		case classDigit:
			n += (run + 2) / 3
		case classOther:
			if run >= 2 || next != classLetter {
				n++
			}
		}
	}
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		i += size
		c := runeClass(r)
		if r == '\'' && prev == classLetter {
			c = classLetter // a contraction continues its word's piece
		}
		if c == prev {
			run++
			continue
		}
		flush(c)
		prev, run = c, 1
	}
	flush(classSpace)
	return n
}

// LowerBounded reports true: LowerBound holds for this tokenizer's counts.
func (t *Tokenizer) LowerBounded() bool { return true }
