package bpe

import "unicode/utf8"

// MaxPieceBytes is the longest pre-tokenizer piece counted exactly. A
// longer piece is counted as one token per byte: an upper bound, since
// byte-level BPE starts from one token per byte and merging only lowers the
// count. BPE on a piece takes time superlinear in its length (tiktoken's
// own merge loop is quadratic), and real text rarely has pieces this long
// (they are runs of letters, white space or punctuation with no break), so
// this bounds the work per piece; finding the pieces is linear.
const MaxPieceBytes = 2048

// mayHaveLongPiece reports whether text has a run longer than MaxPieceBytes
// of letters and marks, of white space or of other non-digit characters.
// Cut sends such text to boundedCut, as it always has: the cut of text
// with a long piece is made piece by piece.
func mayHaveLongPiece(text string) bool {
	if len(text) <= MaxPieceBytes {
		return false
	}
	cls := classes()
	run, class := 0, -1
	for i := 0; i < len(text); {
		r, size := decode(text, i)
		c := coarseClass(cls.of(r))
		if c == class && c != classDigit {
			run += size
		} else {
			class, run = c, size
		}
		if run > MaxPieceBytes {
			return true
		}
		i += size
	}
	return false
}

const (
	classLetter = iota
	classSpace
	classDigit
	classOther
)

func coarseClass(c uint8) int {
	switch {
	case c&(cLetter|cMark) != 0:
		return classLetter
	case c&cNumber != 0:
		return classDigit
	case c&cSpace != 0:
		return classSpace
	}
	return classOther
}

// boundedCut is Cut for text with stretches counted bytewise: whole units
// while they fit, then, inside the stretch around an unknown character,
// as many whole characters as fit; inside a long piece, its longest token
// prefix that fits among its first MaxPieceBytes bytes (a prefix that
// short counts exactly, where one token per byte of a longer one would
// spend the room on an over-estimate: 3,000 bytes of "a" count 188 tokens,
// not 3,000); inside any other piece, its longest prefix that fits.
func (t *Tokenizer) boundedCut(text string, maxTokens int) string {
	n, end := 0, 0
	t.units(text, func(u string, bytewise bool) bool {
		room := maxTokens - n
		if bytewise {
			if room >= len(u) {
				n += len(u)
				end += len(u)
				return true
			}
			if t.sp.check(u) == textPlain { // a long piece
				end += len(t.cutSmall(u[:runeFloor(u, MaxPieceBytes)], room))
				return false
			}
			end += runeFloor(u, room)
			return false
		}
		c := t.voc.count(u)
		if c > room {
			// The piece does not fit whole: take its longest token prefix.
			end += len(t.cutSmall(u, room))
			return false
		}
		n += c
		end += len(u)
		return true
	})
	return text[:end]
}

// runeFloor returns the largest i <= n (and <= len(s)) where a character
// of s starts.
func runeFloor(s string, n int) int {
	if n >= len(s) {
		return len(s)
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return n
}
