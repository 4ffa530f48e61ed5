package assemble_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/contextasm/contextasm/chat"
	"github.com/contextasm/contextasm/contextasm/internal/assemble"
	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/truncate"
)

// sessionTurn is a history block of session s1 with a role.
func sessionTurn(id string, role declare.Role, content string, at time.Time) assemble.Block {
	b := chatTurn(id, content, at)
	b.Scope, b.SessionID, b.Role = declare.ScopeSession, "s1", role
	return keyed(b)
}

// TestCurrentTurnRequired: in a chat format the newest user turn, and the
// tool results after the last assistant turn with that turn, are in every
// body, however the cap or budget ranks them; when they cannot fit, the
// assembly fails naming them as the current turn, never with a body
// without the question.
func TestCurrentTurnRequired(t *testing.T) {
	tok := realTokenizer(t)
	chatCost := assemble.ChatCost{Format: chat.FormatOpenAI, PerMessage: 3, Reply: 3}
	tpl := mustParse(t, `{"budget": 2000, "sections": [
	  {"name": "HISTORY", "priority": 1, "memory_types": ["history"], "max_tokens": 120, "render": "{content}", "order": "time", "fill": "stop"}]}`)
	var blocks []assemble.Block
	for i := range 8 {
		blocks = append(blocks, sessionTurn(fmt.Sprintf("t%d", i), []declare.Role{declare.RoleUser, declare.RoleAssistant}[i%2], wordsN(fmt.Sprintf("turn %d", i), 6), now.Add(time.Duration(i-20)*time.Minute)))
	}
	// The question, then the assistant's answer: the answer ranks first
	// (it is newer), and the room left after it does not hold the
	// question, but the question is what the model must see.
	question := sessionTurn("t9-question", declare.RoleUser, wordsN("QUESTION", 30), now)
	answer := sessionTurn("t9-answer", declare.RoleAssistant, wordsN("ANSWER", 40), now.Add(time.Second))
	out := mustAssemble(t, tpl, append(blocks, question, answer), assemble.Request{Now: now, SessionID: "s1", Chat: chatCost})
	ids := messageIDs(out)
	if !strings.Contains(strings.Join(ids, " "), question.ID) {
		t.Fatalf("messages %v: the question is not there", ids)
	}
	// A tool exchange after the question: the call and its results are
	// the current turn too.
	call := sessionTurn("t10-call", declare.RoleAssistant, "", now.Add(time.Second))
	call.EditRare().ToolCalls = []declare.ToolCall{{ID: "c1", Name: "lookup", Arguments: "{}"}}
	call = keyed(call)
	result := sessionTurn("t11-result", declare.RoleTool, wordsN("RESULT", 6), now.Add(2*time.Second))
	result.EditRare().ToolCallID = "c1"
	result = keyed(result)
	out = mustAssemble(t, tpl, append(blocks, question, call, result), assemble.Request{Now: now.Add(3 * time.Second), SessionID: "s1", Chat: chatCost})
	ids = messageIDs(out)
	for _, id := range []string{question.ID, call.ID, result.ID} {
		if !strings.Contains(strings.Join(ids, " "), id) {
			t.Errorf("messages %v lack %s", ids, id)
		}
	}
	// Too big for the section: an error naming the current turn.
	big := sessionTurn("t9-question", declare.RoleUser, wordsN("QUESTION", 400), now)
	var asm assemble.Assembler
	_, err := asm.Assemble(tpl, append(blocks, big), assemble.Request{Now: now, SessionID: "s1", Chat: chatCost}, tok)
	var re *truncate.RequiredError
	if !errors.As(err, &re) || !errors.Is(err, truncate.ErrBudgetTooSmall) || len(re.Misses) != 1 || !re.Misses[0].Current ||
		!strings.Contains(err.Error(), `current turn's block "t9-question"`) {
		t.Errorf("err = %v, want ErrBudgetTooSmall naming the current turn", err)
	}
	// The text format requires nothing of the kind.
	if _, err := asm.Assemble(tpl, append(blocks, big), assemble.Request{Now: now, SessionID: "s1"}, tok); err != nil {
		t.Errorf("text format: %v", err)
	}
}

// TestSummaryIsNotTheCurrentTurn: a summary declared after the question
// (it names no role, as a host's summaries often do) is not the turn the
// model answers: the question stays the current turn, in both paths.
func TestSummaryIsNotTheCurrentTurn(t *testing.T) {
	tpl := mustParse(t, `{"budget": 2000, "sections": [
	  {"name": "HISTORY", "priority": 1, "memory_types": ["history"], "max_tokens": 1000, "render": "{content}", "order": "time"}]}`)
	old := sessionTurn("t0", declare.RoleUser, "USER: an early question about fees", now.Add(-time.Hour))
	question := sessionTurn("t1", declare.RoleUser, "USER: and the rate?", now.Add(-time.Minute))
	summary := chatTurn("s0", "SUMMARY: the user asked about fees", now)
	summary.Scope, summary.SessionID = declare.ScopeSession, "s1"
	summary.EditRare().Replaces = []string{"t0"}
	summary = keyed(summary)
	out := mustAssemble(t, tpl, []assemble.Block{old, question, summary},
		assemble.Request{Now: now, SessionID: "s1", Chat: assemble.ChatCost{Format: chat.FormatOpenAI, PerMessage: 3, Reply: 3}})
	for _, b := range out.Sections[0].Blocks {
		if want := b.RequestID == question.ID; b.Required != want {
			t.Errorf("%s: required %v, want %v (only the question is the current turn)", b.RequestID, b.Required, want)
		}
	}
}
