package assemble_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/contextasm/contextasm/chat"
	"github.com/contextasm/contextasm/contextasm/internal/assemble"
	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/outcome"
	"github.com/contextasm/contextasm/truncate"
)

// turn returns a history block of session s1 at minute m, spoken by r.
func turn(id string, r declare.Role, m int, content string) assemble.Block {
	b := block(id, declare.History, content)
	b.Scope, b.SessionID, b.Role = declare.ScopeSession, "s1", r
	b.LastModified = now.Add(time.Duration(m-60) * time.Minute)
	return b
}

// calls returns an assistant turn making calls ids.
func calls(id string, m int, content string, ids ...string) assemble.Block {
	b := turn(id, declare.RoleAssistant, m, content)
	for _, c := range ids {
		b.EditRare().ToolCalls = append(b.ToolCalls(), declare.ToolCall{ID: c, Name: "lookup", Arguments: "{}"})
	}
	return b
}

// answers returns a tool result for call.
func answers(id, call string, m int, content string) assemble.Block {
	b := turn(id, declare.RoleTool, m, content)
	b.EditRare().ToolCallID = call
	return b
}

// groupTemplate writes tool results whole: its tests are about groups
// that do not fit, not about clipping.
const groupTemplate = `{"template_version":"t","budget":%d,"encoding":"o200k_base","sections":[
	{"name":"RULES","priority":1,"memory_types":["constraint"],"max_tokens":200,"render":"{content}"},
	{"name":"HISTORY","priority":2,"memory_types":["history"],"max_tokens":%d,"render":"{content}","order":"time","fill":"%s","tool_result_max_tokens":-1}]}`

func tplOf(t *testing.T, budget, hcap int, fill string) string {
	t.Helper()
	return fmt.Sprintf(groupTemplate, budget, hcap, fill)
}

// words returns n words of text.
func words(n int) string { return strings.TrimSpace(strings.Repeat("loan rate ", n/2+1)) }

func TestGroupFillsWholeOrNotAtAll(t *testing.T) {
	// The call and its two results (one long) outrank the user turn only
	// by weight; the cap has room for the user turn, not for the three.
	user := turn("u1", declare.RoleUser, 1, "What is the rate?")
	user.Weight = 0.1
	blocks := []assemble.Block{
		user,
		calls("a1", 2, "Checking.", "c1", "c2"),
		answers("r1", "c1", 3, "6.9% APR"),
		answers("r2", "c2", 4, words(80)),
		block("rule", declare.Constraint, "Quote the APR."),
	}
	for _, fill := range []string{"skip", "stop"} {
		tpl := mustParse(t, tplOf(t, 1000, 40, fill))
		out := mustAssemble(t, tpl, blocks, assemble.Request{SessionID: "s1"})
		st := statuses(out)
		for _, id := range []string{"a1", "r1", "r2"} {
			if st[id] != "dropped" {
				t.Errorf("fill %s: %s %s, want the whole group dropped (%v)", fill, id, st[id], st)
			}
			if evs := eventsOf(out, id); len(evs) != 1 || evs[0].Reason != outcome.ReasonGroup || evs[0].Group != "a1" || evs[0].Kind != outcome.KindDropped {
				t.Errorf("fill %s: events of %s = %+v, want one dropped/group naming a1", fill, id, evs)
			}
			if _, br, _ := result(out, id); br.Group != "a1" {
				t.Errorf("fill %s: %s's result names group %q", fill, id, br.Group)
			}
		}
		want := map[string]string{"skip": "kept", "stop": "dropped"}[fill]
		if st["u1"] != want {
			t.Errorf("fill %s: u1 %s, want %s", fill, st["u1"], want)
		}
	}
	// Room for all: all kept.
	out := mustAssemble(t, mustParse(t, tplOf(t, 1000, 400, "skip")), blocks, assemble.Request{SessionID: "s1"})
	for id, s := range statuses(out) {
		if s != "kept" {
			t.Errorf("roomy: %s %s", id, s)
		}
	}
}

func TestGroupDeclaredAndRequired(t *testing.T) {
	a := turn("a", declare.RoleAssistant, 1, words(30))
	b := turn("b", declare.RoleUser, 2, "Thanks.")
	a.EditRare().Group, b.EditRare().Group = "g", "g"
	b.Required = true
	blocks := []assemble.Block{a, b, turn("c", declare.RoleUser, 3, words(10))}
	// b is required, so its group is: a is kept even though c ranks the
	// same and the cap is tight, and a cap too small fails.
	out := mustAssemble(t, mustParse(t, tplOf(t, 1000, 45, "skip")), blocks, assemble.Request{SessionID: "s1"})
	if st := statuses(out); st["a"] != "kept" || st["b"] != "kept" || st["c"] != "dropped" {
		t.Errorf("statuses %v", st)
	}
	if _, br, _ := result(out, "a"); !br.Required || br.Group != "g" {
		t.Errorf("a = %+v: required with its group, naming it", br)
	}
	var a2 assemble.Assembler
	_, err := a2.Assemble(mustParse(t, tplOf(t, 1000, 20, "skip")), blocks, assemble.Request{Now: now, SessionID: "s1"}, realTokenizer(t))
	var re *truncate.RequiredError
	if !errors.As(err, &re) || len(re.Misses) != 2 {
		t.Fatalf("a required group over its cap: %v", err)
	}
}

func TestGroupBudgetDropsWhole(t *testing.T) {
	blocks := []assemble.Block{
		block("rule", declare.Constraint, "Quote the APR."),
		turn("u1", declare.RoleUser, 1, "Rate?"),
		calls("a1", 2, "", "c1"),
		answers("r1", "c1", 3, words(40)),
		turn("u2", declare.RoleUser, 4, words(20)),
	}
	// The user turns outrank the exchange, whose result is its only big
	// member: the budget takes the exchange whole.
	for _, id := range []int{1, 4} {
		blocks[id].Weight = 0.9
	}
	tpl := mustParse(t, tplOf(t, 60, 400, "skip"))
	out := mustAssemble(t, tpl, blocks, assemble.Request{SessionID: "s1"})
	st := statuses(out)
	if st["a1"] != "dropped" || st["r1"] != "dropped" || st["u1"] != "kept" || st["u2"] != "kept" {
		t.Errorf("statuses %v", st)
	}
	for _, id := range []string{"a1", "r1"} {
		if evs := eventsOf(out, id); len(evs) != 1 || evs[0].Reason != outcome.ReasonGroup {
			t.Errorf("%s: %+v", id, evs)
		}
	}
	if out.TotalTokens > 60 {
		t.Errorf("%d tokens over the budget", out.TotalTokens)
	}
}

func TestOrphansAreExcluded(t *testing.T) {
	expired := answers("r2", "c2", 4, "late")
	expired.ValidUntil = now.Add(-time.Minute)
	g := turn("note", declare.RoleUser, 5, "About the call.")
	g.EditRare().Group = "g1"
	a := calls("a1", 2, "Checking both.", "c1", "c2")
	a.EditRare().Group = "g1"
	stray := answers("r9", "c9", 6, "nobody asked")
	blocks := []assemble.Block{a, answers("r1", "c1", 3, "ok"), expired, g, stray, turn("u", declare.RoleUser, 1, "Hi")}
	out := mustAssemble(t, mustParse(t, tplOf(t, 1000, 400, "skip")), blocks, assemble.Request{SessionID: "s1"})
	want := map[string]outcome.Reason{"a1": outcome.ReasonOrphan, "r1": outcome.ReasonGroup, "note": outcome.ReasonGroup, "r9": outcome.ReasonOrphan}
	for id, reason := range want {
		evs := eventsOf(out, id)
		if len(evs) != 1 || evs[0].Reason != reason || evs[0].Kind != outcome.KindExcluded {
			t.Errorf("%s: %+v, want excluded/%s", id, evs, reason)
		}
		if _, _, ok := result(out, id); ok {
			t.Errorf("%s is in a section", id)
		}
	}
	if evs := eventsOf(out, "a1"); evs[0].Group != "g1" {
		t.Errorf("the orphan's event names group %q, want the declared g1", evs[0].Group)
	}
	if st := statuses(out); st["u"] != "kept" {
		t.Errorf("u: %v", st)
	}
	// A required orphan fails.
	blocks[0].Required = true
	var asm assemble.Assembler
	_, err := asm.Assemble(mustParse(t, tplOf(t, 1000, 400, "skip")), blocks, assemble.Request{Now: now, SessionID: "s1"}, realTokenizer(t))
	var re *truncate.RequiredError
	if !errors.As(err, &re) || !slices.ContainsFunc(re.Misses, func(m truncate.RequiredMiss) bool { return m.RequestID == "a1" && m.Reason == outcome.ReasonOrphan }) {
		t.Errorf("a required orphan: %v", err)
	}
}

func TestChatMessages(t *testing.T) {
	blocks := []assemble.Block{
		block("rule", declare.Constraint, "Quote the APR."),
		turn("u1", declare.RoleUser, 1, "Rate and score?"),
		calls("a1", 2, "", "c1", "c2"),
		turn("u2", declare.RoleUser, 3, "Hurry, please."), // written while the tools ran
		answers("r2", "c2", 4, "712"),
		answers("r1", "c1", 5, "6.9%"),
		turn("a2", declare.RoleAssistant, 6, "6.9% APR; your score is 712."),
	}
	tok := realTokenizer(t)
	tpl := mustParse(t, tplOf(t, 1000, 400, "skip"))
	text := mustAssemble(t, tpl, blocks, assemble.Request{SessionID: "s1"})
	out := mustAssemble(t, tpl, blocks, assemble.Request{SessionID: "s1", Chat: assemble.ChatCost{Format: chat.FormatOpenAI, PerMessage: 3, Reply: 3}})
	var order []string
	for _, m := range out.Messages {
		order = append(order, m.BlockIDs[0])
	}
	if want := []string{"u1", "a1", "r1", "r2", "u2", "a2"}; !slices.Equal(order, want) {
		t.Errorf("messages %q, want %q: results right after their call, in call order", order, want)
	}
	if want := tpl.Header() + "\nQuote the APR.\n"; out.Text != want {
		t.Errorf("system text %q, want %q", out.Text, want)
	}
	if len(text.Messages) != 0 || text.Text == out.Text {
		t.Errorf("the text format has messages or no history in its text")
	}
	want := tok.Count(out.Text) + 3 + tok.Count("system") + 3
	for _, m := range out.Messages {
		want += 3 + tok.Count(string(m.Role)) + tok.Count(m.Content) + tok.Count(m.ToolCallID)
		for _, c := range m.ToolCalls {
			want += tok.Count(c.ID) + tok.Count(c.Name) + tok.Count(c.Arguments)
		}
	}
	if out.TotalTokens != want {
		t.Errorf("TotalTokens %d, want %d", out.TotalTokens, want)
	}
	_, br, _ := result(out, "r1")
	if br.Message != 3 || br.Offset != 0 || br.Length != 0 {
		t.Errorf("r1 = %+v: message 3, not in the text", br)
	}

	// Anthropic: turns before the first user turn go, with their group.
	lead := append([]assemble.Block{calls("a0", 0, "Welcome back.", "c0"), answers("r0", "c0", 0, "profile")}, blocks...)
	lead[0].LastModified, lead[1].LastModified = now.Add(-2*time.Hour), now.Add(-2*time.Hour+time.Second)
	out = mustAssemble(t, tpl, lead, assemble.Request{SessionID: "s1", Chat: assemble.ChatCost{Format: chat.FormatAnthropic, PerMessage: 3, Reply: 3}})
	if out.Messages[0].BlockIDs[0] != "u1" {
		t.Errorf("first message %q", out.Messages[0].BlockIDs)
	}
	for _, id := range []string{"a0", "r0"} {
		if evs := eventsOf(out, id); len(evs) != 1 || evs[0].Reason != outcome.ReasonFirstMessage {
			t.Errorf("%s: %+v", id, evs)
		}
	}
	// OpenAI lets an assistant turn open the conversation.
	out = mustAssemble(t, tpl, lead, assemble.Request{SessionID: "s1", Chat: assemble.ChatCost{Format: chat.FormatOpenAI, PerMessage: 3, Reply: 3}})
	if out.Messages[0].BlockIDs[0] != "a0" {
		t.Errorf("openai: first message %q", out.Messages[0].BlockIDs)
	}
}
