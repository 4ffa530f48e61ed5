package contextasm_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/contextasm/contextasm/chat"
	"github.com/contextasm/contextasm/contextasm"
	"github.com/contextasm/contextasm/declare"
)

// msg returns a session-s1 history block of role r: an assistant turn
// making the calls ids, or a tool result answering ids[0].
func msg(id string, r declare.Role, content string, ids ...string) declare.Declaration {
	d := declare.Declaration{RequestID: id, MemoryType: declare.History, Scope: declare.ScopeSession, SessionID: "s1",
		Role: r, Content: content}
	switch r {
	case declare.RoleAssistant:
		for _, c := range ids {
			d.ToolCalls = append(d.ToolCalls, declare.ToolCall{ID: c, Name: "lookup", Arguments: "{}"})
		}
	case declare.RoleTool:
		d.ToolCallID = ids[0]
	}
	return d
}

func TestDeclareChecksToolCallsAgainstTheStore(t *testing.T) {
	call := msg("a1", declare.RoleAssistant, "Checking.", "c1", "c2")
	r1, r2 := msg("r1", declare.RoleTool, "one", "c1"), msg("r2", declare.RoleTool, "two", "c2")

	// A result declared before its call is refused, and nothing of that
	// Declare is applied.
	eng := newEngine(t, contextasm.Config{})
	err := eng.Declare(global("g", declare.Context, "x"), r1)
	var ve *declare.ValidationError
	if !errors.As(err, &ve) || len(ve.Problems) != 1 || ve.Problems[0].RequestID != "r1" || ve.Problems[0].Field != "tool_call_id" ||
		!strings.Contains(ve.Problems[0].Message, `names call "c1", which no assistant block of session "s1" declares`) {
		t.Fatalf("result before its call: %v", err)
	}
	if eng.Len() != 0 {
		t.Fatalf("%d blocks applied from a refused Declare", eng.Len())
	}

	// Call and result in one Declare, in any order; a later result answers
	// a call in the store.
	if err := eng.Declare(r1, call); err != nil {
		t.Fatal(err)
	}
	if err := eng.Declare(r2); err != nil {
		t.Fatal(err)
	}
	// Re-declaring a block with its calls or its result is no conflict.
	if err := eng.Declare(call, r2); err != nil {
		t.Errorf("re-declaring: %v", err)
	}

	for _, tt := range []struct {
		name  string
		decls []declare.Declaration
		id    string
		field string
		msg   string
	}{
		{"a call answered twice", []declare.Declaration{msg("r3", declare.RoleTool, "again", "c1")},
			"r3", "tool_call_id", `already answered by "r1"`},
		{"a call id made again in the session", []declare.Declaration{msg("a2", declare.RoleAssistant, "Again.", "c2")},
			"a2", "tool_calls[0].id", `already declared in session "s1" by "a1"`},
		{"a result of another session", []declare.Declaration{func() declare.Declaration {
			d := msg("r4", declare.RoleTool, "elsewhere", "c1")
			d.SessionID = "s2"
			return d
		}()}, "r4", "tool_call_id", `session "s2"`},
		{"a call re-declared without the call a result answers", []declare.Declaration{
			msg("a1", declare.RoleAssistant, "Changed my mind.", "c9"), msg("r5", declare.RoleTool, "late", "c1")},
			"r5", "tool_call_id", `names call "c1"`},
	} {
		err := eng.Declare(tt.decls...)
		if !errors.As(err, &ve) {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if !slices.ContainsFunc(ve.Problems, func(p declare.Problem) bool {
			return p.RequestID == tt.id && p.Field == tt.field && strings.Contains(p.Message, tt.msg)
		}) {
			t.Errorf("%s: %v, want a problem of %s.%s saying %q", tt.name, err, tt.id, tt.field, tt.msg)
		}
	}
	if eng.Len() != 3 {
		t.Errorf("store has %d blocks, want 3: a refused Declare applied something", eng.Len())
	}
	// Forgetting the call is allowed: its results are left to assembly,
	// which drops them rather than orphan them.
	if n := eng.Forget("a1"); n != 1 {
		t.Fatalf("Forget = %d", n)
	}
	if err := eng.Declare(msg("r6", declare.RoleTool, "orphan", "c1")); err == nil {
		t.Error("a result for a forgotten call is accepted")
	}
}

// TestCheckBodies: Config.CheckBodies passes what the writer makes valid
// and changes nothing of it: the same bodies, by RenderHash, in both chat
// formats. (checkBody's refusals: TestCheckBodyRefuses.)
func TestCheckBodies(t *testing.T) {
	decls := []declare.Declaration{msg("u1", declare.RoleUser, "Rate?"), msg("a1", declare.RoleAssistant, "", "c1"), msg("r1", declare.RoleTool, "6.9%", "c1"),
		msg("a2", declare.RoleAssistant, "It is 6.9% APR. ")}
	tpl := parseTemplate(t, `{"budget": 1000, "sections": [
	    {"name": "HISTORY", "priority": 1, "memory_types": ["history"], "max_tokens": 500, "render": "{content}"}]}`)
	for _, format := range []chat.Format{chat.FormatOpenAI, chat.FormatAnthropic} {
		req := contextasm.Request{Template: tpl, Now: time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC), SessionID: "s1", Format: format}
		var hashes []string
		for _, check := range []bool{false, true} {
			eng, err := contextasm.New(contextasm.Config{CheckBodies: check})
			if err != nil {
				t.Fatal(err)
			}
			defer eng.Close()
			if err := eng.Declare(decls...); err != nil {
				t.Fatal(err)
			}
			res, err := eng.Assemble(context.Background(), req)
			if err != nil {
				t.Fatalf("%v, CheckBodies %v: %v", format, check, err)
			}
			hashes = append(hashes, res.RenderHash)
		}
		if hashes[0] != hashes[1] {
			t.Errorf("%v: CheckBodies changed the body: %v", format, hashes)
		}
	}
}
