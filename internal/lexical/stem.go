package lexical

// The English stemmer: the first step of Porter2 (the Snowball English
// stemmer, steps 0 to 1c), on lowercase ASCII words. It folds the
// inflections a question and its answer differ by — plurals ("photos",
// "classes", "ponies"), the past and the participles ("painted",
// "painting", "hoping", "hopped") and a final y ("happy", "happily" is
// left) — and nothing else: the later steps strip derivational suffixes
// ("-ization", "-ful", "-ness"), which conflates words that mean different
// things ("university" and "universe" both become "univers") and matters
// less for finding a turn than for a search engine's recall. Words of
// other languages are not stemmed (only ASCII letters are); an English
// stemmer would mangle them, and a word and its question meet anyway when
// written alike.

// stem returns w stemmed: w itself, shortened, or with one byte appended.
func stem(w []byte) []byte {
	if len(w) <= 2 {
		return w
	}
	if s, ok := exception(w); ok {
		return append(w[:0], s...)
	}
	// y at the start or after a vowel is a consonant: mark it 'Y'.
	for i, c := range w {
		if c == 'y' && (i == 0 || isVowel(w[i-1])) {
			w[i] = 'Y'
		}
	}
	r1 := region1(w)
	w = step1a(w)
	switch string(w) {
	case "inning", "outing", "canning", "herring", "earring", "proceed", "exceed", "succeed":
	default:
		w = step1b(w, r1)
		w = step1c(w)
	}
	for i, c := range w {
		if c == 'Y' {
			w[i] = 'y'
		}
	}
	return w
}

// exception returns the stem of Porter2's irregular words that steps 0–1
// touch.
func exception(w []byte) (string, bool) {
	switch string(w) {
	case "skis":
		return "ski", true
	case "skies", "sky":
		return "sky", true
	case "dying":
		return "die", true
	case "lying":
		return "lie", true
	case "tying":
		return "tie", true
	case "idly":
		return "idl", true
	case "gently":
		return "gentl", true
	case "ugly":
		return "ugli", true
	case "early":
		return "earli", true
	case "only":
		return "onli", true
	case "singly":
		return "singl", true
	case "news", "howe", "atlas", "cosmos", "bias", "andes":
		return string(w), true
	}
	return "", false
}

func isVowel(c byte) bool {
	switch c {
	case 'a', 'e', 'i', 'o', 'u', 'y':
		return true
	}
	return false
}

// region1 is where R1 starts: after the first non-vowel that follows a
// vowel (len(w) when there is none), or after the prefixes gener, commun
// and arsen.
func region1(w []byte) int {
	for _, p := range [...]string{"gener", "commun", "arsen"} {
		if len(w) >= len(p) && string(w[:len(p)]) == p {
			return len(p)
		}
	}
	for i := 1; i < len(w); i++ {
		if !isVowel(w[i]) && isVowel(w[i-1]) {
			return i + 1
		}
	}
	return len(w)
}

func hasSuffix(w []byte, s string) bool {
	return len(w) >= len(s) && string(w[len(w)-len(s):]) == s
}

// hasVowel reports whether w holds a vowel.
func hasVowel(w []byte) bool {
	for _, c := range w {
		if isVowel(c) {
			return true
		}
	}
	return false
}

// step1a: plurals.
func step1a(w []byte) []byte {
	switch {
	case hasSuffix(w, "sses"):
		return w[:len(w)-2]
	case hasSuffix(w, "ied"), hasSuffix(w, "ies"):
		if len(w) > 4 {
			return w[:len(w)-2] // ponies → poni
		}
		return w[:len(w)-1] // ties → tie
	case hasSuffix(w, "us"), hasSuffix(w, "ss"):
		return w
	case hasSuffix(w, "s"):
		// Delete the s when a vowel comes before the letter before it:
		// gaps → gap, kiwis → kiwi, but gas and this stay.
		if len(w) >= 3 && hasVowel(w[:len(w)-2]) {
			return w[:len(w)-1]
		}
	}
	return w
}

// step1b: the past and the participles.
func step1b(w []byte, r1 int) []byte {
	for _, s := range [...]string{"eedly", "eed"} {
		if hasSuffix(w, s) {
			if len(w)-len(s) >= r1 {
				return w[:len(w)-len(s)+2] // agreed → agree
			}
			return w
		}
	}
	for _, s := range [...]string{"ingly", "edly", "ing", "ed"} {
		if !hasSuffix(w, s) {
			continue
		}
		stem := w[:len(w)-len(s)]
		if !hasVowel(stem) {
			return w // sing, bed
		}
		switch {
		case hasSuffix(stem, "at"), hasSuffix(stem, "bl"), hasSuffix(stem, "iz"):
			return append(stem, 'e') // luxuriated → luxuriate
		case endsDouble(stem):
			return stem[:len(stem)-1] // hopped → hop
		case isShort(stem):
			return append(stem, 'e') // hoped → hope
		}
		return stem
	}
	return w
}

// endsDouble reports whether w ends in bb, dd, ff, gg, mm, nn, pp, rr or
// tt.
func endsDouble(w []byte) bool {
	if len(w) < 2 || w[len(w)-1] != w[len(w)-2] {
		return false
	}
	switch w[len(w)-1] {
	case 'b', 'd', 'f', 'g', 'm', 'n', 'p', 'r', 't':
		return true
	}
	return false
}

// isShort reports whether w is a short word: its R1 is empty and it ends
// in a short syllable (a vowel between two non-vowels, the second not w, x
// or Y; or, for a two-letter word, a vowel then a non-vowel).
func isShort(w []byte) bool {
	if region1(w) < len(w) {
		return false
	}
	n := len(w)
	switch {
	case n == 2:
		return isVowel(w[0]) && !isVowel(w[1])
	case n >= 3:
		c := w[n-1]
		return !isVowel(w[n-3]) && isVowel(w[n-2]) && !isVowel(c) && c != 'w' && c != 'x' && c != 'Y'
	}
	return false
}

// step1c: a final y after a non-vowel that is not the first letter
// becomes i (cry → cri, happy → happi; by and say stay).
func step1c(w []byte) []byte {
	n := len(w)
	if n > 2 && (w[n-1] == 'y' || w[n-1] == 'Y') && !isVowel(w[n-2]) {
		w[n-1] = 'i'
	}
	return w
}
