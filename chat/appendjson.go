package chat

import (
	"unicode/utf8"

	"github.com/contextasm/contextasm/internal/jsonx"
)

// The JSON appenders of the encoders. Each writes what encoding/json
// writes, with SetEscapeHTML(false), for the same value, byte for byte:
// the differential tests (encode_test.go) hold them to it.

// appendString appends s as a JSON string.
func appendString(dst []byte, s string) []byte { return jsonx.AppendString(dst, s) }

// appendField appends key, the JSON text before a value (`,"name":`),
// and s as a JSON string.
func appendField(dst []byte, key, s string) []byte {
	return appendString(append(dst, key...), s)
}

// appendParts appends the parts' texts, joined, as one JSON string. Each
// is escaped on its own unless one starts inside a UTF-8 sequence, where
// the join may make a character of bytes that are none apart: that
// string is joined first. (A part that starts at a character start
// escapes as it does in the join: an unfinished sequence before it is
// bytes that are not UTF-8 either way.)
func appendParts(dst []byte, parts []SystemPart) []byte {
	for _, p := range parts[min(1, len(parts)):] {
		if p.Text != "" && !utf8.RuneStart(p.Text[0]) {
			c := Conversation{System: parts}
			return appendString(dst, c.SystemText())
		}
	}
	dst = append(dst, '"')
	for _, p := range parts {
		dst = jsonx.AppendEscaped(dst, p.Text)
	}
	return append(dst, '"')
}

// appendCompact appends JSON text raw without the white space between
// its tokens, as encoding/json writes a json.RawMessage (which, with HTML
// escaping off, it changes in nothing else). raw must be valid JSON, as
// Check holds arguments and reasoning items to be.
func appendCompact[T ~string | ~[]byte](dst []byte, raw T) []byte {
	start := 0 // raw[start:i] is still to copy
	inString, escaped := false, false
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			dst = append(dst, raw[start:i]...)
			start = i + 1
		}
	}
	return append(dst, raw[start:]...)
}
