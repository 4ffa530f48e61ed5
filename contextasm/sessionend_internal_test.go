package contextasm

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/contextasm/contextasm/bench"
	"github.com/contextasm/contextasm/chat"
	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/template"
)

// TestEndSessionReleasesCaches: the session's blocks leave the memo of
// rendered-block counts, the memo of their texts and the cut plans, and the cached output goes;
// another session's entries stay.
func TestEndSessionReleasesCaches(t *testing.T) {
	e, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	tpl, err := template.Parse([]byte(`{"budget": 200, "sections": [
	  {"name": "H", "priority": 1, "memory_types": ["history"], "max_tokens": 15, "render": "{content}", "partial": true, "min_partial_tokens": 1}]}`), "t.json")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	long := "USER: a long question about the fees, the rate, the term, the first instalment and when the money arrives, asked twice over to need a cut"
	var decls []declare.Declaration
	for _, s := range []string{"s1", "s2"} {
		older, newer := now.Add(-2*time.Minute), now.Add(-time.Minute)
		decls = append(decls,
			declare.Declaration{RequestID: s + "-turn", MemoryType: declare.History, Scope: declare.ScopeSession,
				SessionID: s, Content: "USER: hi " + s, LastModified: &newer},
			declare.Declaration{RequestID: s + "-long", MemoryType: declare.History, Scope: declare.ScopeSession,
				SessionID: s, Content: long + " " + s, LastModified: &older})
	}
	if err := e.Declare(decls...); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"s2", "s1"} {
		if _, err := e.Assemble(context.Background(), Request{Template: tpl, Now: now, SessionID: s}); err != nil {
			t.Fatal(err)
		}
	}
	keyOf := func(id string) [16]byte {
		for _, b := range e.blocks() {
			if b.ID == id {
				return b.Key
			}
		}
		t.Fatalf("no block %s", id)
		return [16]byte{}
	}
	memoized := func(key [16]byte) bool {
		for _, k := range e.memo.cache.Keys() {
			if k.Block == key {
				return true
			}
		}
		return false
	}
	rendered := func(key [16]byte) bool {
		for _, k := range e.renders.cache.Keys() {
			if k.Block == key {
				return true
			}
		}
		return false
	}
	k1, k2 := keyOf("s1-turn"), keyOf("s2-turn")
	if !memoized(k1) || !memoized(k2) || !rendered(k1) || !rendered(k2) || e.tokens.CutPlans() < 2 || e.last.val == nil {
		t.Fatalf("fixture: memo %v %v, renders %v %v, %d plans, output cached %v", memoized(k1), memoized(k2), rendered(k1), rendered(k2), e.tokens.CutPlans(), e.last.val != nil)
	}
	plans := e.tokens.CutPlans()
	if _, err := e.EndSession("s1"); err != nil {
		t.Fatal(err)
	}
	if rendered(k1) || !rendered(k2) {
		t.Errorf("after the end: s1's render kept %v, s2's %v", rendered(k1), rendered(k2))
	}
	if memoized(k1) || !memoized(k2) || e.tokens.CutPlans() != plans-1 || e.last.val != nil {
		t.Errorf("after the end: s1 memoized %v, s2 %v, plans %d (was %d), output cached %v", memoized(k1), memoized(k2), e.tokens.CutPlans(), plans, e.last.val != nil)
	}
}

// EndSession finds the session's blocks in the index by session, never in
// a walk of the store: ending a session of a store just changed does not
// make the snapshot's flat list of every block; and the index follows
// the blocks declared again into another session, or forgotten.
func TestEndSessionDoesNotWalkTheStore(t *testing.T) {
	e, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	var decls []declare.Declaration
	for i := range 2000 {
		decls = append(decls, declare.Declaration{RequestID: fmt.Sprintf("g-%04d", i), MemoryType: declare.Context, Scope: declare.ScopeGlobal, Content: fmt.Sprintf("fact %d", i)})
	}
	session := func(s, id string) declare.Declaration {
		return declare.Declaration{RequestID: id, MemoryType: declare.History, Scope: declare.ScopeSession, SessionID: s, Content: "USER: hi " + id}
	}
	decls = append(decls, session("s1", "a"), session("s1", "b"), session("s2", "c"), session("s1", "moved"), session("s1", "gone"))
	if err := e.Declare(decls...); err != nil {
		t.Fatal(err)
	}
	if err := e.Declare(session("s2", "moved")); err != nil { // now s2's
		t.Fatal(err)
	}
	e.Forget("gone")
	before := e.current()
	end, err := e.EndSession("s1")
	if err != nil {
		t.Fatal(err)
	}
	if end.Blocks != 2 {
		t.Errorf("EndSession released %d blocks; want s1's two (a, b)", end.Blocks)
	}
	if before.flat != nil {
		t.Error("EndSession made the list of every block of the store")
	}
	snap := e.current()
	for id, want := range map[string]bool{"a": false, "b": false, "c": true, "moved": true, "g-0001": true} {
		if _, ok := snap.set.get(id); ok != want {
			t.Errorf("block %s held: %v, want %v", id, ok, want)
		}
	}
	if got := e.bySession.ids("s1"); len(got) != 0 {
		t.Errorf("the index still lists %v for the ended session", got)
	}
}

// Ending a session forgets the token counts of what it held: its turns'
// contents and renderings, its tool calls' ids and arguments; another
// session's stay. A churn of sessions, in text and in a chat format, each
// with a tool exchange, leaves at most one count a session behind (the
// text before a cache breakpoint that ends in its turns, an assembly's
// and not a block's, which the cache's bound holds).
func TestEndSessionForgetsItsCounts(t *testing.T) {
	e, tpl := benchEngine(t, Config{})
	if err := e.Declare(bench.Generate(300, 1)...); err != nil {
		t.Fatal(err)
	}
	now := bench.Epoch
	texts := func(i int) []string {
		return []string{fmt.Sprintf("USER: what would a %d-month loan cost me?", 12+i), fmt.Sprintf("get_rate: %d months at 4.%02d%% APR", 12+i, i%100),
			chat.WireID(fmt.Sprintf("call_%03d", i)), fmt.Sprintf(`{"term_months":%d}`, 12+i)}
	}
	held := func(i int) (n int) {
		for _, s := range texts(i) {
			if e.tokens.Holds("o200k_base", s) {
				n++
			}
		}
		return n
	}
	session := func(i int, end bool) {
		s := fmt.Sprintf("count-%03d", i)
		at := func(k int) *time.Time { t := now.Add(time.Duration(k) * time.Second); return &t }
		call, x := fmt.Sprintf("call_%03d", i), texts(i)
		decls := []declare.Declaration{
			{RequestID: s + "-user", MemoryType: declare.History, Scope: declare.ScopeSession, SessionID: s, Role: declare.RoleUser,
				Content: x[0], LastModified: at(0)},
			{RequestID: s + "-call", MemoryType: declare.History, Scope: declare.ScopeSession, SessionID: s, Role: declare.RoleAssistant,
				ToolCalls: []declare.ToolCall{{ID: call, Name: "get_rate", Arguments: x[3]}}, LastModified: at(1)},
			{RequestID: s + "-result", MemoryType: declare.History, Scope: declare.ScopeSession, SessionID: s, Role: declare.RoleTool,
				ToolCallID: call, Content: x[1], LastModified: at(2)},
		}
		if err := e.Declare(decls...); err != nil {
			t.Fatal(err)
		}
		for _, f := range []chat.Format{0, chat.FormatOpenAI} {
			if _, err := e.Assemble(context.Background(), Request{Template: tpl, Now: now.Add(time.Minute), SessionID: s, UserID: bench.User, Format: f}); err != nil {
				t.Fatal(err)
			}
		}
		if n := held(i); n != len(x) {
			t.Fatalf("session %d: %d of its %d texts' counts cached: the fixture counts them all", i, n, len(x))
		}
		if !end {
			return
		}
		if _, err := e.EndSession(s); err != nil {
			t.Fatal(err)
		}
		if n := held(i); n != 0 {
			t.Errorf("session %d ended: %d of its texts' counts still cached", i, n)
		}
	}
	session(999, false) // left open
	for i := range 3 {
		session(i, true)
	}
	was := e.tokens.Cached()
	for i := 3; i < 40; i++ {
		session(i, true)
	}
	if n := e.tokens.Cached(); n > was+37 {
		t.Errorf("%d counts cached after 40 sessions started and ended, %d after 3: more than one a session", n, was)
	}
	if n := held(999); n != 4 {
		t.Errorf("the open session: %d of its 4 texts' counts cached", n)
	}
}
