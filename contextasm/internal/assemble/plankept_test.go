package assemble_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/contextasm/contextasm/chat"
	"github.com/contextasm/contextasm/contextasm/internal/assemble"
	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/truncate"
)

// TestToolExchangesKeepThePlan: a tool exchange declared in a
// conversation with summaries that reach none of its blocks keeps the
// plan of the summaries (a tool-using conversation declares one every
// other call, and the plan is what every summary reaches), and a link
// that joins a block a summary reaches (the result of a call a summary
// names, declared after it) has the plan made again. Every plan kept is
// checked against one made again, and every output against the full
// assembly's.
func TestToolExchangesKeepThePlan(t *testing.T) {
	defer assemble.CheckExtendedPlans(t.Errorf)()
	tpl := mustParse(t, `{"budget": 4000, "sections": [
 {"name": "HISTORY", "priority": 1, "memory_types": ["history"], "max_tokens": 2000, "render": "{content}", "fill": "skip"}]}`)
	tok := &memoCounter{Counter: realTokenizer(t), counts: map[string]int{}}
	s := &store{heat: map[string]*assemble.Heat{}}
	at := now
	turn := func(id string, role declare.Role, content string) *assemble.Block {
		at = at.Add(time.Minute)
		return keyedPtr(&assemble.Block{ID: id, Type: declare.History, Scope: declare.ScopeSession, SessionID: "s1", ForAssistant: true,
			Weight: 0.5, Trust: 0.5, Role: role, Content: content, LastModified: at})
	}
	call := func(id, callID string) *assemble.Block {
		b := turn(id, declare.RoleAssistant, "")
		b.EditRare().ToolCalls = []declare.ToolCall{{ID: callID, Name: "get_rate", Arguments: `{"term_months":36}`}}
		return keyedPtr(b)
	}
	result := func(id, callID string) *assemble.Block {
		b := turn(id, declare.RoleTool, "rate sheet: 4.9% over 36 months")
		b.EditRare().ToolCallID = callID
		return keyedPtr(b)
	}
	s.put(turn("t1-user", declare.RoleUser, "What is the rate over 36 months?"))
	s.put(call("t1-call", "call_1")) // its result is not declared yet: not sent
	s.put(turn("t2-user", declare.RoleUser, "And over 48?"))
	sum := turn("t3-sum", declare.RoleAssistant, "SUMMARY: the user asked for the rates over 36 and 48 months.")
	sum.EditRare().Replaces = []string{"t1-user", "t1-call", "t2-user"}
	s.put(keyedPtr(sum))
	s.put(turn("t4-user", declare.RoleUser, "Which one is cheaper?"))
	req := assemble.Request{SessionID: "s1", Record: true, Chat: assemble.ChatCost{Format: chat.FormatOpenAI, PerMessage: 3, Reply: 3}}
	req.Now = at.Add(time.Minute)
	x := assemble.NewIndex(tpl, req, truncate.Scoring{})
	x.Build(s.blocks, req.Now)
	var a, full assemble.Assembler
	step := func(describe string) {
		t.Helper()
		req.Now = at.Add(time.Minute)
		out, ok, err := indexedAt(&a, x, s.blocks, req, tok, s.get)
		if !ok || err != nil {
			t.Fatalf("%s: not served (%v)", describe, err)
		}
		want, err := full.AssembleRefs(tpl, s.blocks, req, tok)
		if err != nil {
			t.Fatal(err)
		}
		if out.Text != want.Text || !reflect.DeepEqual(out.Messages, want.Messages) {
			t.Fatalf("%s: the incremental assembly differs from the full one: %d messages, full %d", describe, len(out.Messages), len(want.Messages))
		}
		req.Previous = want.Decision
	}
	declareAll := func(bs ...*assemble.Block) {
		for _, b := range bs {
			x.Update(s.put(b), b)
		}
	}
	step("the first call")
	made := a.PlansMade()
	if made != 1 {
		t.Fatalf("%d plans made by the first call, want 1", made)
	}
	for k, callID := range []string{"call_2", "call_3", "call_4"} {
		declareAll(turn(callID+"-user", declare.RoleUser, "And the fees?"), call(callID+"-call", callID), result(callID+"-result", callID))
		step(callID)
		if a.PlansMade() != made {
			t.Fatalf("tool exchange %d, which no summary reaches: the plan was made again (%d plans made)", k+1, a.PlansMade())
		}
	}
	declareAll(result("t1-result", "call_1")) // t1-call, which the summary names, can be sent now
	step("the result of the summarised call")
	if a.PlansMade() != made+1 {
		t.Fatalf("the result of a call the summary names: %d plans made, want %d: the plan kept does not see the call", a.PlansMade(), made+1)
	}
}
