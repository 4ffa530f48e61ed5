package bpe

import (
	"unicode"
	"unicode/utf8"

	"github.com/dlclark/regexp2"
)

// MaxPieceBytes is the longest pre-tokenizer piece counted exactly. BPE on
// one piece takes time quadratic in its length (a 1 MiB run of one letter
// would take hours), so a longer piece is counted as one token per byte: an
// upper bound, since byte-level BPE starts from one token per byte and
// merging only lowers the count. Real text rarely has pieces this long
// (they are runs of letters, white space or punctuation with no break).
const MaxPieceBytes = 2048

// The encodings' pre-tokenizer patterns, as tiktoken defines them (and
// tiktoken-go compiles them), for finding pieces in hostile text.
const (
	o200kPattern = `[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?` +
		`|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?` +
		`|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	cl100kPattern = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
)

// mayHaveLongPiece reports whether text could hold a piece longer than
// MaxPieceBytes: a run of letters and marks, of white space or of other
// non-digit characters that long. It over-approximates (any such run is
// suspect), which only sends text to the slower exact-or-bounded path.
func mayHaveLongPiece(text string) bool {
	if len(text) <= MaxPieceBytes {
		return false
	}
	run, class := 0, -1
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		c := runeClass(r)
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

func runeClass(r rune) int {
	switch {
	case r < utf8.RuneSelf:
		switch {
		case 'a' <= r && r <= 'z', 'A' <= r && r <= 'Z':
			return classLetter
		case '0' <= r && r <= '9':
			return classDigit
		case r == ' ' || ('\t' <= r && r <= '\r'):
			return classSpace
		}
		return classOther
	case unicode.IsLetter(r) || unicode.IsMark(r):
		return classLetter
	case unicode.IsNumber(r):
		return classDigit
	case unicode.IsSpace(r):
		return classSpace
	}
	return classOther
}

// pieces calls fn with each pre-tokenizer piece of text, in order.
func (t *Tokenizer) pieces(text string, fn func(piece string) bool) {
	runes := []rune(text)
	// regexp2 reports rune offsets; map them back to bytes as we go.
	byteAt, runeAt := 0, 0
	advance := func(to int) int {
		for runeAt < to {
			byteAt += utf8.RuneLen(runes[runeAt])
			runeAt++
		}
		return byteAt
	}
	m, _ := t.pre.FindRunesMatch(runes)
	for m != nil {
		start := advance(m.Index)
		end := advance(m.Index + m.Length)
		if !fn(text[start:end]) {
			return
		}
		m, _ = t.pre.FindNextMatch(m)
	}
}

// boundedCount counts text piece by piece: exactly, except that a piece
// longer than MaxPieceBytes counts one token per byte.
func (t *Tokenizer) boundedCount(text string) int {
	n := 0
	t.pieces(text, func(p string) bool {
		if len(p) > MaxPieceBytes {
			n += len(p)
		} else {
			n += len(t.enc.EncodeOrdinary(p))
		}
		return true
	})
	return n
}

// boundedCut is Cut for text with long pieces: whole pieces while they fit,
// then, inside a long piece (counted one token per byte), as many whole
// characters as fit.
func (t *Tokenizer) boundedCut(text string, maxTokens int) string {
	n, end := 0, 0
	t.pieces(text, func(p string) bool {
		if len(p) > MaxPieceBytes {
			room := maxTokens - n
			if room >= len(p) {
				n += len(p)
				end += len(p)
				return true
			}
			cut := room
			for cut > 0 && !utf8.RuneStart(p[cut]) {
				cut--
			}
			end += cut
			return false
		}
		c := len(t.enc.EncodeOrdinary(p))
		if n+c > maxTokens {
			// The piece does not fit whole: take its longest token prefix.
			end += len(t.cutSmall(p, maxTokens-n))
			return false
		}
		n += c
		end += len(p)
		return true
	})
	return text[:end]
}

func compilePattern(encoding string) (*regexp2.Regexp, error) {
	pat := o200kPattern
	if encoding == CL100kBase {
		pat = cl100kPattern
	}
	return regexp2.Compile(pat, regexp2.None)
}
