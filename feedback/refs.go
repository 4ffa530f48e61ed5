package feedback

import (
	"strings"
	"unicode/utf8"
)

// Position says in which third of a response a block was first cited.
type Position string

// The positions.
const (
	Start  Position = "start"
	Middle Position = "middle"
	End    Position = "end"
)

// Tag is one <memory_ref> tag found in a response.
type Tag struct {
	ID     string // the id attribute: the cited block's request_id
	Type   string // "" when the tag has none
	Offset int    // byte offset of '<' in the response
}

const tagName = "memory_ref"

// ParseRefs returns every well-formed <memory_ref> tag of response, in
// order. Malformed tags are skipped.
func ParseRefs(response string) []Tag {
	var tags []Tag
	for i := 0; i < len(response); {
		lt := strings.IndexByte(response[i:], '<')
		if lt < 0 {
			break
		}
		at := i + lt
		tag, end, ok := parseTag(response, at)
		if ok {
			tags = append(tags, tag)
			i = end
			continue
		}
		i = at + 1
	}
	return tags
}

// parseTag parses the tag starting at s[at] == '<'. It returns the tag, the
// offset just after it, and whether it was well-formed with an id.
func parseTag(s string, at int) (Tag, int, bool) {
	i := at + 1
	i = skipSpace(s, i)
	if len(s)-i < len(tagName) || !strings.EqualFold(s[i:i+len(tagName)], tagName) {
		return Tag{}, 0, false
	}
	i += len(tagName)
	if i < len(s) && !isSpace(s[i]) && s[i] != '/' && s[i] != '>' {
		return Tag{}, 0, false // <memory_refs …> or similar
	}
	tag := Tag{Offset: at}
	for {
		i = skipSpace(s, i)
		if i >= len(s) || s[i] == '<' {
			return Tag{}, 0, false // never closed
		}
		if s[i] == '>' {
			i++
			break
		}
		if s[i] == '/' {
			j := skipSpace(s, i+1)
			if j < len(s) && s[j] == '>' {
				i = j + 1
				break
			}
			return Tag{}, 0, false
		}
		name, value, next, ok := parseAttr(s, i)
		if !ok {
			return Tag{}, 0, false
		}
		switch strings.ToLower(name) {
		case "id":
			tag.ID = strings.ReplaceAll(value, "\u2060", "")
		case "type":
			tag.Type = value
		}
		i = next
	}
	tag.ID = strings.TrimSpace(tag.ID)
	if tag.ID == "" {
		return Tag{}, 0, false
	}
	return tag, i, true
}

// parseAttr parses name = value at s[i:], the value quoted with ' or " or
// bare up to white space, '/' or '>'.
func parseAttr(s string, i int) (name, value string, next int, ok bool) {
	start := i
	for i < len(s) && isNameByte(s[i]) {
		i++
	}
	if i == start {
		return "", "", 0, false
	}
	name = s[start:i]
	i = skipSpace(s, i)
	if i >= len(s) || s[i] != '=' {
		return "", "", 0, false
	}
	i = skipSpace(s, i+1)
	if i >= len(s) {
		return "", "", 0, false
	}
	switch q := s[i]; q {
	case '"', '\'':
		end := strings.IndexByte(s[i+1:], q)
		if end < 0 {
			return "", "", 0, false
		}
		value = s[i+1 : i+1+end]
		if strings.ContainsAny(value, "<>") {
			return "", "", 0, false // a quote left open swallowed markup
		}
		return name, value, i + 2 + end, true
	default:
		v := i
		for i < len(s) && !isSpace(s[i]) && s[i] != '>' && s[i] != '/' && s[i] != '<' {
			i++
		}
		if i == v {
			return "", "", 0, false
		}
		return name, s[v:i], i, true
	}
}

func isNameByte(c byte) bool {
	return c == '_' || c == '-' || c == ':' || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') || ('0' <= c && c <= '9')
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' }

func skipSpace(s string, i int) int {
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	return i
}

// PositionOf returns the third of response that a byte offset falls in,
// measured in characters so that multibyte text is split fairly.
func PositionOf(response string, offset int) Position {
	total := utf8.RuneCountInString(response)
	if total == 0 {
		return Start
	}
	before := utf8.RuneCountInString(response[:min(offset, len(response))])
	switch {
	case 3*before < total:
		return Start
	case 3*before < 2*total:
		return Middle
	}
	return End
}
