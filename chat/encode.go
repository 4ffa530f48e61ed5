package chat

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode"
)

// The encoders write their bodies with the appenders of appendjson.go into
// one buffer sized from the conversation, the bytes encoding/json would
// write for the structs the bodies used to be (reference_test.go keeps
// them, and the tests hold the two to the same bytes). Only the tool
// definitions, a few short entries and not where a body's bytes are,
// still go through encoding/json (marshal).

// OpenAI returns the body of a Chat Completions request for c:
// {"messages":[...]}, the system prompt first as one "system" message. It
// returns an *Error wrapping ErrInvalid when c breaks a rule of the API
// (see [Conversation.Check]).
func OpenAI(c Conversation) ([]byte, error) {
	if err := c.Check(FormatOpenAI); err != nil {
		return nil, err
	}
	if err := c.checkTools(FormatOpenAI); err != nil {
		return nil, err
	}
	tools, err := marshalTools(openaiTools(c.Tools))
	if err != nil {
		return nil, err
	}
	b := make([]byte, 0, c.sizeHint(true)+len(tools))
	b = append(b, `{"messages":[`...)
	if len(c.System) > 0 {
		b = append(b, `{"role":"system"`...)
		if systemLen(c.System) > 0 {
			b = append(b, `,"content":`...)
			b = appendParts(b, c.System)
		}
		b = append(b, '}')
	}
	for i := range c.Messages {
		m := &c.Messages[i]
		if i > 0 || len(c.System) > 0 {
			b = append(b, ',')
		}
		b = appendField(b, `{"role":`, string(m.Role))
		// Content is left out only for an assistant message that makes
		// tool calls and says nothing (Check holds every other message to
		// content).
		if m.Content != "" {
			b = appendField(b, `,"content":`, m.Content)
		}
		if len(m.ToolCalls) > 0 {
			b = append(b, `,"tool_calls":[`...)
			for j, tc := range m.ToolCalls {
				if j > 0 {
					b = append(b, ',')
				}
				b = appendField(b, `{"id":`, WireID(tc.ID))
				b = appendField(b, `,"type":"function","function":{"name":`, tc.Name)
				b = appendField(b, `,"arguments":`, tc.Arguments)
				b = append(b, "}}"...)
			}
			b = append(b, ']')
		}
		if id := wireOf(m.ToolCallID); id != "" {
			b = appendField(b, `,"tool_call_id":`, id)
		}
		b = append(b, '}')
	}
	b = append(b, ']')
	b = appendTools(b, tools)
	return append(b, '}'), nil
}

// Anthropic returns the body of a Messages API request for c:
// {"system":[...],"messages":[...]}, with the system prompt as text blocks
// (cache_control on those that end at a cache breakpoint) and adjacent
// messages of one role merged. It returns an *Error wrapping ErrInvalid
// when c breaks a rule of the API (see [Conversation.Check]).
func Anthropic(c Conversation) ([]byte, error) {
	if err := c.Check(FormatAnthropic); err != nil {
		return nil, err
	}
	if err := c.checkTools(FormatAnthropic); err != nil {
		return nil, err
	}
	var tools []byte
	if len(c.Tools) > 0 {
		var err error
		if tools, err = marshalTools(anthropicTools(c.Tools, ephemeral(c.CacheTTL))); err != nil {
			return nil, err
		}
	}
	ttl := c.CacheTTL
	if ttl == TTL5m {
		ttl = "" // the API's default, written as no ttl
	}
	b := make([]byte, 0, c.sizeHint(false)+len(tools))
	b = append(b, '{')
	b = appendAnthropicSystem(b, c.System, ttl)
	b = append(b, `"messages":[`...)
	msgs := c.Messages
	for i := 0; i < len(msgs); {
		// Messages i to j-1 are one turn of the API: adjacent messages of
		// one role merged (a tool result is a user's).
		role := anthropicRole(msgs[i].Role)
		j := i + 1
		for j < len(msgs) && anthropicRole(msgs[j].Role) == role {
			j++
		}
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"role":"`...)
		b = append(b, role...)
		b = append(b, `","content":`...)
		open := len(b)
		b = append(b, '[')
		blocks := 0
		// Thinking blocks open their message, in their order, before any
		// text or tool_use of the turns merged into it.
		for k := i; k < j; k++ {
			for _, r := range msgs[k].Reasoning {
				if r.For(FormatAnthropic) {
					b = appendComma(b, blocks)
					b = appendCompact(b, r.JSON)
					blocks++
				}
			}
		}
		for k := i; k < j; k++ {
			// The API refuses a final assistant message (a prefill) whose
			// text ends in white space.
			prefill := j == len(msgs) && k == j-1 && role == "assistant"
			b, blocks = appendAnthropicBlocks(b, &msgs[k], blocks, prefill, ttl)
		}
		if blocks == 0 {
			b = append(b[:open], "null"...) // as encoding/json writes a nil list
		} else {
			b = append(b, ']')
		}
		b = append(b, '}')
		i = j
	}
	b = append(b, ']')
	b = appendTools(b, tools)
	return append(b, '}'), nil
}

// anthropicRole is the role of the Anthropic turn a message joins.
func anthropicRole(r Role) string {
	if r == RoleAssistant {
		return "assistant"
	}
	return "user"
}

// appendAnthropicBlocks appends m's content blocks to a turn that has n
// blocks so far, and returns the turn's count: a tool_result for a tool
// message; else a text block, when there is text, then a tool_use block a
// call. Its last block has cache_control when m is a cache breakpoint.
// With prefill set, and the text m's last block, the text loses its
// trailing white space.
func appendAnthropicBlocks(b []byte, m *Message, n int, prefill bool, ttl string) ([]byte, int) {
	if m.Role == RoleTool {
		b = appendComma(b, n)
		b = appendField(b, `{"type":"tool_result","tool_use_id":`, WireID(m.ToolCallID))
		b = appendField(b, `,"content":`, m.Content)
		if m.CacheBreakpoint {
			b = appendCacheControl(b, ttl)
		}
		return append(b, '}'), n + 1
	}
	if m.Content != "" {
		text := m.Content
		if prefill && len(m.ToolCalls) == 0 {
			text = strings.TrimRightFunc(text, unicode.IsSpace)
		}
		b = appendComma(b, n)
		b = append(b, `{"type":"text"`...)
		if text != "" {
			b = appendField(b, `,"text":`, text)
		}
		if m.CacheBreakpoint && len(m.ToolCalls) == 0 {
			b = appendCacheControl(b, ttl)
		}
		b = append(b, '}')
		n++
	}
	for j, tc := range m.ToolCalls {
		b = appendComma(b, n)
		b = appendField(b, `{"type":"tool_use","id":`, WireID(tc.ID))
		if tc.Name != "" {
			b = appendField(b, `,"name":`, tc.Name)
		}
		if tc.Arguments != "" {
			b = append(b, `,"input":`...)
			b = appendCompact(b, tc.Arguments)
		}
		if m.CacheBreakpoint && j == len(m.ToolCalls)-1 {
			b = appendCacheControl(b, ttl)
		}
		b = append(b, '}')
		n++
	}
	return b, n
}

// appendAnthropicSystem appends "system":[...], and a comma, for the
// system parts, or nothing when no part has text that is not white
// space: one text block a part, but a part that is only white space,
// which the API refuses, joins the part before it, the cache breakpoint
// of either at the end of the joined block; blank parts before the first
// that is not join that one, and their breakpoints, which cover nothing
// but white space, go.
func appendAnthropicSystem(b []byte, parts []SystemPart, ttl string) []byte {
	k := 0 // the part that is not blank of the block to write
	for k < len(parts) && blank(parts[k].Text) {
		k++
	}
	if k == len(parts) {
		return b
	}
	b = append(b, `"system":[`...)
	for from := 0; k < len(parts); from = k {
		end, mark := k+1, parts[k].CacheBreakpoint
		for end < len(parts) && blank(parts[end].Text) {
			mark = mark || parts[end].CacheBreakpoint
			end++
		}
		if from > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"type":"text","text":`...)
		b = appendParts(b, parts[from:end])
		if mark {
			b = appendCacheControl(b, ttl)
		}
		b = append(b, '}')
		k = end
	}
	return append(b, "],"...)
}

// appendCacheControl appends a block's "cache_control", with its ttl
// unless that is empty.
func appendCacheControl(b []byte, ttl string) []byte {
	b = append(b, `,"cache_control":{"type":"ephemeral"`...)
	if ttl != "" {
		b = appendField(b, `,"ttl":`, ttl)
	}
	return append(b, '}')
}

// appendComma appends the comma before an element of a list that has n
// so far.
func appendComma(b []byte, n int) []byte {
	if n > 0 {
		return append(b, ',')
	}
	return b
}

// appendTools appends ,"tools":tools, or nothing when tools is empty.
func appendTools(b, tools []byte) []byte {
	if len(tools) == 0 {
		return b
	}
	b = append(b, `,"tools":`...)
	return append(b, tools...)
}

// marshalTools returns tools (a slice of one of the tool types) as
// encoding/json writes them, or nil for none.
func marshalTools[T any](tools []T) ([]byte, error) {
	if len(tools) == 0 {
		return nil, nil
	}
	return marshal(tools)
}

// sizeHint is about the length of c's body: its text, a fixed cost a
// message and a call, and room for some escapes (openai: the arguments are
// escaped strings, quotes and all). A body that escapes more grows once.
func (c *Conversation) sizeHint(openai bool) int {
	n := 64 + systemLen(c.System) + 48*len(c.System)
	for i := range c.Messages {
		m := &c.Messages[i]
		n += 64 + len(m.Content) + len(m.ToolCallID)
		for _, tc := range m.ToolCalls {
			n += 96 + len(tc.ID) + len(tc.Name) + len(tc.Arguments)
			if openai {
				n += len(tc.Arguments) / 4
			}
		}
		for _, r := range m.Reasoning {
			n += 1 + len(r.JSON)
		}
	}
	return n + n/16
}

// systemLen is the length of the system prompt.
func systemLen(parts []SystemPart) int {
	n := 0
	for _, p := range parts {
		n += len(p.Text)
	}
	return n
}

type cacheControl struct {
	Type string `json:"type"`
	TTL  string `json:"ttl,omitempty"`
}

// ephemeral returns the cache_control of a conversation's breakpoints:
// with its ttl when that is not the API's default.
func ephemeral(ttl string) *cacheControl {
	if ttl == TTL5m {
		ttl = ""
	}
	return &cacheControl{Type: "ephemeral", TTL: ttl}
}

// wireOf returns WireID(id), or "" for no id.
func wireOf(id string) string {
	if id == "" {
		return ""
	}
	return WireID(id)
}

// marshal writes v as compact JSON without HTML escaping: a context is
// full of '<' and '>', and a body is read by an API, not a browser.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
