package declare

import (
	"fmt"
	"strings"
	"unicode"

	"github.com/contextasm/contextasm/chat"
)

// Role says who speaks a history block when a context is rendered as chat
// messages (package chat). A history block without one is RoleUser; other
// memory types have no role.
type Role = chat.Role

// The roles.
const (
	RoleUser      = chat.RoleUser
	RoleAssistant = chat.RoleAssistant
	RoleTool      = chat.RoleTool // a tool's result, answering one call
)

// ChatRole returns the block's role in a chat: its Role, or RoleUser for a
// history block that names none. Other memory types have no role ("").
func (d *Declaration) ChatRole() Role {
	if d.MemoryType != History {
		return ""
	}
	if d.Role == "" {
		return RoleUser
	}
	return d.Role
}

// ToolCall is one call of a tool that an assistant turn makes:
// {"id","name","arguments"}, where arguments is a JSON object in UTF-8
// written as a string ("{}" for none). Its id is 1 to
// chat.MaxToolCallIDLen characters of printable ASCII but the space (the
// ids providers emit, such as "functions.get_weather:0"; each format
// writes it as chat.WireID maps it), its name 1 to chat.MaxToolNameLen
// characters of [A-Za-z0-9_-], as every API takes it.
type ToolCall = chat.ToolCall

// Reasoning is one reasoning item of an assistant turn, as its provider
// returned it (chat.Reasoning, chat.ValidReasoning).
type Reasoning = chat.Reasoning

// chatProblems appends the problems of d's chat fields (role, tool_calls,
// tool_call_id, group) that a struct tag cannot express.
func chatProblems(d *Declaration, dst []Problem) []Problem {
	add := func(field, format string, args ...any) {
		dst = append(dst, Problem{Field: field, Message: fmt.Sprintf(format, args...)})
	}
	if d.MemoryType != History && d.MemoryType.Valid() {
		for _, f := range [...]struct {
			name string
			set  bool
		}{{"role", d.Role != ""}, {"tool_calls", len(d.ToolCalls) > 0}, {"tool_call_id", d.ToolCallID != ""}, {"group", d.Group != ""}, {"reasoning", len(d.Reasoning) > 0}} {
			if f.set {
				add(f.name, "applies to history blocks only (memory_type is %q)", d.MemoryType)
			}
		}
		return dst
	}
	role := d.Role
	if role == "" {
		role = RoleUser
	}
	if len(d.ToolCalls) > 0 && role != RoleAssistant {
		add("tool_calls", "needs role \"assistant\" (role is %q)", role)
	}
	if d.ToolCallID != "" && role != RoleTool {
		add("tool_call_id", "needs role \"tool\" (role is %q)", role)
	}
	if len(d.Reasoning) > 0 && role != RoleAssistant {
		add("reasoning", "needs role \"assistant\" (role is %q)", role)
	}
	openai := -1
	for i, r := range d.Reasoning {
		f := fmt.Sprintf("reasoning[%d]", i)
		if key, err := chat.ValidReasoning(r); err != nil {
			if key != "" {
				f += "." + key
			}
			add(f, "%v", err)
		} else if r.Type == chat.ReasoningOpenAI && openai >= 0 {
			add(f, "a second reasoning item of type %q (reasoning[%d] is one; a turn has one: declare a turn for each)", r.Type, openai)
		} else if r.Type == chat.ReasoningOpenAI {
			openai = i
		}
	}
	if role == RoleTool && d.ToolCallID == "" {
		add("tool_call_id", "is required when role is tool (the id of the call the block answers)")
	}
	if (len(d.ToolCalls) > 0 || role == RoleTool) && d.Scope.valid() && d.Scope != ScopeSession {
		add("scope", "must be session for a tool call or result (a tool exchange belongs to one session; scope is %q)", d.Scope)
	}
	if role == RoleAssistant && d.Content == "" && len(d.ToolCalls) == 0 {
		add("content", "is required (an assistant turn without tool_calls needs content)")
	}
	if d.MemoryType == History && d.Content != "" && strings.TrimFunc(d.Content, unicode.IsSpace) == "" {
		add("content", "is only white space (a chat message needs text)")
	}
	seen := make(map[string]int, len(d.ToolCalls))
	for i, c := range d.ToolCalls {
		f := fmt.Sprintf("tool_calls[%d]", i)
		if !chat.ValidID(c.ID) {
			add(f+".id", "must be 1 to %d characters of printable ASCII but the space (got %q)", chat.MaxToolCallIDLen, clip(c.ID))
		} else if j, dup := seen[c.ID]; dup {
			add(f+".id", "repeats the id of tool_calls[%d] (%q)", j, c.ID)
		} else {
			seen[c.ID] = i
		}
		if !chat.ValidToolName(c.Name) {
			add(f+".name", "must be 1 to %d characters of A-Z, a-z, 0-9, '_' and '-' (got %q)", chat.MaxToolNameLen, c.Name)
		}
		if !chat.ValidArguments(c.Arguments) {
			add(f+".arguments", "must be a JSON object in UTF-8 written as a string, such as \"{}\" (got %q)", clip(c.Arguments))
		}
	}
	if d.ToolCallID != "" && !chat.ValidID(d.ToolCallID) {
		add("tool_call_id", "must be 1 to %d characters of printable ASCII but the space (got %q)", chat.MaxToolCallIDLen, clip(d.ToolCallID))
	}
	if d.Group != "" && !validRequestID(d.Group) {
		add("group", "must be 1 to %d printable characters without whitespace", MaxRequestIDLen)
	}
	return dst
}

// valid reports whether s is one of the scopes.
func (s Scope) valid() bool { return s == ScopeSession || s == ScopeUser || s == ScopeGlobal }

// clip shortens a long value quoted in a problem.
func clip(s string) string {
	const max = 60
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }

// callKey identifies a tool call within its session.
type callKey struct{ session, id string }

// CallIndex knows which tool calls and results a set of declarations holds,
// by session, so that results can be checked against calls across files
// or across Engine.Declare calls.
type CallIndex struct {
	calls   map[callKey]string // call → request_id of the assistant block
	results map[callKey]string // call → request_id of the tool block
	wire    map[callKey]string // the id a call is written as (chat.WireID) → the call's id
	// base, when set, is read through (Over): what it holds counts as
	// held here, but for the blocks hide names.
	base *CallIndex
	hide func(requestID string) bool
}

// Over returns an empty CallIndex that reads through to base: it holds
// what base holds, but for the calls and results of the blocks hide names
// (those about to be declared again), and what is added to it, which base
// does not see. Checking a few declarations against a store's index so
// costs what they hold, not what the store does.
func Over(base *CallIndex, hide func(requestID string) bool) CallIndex {
	return CallIndex{base: base, hide: hide}
}

// call returns the request_id of the block that declares call k.
func (x *CallIndex) call(k callKey) (string, bool) {
	if id, ok := x.calls[k]; ok {
		return id, true
	}
	if x.base != nil {
		if id, ok := x.base.call(k); ok && !x.hide(id) {
			return id, true
		}
	}
	return "", false
}

// result returns the request_id of the block that answers call k.
func (x *CallIndex) result(k callKey) (string, bool) {
	if id, ok := x.results[k]; ok {
		return id, true
	}
	if x.base != nil {
		if id, ok := x.base.result(k); ok && !x.hide(id) {
			return id, true
		}
	}
	return "", false
}

// wireOf returns the id of the call written as w.
func (x *CallIndex) wireOf(w callKey) (string, bool) {
	if id, ok := x.wire[w]; ok {
		return id, true
	}
	if x.base != nil {
		if id, ok := x.base.wireOf(w); ok {
			if owner, held := x.base.call(callKey{w.session, id}); held && !x.hide(owner) {
				return id, true
			}
		}
	}
	return "", false
}

// Remove takes d's calls and result out of x, as Add put them (not out
// of the index x reads through). It is how an index of a store follows a
// block's removal or replacement.
func (x *CallIndex) Remove(d *Declaration) {
	if d.MemoryType != History || d.Scope != ScopeSession {
		return
	}
	for _, c := range d.ToolCalls {
		k := callKey{d.SessionID, c.ID}
		if x.calls[k] == d.RequestID {
			delete(x.calls, k)
			if w := (callKey{d.SessionID, chat.WireID(c.ID)}); x.wire[w] == c.ID {
				delete(x.wire, w)
			}
		}
	}
	if d.ChatRole() == RoleTool && d.ToolCallID != "" {
		if k := (callKey{d.SessionID, d.ToolCallID}); x.results[k] == d.RequestID {
			delete(x.results, k)
		}
	}
}

// Len returns the calls and results x holds itself.
func (x *CallIndex) Len() int { return len(x.calls) + len(x.results) }

// Add indexes d's calls and result, and returns the problems that d
// brings: a call id already declared in its session by another block, or a
// call already answered by another tool block. Blocks with problems of
// their own should not be added.
func (x *CallIndex) Add(d *Declaration) []Problem {
	if d.MemoryType != History || d.Scope != ScopeSession {
		return nil
	}
	if x.calls == nil {
		x.calls, x.results, x.wire = make(map[callKey]string), make(map[callKey]string), make(map[callKey]string)
	}
	var probs []Problem
	for i, c := range d.ToolCalls {
		k := callKey{d.SessionID, c.ID}
		if other, ok := x.call(k); ok && other != d.RequestID {
			probs = append(probs, Problem{RequestID: d.RequestID, Field: fmt.Sprintf("tool_calls[%d].id", i),
				Message: fmt.Sprintf("call %q is already declared in session %q by %q", c.ID, d.SessionID, other)})
			continue
		}
		w := callKey{d.SessionID, chat.WireID(c.ID)}
		if other, ok := x.wireOf(w); ok && other != c.ID {
			probs = append(probs, Problem{RequestID: d.RequestID, Field: fmt.Sprintf("tool_calls[%d].id", i),
				Message: fmt.Sprintf("call %q is written as %q, as call %q of session %q is (chat.WireID)", c.ID, w.id, other, d.SessionID)})
			continue
		}
		x.calls[k], x.wire[w] = d.RequestID, c.ID
	}
	if d.ChatRole() == RoleTool && d.ToolCallID != "" {
		k := callKey{d.SessionID, d.ToolCallID}
		if other, ok := x.result(k); ok && other != d.RequestID {
			probs = append(probs, Problem{RequestID: d.RequestID, Field: "tool_call_id",
				Message: fmt.Sprintf("call %q of session %q is already answered by %q", d.ToolCallID, d.SessionID, other)})
		} else {
			x.results[k] = d.RequestID
		}
	}
	return probs
}

// Answers reports whether the call a tool block d answers is indexed, and
// returns the problem to report when it is not. It returns true for blocks
// that are not tool results.
func (x *CallIndex) Answers(d *Declaration) (Problem, bool) {
	if d.ChatRole() != RoleTool || d.ToolCallID == "" {
		return Problem{}, true
	}
	if _, ok := x.call(callKey{d.SessionID, d.ToolCallID}); ok {
		return Problem{}, true
	}
	return Problem{RequestID: d.RequestID, Field: "tool_call_id",
		Message: fmt.Sprintf("names call %q, which no assistant block of session %q declares", d.ToolCallID, d.SessionID)}, false
}

// checkCalls appends to dst the tool-call problems of a set of
// declarations (from one file, or from several: files[i] and lines[i]
// locate decls[i]). Unanswered results are reported only when the set is
// complete: with other problems, the call may be on a line that failed.
func checkCalls(dst []Problem, decls []Declaration, files []string, lines []int) []Problem {
	complete := len(dst) == 0
	var x CallIndex
	at := func(p Problem, i int) Problem {
		p.File, p.Line = files[i], lines[i]
		return p
	}
	for i := range decls {
		for _, p := range x.Add(&decls[i]) {
			dst = append(dst, at(p, i))
		}
	}
	for i := range decls {
		if p, ok := x.Answers(&decls[i]); !ok && complete {
			dst = append(dst, at(p, i))
		}
	}
	return dst
}
