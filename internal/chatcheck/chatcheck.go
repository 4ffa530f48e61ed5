// Package chatcheck holds request bodies to the message rules the OpenAI
// Chat Completions and the Anthropic Messages APIs document, read from the
// wire form: the JSON a host sends. Tests use it to check what package chat
// writes without trusting the code that wrote it; it shares no code with
// that package on purpose.
//
// The rules, from the APIs' reference pages and the errors they return:
//
// OpenAI: messages is a list of objects with a role of system, developer,
// user, assistant or tool and only that role's keys; system, user and tool
// messages have string content; an assistant message has string content
// or a non-empty tool_calls list of {"id","type":"function","function":
// {"name","arguments"}}; "messages with role 'tool' must be a response to
// a preceding message with 'tool_calls'": the tool messages that directly
// follow an assistant message answer its calls, each by tool_call_id, and
// "an assistant message with 'tool_calls' must be followed by tool messages
// responding to each 'tool_call_id'". A call id has at most 40
// characters, a function name 1 to 64 of [A-Za-z0-9_-].
//
// Anthropic: system is a string or a list of text blocks; messages is a
// list of {"role","content"} with role user or assistant; the first
// message is a user turn and roles alternate (contextasm promises
// alternation, which the API would otherwise get by merging); content is a
// non-empty string or list of blocks; text is not empty nor only white
// space; tool_use blocks ({"id","name","input"}, input an object, id of
// [A-Za-z0-9_-], unique in the request) are in assistant messages only,
// tool_result blocks in user messages only; "each tool_use block must have
// a corresponding tool_result block in the next message" and each
// tool_result answers a tool_use of the message just before; in a user
// message the tool_result blocks come before any text; at most 4 blocks
// carry cache_control, whose type is "ephemeral"; and the final assistant
// message's text does not end in white space.
package chatcheck

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode"
)

// Options relax the checks.
type Options struct {
	// AllowNoMessages accepts a body without messages, which both APIs
	// refuse until the host appends one.
	AllowNoMessages bool
}

var (
	openaiID   = regexp.MustCompile(`^[A-Za-z0-9_-]{1,40}$`)
	toolName   = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
	toolUseID  = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)
	errProblem = errors.New("chatcheck")
)

// problems collects every broken rule.
type problems []string

func (p *problems) add(format string, args ...any) { *p = append(*p, fmt.Sprintf(format, args...)) }

func (p problems) err(api string) error {
	if len(p) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %s: %s", errProblem, api, strings.Join(p, "; "))
}

// object decodes a JSON object keeping its raw values, and reports keys
// outside allowed.
func object(raw json.RawMessage, at string, allowed []string, p *problems) map[string]json.RawMessage {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		p.add("%s: not an object", at)
		return nil
	}
	for k := range m {
		if !slices.Contains(allowed, k) {
			p.add("%s: key %q is not allowed here", at, k)
		}
	}
	return m
}

// str decodes a JSON string; ok is false (and a problem added) when raw is
// not one.
func str(raw json.RawMessage, at string, p *problems) (string, bool) {
	var s string
	if raw == nil || json.Unmarshal(raw, &s) != nil || bytes.HasPrefix(bytes.TrimSpace(raw), []byte("null")) {
		p.add("%s: want a string", at)
		return "", false
	}
	return s, true
}

func list(raw json.RawMessage, at string, p *problems) []json.RawMessage {
	var l []json.RawMessage
	if raw == nil || json.Unmarshal(raw, &l) != nil || l == nil {
		p.add("%s: want a list", at)
		return nil
	}
	return l
}

func blank(s string) bool { return strings.TrimFunc(s, unicode.IsSpace) == "" }

func isObject(s string) bool {
	var m map[string]json.RawMessage
	return json.Unmarshal([]byte(s), &m) == nil && m != nil
}

// OpenAI checks a Chat Completions request body.
func OpenAI(body []byte, opt Options) error {
	var p problems
	top := object(body, "body", []string{"messages"}, &p)
	if top == nil {
		return p.err("openai")
	}
	msgs := list(top["messages"], "messages", &p)
	if len(msgs) == 0 && !opt.AllowNoMessages {
		p.add("messages: empty")
	}
	// pending holds the calls of the last assistant message with
	// tool_calls while the tool messages after it answer them.
	var pending map[string]bool
	var pendingAt string
	closeRun := func() {
		for id, open := range pending {
			if open {
				p.add("%s: call %q has no tool message responding to it", pendingAt, id)
			}
		}
		pending = nil
	}
	for i, raw := range msgs {
		at := fmt.Sprintf("messages[%d]", i)
		var head struct {
			Role string `json:"role"`
		}
		_ = json.Unmarshal(raw, &head)
		if head.Role != "tool" {
			closeRun()
		}
		switch head.Role {
		case "system", "developer", "user":
			m := object(raw, at, []string{"role", "content", "name"}, &p)
			if s, ok := str(m["content"], at+".content", &p); ok && s == "" {
				p.add("%s.content: empty", at)
			}
		case "assistant":
			m := object(raw, at, []string{"role", "content", "tool_calls", "name", "refusal"}, &p)
			if m == nil {
				continue
			}
			_, hasCalls := m["tool_calls"]
			if c, ok := m["content"]; ok && string(c) != "null" {
				str(c, at+".content", &p)
			} else if !hasCalls {
				p.add("%s: content is required unless tool_calls is given", at)
			}
			if !hasCalls {
				continue
			}
			calls := list(m["tool_calls"], at+".tool_calls", &p)
			if len(calls) == 0 {
				p.add("%s.tool_calls: empty", at)
			}
			pending, pendingAt = make(map[string]bool, len(calls)), at
			for j, rc := range calls {
				cat := fmt.Sprintf("%s.tool_calls[%d]", at, j)
				c := object(rc, cat, []string{"id", "type", "function"}, &p)
				id, _ := str(c["id"], cat+".id", &p)
				if !openaiID.MatchString(id) {
					p.add("%s.id: %q is not 1 to 40 characters of [A-Za-z0-9_-]", cat, id)
				}
				if typ, _ := str(c["type"], cat+".type", &p); typ != "function" {
					p.add("%s.type: %q, want \"function\"", cat, typ)
				}
				f := object(c["function"], cat+".function", []string{"name", "arguments"}, &p)
				if name, _ := str(f["name"], cat+".function.name", &p); !toolName.MatchString(name) {
					p.add("%s.function.name: %q does not match ^[a-zA-Z0-9_-]{1,64}$", cat, name)
				}
				if args, ok := str(f["arguments"], cat+".function.arguments", &p); ok && !isObject(args) {
					p.add("%s.function.arguments: not a JSON object", cat)
				}
				if _, dup := pending[id]; dup {
					p.add("%s.id: %q repeats a call of the same message", cat, id)
				}
				pending[id] = true
			}
		case "tool":
			m := object(raw, at, []string{"role", "content", "tool_call_id"}, &p)
			str(m["content"], at+".content", &p)
			id, _ := str(m["tool_call_id"], at+".tool_call_id", &p)
			switch open, ok := pending[id]; {
			case pending == nil:
				p.add("%s: a message with role 'tool' must be a response to a preceding message with 'tool_calls'", at)
			case !ok:
				p.add("%s.tool_call_id: %q is not a call of %s", at, id, pendingAt)
			case !open:
				p.add("%s.tool_call_id: %q is answered twice", at, id)
			default:
				pending[id] = false
			}
		default:
			p.add("%s.role: %q is not a role", at, head.Role)
		}
	}
	closeRun()
	return p.err("openai")
}

// Anthropic checks a Messages API request body.
func Anthropic(body []byte, opt Options) error {
	var p problems
	top := object(body, "body", []string{"system", "messages"}, &p)
	if top == nil {
		return p.err("anthropic")
	}
	breakpoints := 0
	cache := func(b map[string]json.RawMessage, at string) {
		raw, ok := b["cache_control"]
		if !ok {
			return
		}
		breakpoints++
		cc := object(raw, at+".cache_control", []string{"type", "ttl"}, &p)
		if typ, _ := str(cc["type"], at+".cache_control.type", &p); typ != "ephemeral" {
			p.add("%s.cache_control.type: %q, want \"ephemeral\"", at, typ)
		}
	}
	text := func(b map[string]json.RawMessage, at string) string {
		t, ok := str(b["text"], at+".text", &p)
		if ok && blank(t) {
			p.add("%s.text: text content blocks must contain non-whitespace text", at)
		}
		return t
	}
	if raw, ok := top["system"]; ok {
		if bytes.HasPrefix(bytes.TrimSpace(raw), []byte(`"`)) {
			str(raw, "system", &p)
		} else {
			for i, rb := range list(raw, "system", &p) {
				at := fmt.Sprintf("system[%d]", i)
				b := object(rb, at, []string{"type", "text", "cache_control"}, &p)
				if typ, _ := str(b["type"], at+".type", &p); typ != "text" {
					p.add("%s.type: %q, want \"text\"", at, typ)
				}
				text(b, at)
				cache(b, at)
			}
		}
	}
	msgs := list(top["messages"], "messages", &p)
	if len(msgs) == 0 && !opt.AllowNoMessages {
		p.add("messages: empty")
	}
	seen := make(map[string]bool) // tool_use ids in the request
	var (
		asked    []string // tool_use ids of the previous message
		askedAt  string
		lastRole string
		lastText *string // the last text of the last message, if its last block is text
	)
	for i, raw := range msgs {
		at := fmt.Sprintf("messages[%d]", i)
		m := object(raw, at, []string{"role", "content"}, &p)
		role, _ := str(m["role"], at+".role", &p)
		switch {
		case role != "user" && role != "assistant":
			p.add("%s.role: %q, want user or assistant", at, role)
		case i == 0 && role != "user":
			p.add("%s.role: the first message must use the user role", at)
		case role == lastRole:
			p.add("%s.role: two %s messages in a row (roles must alternate)", at, role)
		}
		var blocks []json.RawMessage
		lastText = nil
		if c := m["content"]; bytes.HasPrefix(bytes.TrimSpace(c), []byte(`"`)) {
			s, _ := str(c, at+".content", &p)
			if blank(s) {
				p.add("%s.content: empty or only white space", at)
			}
			lastText = &s
		} else {
			blocks = list(c, at+".content", &p)
			if len(blocks) == 0 {
				p.add("%s.content: empty", at)
			}
		}
		answered := make(map[string]bool)
		var uses []string
		sawText := false
		for j, rb := range blocks {
			bat := fmt.Sprintf("%s.content[%d]", at, j)
			var head struct {
				Type string `json:"type"`
			}
			_ = json.Unmarshal(rb, &head)
			lastText = nil
			switch head.Type {
			case "text":
				b := object(rb, bat, []string{"type", "text", "cache_control"}, &p)
				t := text(b, bat)
				lastText = &t
				cache(b, bat)
				sawText = true
			case "tool_use":
				b := object(rb, bat, []string{"type", "id", "name", "input", "cache_control"}, &p)
				if role != "assistant" {
					p.add("%s: tool_use in a %s message", bat, role)
				}
				id, _ := str(b["id"], bat+".id", &p)
				if !toolUseID.MatchString(id) {
					p.add("%s.id: %q does not match ^[a-zA-Z0-9_-]+$", bat, id)
				}
				if seen[id] {
					p.add("%s.id: tool_use ids must be unique (%q)", bat, id)
				}
				seen[id] = true
				uses = append(uses, id)
				if name, _ := str(b["name"], bat+".name", &p); !toolName.MatchString(name) {
					p.add("%s.name: %q does not match ^[a-zA-Z0-9_-]{1,64}$", bat, name)
				}
				if !isObject(string(b["input"])) {
					p.add("%s.input: not an object", bat)
				}
				cache(b, bat)
			case "tool_result":
				b := object(rb, bat, []string{"type", "tool_use_id", "content", "is_error", "cache_control"}, &p)
				if role != "user" {
					p.add("%s: tool_result in a %s message", bat, role)
				}
				if sawText {
					p.add("%s: tool_result after text (tool results must come first in the content)", bat)
				}
				id, _ := str(b["tool_use_id"], bat+".tool_use_id", &p)
				switch {
				case !slices.Contains(asked, id):
					p.add("%s: unexpected tool_use_id %q: each tool_result block must have a corresponding tool_use block in the previous message", bat, id)
				case answered[id]:
					p.add("%s: tool_use_id %q answered twice", bat, id)
				}
				answered[id] = true
				if c, ok := b["content"]; ok && !bytes.HasPrefix(bytes.TrimSpace(c), []byte(`"`)) {
					list(c, bat+".content", &p)
				}
				cache(b, bat)
			default:
				p.add("%s.type: %q is not a block type written here", bat, head.Type)
			}
		}
		for _, id := range asked {
			if !answered[id] {
				p.add("%s: tool_use ids were found without tool_result blocks immediately after: %s", askedAt, id)
			}
		}
		asked, askedAt, lastRole = uses, at, role
	}
	for _, id := range asked {
		p.add("%s: tool_use %s has no tool_result (no message follows)", askedAt, id)
	}
	if lastRole == "assistant" && lastText != nil && strings.TrimRightFunc(*lastText, unicode.IsSpace) != *lastText {
		p.add("messages: final assistant content cannot end with trailing whitespace")
	}
	if breakpoints > 4 {
		p.add("%d blocks with cache_control, more than 4", breakpoints)
	}
	return p.err("anthropic")
}
