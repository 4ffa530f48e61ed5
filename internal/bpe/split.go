package bpe

import "unicode/utf8"

// The pre-tokenizers. Both encodings split text into pieces with a regular
// expression before BPE, and BPE never merges across pieces. tiktoken
// defines them as
//
//	o200k_base:  [^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?
//	            |[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?
//	            |\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+
//	cl100k_base: (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}
//	            | ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
//
// matched as a backtracking engine does (leftmost alternative first, greedy
// quantifiers giving back one character at a time). The splitter below
// implements exactly that match, alternative by alternative, in one
// forward pass: no backtracking is ever more than a run of one class, so
// finding the pieces of a text takes time linear in its length.
//
// Two details follow the reference (tiktoken's Rust regex engine) rather
// than what a Go regexp engine would do: (?i) folds case as Unicode's
// simple case folding does, so 'ſ (U+017F) is the contraction 's; and the
// classes come from Go's unicode tables, whose version may be older than
// the reference's: characters those tables do not know are marked
// cUnknown, and Count treats the stretch around them apart (see
// countUnknown).

// splitter finds the pieces of one encoding.
type splitter struct {
	cls   *classTable
	o200k bool
}

// at returns the classes and size of the character at text[i:]; 0 and 0
// at the end.
func (s *splitter) at(text string, i int) (uint8, int) {
	if i >= len(text) {
		return 0, 0
	}
	if c := text[i]; c < utf8.RuneSelf {
		return s.cls.blocks[c], 1
	}
	r, n := utf8.DecodeRuneInString(text[i:])
	return s.cls.of(r), n
}

// isPre reports [^\r\n\p{L}\p{N}], the optional character before a word.
func isPre(c uint8) bool { return c&(cLetter|cNumber|cNewline) == 0 }

// isPunct reports [^\s\p{L}\p{N}].
func isPunct(c uint8) bool { return c&(cSpace|cLetter|cNumber) == 0 }

// next returns the end of the piece that starts at text[i:], i < len(text):
// the first alternative of the pattern that matches there, in the
// pattern's order — a word (with its contraction), digits, punctuation,
// white space.
func (s *splitter) next(text string, i int) int {
	c0, n0 := s.at(text, i)
	if e := s.word(text, i, c0, n0); e >= 0 {
		return e
	}
	if c0&cNumber != 0 {
		return s.digits(text, i+n0)
	}
	if e := s.punct(text, i, c0); e >= 0 {
		return e
	}
	return s.space(text, i)
}

// word matches the encoding's word alternatives at text[i:] (its first
// character of classes c0, n0 bytes), returning the end or -1.
func (s *splitter) word(text string, i int, c0 uint8, n0 int) int {
	if s.o200k {
		return s.o200kWord(text, i, c0, n0)
	}
	if text[i] == '\'' {
		if e := s.contraction(text, i); e > i {
			return e
		}
	}
	// [^\r\n\p{L}\p{N}]?\p{L}+
	if isPre(c0) {
		if c1, n1 := s.at(text, i+n0); n1 > 0 && c1&cLetter != 0 {
			return s.run(text, i+n0, cLetter)
		}
	}
	if c0&cLetter != 0 {
		return s.run(text, i, cLetter)
	}
	return -1
}

// o200kWord matches o200k_base's two word alternatives, each first with
// the optional leading character taken, then without it.
func (s *splitter) o200kWord(text string, i int, c0 uint8, n0 int) int {
	pre := isPre(c0)
	if !pre && c0&(cUpper|cLower) == 0 {
		return -1
	}
	if pre {
		if e := s.lowerWord(text, i+n0); e >= 0 {
			return e
		}
	}
	if e := s.lowerWord(text, i); e >= 0 {
		return e
	}
	if pre {
		if e := s.upperWord(text, i+n0); e >= 0 {
			return e
		}
	}
	return s.upperWord(text, i)
}

// digits matches the rest of \p{N}{1,3} from e, after its first digit.
func (s *splitter) digits(text string, e int) int {
	for range 2 {
		c, n := s.at(text, e)
		if n == 0 || c&cNumber == 0 {
			break
		}
		e += n
	}
	return e
}

// punct matches  ?[^\s\p{L}\p{N}]+[\r\n/]* (o200k), [\r\n]* (cl100k) at
// text[i:], returning its end or -1.
func (s *splitter) punct(text string, i int, c0 uint8) int {
	j := -1
	if isPunct(c0) {
		j = i
	} else if text[i] == ' ' {
		if c1, n1 := s.at(text, i+1); n1 > 0 && isPunct(c1) {
			j = i + 1
		}
	}
	if j < 0 {
		return -1
	}
	e := j
	for {
		c, n := s.at(text, e)
		if n == 0 || !isPunct(c) {
			break
		}
		e += n
	}
	for e < len(text) && (text[e] == '\r' || text[e] == '\n' || (s.o200k && text[e] == '/')) {
		e++
	}
	return e
}

// space matches what is left, which starts with white space: \s*[\r\n]+
// ends after the run's last newline; else \s+(?!\S) gives the run's last
// character to what follows; else \s+ (the run ends the text, or is one
// character).
func (s *splitter) space(text string, i int) int {
	e, afterNewline, last := i, -1, i
	for {
		c, n := s.at(text, e)
		if n == 0 || c&cSpace == 0 {
			break
		}
		last = e
		e += n
		if c&cNewline != 0 {
			afterNewline = e
		}
	}
	switch {
	case afterNewline >= 0:
		return afterNewline
	case e < len(text) && last > i:
		return last
	}
	return e
}

// lowerWord matches [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+
// and an optional contraction at text[j:], returning its end or -1.
//
// The greedy first run takes every upper-class character; if a lower-only
// character (Ll) follows, the second run starts there and takes every
// lower-class character. Otherwise the first run gives characters back
// until the second can take one: the last character of the run that is in
// both classes (Lm, Lo, M), and only it, since what follows it in the run
// is upper-only.
func (s *splitter) lowerWord(text string, j int) int {
	e, lastBoth := j, -1
	for {
		c, n := s.at(text, e)
		if n == 0 {
			break
		}
		if c&cUpper == 0 {
			if c&cLower != 0 {
				return s.contraction(text, s.run(text, e, cLower))
			}
			break
		}
		e += n
		if c&cLower != 0 {
			lastBoth = e
		}
	}
	if lastBoth < 0 {
		return -1
	}
	return s.contraction(text, lastBoth)
}

// upperWord matches [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*
// and an optional contraction at text[j:], returning its end or -1.
func (s *splitter) upperWord(text string, j int) int {
	if c, n := s.at(text, j); n == 0 || c&cUpper == 0 {
		return -1
	}
	return s.contraction(text, s.run(text, s.run(text, j, cUpper), cLower))
}

// run returns the end of the run of characters in class at text[j:].
func (s *splitter) run(text string, j int, class uint8) int {
	for {
		c, n := s.at(text, j)
		if n == 0 || c&class == 0 {
			return j
		}
		j += n
	}
}

// contraction returns the end of (?i:'s|'t|'re|'ve|'m|'ll|'d) at text[j:],
// or j when there is none. Case folds as in Unicode's simple case folding,
// which adds only ſ (U+017F, folding to s) to the ASCII letters here.
func (s *splitter) contraction(text string, j int) int {
	if j+1 >= len(text) || text[j] != '\'' {
		return j
	}
	lower := func(k int) byte {
		if k >= len(text) {
			return 0
		}
		if b := text[k]; 'A' <= b && b <= 'Z' {
			return b + 'a' - 'A'
		}
		return text[k]
	}
	switch lower(j + 1) {
	case 's', 't', 'm', 'd':
		return j + 2
	case 'r', 'v':
		if lower(j+2) == 'e' {
			return j + 3
		}
	case 'l':
		if lower(j+2) == 'l' {
			return j + 3
		}
	}
	if len(text) >= j+3 && text[j+1:j+3] == "ſ" {
		return j + 3
	}
	return j
}
