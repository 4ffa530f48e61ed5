package bpe

import "unicode/utf8"

// Text that holds characters Go's Unicode tables do not know.
//
// The reference tokenizer classifies characters with its own Unicode
// tables, which may be newer than Go's: U+10D40, unassigned in Unicode 15.0
// (Go's), is a digit in 16.0, so the reference puts it in a number piece
// where Go's tables would make it punctuation. No count of such a piece is
// safe without knowing the class, so Count finds a stretch around it that
// the reference tokenizes apart from the rest whatever the class, and
// counts that stretch one token per byte (at least as many as any
// tokenization of it).
//
// The stretch is bounded by sync points: positions where every piece ends,
// whatever class the unknown characters have (provided they are not white
// space, which no new character has been since Unicode 6), and where the
// text after starts to tokenize as it would alone. Two rules give them:
//
//   - a character other than white space, then white space other than \r
//     and \n: no piece holds non-space characters followed by such white
//     space (white space only ever starts a piece or makes one up, and the
//     only run allowed to follow punctuation is [\r\n/]*);
//   - \r or \n, then a character neither white space nor '/': a newline
//     ends the piece it is in unless more newlines, white space or (after
//     punctuation, in o200k_base) slashes follow.
//
// Both rules depend on the two characters either side only, so a sync point
// is one in any text that holds those characters, and the pieces before it
// are the same as in the text cut there: the reasoning behind
// LineAdditive. TestSyncPoints checks them against the splitter for every
// class a character may have.

// textKind is what check finds in a text.
type textKind int

const (
	textPlain   textKind = iota // valid UTF-8, every character known
	textUnknown                 // valid UTF-8 with a character Go's tables do not know
	textInvalid                 // not valid UTF-8
)

// check reports whether text is valid UTF-8 with only known characters.
func (s *splitter) check(text string) textKind {
	kind := textPlain
	for i := 0; i < len(text); {
		if text[i] < utf8.RuneSelf {
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(text[i:])
		if r == utf8.RuneError && n == 1 {
			return textInvalid
		}
		if s.cls.of(r)&cUnknown != 0 {
			kind = textUnknown
		}
		i += n
	}
	return kind
}

// syncPoint reports whether a piece always ends between a character of
// classes a and one of classes b (rune rb); see the rules above.
func syncPoint(a uint8, b uint8, rb rune) bool {
	if a&cSpace == 0 && b&cSpace != 0 && b&cNewline == 0 {
		return true
	}
	return a&cNewline != 0 && b&cSpace == 0 && rb != '/'
}

// units calls fn with each unit of valid text, in order, until fn returns
// false: a pre-tokenizer piece (bytewise false), or a stretch to count one
// token per byte (bytewise true): a piece longer than MaxPieceBytes, or
// the stretch between the sync points around characters Go's tables do
// not know.
func (t *Tokenizer) units(text string, fn func(u string, bytewise bool) bool) {
	cls := t.sp.cls
	from := 0 // where the text not yet handed to fn starts: a sync point
	for i := 0; i < len(text); {
		r, size := decode(text, i)
		if r < utf8.RuneSelf || cls.of(r)&cUnknown == 0 {
			i += size
			continue
		}
		// The last sync point at or before i (from is one).
		a := i
		for a > from {
			pr, ps := utf8.DecodeLastRuneInString(text[:a])
			cr, _ := decode(text, a)
			if syncPoint(cls.of(pr), cls.of(cr), cr) {
				break
			}
			a -= ps
		}
		// The first sync point after the character.
		b := i + size
		for b < len(text) {
			pr, _ := utf8.DecodeLastRuneInString(text[:b])
			cr, cs := decode(text, b)
			if syncPoint(cls.of(pr), cls.of(cr), cr) {
				break
			}
			b += cs
		}
		if !t.pieces(text[from:a], fn) || !fn(text[a:b], true) {
			return
		}
		from, i = b, b
	}
	t.pieces(text[from:], fn)
}

// pieces calls fn with each piece of text (a long one as bytewise) until
// fn returns false, and reports whether it never did.
func (t *Tokenizer) pieces(text string, fn func(u string, bytewise bool) bool) bool {
	for i := 0; i < len(text); {
		e := t.sp.next(text, i)
		if !fn(text[i:e], e-i > MaxPieceBytes) {
			return false
		}
		i = e
	}
	return true
}
