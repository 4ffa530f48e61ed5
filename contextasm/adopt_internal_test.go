package contextasm

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/contextasm/contextasm/bench"
	"github.com/contextasm/contextasm/chat"
	"github.com/contextasm/contextasm/declare"
)

// A session started after another ended takes over the ended one's index
// (Engine.adopt, Index.Retarget) instead of building one from the store.
// In a churn of sessions, each with turns, a tool exchange and now and
// then a summary of its own, beside a session that stays open (whose
// blocks every other hides), a session id that comes back, and a turn
// declared to a session after it ended, every
// assembly, text and chat, at a clock that moves, is the one an Engine
// that assembles from scratch makes (rows, events, counts and hashes),
// the learned heat is the same, and every session after the first took
// an ended one's index.
func TestSessionsTakeOverEndedIndexes(t *testing.T) {
	fast, full, tpl := benchPair(t)
	at := bench.Epoch
	turn := func(session, id string, role declare.Role, content string) declare.Declaration {
		lm := at
		at = at.Add(time.Second)
		return declare.Declaration{RequestID: id, MemoryType: declare.History, Scope: declare.ScopeSession,
			SessionID: session, Role: role, Content: content, LastModified: &lm}
	}
	store := bench.Generate(600, 1)
	for k := range 3 {
		store = append(store, turn("open", fmt.Sprintf("open-%d", k), declare.RoleUser, "USER: what does the open session ask about rates?"))
	}
	ctx := context.Background()
	both := func(t *testing.T, f func(e *Engine) error) {
		t.Helper()
		if err1, err2 := f(fast), f(full); err1 != nil || err2 != nil {
			t.Fatalf("%v, %v", err1, err2)
		}
	}
	both(t, func(e *Engine) error { return e.Declare(store...) })
	assemble := func(t *testing.T, describe string, req Request) {
		t.Helper()
		r1, err1 := fast.Assemble(ctx, req)
		r2, err2 := full.Assemble(ctx, req)
		if err1 != nil || err2 != nil {
			t.Fatalf("%s: %v, %v", describe, err1, err2)
		}
		sameResult(t, describe, r1, r2)
	}
	const sessions = 16
	for i := range sessions {
		s := fmt.Sprintf("churn-%02d", i)
		if i%5 >= 3 {
			s = "churn-back" // the same id, ended and started again, the second time at once
		}
		id := func(kind string) string { return fmt.Sprintf("%s-%02d-%s", s, i, kind) }
		call := turn(s, id("call"), declare.RoleAssistant, "")
		call.ToolCalls = []declare.ToolCall{{ID: fmt.Sprintf("call_%02d", i), Name: "get_rate", Arguments: `{"term_months":24}`}}
		result := turn(s, id("result"), declare.RoleTool, fmt.Sprintf("get_rate: 24 months at %d.%02d%% APR, opening fee EUR %d", 4+i%3, 7*i%100, 150+25*i))
		result.ToolCallID = call.ToolCalls[0].ID
		decls := []declare.Declaration{
			turn(s, id("user"), declare.RoleUser, fmt.Sprintf("USER: what would a %d-month loan cost me?", 12*(1+i%5))),
			call, result,
			turn(s, id("answer"), declare.RoleAssistant, "ASSISTANT: the rate sheet gives the figures above."),
		}
		if i%3 == 1 {
			sum := turn(s, id("summary"), declare.RoleUser, "SUMMARY: the user asked what a loan costs.")
			sum.Role, sum.Replaces = "", []string{id("user")}
			decls = append(decls, sum)
		}
		both(t, func(e *Engine) error { return e.Declare(decls...) })
		req := Request{Template: tpl, Now: at, SessionID: s, UserID: bench.User}
		if i%2 == 1 {
			req.Format = chat.FormatOpenAI
		}
		assemble(t, fmt.Sprintf("session %d (%s)", i, s), req)
		// A second call of the session, a minute on: the index it took
		// over is kept in step as any.
		at = at.Add(time.Minute)
		next := turn(s, id("again"), declare.RoleUser, "USER: and with the opening fee?")
		both(t, func(e *Engine) error { return e.Declare(next) })
		req.Now = at
		assemble(t, fmt.Sprintf("session %d (%s), second call", i, s), req)
		both(t, func(e *Engine) error { _, err := e.EndSession(s); return err })
		if i%4 == 2 {
			// A turn of the ended session that comes late: the index the
			// next session takes over holds it, and must let it go.
			late := turn(s, id("late"), declare.RoleUser, "USER: one more thing about the loan.")
			both(t, func(e *Engine) error { return e.Declare(late) })
		}
	}
	// The open session, whose index was never ended, at the end.
	assemble(t, "the open session", Request{Template: tpl, Now: at, SessionID: "open", UserID: bench.User})
	sameState(t, "after the churn", fast, full)
	if n := fast.adopted.Load(); n != sessions {
		t.Errorf("%d of %d sessions took over an ended session's index: want every one after the first, and the open one", n, sessions+1)
	}
	if fast.indexed.Load() < 2*sessions {
		t.Errorf("%d of %d assemblies served from an index", fast.indexed.Load(), 2*sessions+1)
	}
}
