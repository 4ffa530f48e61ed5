package fingerprint

import (
	"strings"
	"unicode/utf8"
)

// Joiner is inserted after the first character of a protected string found
// in content: U+2060 WORD JOINER.
const Joiner = "\u2060"

// Neutralize appends s to dst with every occurrence of each protected
// string broken by [Joiner], and reports whether it changed anything.
// Protected strings must be non-empty and must not contain Joiner.
//
// before and after are the literal text that will stand right before and
// after s once rendered: a protected string that would form across such a
// join (content ending in "【/用户" before a literal "背景】") is broken
// too.
func Neutralize(dst []byte, s, before, after string, protected []string) ([]byte, bool) {
	changed := false
	// Joins first: an occurrence that starts in before and ends in s, or
	// starts in s and ends in after, needs a joiner at s's edge.
	headBreak := crossesStart(before, s, protected)
	tailBreak := crossesEnd(s, after, protected)
	if headBreak {
		dst = append(dst, Joiner...)
		changed = true
	}
	for {
		at, p := earliest(s, protected)
		if at < 0 {
			break
		}
		_, size := utf8.DecodeRuneInString(p)
		dst = append(dst, s[:at+size]...)
		dst = append(dst, Joiner...)
		s = s[at+size:]
		changed = true
	}
	dst = append(dst, s...)
	if tailBreak {
		dst = append(dst, Joiner...)
		changed = true
	}
	return dst, changed
}

// NeedsNeutralizing reports whether [Neutralize] would change s.
func NeedsNeutralizing(s, before, after string, protected []string) bool {
	at, _ := earliest(s, protected)
	return at >= 0 || crossesStart(before, s, protected) || crossesEnd(s, after, protected)
}

// earliest returns the first index in s at which a protected string starts,
// and that string (the longest one, when several start there).
func earliest(s string, protected []string) (int, string) {
	at, which := -1, ""
	for _, p := range protected {
		i := strings.Index(s, p)
		if i < 0 {
			continue
		}
		if at < 0 || i < at || (i == at && len(p) > len(which)) {
			at, which = i, p
		}
	}
	return at, which
}

// crossesStart reports whether some protected string starts inside before
// and ends inside s (so that a joiner at s's start breaks it).
func crossesStart(before, s string, protected []string) bool {
	if before == "" || s == "" {
		return false
	}
	for _, p := range protected {
		for k := 1; k < len(p); k++ { // k bytes of p come from before
			if strings.HasSuffix(before, p[:k]) && strings.HasPrefix(s, p[k:]) {
				return true
			}
		}
	}
	return false
}

// crossesEnd reports whether some protected string starts inside s and ends
// inside after.
func crossesEnd(s, after string, protected []string) bool {
	if after == "" || s == "" {
		return false
	}
	for _, p := range protected {
		for k := 1; k < len(p); k++ { // k bytes of p come from s
			if strings.HasSuffix(s, p[:k]) && strings.HasPrefix(after, p[k:]) {
				return true
			}
		}
	}
	return false
}
