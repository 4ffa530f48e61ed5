package delimit

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Set collects the delimiters block content must not contain verbatim.
// The zero Set is empty and ready to use.
type Set struct {
	list []string
	seen map[string]bool // the list's, so that adding n costs O(n), not O(n²)
}

// Add adds s as a delimiter, once. s must have at least two characters,
// be valid UTF-8 and not contain [Joiner].
func (d *Set) Add(s string) {
	if d.seen[s] {
		return
	}
	if d.seen == nil {
		d.seen = make(map[string]bool)
	}
	d.seen[s] = true
	d.list = append(d.list, s)
}

// AddLiteral adds the delimiters in lit, a literal text a template writes
// around values (a piece of a render string, or a separator), and returns
// the first part of it that cannot be protected ("" when all can).
//
// Each line of lit, trimmed of white space, is a delimiter. One of two or
// more characters is protected as it is. A single character cannot be
// broken by a joiner, so it is protected together with a fixed neighbour:
// the line break or the character that always stands right before it
// (before, for the literal's first line) or right after it (after, for
// its last line), or else the white space around it inside lit ("\n-" for
// the bullet of "- {content}", " | " for that separator). before and after
// list the possible neighbours, each one character; nil means a value or
// block content can stand there. A single character with no fixed
// neighbour is returned: the caller refuses the template.
func (d *Set) AddLiteral(lit string, before, after []string) (unprotectable string) {
	lines := strings.Split(lit, "\n")
	for k, line := range lines {
		t := strings.TrimFunc(line, unicode.IsSpace)
		if t == "" {
			continue
		}
		if utf8.RuneCountInString(t) >= 2 {
			d.Add(t)
			continue
		}
		at := strings.Index(line, t)
		lead, trail := line[:at], line[at+len(t):]
		lb, la := before, after
		if k > 0 {
			lb = []string{"\n"}
		}
		if k < len(lines)-1 {
			la = []string{"\n"}
		}
		switch {
		case len(lb) > 0:
			for _, c := range lb {
				d.Add(c + lead + t)
			}
		case len(la) > 0:
			for _, c := range la {
				d.Add(t + trail + c)
			}
		case line != t:
			d.Add(line)
		default:
			return t
		}
	}
	return ""
}

// List returns the delimiters in the order they were first added. The
// slice is the Set's own: do not modify it.
func (d *Set) List() []string { return d.list }
