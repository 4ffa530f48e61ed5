package contextasm_test

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/contextasm/contextasm/contextasm"
	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/learned"
)

// sessionBlocks are a session's history turns, a user's note and a global
// rule, dated minutes before demoNow.
func sessionBlocks(session string, ttl time.Duration) []declare.Declaration {
	var ds []declare.Declaration
	for i, c := range []string{"USER: What is my balance?", "AGENT: Let me check that for you."} {
		d := declare.Declaration{RequestID: session + "-turn-" + string(rune('a'+i)), MemoryType: declare.History,
			Scope: declare.ScopeSession, SessionID: session, Content: c + " (" + session + ")", LastModified: ptr(demoNow.Add(-time.Duration(10-i) * time.Minute))}
		if ttl > 0 {
			d.IdleTTL = ptr(declare.Duration(ttl))
		}
		ds = append(ds, d)
	}
	return ds
}

func sharedBlocks() []declare.Declaration {
	return []declare.Declaration{
		{RequestID: "rule", MemoryType: declare.Constraint, Scope: declare.ScopeGlobal, Content: "Never reveal account numbers."},
		{RequestID: "note-u1", MemoryType: declare.History, Scope: declare.ScopeUser, UserID: "u1", Content: "Prefers short answers.",
			LastModified: ptr(demoNow.Add(-time.Hour))},
	}
}

func sessionKeys(st *learned.State, session string) []string {
	var keys []string
	for k := range st.Sessions {
		if strings.Contains(k, ":"+session) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

// TestEndSession: ending a session releases its blocks and the decisions
// of its conversations (every user), and nothing of another session, a
// user or the globals; the next call of the session starts afresh, and
// the state store loses its decisions too.
func TestEndSession(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	tpl := parseTemplate(t, roomyTemplate)
	decls := append(append(sessionBlocks("s1", 0), sessionBlocks("s2", 0)...), sharedBlocks()...)
	eng := newEngine(t, contextasm.Config{State: learned.NewFileStore(path)}, decls...)
	for _, r := range []contextasm.Request{
		{Template: tpl, Now: demoNow, SessionID: "s1", UserID: "u1"},
		{Template: tpl, Now: demoNow, SessionID: "s1", UserID: "u2"},
		{Template: tpl, Now: demoNow, SessionID: "s2", UserID: "u1"},
	} {
		assemble(t, eng, r)
		if again := assemble(t, eng, r); again.Prefix == nil {
			t.Fatalf("%s/%s: the second call has no prefix", r.SessionID, r.UserID)
		}
	}
	if n := len(sessionKeys(eng.State(), "s1")); n != 2 {
		t.Fatalf("%d decisions for s1, want 2 (two users)", n)
	}
	before := eng.Len()
	end, err := eng.EndSession("s1")
	if err != nil || end != (contextasm.SessionEnd{Blocks: 2, Decisions: 2}) {
		t.Fatalf("EndSession = %+v, %v; want 2 blocks and 2 decisions", end, err)
	}
	if eng.Len() != before-2 {
		t.Errorf("%d blocks after ending s1, want %d", eng.Len(), before-2)
	}
	if keys := sessionKeys(eng.State(), "s1"); len(keys) != 0 {
		t.Errorf("decisions left for s1: %q", keys)
	}
	if keys := sessionKeys(eng.State(), "s2"); len(keys) != 1 {
		t.Errorf("s2's decision was touched: %q", keys)
	}
	res := assemble(t, eng, contextasm.Request{Template: tpl, Now: demoNow, SessionID: "s1", UserID: "u1"})
	if res.Prefix != nil || strings.Contains(res.Text, "(s1)") || !strings.Contains(res.Text, "Prefers short answers") || !strings.Contains(res.Text, "Never reveal") {
		t.Errorf("after the end, s1 renders with prefix %+v:\n%s", res.Prefix, res.Text)
	}
	if res := assemble(t, eng, contextasm.Request{Template: tpl, Now: demoNow, SessionID: "s2", UserID: "u1"}); res.Prefix == nil || res.Prefix.Reason != "unchanged" {
		t.Errorf("s2 lost its conversation: prefix %+v", res.Prefix)
	}
	// Ending it again, or a session nobody knows, releases nothing.
	if end, err := eng.EndSession("nobody"); err != nil || end != (contextasm.SessionEnd{}) {
		t.Errorf("EndSession(nobody) = %+v, %v", end, err)
	}
	if _, err := eng.EndSession(""); !errors.Is(err, contextasm.ErrInvalid) {
		t.Errorf("EndSession(\"\") = %v, want ErrInvalid", err)
	}
	if err := eng.SaveState(); err != nil {
		t.Fatal(err)
	}
	st, err := learned.NewFileStore(path).Load()
	if err != nil {
		t.Fatal(err)
	}
	// s1/u1 was assembled again after the end: one conversation, anew.
	if keys := sessionKeys(st, "s1"); len(keys) != 1 || st.Sessions[keys[0]].Version != 1 {
		t.Errorf("the stored state holds s1 as %q", keys)
	}
}

// TestIdleTTL: a session's blocks with an idle TTL are released once the
// session has gone that long without an assembly, judged at later
// assemblies' now; blocks without one stay, and so do other sessions'.
func TestIdleTTL(t *testing.T) {
	tpl := parseTemplate(t, roomyTemplate)
	short := sessionBlocks("s1", 30*time.Minute)
	short[1].IdleTTL = ptr(declare.Duration(2 * time.Hour)) // the longest: the decision goes with it
	long := declare.Declaration{RequestID: "s1-summary", MemoryType: declare.History, Scope: declare.ScopeSession, SessionID: "s1",
		Content: "Summary: balance questions.", LastModified: ptr(demoNow.Add(-time.Hour))}
	decls := append(append(short, long), sessionBlocks("s2", 30*time.Minute)...)
	eng := newEngine(t, contextasm.Config{}, decls...)
	req := func(session string, at time.Time) contextasm.Request {
		return contextasm.Request{Template: tpl, Now: at, SessionID: session, UserID: "u1"}
	}
	assemble(t, eng, req("s1", demoNow))
	// s2's turns are 9 and 10 minutes old at demoNow: before its first
	// assembly its idle time counts from them.
	assemble(t, eng, req("s2", demoNow.Add(20*time.Minute)))
	// s1 has been idle 29 minutes: nothing goes yet.
	if end, _ := eng.CollectIdle(demoNow.Add(29 * time.Minute)); end != (contextasm.SessionEnd{}) {
		t.Fatalf("CollectIdle after 29 minutes released %+v", end)
	}
	// Another session's assembly 31 minutes on releases s1's 30-minute turn.
	res := assemble(t, eng, req("s2", demoNow.Add(31*time.Minute)))
	if strings.Contains(res.Text, "(s1)") || !strings.Contains(res.Text, "What is my balance? (s2)") {
		t.Fatalf("s2 renders:\n%s", res.Text)
	}
	state := eng.State()
	if len(sessionKeys(state, "s1")) != 1 {
		t.Fatalf("s1's decision went before its longest TTL")
	}
	if got := eng.Len(); got != len(decls)-1 {
		t.Errorf("%d blocks after 31 idle minutes, want %d (one turn released)", got, len(decls)-1)
	}
	// Two hours: s1's other turn and its decision (the summary, without
	// a TTL, stays), and s2, idle 89 minutes, with its decision.
	end, err := eng.CollectIdle(demoNow.Add(2 * time.Hour))
	if err != nil || end != (contextasm.SessionEnd{Blocks: 3, Decisions: 2}) {
		t.Fatalf("CollectIdle after two hours = %+v, %v; want s1's second turn, s2's two, and both decisions", end, err)
	}
	res = assemble(t, eng, req("s1", demoNow.Add(2*time.Hour)))
	if res.Prefix != nil || !strings.Contains(res.Text, "Summary: balance questions.") || strings.Contains(res.Text, "Let me check") {
		t.Errorf("s1 after two idle hours (prefix %+v):\n%s", res.Prefix, res.Text)
	}
	if res := assemble(t, eng, req("s2", demoNow.Add(2*time.Hour))); strings.Contains(res.Text, "(s2)") || res.Prefix != nil {
		t.Error("s2 outlived its idle TTL")
	}
	// A session whose last activity is older than its TTL is collected
	// when it comes back: a TTL is a promise to forget.
	late := newEngine(t, contextasm.Config{}, sessionBlocks("s3", 5*time.Minute)...)
	if res := assemble(t, late, req("s3", demoNow)); strings.Contains(res.Text, "What is my balance") || late.Len() != 0 {
		t.Errorf("s3's turns, 9 minutes old with a 5-minute TTL, were kept:\n%s", res.Text)
	}
}

// TestIdleTTLValidation: idle_ttl must be positive and on a session block.
func TestIdleTTLValidation(t *testing.T) {
	eng := newEngine(t, contextasm.Config{})
	for _, d := range []declare.Declaration{
		{RequestID: "g", MemoryType: declare.Context, Scope: declare.ScopeGlobal, Content: "x", IdleTTL: ptr(declare.Duration(time.Hour))},
		{RequestID: "n", MemoryType: declare.History, Scope: declare.ScopeSession, SessionID: "s", Content: "x", IdleTTL: ptr(declare.Duration(-time.Minute))},
	} {
		err := eng.Declare(d)
		var ve *declare.ValidationError
		if !errors.As(err, &ve) || len(ve.Problems) != 1 || ve.Problems[0].Field != "idle_ttl" || ve.Problems[0].RequestID != d.RequestID {
			t.Errorf("%s: %v, want one idle_ttl problem", d.RequestID, err)
		}
	}
}
