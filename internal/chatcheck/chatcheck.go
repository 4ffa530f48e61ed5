// Package chatcheck holds request bodies to the message rules the OpenAI
// Chat Completions, the OpenAI Responses and the Anthropic Messages APIs
// document, read from the wire form: the JSON a host sends. Tests use it to check what package chat
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
// carry cache_control, whose type is "ephemeral" and whose ttl, if any,
// is "5m" or "1h", the 1h ones before any 5m one ("mixing TTLs: longer
// ones must come first"); thinking and redacted_thinking blocks (a
// string thinking and a non-empty signature; non-empty data) are in
// assistant messages only, before the message's other blocks, without
// cache_control; and the final assistant message's text does not end in
// white space.
//
// Responses: instructions is a non-empty string; input is a list of
// items by type: "message" (role user, assistant, system or developer,
// non-empty string content), "function_call" (call_id, name of
// [A-Za-z0-9_-]{1,64}, arguments a JSON object as a string; contextasm
// holds call_id to Chat Completions' 40 characters of [A-Za-z0-9_-]),
// "function_call_output" ("No tool call found for function call output
// with call_id": it answers a function_call before it, once; output a
// string) and "reasoning" (id, a summary list of summary_text parts,
// encrypted_content a string; "Item of type 'reasoning' was provided
// without its required following item": an assistant message or a
// function_call comes right after it); and every function_call has its
// output ("No tool output found for function call").
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
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys) // problems in one order, whatever the map's
	for _, k := range keys {
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

// The checks are a walk of the body, one method a part of it, on a
// checker that holds the problems and what the rules carry from one
// message to the next. A rule added for a new part (a Responses API
// item, a reasoning block) is one more method and one more entry in its
// table.

// OpenAI checks a Chat Completions request body.
func OpenAI(body []byte, opt Options) error {
	c := &openaiCheck{}
	c.body(body, opt)
	return c.p.err("openai")
}

// openaiCheck walks a Chat Completions body.
type openaiCheck struct {
	p problems
	// pending holds the calls of the last assistant message with
	// tool_calls while the tool messages after it answer them (true:
	// not answered yet); pendingAt is where that message is.
	pending   map[string]bool
	pendingAt string
	order     []string // the pending calls in the order made
}

// openaiRoles checks a message by its role.
var openaiRoles = map[string]func(c *openaiCheck, raw json.RawMessage, at string){
	"system":    (*openaiCheck).plain,
	"developer": (*openaiCheck).plain,
	"user":      (*openaiCheck).plain,
	"assistant": (*openaiCheck).assistant,
	"tool":      (*openaiCheck).tool,
}

func (c *openaiCheck) body(body []byte, opt Options) {
	top := object(body, "body", []string{"messages", "tools"}, &c.p)
	if top == nil {
		return
	}
	if raw, ok := top["tools"]; ok {
		c.tools(raw)
	}
	msgs := list(top["messages"], "messages", &c.p)
	if len(msgs) == 0 && !opt.AllowNoMessages {
		c.p.add("messages: empty")
	}
	for i, raw := range msgs {
		at := fmt.Sprintf("messages[%d]", i)
		var head struct {
			Role string `json:"role"`
		}
		_ = json.Unmarshal(raw, &head)
		if head.Role != "tool" {
			c.closeRun()
		}
		check, ok := openaiRoles[head.Role]
		if !ok {
			c.p.add("%s.role: %q is not a role", at, head.Role)
			continue
		}
		check(c, raw, at)
	}
	c.closeRun()
}

// closeRun ends a run of tool messages: every call of the assistant
// message before it must have been answered.
func (c *openaiCheck) closeRun() {
	for _, id := range c.order {
		if c.pending[id] {
			c.p.add("%s: call %q has no tool message responding to it", c.pendingAt, id)
			c.pending[id] = false // a repeated id is reported once
		}
	}
	c.pending, c.order = nil, nil
}

// plain checks a system, developer or user message: string content.
func (c *openaiCheck) plain(raw json.RawMessage, at string) {
	m := object(raw, at, []string{"role", "content", "name"}, &c.p)
	if s, ok := str(m["content"], at+".content", &c.p); ok && s == "" {
		c.p.add("%s.content: empty", at)
	}
}

// assistant checks an assistant message: string content, or tool calls
// that the tool messages after it must answer.
func (c *openaiCheck) assistant(raw json.RawMessage, at string) {
	m := object(raw, at, []string{"role", "content", "tool_calls", "name", "refusal"}, &c.p)
	if m == nil {
		return
	}
	_, hasCalls := m["tool_calls"]
	if content, ok := m["content"]; ok && string(content) != "null" {
		str(content, at+".content", &c.p)
	} else if !hasCalls {
		c.p.add("%s: content is required unless tool_calls is given", at)
	}
	if !hasCalls {
		return
	}
	calls := list(m["tool_calls"], at+".tool_calls", &c.p)
	if len(calls) == 0 {
		c.p.add("%s.tool_calls: empty", at)
	}
	c.pending, c.pendingAt = make(map[string]bool, len(calls)), at
	for j, rc := range calls {
		c.call(rc, fmt.Sprintf("%s.tool_calls[%d]", at, j))
	}
}

// call checks one tool call and records it as pending.
func (c *openaiCheck) call(raw json.RawMessage, at string) {
	call := object(raw, at, []string{"id", "type", "function"}, &c.p)
	id, _ := str(call["id"], at+".id", &c.p)
	if !openaiID.MatchString(id) {
		c.p.add("%s.id: %q is not 1 to 40 characters of [A-Za-z0-9_-]", at, id)
	}
	if typ, _ := str(call["type"], at+".type", &c.p); typ != "function" {
		c.p.add("%s.type: %q, want \"function\"", at, typ)
	}
	f := object(call["function"], at+".function", []string{"name", "arguments"}, &c.p)
	if name, _ := str(f["name"], at+".function.name", &c.p); !toolName.MatchString(name) {
		c.p.add("%s.function.name: %q does not match ^[a-zA-Z0-9_-]{1,64}$", at, name)
	}
	if args, ok := str(f["arguments"], at+".function.arguments", &c.p); ok && !isObject(args) {
		c.p.add("%s.function.arguments: not a JSON object", at)
	}
	if _, dup := c.pending[id]; dup {
		c.p.add("%s.id: %q repeats a call of the same message", at, id)
	}
	c.pending[id] = true
	c.order = append(c.order, id)
}

// tool checks a tool message: it answers a pending call, once.
func (c *openaiCheck) tool(raw json.RawMessage, at string) {
	m := object(raw, at, []string{"role", "content", "tool_call_id"}, &c.p)
	str(m["content"], at+".content", &c.p)
	id, _ := str(m["tool_call_id"], at+".tool_call_id", &c.p)
	switch open, ok := c.pending[id]; {
	case c.pending == nil:
		c.p.add("%s: a message with role 'tool' must be a response to a preceding message with 'tool_calls'", at)
	case !ok:
		c.p.add("%s.tool_call_id: %q is not a call of %s", at, id, c.pendingAt)
	case !open:
		c.p.add("%s.tool_call_id: %q is answered twice", at, id)
	default:
		c.pending[id] = false
	}
}

// Anthropic checks a Messages API request body.
func Anthropic(body []byte, opt Options) error {
	c := &anthropicCheck{seen: make(map[string]bool)}
	c.body(body, opt)
	return c.p.err("anthropic")
}

// anthropicCheck walks a Messages API body.
type anthropicCheck struct {
	p           problems
	breakpoints int             // blocks with cache_control
	saw5m       string          // the first breakpoint of the default 5-minute ttl
	seen        map[string]bool // tool_use ids in the request
	asked       []string        // tool_use ids of the previous message
	askedAt     string
	lastRole    string
	lastText    *string // the last text of the last message, if its last block is text
}

// message is what the blocks of one message share.
type message struct {
	role     string
	answered map[string]bool // tool_use ids its tool_result blocks answer
	uses     []string        // its tool_use ids
	sawText  bool
	sawOther bool // a block that is not thinking: thinking comes first
}

// anthropicBlocks checks a content block by its type.
var anthropicBlocks = map[string]func(c *anthropicCheck, m *message, raw json.RawMessage, at string){
	"text":              (*anthropicCheck).textBlock,
	"tool_use":          (*anthropicCheck).toolUse,
	"tool_result":       (*anthropicCheck).toolResult,
	"thinking":          (*anthropicCheck).thinking,
	"redacted_thinking": (*anthropicCheck).redactedThinking,
}

func (c *anthropicCheck) body(body []byte, opt Options) {
	top := object(body, "body", []string{"system", "messages", "tools"}, &c.p)
	if top == nil {
		return
	}
	if raw, ok := top["tools"]; ok {
		c.tools(raw)
	}
	if raw, ok := top["system"]; ok {
		c.system(raw)
	}
	msgs := list(top["messages"], "messages", &c.p)
	if len(msgs) == 0 && !opt.AllowNoMessages {
		c.p.add("messages: empty")
	}
	for i, raw := range msgs {
		c.message(i, raw)
	}
	for _, id := range c.asked {
		c.p.add("%s: tool_use %s has no tool_result (no message follows)", c.askedAt, id)
	}
	if c.lastRole == "assistant" && c.lastText != nil && strings.TrimRightFunc(*c.lastText, unicode.IsSpace) != *c.lastText {
		c.p.add("messages: final assistant content cannot end with trailing whitespace")
	}
	if c.breakpoints > 4 {
		c.p.add("%d blocks with cache_control, more than 4", c.breakpoints)
	}
}

// system checks the system prompt: a string, or text blocks.
func (c *anthropicCheck) system(raw json.RawMessage) {
	if isString(raw) {
		str(raw, "system", &c.p)
		return
	}
	for i, rb := range list(raw, "system", &c.p) {
		at := fmt.Sprintf("system[%d]", i)
		b := object(rb, at, []string{"type", "text", "cache_control"}, &c.p)
		if typ, _ := str(b["type"], at+".type", &c.p); typ != "text" {
			c.p.add("%s.type: %q, want \"text\"", at, typ)
		}
		c.text(b, at)
		c.cache(b, at)
	}
}

// message checks one message: its role in the alternation, its content,
// and that it answers every tool_use of the message before.
func (c *anthropicCheck) message(i int, raw json.RawMessage) {
	at := fmt.Sprintf("messages[%d]", i)
	obj := object(raw, at, []string{"role", "content"}, &c.p)
	role, _ := str(obj["role"], at+".role", &c.p)
	switch {
	case role != "user" && role != "assistant":
		c.p.add("%s.role: %q, want user or assistant", at, role)
	case i == 0 && role != "user":
		c.p.add("%s.role: the first message must use the user role", at)
	case role == c.lastRole:
		c.p.add("%s.role: two %s messages in a row (roles must alternate)", at, role)
	}
	m := &message{role: role, answered: make(map[string]bool)}
	c.lastText = nil
	if content := obj["content"]; isString(content) {
		s, _ := str(content, at+".content", &c.p)
		if blank(s) {
			c.p.add("%s.content: empty or only white space", at)
		}
		c.lastText = &s
	} else {
		blocks := list(content, at+".content", &c.p)
		if len(blocks) == 0 {
			c.p.add("%s.content: empty", at)
		}
		for j, rb := range blocks {
			c.block(m, rb, fmt.Sprintf("%s.content[%d]", at, j))
		}
	}
	for _, id := range c.asked {
		if !m.answered[id] {
			c.p.add("%s: tool_use ids were found without tool_result blocks immediately after: %s", c.askedAt, id)
		}
	}
	c.asked, c.askedAt, c.lastRole = m.uses, at, role
}

// block checks a content block by its type.
func (c *anthropicCheck) block(m *message, raw json.RawMessage, at string) {
	var head struct {
		Type string `json:"type"`
	}
	_ = json.Unmarshal(raw, &head)
	c.lastText = nil
	check, ok := anthropicBlocks[head.Type]
	if !ok {
		c.p.add("%s.type: %q is not a block type written here", at, head.Type)
		return
	}
	check(c, m, raw, at)
	if head.Type != "thinking" && head.Type != "redacted_thinking" {
		m.sawOther = true
	}
}

// thinkingFirst checks what thinking and redacted_thinking blocks share:
// in an assistant message, before its other blocks, without
// cache_control (which the API refuses on them).
func (c *anthropicCheck) thinkingFirst(m *message, b map[string]json.RawMessage, at string) {
	if m.role != "assistant" {
		c.p.add("%s: a thinking block in a %s message", at, m.role)
	}
	if m.sawOther {
		c.p.add("%s: a thinking block after other content (thinking blocks come first)", at)
	}
	if _, ok := b["cache_control"]; ok {
		c.p.add("%s.cache_control: not allowed on a thinking block", at)
	}
}

func (c *anthropicCheck) thinking(m *message, raw json.RawMessage, at string) {
	b := object(raw, at, []string{"type", "thinking", "signature"}, &c.p)
	c.thinkingFirst(m, b, at)
	str(b["thinking"], at+".thinking", &c.p)
	if sig, ok := str(b["signature"], at+".signature", &c.p); ok && sig == "" {
		c.p.add("%s.signature: empty", at)
	}
}

func (c *anthropicCheck) redactedThinking(m *message, raw json.RawMessage, at string) {
	b := object(raw, at, []string{"type", "data"}, &c.p)
	c.thinkingFirst(m, b, at)
	if data, ok := str(b["data"], at+".data", &c.p); ok && data == "" {
		c.p.add("%s.data: empty", at)
	}
}

func (c *anthropicCheck) textBlock(m *message, raw json.RawMessage, at string) {
	b := object(raw, at, []string{"type", "text", "cache_control"}, &c.p)
	t := c.text(b, at)
	c.lastText = &t
	c.cache(b, at)
	m.sawText = true
}

func (c *anthropicCheck) toolUse(m *message, raw json.RawMessage, at string) {
	b := object(raw, at, []string{"type", "id", "name", "input", "cache_control"}, &c.p)
	if m.role != "assistant" {
		c.p.add("%s: tool_use in a %s message", at, m.role)
	}
	id, _ := str(b["id"], at+".id", &c.p)
	if !toolUseID.MatchString(id) {
		c.p.add("%s.id: %q does not match ^[a-zA-Z0-9_-]+$", at, id)
	}
	if c.seen[id] {
		c.p.add("%s.id: tool_use ids must be unique (%q)", at, id)
	}
	c.seen[id] = true
	m.uses = append(m.uses, id)
	if name, _ := str(b["name"], at+".name", &c.p); !toolName.MatchString(name) {
		c.p.add("%s.name: %q does not match ^[a-zA-Z0-9_-]{1,64}$", at, name)
	}
	if !isObject(string(b["input"])) {
		c.p.add("%s.input: not an object", at)
	}
	c.cache(b, at)
}

func (c *anthropicCheck) toolResult(m *message, raw json.RawMessage, at string) {
	b := object(raw, at, []string{"type", "tool_use_id", "content", "is_error", "cache_control"}, &c.p)
	if m.role != "user" {
		c.p.add("%s: tool_result in a %s message", at, m.role)
	}
	if m.sawText {
		c.p.add("%s: tool_result after text (tool results must come first in the content)", at)
	}
	id, _ := str(b["tool_use_id"], at+".tool_use_id", &c.p)
	switch {
	case !slices.Contains(c.asked, id):
		c.p.add("%s: unexpected tool_use_id %q: each tool_result block must have a corresponding tool_use block in the previous message", at, id)
	case m.answered[id]:
		c.p.add("%s: tool_use_id %q answered twice", at, id)
	}
	m.answered[id] = true
	if content, ok := b["content"]; ok && !isString(content) {
		list(content, at+".content", &c.p)
	}
	c.cache(b, at)
}

// cache counts a block's cache_control and checks its form.
func (c *anthropicCheck) cache(b map[string]json.RawMessage, at string) {
	raw, ok := b["cache_control"]
	if !ok {
		return
	}
	c.breakpoints++
	cc := object(raw, at+".cache_control", []string{"type", "ttl"}, &c.p)
	if typ, _ := str(cc["type"], at+".cache_control.type", &c.p); typ != "ephemeral" {
		c.p.add("%s.cache_control.type: %q, want \"ephemeral\"", at, typ)
	}
	ttl := "5m"
	if raw, ok := cc["ttl"]; ok {
		ttl, _ = str(raw, at+".cache_control.ttl", &c.p)
	}
	switch {
	case ttl != "5m" && ttl != "1h":
		c.p.add("%s.cache_control.ttl: %q, want \"5m\" or \"1h\"", at, ttl)
	case ttl == "5m" && c.saw5m == "":
		c.saw5m = at
	case ttl == "1h" && c.saw5m != "":
		c.p.add("%s.cache_control: a ttl of 1h after the 5m of %s (longer lifetimes come first)", at, c.saw5m)
	}
}

// text returns a block's text, which must not be blank.
func (c *anthropicCheck) text(b map[string]json.RawMessage, at string) string {
	t, ok := str(b["text"], at+".text", &c.p)
	if ok && blank(t) {
		c.p.add("%s.text: text content blocks must contain non-whitespace text", at)
	}
	return t
}

// isString reports whether raw is a JSON string (its first byte a quote).
func isString(raw json.RawMessage) bool { return bytes.HasPrefix(bytes.TrimSpace(raw), []byte(`"`)) }
