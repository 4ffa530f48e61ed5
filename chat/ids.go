package chat

import (
	"crypto/sha256"
	"encoding/hex"
)

// Tool call ids. Providers emit ids of their own shapes (Kimi's
// "functions.get_weather:0", say), and the APIs that take them back
// differ: Anthropic's tool_use.id is [A-Za-z0-9_-]+ and OpenAI takes at
// most 40 characters. A conversation holds ids as declared (ValidID), and
// every encoder writes each as WireID maps it: unchanged when it is 1 to
// MaxWireIDLen characters of [A-Za-z0-9_-], which every format takes;
// else its characters outside that set replaced by '_', shortened, and a
// hash of the whole id appended. A call and the result that answers it
// map alike, and the mapping depends on nothing but the id, so it is the
// same on every call of a conversation.

// MaxWireIDLen is the longest id an encoder writes (OpenAI's limit).
const MaxWireIDLen = 40

// wireHashLen is the hex digits of the hash a mapped id ends with.
const wireHashLen = 10

// ValidID reports whether s is a tool call id a conversation may hold: 1
// to MaxToolCallIDLen bytes of printable ASCII other than the space
// ('!' to '~').
func ValidID(s string) bool {
	if s == "" || len(s) > MaxToolCallIDLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '!' || s[i] > '~' {
			return false
		}
	}
	return true
}

// WireID returns the id the encoders write for call id s: s when it is 1
// to MaxWireIDLen characters of [A-Za-z0-9_-]; otherwise s with every
// other character replaced by '_', shortened to leave room, then '_' and
// the first 10 hex digits of its SHA-256, at most MaxWireIDLen in all.
func WireID(s string) string {
	if toolToken(s, MaxWireIDLen) {
		return s
	}
	sum := sha256.Sum256([]byte(s))
	keep := min(len(s), MaxWireIDLen-1-wireHashLen)
	b := make([]byte, 0, keep+1+wireHashLen)
	for i := 0; i < keep; i++ {
		c := s[i]
		if !tokenByte(c) {
			c = '_'
		}
		b = append(b, c)
	}
	b = append(b, '_')
	return string(hex.AppendEncode(b, sum[:wireHashLen/2]))
}

// tokenByte reports whether c is one of [A-Za-z0-9_-].
func tokenByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-'
}
