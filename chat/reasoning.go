package chat

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"unicode/utf8"
)

// Reasoning is one reasoning item of an assistant turn, as its provider
// returned it: an Anthropic "thinking" block ({"type":"thinking",
// "thinking","signature"}) or "redacted_thinking" block ({"type",
// "data"}), or an OpenAI "reasoning" item ({"type":"reasoning","id",
// "summary","encrypted_content"}). It is sent back byte for byte (compact),
// never cut: a signature or an encrypted_content covers the whole item.
//
// Its JSON form is the item itself.
type Reasoning struct {
	// Type is the item's "type": ReasoningThinking, ReasoningRedacted or
	// ReasoningOpenAI.
	Type string `json:"-"`
	// JSON is the item, compact.
	JSON json.RawMessage `json:"-"`
}

// The reasoning item types, and the format that takes each.
const (
	ReasoningThinking = "thinking"          // Anthropic
	ReasoningRedacted = "redacted_thinking" // Anthropic
	ReasoningOpenAI   = "reasoning"         // OpenAI Responses
)

// MaxReasoningBytes bounds one reasoning item's JSON.
const MaxReasoningBytes = 1 << 20

// MarshalJSON writes the item.
func (r Reasoning) MarshalJSON() ([]byte, error) {
	if len(r.JSON) == 0 {
		return []byte("null"), nil
	}
	return r.JSON, nil
}

// UnmarshalJSON reads an item, compacted, and its type; it refuses only
// what is not JSON (ValidReasoning says whether the item is one a
// provider takes). The escapes encoding/json writes for HTML ("\u003c",
// "\u003e", "\u0026", "\u2028", "\u2029") are read as the characters
// they stand for, so an item reads back the same after json.Marshal.
func (r *Reasoning) UnmarshalJSON(b []byte) error {
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		return err
	}
	r.JSON = unescapeHTML(buf.Bytes())
	var head struct {
		Type string `json:"type"`
	}
	r.Type = ""
	if json.Unmarshal(r.JSON, &head) == nil {
		r.Type = head.Type
	}
	return nil
}

// For reports whether format f writes the item: Anthropic the thinking
// and redacted_thinking blocks, Responses the reasoning items, the Chat
// Completions format none.
func (r Reasoning) For(f Format) bool {
	switch f {
	case FormatAnthropic:
		return r.Type == ReasoningThinking || r.Type == ReasoningRedacted
	case FormatResponses:
		return r.Type == ReasoningOpenAI
	}
	return false
}

// reasoningKeys are the keys each item type may have.
var reasoningKeys = map[string][]string{
	ReasoningThinking: {"type", "thinking", "signature"},
	ReasoningRedacted: {"type", "data"},
	ReasoningOpenAI:   {"type", "id", "summary", "encrypted_content", "content", "status"},
}

// ValidReasoning returns the first problem of an item, with the key it is
// about ("" for the whole), or nil: a JSON object of at most
// MaxReasoningBytes of one of the three types, with that type's keys only;
// a thinking block has a string "thinking" and a non-empty "signature"; a
// redacted_thinking block a non-empty "data"; an OpenAI reasoning item a
// non-empty "id", a "summary" list of {"type":"summary_text","text"} and,
// if any, a string "encrypted_content".
func ValidReasoning(r Reasoning) (key string, err error) {
	if len(r.JSON) > MaxReasoningBytes {
		return "", fmt.Errorf("is %d bytes, more than %d", len(r.JSON), MaxReasoningBytes)
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(r.JSON, &m) != nil || m == nil {
		return "", fmt.Errorf("must be a JSON object")
	}
	allowed, ok := reasoningKeys[r.Type]
	if !ok {
		return "type", fmt.Errorf("must be %q, %q or %q (got %q)", ReasoningThinking, ReasoningRedacted, ReasoningOpenAI, r.Type)
	}
	for _, k := range sortedKeys(m) {
		if !slices.Contains(allowed, k) {
			return k, fmt.Errorf("is not a key of a %s item", r.Type)
		}
	}
	str := func(k string, nonEmpty bool) error {
		var s *string
		if json.Unmarshal(m[k], &s) != nil || s == nil {
			return fmt.Errorf("must be a string")
		}
		if nonEmpty && *s == "" {
			return fmt.Errorf("must not be empty")
		}
		return nil
	}
	switch r.Type {
	case ReasoningThinking:
		if err := str("thinking", false); err != nil {
			return "thinking", err
		}
		if err := str("signature", true); err != nil {
			return "signature", err
		}
	case ReasoningRedacted:
		if err := str("data", true); err != nil {
			return "data", err
		}
	case ReasoningOpenAI:
		if err := str("id", true); err != nil {
			return "id", err
		}
		var summary []struct {
			Type string  `json:"type"`
			Text *string `json:"text"`
		}
		if json.Unmarshal(m["summary"], &summary) != nil || summary == nil {
			return "summary", fmt.Errorf("must be a list of {\"type\":\"summary_text\",\"text\"}")
		}
		for _, s := range summary {
			if s.Type != "summary_text" || s.Text == nil {
				return "summary", fmt.Errorf("must be a list of {\"type\":\"summary_text\",\"text\"}")
			}
		}
		if raw, ok := m["encrypted_content"]; ok && string(raw) != "null" {
			if err := str("encrypted_content", false); err != nil {
				return "encrypted_content", err
			}
		}
	}
	return "", nil
}

func sortedKeys(m map[string]json.RawMessage) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// unescapeHTML replaces, in compact JSON, the \u escapes of the characters
// encoding/json escapes for HTML by the characters themselves (valid JSON
// either way); every other escape stays.
func unescapeHTML(b []byte) []byte {
	if !bytes.Contains(b, []byte(`\u`)) {
		return b
	}
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		if b[i] != '\\' || i+1 == len(b) {
			out = append(out, b[i])
			continue
		}
		if b[i+1] == 'u' && i+6 <= len(b) {
			switch string(bytes.ToLower(b[i+2 : i+6])) {
			case "003c", "003e", "0026", "2028", "2029":
				var r rune
				for _, h := range b[i+2 : i+6] {
					r = r<<4 | rune(hexValue(h))
				}
				out = utf8.AppendRune(out, r)
				i += 5
				continue
			}
		}
		out = append(out, b[i], b[i+1]) // an escape: its second byte is never an escape's start
		i++
	}
	return out
}

func hexValue(c byte) byte {
	switch {
	case c >= 'a':
		return c - 'a' + 10
	case c >= 'A':
		return c - 'A' + 10
	}
	return c - '0'
}
