package delimit

import (
	"strings"
	"unicode/utf8"
)

// Joiner is inserted after the first character of a protected string found
// in content: U+2060 WORD JOINER.
const Joiner = "\u2060"

// Neutralize appends s to dst with every occurrence of each protected
// string broken by [Joiner], and reports whether it changed anything.
// Protected strings must have at least two characters (a joiner after the
// only character breaks nothing), be valid UTF-8 and not contain Joiner.
//
// before and after are the literal text that will stand right before and
// after s once rendered: a protected string that would form across such a
// join (content ending in "【/用户" before a literal "背景】", or content
// "/" between "<" and "b>") is broken too.
//
// A caller neutralising many values against the same strings builds a
// [Matcher] once and calls its Neutralize: linear in the value however many
// strings there are.
func Neutralize(dst []byte, s, before, after string, protected []string) ([]byte, bool) {
	return scanNeutralize(dst, s, before, after, protected)
}

// NeedsNeutralizing reports whether [Neutralize] would change s.
func NeedsNeutralizing(s, before, after string, protected []string) bool {
	return scanNeeds(s, before, after, protected)
}

// scanNeutralize is Neutralize by one search per protected string: the
// fastest way for a few of them (strings.Index is vectorised), and
// costing their number times the value's length.
func scanNeutralize(dst []byte, s, before, after string, protected []string) ([]byte, bool) {
	changed := false
	// Joins first: an occurrence that starts in before and ends in s, or
	// starts in s and ends in after, needs a joiner at s's edge.
	headBreak := crossesStart(before, s, after, protected)
	tailBreak := crossesEnd(s, after, protected)
	if headBreak {
		dst = append(dst, Joiner...)
		changed = true
	}
	// next[i] is where protected[i] first occurs in s at or after pos (-1:
	// nowhere). Only an entry the last break went past is searched again,
	// so content full of delimiters costs linear time, not quadratic: block
	// content comes from MCP servers and must not be able to stall a host.
	var buf [16]int
	next := buf[:0]
	if len(protected) > len(buf) {
		next = make([]int, 0, len(protected))
	}
	for _, p := range protected {
		next = append(next, strings.Index(s, p))
	}
	pos := 0
	for {
		at, which := -1, -1
		for i, p := range protected {
			if next[i] >= 0 && next[i] < pos {
				if j := strings.Index(s[pos:], p); j >= 0 {
					next[i] = pos + j
				} else {
					next[i] = -1
				}
			}
			// The earliest occurrence; the longest one when several start
			// there (a joiner after their shared first character breaks all).
			if next[i] >= 0 && (at < 0 || next[i] < at || (next[i] == at && len(p) > len(protected[which]))) {
				at, which = next[i], i
			}
		}
		if at < 0 {
			break
		}
		_, size := utf8.DecodeRuneInString(protected[which])
		dst = append(dst, s[pos:at+size]...)
		dst = append(dst, Joiner...)
		pos = at + size
		changed = true
	}
	dst = append(dst, s[pos:]...)
	if tailBreak {
		dst = append(dst, Joiner...)
		changed = true
	}
	return dst, changed
}

// scanNeeds is NeedsNeutralizing by one search per protected string.
func scanNeeds(s, before, after string, protected []string) bool {
	at, _ := earliest(s, protected)
	return at >= 0 || crossesStart(before, s, after, protected) || crossesEnd(s, after, protected)
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
// and ends inside s, or spans all of s and ends inside after (either way a
// joiner at s's start breaks it).
func crossesStart(before, s, after string, protected []string) bool {
	if before == "" || s == "" {
		return false
	}
	for _, p := range protected {
		for k := 1; k < len(p); k++ { // k bytes of p come from before
			if !strings.HasSuffix(before, p[:k]) {
				continue
			}
			rest := p[k:]
			if strings.HasPrefix(s, rest) ||
				(len(rest) > len(s) && strings.HasPrefix(rest, s) && strings.HasPrefix(after, rest[len(s):])) {
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

// Crosses reports whether some protected string starts inside left and
// ends inside right and takes in value text: whether writing right after
// left would let content form one across the join. leftFixed and
// rightFixed are how many bytes at the end of left and at the start of
// right are the template's own literal text: a delimiter made of those
// alone (a line break, then the "[" that opens every block) is the
// template's structure, not a forgery. The caller breaks a crossing by
// writing [Joiner] in between.
func Crosses(left []byte, leftFixed int, right string, rightFixed int, protected []string) bool {
	for _, p := range protected {
		for k := 1; k < len(p) && k <= len(left); k++ { // k bytes of p come from left
			if k <= leftFixed && len(p)-k <= rightFixed {
				continue // the template's own text on both sides
			}
			if len(right) == 0 || right[0] != p[k] || left[len(left)-1] != p[k-1] {
				continue // the bytes either side of the join: most joins end here
			}
			if strings.HasPrefix(right, p[k:]) && string(left[len(left)-k:]) == p[:k] {
				return true
			}
		}
	}
	return false
}
