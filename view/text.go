package view

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/width"
)

// runeWidth is the number of terminal columns r takes: 0 for combining
// marks and format characters (such as the U+2060 WORD JOINER contextasm
// inserts to neutralise a forged delimiter), 2 for East Asian wide and
// fullwidth characters (CJK, most emoji), 1 otherwise. Ambiguous-width
// characters count 1, as terminals outside East Asian locales show them.
// Controls never reach this function: [clean] escapes them first.
func runeWidth(r rune) int {
	if unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf) {
		return 0
	}
	switch width.LookupRune(r).Kind() {
	case width.EastAsianWide, width.EastAsianFullwidth:
		return 2
	}
	return 1
}

// textWidth is the number of terminal columns s takes.
func textWidth(s string) int {
	n := 0
	for _, r := range s {
		n += runeWidth(r)
	}
	return n
}

// clean makes s safe to print on a terminal: every control character
// (ESC above all, which could drive the terminal), every bidirectional
// override and every invalid byte is written as a Go escape. Dumps read
// from files carry whatever their author put in them.
func clean(s string) string {
	ok := true
	for _, r := range s {
		if !printable(r) {
			ok = false
			break
		}
	}
	if ok {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case printable(r):
			b.WriteRune(r)
		case r < 0x80:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
		i += size
	}
	return b.String()
}

// printable reports whether r may be written to a terminal as it is. The
// word joiner is allowed: contextasm itself writes it.
func printable(r rune) bool {
	if r == '\u2060' {
		return true
	}
	if r == utf8.RuneError {
		return false
	}
	return unicode.IsGraphic(r) && !unicode.Is(unicode.Bidi_Control, r)
}

// ellipsis shortens s to at most w columns by replacing its middle with
// "…", keeping both ends: request_ids tend to differ at the end (turn-04,
// a file name) and to share a prefix (mcp:server:).
func ellipsis(s string, w int) string {
	if textWidth(s) <= w {
		return s
	}
	if w < 1 {
		return ""
	}
	keep := w - 1
	head := (keep + 1) / 2
	tail := keep - head
	var hb, tb []rune
	n := 0
	for _, r := range s {
		if n+runeWidth(r) > head {
			break
		}
		n += runeWidth(r)
		hb = append(hb, r)
	}
	rs := []rune(s)
	n = 0
	for i := len(rs) - 1; i >= 0; i-- {
		if n+runeWidth(rs[i]) > tail {
			break
		}
		n += runeWidth(rs[i])
		tb = append(tb, rs[i])
	}
	for i, j := 0, len(tb)-1; i < j; i, j = i+1, j-1 {
		tb[i], tb[j] = tb[j], tb[i]
	}
	return string(hb) + "…" + string(tb)
}

// pad appends spaces to s up to w columns.
func pad(s string, w int) string {
	if n := textWidth(s); n < w {
		return s + strings.Repeat(" ", w-n)
	}
	return s
}

// padLeft prepends spaces to s up to w columns.
func padLeft(s string, w int) string {
	if n := textWidth(s); n < w {
		return strings.Repeat(" ", w-n) + s
	}
	return s
}

// wrap breaks text into lines of at most w columns at spaces; a word
// wider than w is shortened with an ellipsis. The first line may be
// shorter (first columns), for text that follows a label.
func wrap(text string, first, w int) []string {
	var lines []string
	var cur strings.Builder
	limit := first
	for _, word := range strings.Fields(text) {
		ww := textWidth(word)
		if cur.Len() > 0 && textWidth(cur.String())+1+ww > limit {
			lines = append(lines, cur.String())
			cur.Reset()
			limit = w
		}
		if cur.Len() > 0 {
			cur.WriteByte(' ')
		}
		cur.WriteString(ellipsis(word, limit))
	}
	if cur.Len() > 0 || len(lines) == 0 {
		lines = append(lines, cur.String())
	}
	return lines
}
