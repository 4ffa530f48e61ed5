package contextasm

import (
	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/internal/assemble"
)

// checkToolCalls holds the tool calls and results of decls, about to be
// declared, to the store's: a call id is declared once in a session, a call
// answered once, and a result answers a call in the store or among decls.
// A result declared before its call is refused: declare the assistant turn
// first, or both in one call. (A call whose block is later forgotten or
// re-declared without it leaves its results orphaned; assembly drops them,
// with an event.)
func checkToolCalls(store []*assemble.Block, decls []declare.Declaration) error {
	sessions := make(map[string]bool)
	for i := range decls {
		if d := &decls[i]; len(d.ToolCalls) > 0 || d.ToolCallID != "" {
			sessions[d.SessionID] = true
		}
	}
	if len(sessions) == 0 {
		return nil
	}
	replaced := make(map[string]bool, len(decls))
	for i := range decls {
		replaced[decls[i].RequestID] = true
	}
	var x declare.CallIndex
	for _, b := range store {
		if (len(b.ToolCalls) == 0 && b.ToolCallID == "") || !sessions[b.SessionID] || replaced[b.ID] {
			continue
		}
		x.Add(&declare.Declaration{RequestID: b.ID, MemoryType: b.Type, Scope: b.Scope, SessionID: b.SessionID,
			Role: b.Role, ToolCalls: b.ToolCalls, ToolCallID: b.ToolCallID})
	}
	var probs []declare.Problem
	for i := range decls {
		probs = append(probs, x.Add(&decls[i])...)
	}
	for i := range decls {
		if p, ok := x.Answers(&decls[i]); !ok {
			probs = append(probs, p)
		}
	}
	if len(probs) > 0 {
		return &declare.ValidationError{Problems: probs}
	}
	return nil
}
