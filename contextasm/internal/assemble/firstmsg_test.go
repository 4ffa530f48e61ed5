package assemble_test

import (
	"testing"
	"time"

	"github.com/contextasm/contextasm/chat"
	"github.com/contextasm/contextasm/contextasm/internal/assemble"
	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/outcome"
)

// TestFirstMessageNotSticky: an assistant turn the Anthropic format lets
// go because it comes before the first user turn is dropped for
// first_message on every call of the conversation, never relabelled
// sticky although a kept incumbent scores just under it: stickiness did
// not keep it out, the fill had kept it.
func TestFirstMessageNotSticky(t *testing.T) {
	tpl := mustParse(t, `{"budget": 2000, "sections": [
  {"name": "HISTORY", "priority": 1, "memory_types": ["history", "context"], "max_tokens": 1500, "render": "{content}", "order": "time"}]}`)
	task := weighted("task", declare.Context, "the task at hand", 0.5)
	a1 := chatTurn("a1", "an assistant turn before any user turn", now.Add(-time.Hour))
	a1.Role, a1.Weight = declare.RoleAssistant, 0.55
	u2 := chatTurn("u2", "the user's question", now.Add(-30*time.Minute))
	u2.Role = declare.RoleUser
	c := newConvo(t, tpl, task, a1, u2)
	c.chat = assemble.ChatCost{Format: chat.FormatAnthropic, PerMessage: 3, Reply: 3}
	for i := range 3 {
		out := c.call(now.Add(time.Duration(i)*time.Minute), false)
		_, rt, _ := result(out, "task")
		_, ra, _ := result(out, "a1")
		// What would make a relabelling: the incumbent task scores under
		// a1 by less than the margin.
		if i > 0 && !(rt.Status == outcome.StatusKept && rt.Score < ra.Score && ra.Score-rt.Score < 0.05) {
			t.Fatalf("call %d: the case does not hold: task %v %.4f, a1 %.4f", i, rt.Status, rt.Score, ra.Score)
		}
		if ra.Status != outcome.StatusDropped || ra.Reason != outcome.ReasonFirstMessage {
			t.Errorf("call %d: a1 %v for %q, want dropped for first_message", i, ra.Status, ra.Reason)
		}
	}
}
