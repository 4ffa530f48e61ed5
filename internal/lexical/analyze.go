package lexical

import (
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Limits that keep the analysis of hostile text linear and its scratch
// memory bounded.
const (
	// MaxTermBytes is the longest word part (and joined compound) that is
	// indexed, in bytes after case folding; a longer run of letters (a
	// base64 blob, a hash, minified code) is read and dropped.
	MaxTermBytes = 128
	// maxMarks is how many combining marks one character keeps; more
	// (stacked "Zalgo" marks) are read and dropped.
	maxMarks = 8
)

// analyzer splits text into terms. Its buffers are scratch reused from one
// text to the next; it is not safe for concurrent use.
type analyzer struct {
	part     []byte // the current word part, case-folded
	long     bool   // the part outgrew MaxTermBytes: it is dropped
	join     []byte // the current compound's parts, joined
	joinLong bool   // the joined compound outgrew MaxTermBytes
	nparts   int    // parts of the current compound emitted
	marks    int    // combining marks since the last base character
	nfc      []byte // scratch of NFC
	prev     []byte // the previous character (cluster) of a run without spaces
	cur      []byte // the current one
	bigram   []byte
	clusters int // characters of the current run without spaces

	keys []uint64  // the terms' keys, in text order
	tmp  []uint64  // scratch of sortKeys
	strs *[]string // when not nil, the terms as text too (Tokens)
}

// run appends the terms of text to a.keys.
func (a *analyzer) run(text string) {
	t := classes()
	for i := 0; i < len(text); {
		r, n := decode(text, i)
		switch t.of(r) & kindMask {
		case kWord:
			i = a.word(t, text, i)
		case kNoSpace:
			i = a.noSpace(t, text, i)
		default:
			i += n
		}
	}
}

// word reads the words from text[i:], which starts with a word character,
// up to the first character that ends them, and returns where that is.
//
// A word is split into parts at hyphens and underscores between word
// characters and at camelCase boundaries ("debtToIncome", "HTTPServer");
// each part is a term and so is the whole compound, joined ("debttoincome"),
// so that "fee_amount", "feeAmount" and "fee-amount" all meet. An
// apostrophe followed by an English clitic ('s, 't, 're, 've, 'll, 'd,
// 'm) ends the word and the clitic is dropped ("Caroline's" is
// "caroline", "don't" is "do"); any other apostrophe between letters starts a new word
// ("l'homme" is "l", "homme"). A comma or period between digits stays in
// the number ("3,450", "3.14").
func (a *analyzer) word(t *classTable, text string, i int) int {
	var prevCase, prev2Case uint8 // case of the last two letters of the part
	lastAt := 0                   // where the part's last letter starts
	lastDigit := false
	for i < len(text) {
		r, n := decode(text, i)
		c := t.of(r)
		switch c & kindMask {
		case kWord:
			cs := c & (fUpper | fLower)
			switch {
			case cs == fUpper && prevCase == fLower: // fooBar
				a.endPart()
				lastAt = 0
			case cs == fLower && prevCase == fUpper && prev2Case == fUpper && !pluralS(t, text, i, r, n): // HTTPServer
				a.splitAt(lastAt)
				lastAt = 0
			}
			if !a.long {
				lastAt = len(a.part)
			}
			a.addRune(r)
			prev2Case, prevCase = prevCase, cs
			lastDigit = c&fDigit != 0
			a.marks = 0
			i += n
		case kMark:
			if a.marks < maxMarks {
				a.add(text[i : i+n])
			}
			a.marks++
			i += n
		case kIgnore:
			i += n
		case kJoin:
			if !startsWord(t, text, i+n) {
				a.endCompound()
				return i + n
			}
			a.endPart()
			prevCase, prev2Case, lastAt, lastDigit = 0, 0, 0, false
			i += n
		case kApos:
			j := i + n
			k, ok := clitic(t, text, j)
			if ok && text[j]|0x20 == 't' && !a.long && len(a.part) > 1 && a.part[len(a.part)-1] == 'n' {
				a.part = a.part[:len(a.part)-1] // n't: "don't" is "do", "isn't" is "is"
			}
			a.endCompound()
			if ok {
				return k
			}
			if !startsWord(t, text, j) {
				return j
			}
			prevCase, prev2Case, lastAt, lastDigit = 0, 0, 0, false
			i = j // l'homme: a new word
		default:
			if (r == '.' || r == ',') && lastDigit && i+1 < len(text) && digitAt(t, text, i+1) {
				a.add(text[i : i+1])
				lastDigit = false
				i++
				continue
			}
			a.endCompound()
			return i
		}
	}
	a.endCompound()
	return i
}

// startsWord reports whether text[i:] starts with a word character.
func startsWord(t *classTable, text string, i int) bool {
	if i >= len(text) {
		return false
	}
	r, _ := decode(text, i)
	return t.of(r)&kindMask == kWord
}

// digitAt reports whether text[i:] starts with a decimal digit.
func digitAt(t *classTable, text string, i int) bool {
	r, _ := decode(text, i)
	return t.of(r)&fDigit != 0
}

// pluralS reports whether r, at text[i:i+n], is a lowercase s that ends
// the word after capitals: "PDFs", "URLs" are one word each.
func pluralS(t *classTable, text string, i int, r rune, n int) bool {
	return r == 's' && !startsWord(t, text, i+n)
}

// clitic reports whether text[j:] starts with an English clitic that ends
// the word (s, t, d, m, re, ve, ll, any case), and returns where it ends.
// It reads at most three characters.
func clitic(t *classTable, text string, j int) (int, bool) {
	k := j
	for k < len(text) && k-j < 3 && text[k] < utf8.RuneSelf && t.of(rune(text[k]))&kindMask == kWord {
		k++
	}
	if startsWord(t, text, k) {
		return 0, false // more letters follow: not a clitic
	}
	switch len(text[j:k]) {
	case 1:
		switch text[j] | 0x20 {
		case 's', 't', 'd', 'm':
			return k, true
		}
	case 2:
		c0, c1 := text[j]|0x20, text[j+1]|0x20
		if c0 == 'r' && c1 == 'e' || c0 == 'v' && c1 == 'e' || c0 == 'l' && c1 == 'l' {
			return k, true
		}
	}
	return 0, false
}

// add appends s to the part, unless that makes it too long.
func (a *analyzer) add(s string) {
	if a.long || len(a.part)+len(s) > MaxTermBytes {
		a.long = true
		return
	}
	a.part = append(a.part, s...)
}

// addRune appends r, case-folded, to the part. Folding is Unicode simple
// case folding (lower(upper(r))), plus the full foldings of ß and ẞ ("ss")
// and of the Latin ligatures ﬀ–ﬆ, so "STRASSE", "Straße" and "strasse"
// meet.
func (a *analyzer) addRune(r rune) {
	if r < utf8.RuneSelf {
		if 'A' <= r && r <= 'Z' {
			r += 'a' - 'A'
		}
		if a.long || len(a.part) >= MaxTermBytes {
			a.long = true
			return
		}
		a.part = append(a.part, byte(r))
		return
	}
	switch {
	case r == 'ß' || r == 'ẞ':
		a.add("ss")
		return
	case 0xFB00 <= r && r <= 0xFB06:
		a.add([...]string{"ff", "fi", "fl", "ffi", "ffl", "st", "st"}[r-0xFB00])
		return
	}
	var buf [utf8.UTFMax]byte
	n := utf8.EncodeRune(buf[:], unicode.ToLower(unicode.ToUpper(r)))
	a.add(string(buf[:n]))
}

// splitAt ends the part before its byte at, which starts the next part.
func (a *analyzer) splitAt(at int) {
	if a.long || at == 0 || at >= len(a.part) {
		a.endPart()
		return
	}
	var tail [2 * utf8.UTFMax]byte // one letter, folded ("ß" is two)
	n := copy(tail[:], a.part[at:])
	a.part = a.part[:at]
	a.endPart()
	a.part = append(a.part, tail[:n]...)
}

// endPart emits the part as a term and adds it to the compound.
func (a *analyzer) endPart() {
	switch {
	case a.long:
		a.joinLong = true
	case len(a.part) > 0:
		if len(a.join)+len(a.part) > MaxTermBytes {
			a.joinLong = true
		}
		if !a.joinLong {
			a.join = append(a.join, a.part...)
		}
		a.nparts++
		a.emitWord(a.part)
	}
	a.part, a.long = a.part[:0], false
}

// endCompound ends the part and emits the compound of two parts or more,
// joined.
func (a *analyzer) endCompound() {
	a.endPart()
	if a.nparts > 1 && !a.joinLong {
		a.emitWord(a.join)
	}
	a.join, a.joinLong, a.nparts = a.join[:0], false, 0
}

// emitWord emits a word, case-folded: composed (NFC), so that a decomposed
// "ação" meets a composed one; left out when it is a stop word; stemmed
// when it is English-looking (ASCII letters only). It may modify w.
func (a *analyzer) emitWord(w []byte) {
	ascii, letters := true, true
	for _, c := range w {
		if c >= utf8.RuneSelf {
			ascii = false
			break
		}
		if c < 'a' || c > 'z' {
			letters = false
		}
	}
	switch {
	case !ascii:
		if !norm.NFC.IsNormal(w) {
			a.nfc = norm.NFC.Append(a.nfc[:0], w...)
			w = a.nfc
		}
	case isStopWord(w):
		return
	case letters:
		w = stem(w)
	}
	a.emit(w)
}

// noSpace reads a run of characters of scripts written without spaces
// from text[i:] and emits its overlapping bigrams of characters (a
// character with its combining marks), or the character alone when the run
// is one character long; it returns where the run ends.
func (a *analyzer) noSpace(t *classTable, text string, i int) int {
	a.prev, a.cur, a.clusters, a.marks = a.prev[:0], a.cur[:0], 0, 0
	for i < len(text) {
		r, n := decode(text, i)
		switch t.of(r) & kindMask {
		case kNoSpace:
			a.endCluster()
			a.cur = append(a.cur, text[i:i+n]...)
			a.marks = 0
		case kMark:
			if a.marks < maxMarks {
				a.cur = append(a.cur, text[i:i+n]...)
			}
			a.marks++
		case kIgnore:
		default:
			return a.endRun(i)
		}
		i += n
	}
	return a.endRun(i)
}

// endCluster ends the current character of a run: it makes a bigram with
// the previous one.
func (a *analyzer) endCluster() {
	if len(a.cur) == 0 {
		return
	}
	a.clusters++
	if len(a.prev) > 0 {
		a.bigram = append(append(a.bigram[:0], a.prev...), a.cur...)
		a.emit(a.bigram)
	}
	a.prev, a.cur = a.cur, a.prev[:0]
}

func (a *analyzer) endRun(i int) int {
	a.endCluster()
	if a.clusters == 1 {
		a.emit(a.prev)
	}
	return i
}

// emit adds a term.
func (a *analyzer) emit(term []byte) {
	a.keys = append(a.keys, keyOf(term))
	if a.strs != nil {
		*a.strs = append(*a.strs, string(term))
	}
}

// keyOf is a term's 48-bit key: FNV-1a, then a 64-bit finalizer (the
// murmur3 one) to spread it, top 48 bits. Fixed, so keys are the same in
// every process; two terms that share a key count as one (with a million
// distinct terms, the chance that any two do is about 1 in 500).
func keyOf(term []byte) uint64 {
	h := uint64(14695981039346656037)
	for _, c := range term {
		h ^= uint64(c)
		h *= 1099511628211
	}
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return h >> 16
}
