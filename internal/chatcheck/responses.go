package chatcheck

import (
	"encoding/json"
	"fmt"
	"slices"
)

// Responses checks an OpenAI Responses API request body.
func Responses(body []byte, opt Options) error {
	c := &responsesCheck{calls: make(map[string]string), answered: make(map[string]bool)}
	c.body(body, opt)
	return c.p.err("responses")
}

// responsesCheck walks a Responses body: instructions, then the input
// items in order.
type responsesCheck struct {
	p        problems
	calls    map[string]string // call_id → where its function_call is
	order    []string          // call_ids in the order made
	answered map[string]bool
	// reasoning is where a reasoning item waits for the item it produced
	// ("" when none does).
	reasoning string
}

// responsesItems checks an input item by its type.
var responsesItems = map[string]func(c *responsesCheck, raw json.RawMessage, at string){
	"message":              (*responsesCheck).message,
	"function_call":        (*responsesCheck).functionCall,
	"function_call_output": (*responsesCheck).functionCallOutput,
	"reasoning":            (*responsesCheck).reasoningItem,
}

var responsesRoles = []string{"user", "assistant", "system", "developer"}

func (c *responsesCheck) body(body []byte, opt Options) {
	top := object(body, "body", []string{"instructions", "input", "tools"}, &c.p)
	if top == nil {
		return
	}
	if raw, ok := top["tools"]; ok {
		c.tools(raw)
	}
	if raw, ok := top["instructions"]; ok {
		if s, ok := str(raw, "instructions", &c.p); ok && s == "" {
			c.p.add("instructions: empty")
		}
	}
	items := list(top["input"], "input", &c.p)
	if len(items) == 0 && !opt.AllowNoMessages {
		c.p.add("input: empty")
	}
	for i, raw := range items {
		at := fmt.Sprintf("input[%d]", i)
		var head struct {
			Type string `json:"type"`
		}
		_ = json.Unmarshal(raw, &head)
		check, ok := responsesItems[head.Type]
		if !ok {
			c.p.add("%s.type: %q is not an item type written here", at, head.Type)
			continue
		}
		check(c, raw, at)
	}
	if c.reasoning != "" {
		c.p.add("%s: Item of type 'reasoning' was provided without its required following item", c.reasoning)
	}
	for _, id := range c.order {
		if !c.answered[id] {
			c.p.add("%s: No tool output found for function call %s", c.calls[id], id)
		}
	}
}

// follow records that the item at hand is one a reasoning item may
// produce (an assistant message or a function call), or not.
func (c *responsesCheck) follow(produced bool, at string) {
	if c.reasoning != "" && !produced {
		c.p.add("%s: Item of type 'reasoning' was provided without its required following item (%s follows it)", c.reasoning, at)
	}
	c.reasoning = ""
}

// message checks a message item: a role and non-empty text.
func (c *responsesCheck) message(raw json.RawMessage, at string) {
	m := object(raw, at, []string{"type", "role", "content"}, &c.p)
	role, _ := str(m["role"], at+".role", &c.p)
	if !slices.Contains(responsesRoles, role) {
		c.p.add("%s.role: %q, want user, assistant, system or developer", at, role)
	}
	c.follow(role == "assistant", at)
	if s, ok := str(m["content"], at+".content", &c.p); ok && s == "" {
		c.p.add("%s.content: empty", at)
	}
}

// functionCall checks a function_call item and records its call_id.
func (c *responsesCheck) functionCall(raw json.RawMessage, at string) {
	m := object(raw, at, []string{"type", "call_id", "name", "arguments", "id", "status"}, &c.p)
	c.follow(true, at)
	id, _ := str(m["call_id"], at+".call_id", &c.p)
	if !openaiID.MatchString(id) {
		c.p.add("%s.call_id: %q is not 1 to 40 characters of [A-Za-z0-9_-]", at, id)
	}
	if name, _ := str(m["name"], at+".name", &c.p); !toolName.MatchString(name) {
		c.p.add("%s.name: %q does not match ^[a-zA-Z0-9_-]{1,64}$", at, name)
	}
	if args, ok := str(m["arguments"], at+".arguments", &c.p); ok && !isObject(args) {
		c.p.add("%s.arguments: not a JSON object", at)
	}
	if prev, dup := c.calls[id]; dup {
		c.p.add("%s.call_id: %q is the call_id of %s too", at, id, prev)
		return
	}
	c.calls[id] = at
	c.order = append(c.order, id)
}

// functionCallOutput checks a function_call_output item: it answers a
// function_call before it, once.
func (c *responsesCheck) functionCallOutput(raw json.RawMessage, at string) {
	m := object(raw, at, []string{"type", "call_id", "output", "id", "status"}, &c.p)
	c.follow(false, at)
	id, _ := str(m["call_id"], at+".call_id", &c.p)
	str(m["output"], at+".output", &c.p)
	switch _, made := c.calls[id]; {
	case !made:
		c.p.add("%s.call_id: No tool call found for function call output with call_id %s", at, id)
	case c.answered[id]:
		c.p.add("%s.call_id: %q is answered twice", at, id)
	}
	c.answered[id] = true
}

// reasoningItem checks a reasoning item: an id, a summary list, and an
// item it produced right after it.
func (c *responsesCheck) reasoningItem(raw json.RawMessage, at string) {
	m := object(raw, at, []string{"type", "id", "summary", "encrypted_content", "content", "status"}, &c.p)
	c.follow(false, at)
	if id, ok := str(m["id"], at+".id", &c.p); ok && id == "" {
		c.p.add("%s.id: empty", at)
	}
	for j, rs := range list(m["summary"], at+".summary", &c.p) {
		sat := fmt.Sprintf("%s.summary[%d]", at, j)
		s := object(rs, sat, []string{"type", "text"}, &c.p)
		if typ, _ := str(s["type"], sat+".type", &c.p); typ != "summary_text" {
			c.p.add("%s.type: %q, want \"summary_text\"", sat, typ)
		}
		str(s["text"], sat+".text", &c.p)
	}
	if raw, ok := m["encrypted_content"]; ok && string(raw) != "null" {
		str(raw, at+".encrypted_content", &c.p)
	}
	c.reasoning = at
}
