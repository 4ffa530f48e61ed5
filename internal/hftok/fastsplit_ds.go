package hftok

import (
	"unicode"
	"unicode/utf8"
)

// DeepSeek V3's three Split patterns, matched by hand like clSplit's (and
// checked against regexp2 by FuzzFastSplit).
const (
	patternDigits3 = `\p{N}{1,3}`
	patternKana    = "[\u4e00-\u9fa5\u3040-\u309f\u30a0-\u30ff]+"
	patternDS      = "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+"
)

// digitSplit matches runs of at most max numbers (\p{N}{1,max}).
type digitSplit struct{ max int }

func (m digitSplit) matches(dst []match, s string, _ *scratch) []match {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if !unicode.IsNumber(r) {
			i += size
			continue
		}
		end := i + size
		for n := 1; n < m.max && end < len(s); n++ {
			r, sz := utf8.DecodeRuneInString(s[end:])
			if !unicode.IsNumber(r) {
				break
			}
			end += sz
		}
		dst = append(dst, match{i, end})
		i = end
	}
	return dst
}

// kanaSplit matches runs of CJK ideographs (U+4E00-U+9FA5), hiragana and
// katakana.
type kanaSplit struct{}

func isKana(r rune) bool {
	return ('\u4e00' <= r && r <= '\u9fa5') || ('\u3040' <= r && r <= '\u30ff')
}

func (kanaSplit) matches(dst []match, s string, _ *scratch) []match {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if !isKana(r) {
			i += size
			continue
		}
		end := i + size
		for end < len(s) {
			r, sz := utf8.DecodeRuneInString(s[end:])
			if !isKana(r) {
				break
			}
			end += sz
		}
		dst = append(dst, match{i, end})
		i = end
	}
	return dst
}

// dsSplit matches DeepSeek V3's word pattern:
//
//	[ASCII punctuation][A-Za-z]+    punctuation glued to an ASCII word
//	[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+   a word, with one leading other
//	 ?[\p{P}\p{S}]+[\r\n]*          punctuation and symbols, then breaks
//	\s*[\r\n]+ | \s+(?!\S) | \s+     white space, as in clSplit
//
// Unlike clSplit's, it matches nothing at some characters (digits,
// controls): the regex engine moves on to the next one.
type dsSplit struct{}

const (
	dLetter = iota // \p{L}
	dMark          // \p{M}
	dPunct         // \p{P} or \p{S}
	dSpace         // \s
	dOther
)

func dsKind(s string, i int) (int, rune, int) {
	r, size := utf8.DecodeRuneInString(s[i:])
	if r < utf8.RuneSelf {
		switch c := byte(r); {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
			return dLetter, r, 1
		case c == ' ' || ('\t' <= c && c <= '\r'):
			return dSpace, r, 1
		case '0' <= c && c <= '9', c < ' ', c == 0x7f:
			return dOther, r, 1
		}
		return dPunct, r, 1 // the rest of ASCII is punctuation or symbols
	}
	switch {
	case unicode.IsLetter(r):
		return dLetter, r, size
	case unicode.IsMark(r):
		return dMark, r, size
	case unicode.IsPunct(r) || unicode.IsSymbol(r):
		return dPunct, r, size
	case unicode.IsSpace(r):
		return dSpace, r, size
	}
	return dOther, r, size
}

func isASCIIPunct(r rune) bool {
	return r < utf8.RuneSelf && r > ' ' && r != 0x7f &&
		!('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9')
}

func isASCIILetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

// dsRun returns the end of the run from i of characters whose kind is in
// the set (a bit mask of kinds).
func dsRun(s string, i int, set int) int {
	for i < len(s) {
		k, _, size := dsKind(s, i)
		if set&(1<<k) == 0 {
			break
		}
		i += size
	}
	return i
}

func (dsSplit) matches(dst []match, s string, _ *scratch) []match {
	for i := 0; i < len(s); {
		if end := dsMatch(s, i); end > i {
			dst = append(dst, match{i, end})
			i = end
			continue
		}
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return dst
}

// dsMatch returns the end of the match at i, or i for none.
func dsMatch(s string, i int) int {
	k, r, size := dsKind(s, i)
	next := i + size
	if isASCIIPunct(r) && next < len(s) && isASCIILetter(s[next]) {
		end := next
		for end < len(s) && isASCIILetter(s[end]) {
			end++
		}
		return end
	}
	word := 1<<dLetter | 1<<dMark
	// The word alternative, with a leading character that is none of \r,
	// \n, a letter, punctuation or a symbol (a mark leads itself).
	if k == dLetter || k == dMark {
		return dsRun(s, next, word)
	}
	if k != dPunct && r != '\r' && r != '\n' && next < len(s) {
		if kk, _, _ := dsKind(s, next); kk == dLetter || kk == dMark {
			return dsRun(s, next, word)
		}
	}
	if k == dPunct {
		return breaks(s, dsRun(s, next, 1<<dPunct))
	}
	if k != dSpace {
		return i // a digit or a control: no match here
	}
	if r == ' ' && next < len(s) {
		if kk, _, _ := dsKind(s, next); kk == dPunct {
			return breaks(s, dsRun(s, next, 1<<dPunct))
		}
	}
	j := dsRun(s, i, 1<<dSpace)
	for p := j - 1; p >= i; p-- {
		if isBreak(s[p]) {
			return p + 1
		}
	}
	if j == len(s) || j-i == size {
		return j
	}
	_, last := utf8.DecodeLastRuneInString(s[:j])
	return j - last
}
