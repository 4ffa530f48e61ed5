package hftok

import (
	"unicode"
	"unicode/utf8"
)

// The Split patterns of Llama 3 (cl100k_base's) and Qwen 3 (the same with
// single digits) are the most common in tokenizer files; clSplit finds
// their matches without the regex engine, several times faster. It is used
// only for these exact pattern strings, and FuzzFastSplit checks it against
// regexp2 match for match.
const (
	patternLlama3 = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	patternQwen   = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
)

// fastPattern returns the hand-written matcher of a known pattern.
func fastPattern(pat string) (matcher, bool) {
	switch pat {
	case patternLlama3:
		return clSplit{maxDigits: 3}, true
	case patternQwen:
		return clSplit{maxDigits: 1}, true
	case patternDigits3:
		return digitSplit{max: 3}, true
	case patternKana:
		return kanaSplit{}, true
	case patternDS:
		return dsSplit{}, true
	}
	return nil, false
}

// clSplit matches, at each position, the first alternative of the pattern
// that matches there, as the regex engine does:
//
//	(?i:'s|'t|'re|'ve|'m|'ll|'d)  a contraction
//	[^\r\n\p{L}\p{N}]?\p{L}+      a word, with one leading non-letter
//	\p{N}{1,maxDigits}            digits
//	 ?[^\s\p{L}\p{N}]+[\r\n]*     punctuation, then line breaks
//	\s*[\r\n]+                    white space up to its last line break
//	\s+(?!\S)                     white space but its last character
//	\s+                           that last character
type clSplit struct{ maxDigits int }

const (
	kLetter = iota
	kDigit
	kSpace
	kOther
)

// kindAt returns the class and size of the character at s[i]. Invalid
// UTF-8 is one U+FFFD, as the regex engine reads it: another character.
func kindAt(s string, i int) (int, int) {
	c := s[i]
	if c < utf8.RuneSelf {
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
			return kLetter, 1
		case '0' <= c && c <= '9':
			return kDigit, 1
		case c == ' ' || ('\t' <= c && c <= '\r'):
			return kSpace, 1
		}
		return kOther, 1
	}
	r, size := utf8.DecodeRuneInString(s[i:])
	switch {
	case unicode.IsLetter(r):
		return kLetter, size
	case unicode.IsNumber(r):
		return kDigit, size
	case unicode.IsSpace(r):
		return kSpace, size
	}
	return kOther, size
}

// run returns the end of the run of characters of kind k from i.
func run(s string, i, k int) int {
	for i < len(s) {
		kk, size := kindAt(s, i)
		if kk != k {
			break
		}
		i += size
	}
	return i
}

func isBreak(c byte) bool { return c == '\r' || c == '\n' }

func (m clSplit) matches(dst []match, s string, _ *scratch) []match {
	for i := 0; i < len(s); {
		end := m.match(s, i)
		dst = append(dst, match{i, end})
		i = end
	}
	return dst
}

// match returns the end of the match at i (every position has one).
func (m clSplit) match(s string, i int) int {
	if end := contraction(s, i); end > 0 {
		return end
	}
	k, size := kindAt(s, i)
	switch k {
	case kLetter:
		return run(s, i+size, kLetter)
	case kDigit:
		end := i + size
		for n := 1; n < m.maxDigits && end < len(s); n++ {
			kk, sz := kindAt(s, end)
			if kk != kDigit {
				break
			}
			end += sz
		}
		return end
	case kOther:
		// A word with this character in front, if a letter follows.
		if i+size < len(s) && !isBreak(s[i]) {
			if kk, sz := kindAt(s, i+size); kk == kLetter {
				return run(s, i+size+sz, kLetter)
			}
		}
		return breaks(s, run(s, i+size, kOther))
	}
	// White space. A space before a letter starts the word; before
	// punctuation, its run.
	if i+size < len(s) && !isBreak(s[i]) {
		kk, sz := kindAt(s, i+size)
		if kk == kLetter {
			return run(s, i+size+sz, kLetter)
		}
		if kk == kOther && s[i] == ' ' {
			return breaks(s, run(s, i+size+sz, kOther))
		}
	}
	j := run(s, i, kSpace)
	for p := j - 1; p >= i; p-- { // the last line break of the run
		if isBreak(s[p]) {
			return p + 1
		}
	}
	if j == len(s) || j-i == size {
		return j // up to the end, or one character: \s+
	}
	// All but the last character (\s+(?!\S)).
	_, last := utf8.DecodeLastRuneInString(s[:j])
	return j - last
}

// breaks returns the end of the run of \r and \n at i.
func breaks(s string, i int) int {
	for i < len(s) && isBreak(s[i]) {
		i++
	}
	return i
}

// contraction returns the end of a contraction at i ('s, 't, 're, 've, 'm,
// 'll, 'd in any case), or 0.
func contraction(s string, i int) int {
	if s[i] != '\'' || i+1 >= len(s) {
		return 0
	}
	lower := func(j int) byte {
		if j >= len(s) {
			return 0
		}
		return s[j] | 0x20
	}
	switch lower(i + 1) {
	case 's', 't', 'm', 'd':
		return i + 2
	case 'r', 'v':
		if lower(i+2) == 'e' {
			return i + 3
		}
	case 'l':
		if lower(i+2) == 'l' {
			return i + 3
		}
	}
	return 0
}
