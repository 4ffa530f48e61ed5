package contextasm_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/contextasm/contextasm/chat"
	"github.com/contextasm/contextasm/contextasm"
	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/internal/chatcheck"
	"github.com/contextasm/contextasm/outcome"
)

// TestOversizedToolResult: one tool result of twice a history's cap no
// longer empties the conversation. In both chat formats, as the newest
// message (the current turn) and as an older one, the question and the
// older turns that fit are kept, and the result is clipped to the
// section's tool_result_max_tokens (by default half its cap) with its
// clipped event. Before, the body held the system message alone, or the
// assembly failed for the current turn.
func TestOversizedToolResult(t *testing.T) {
	const capTokens = 300
	tpl := parseTemplate(t, fmt.Sprintf(`{"budget": 2000, "sections": [
	    {"name": "RULES", "priority": 1, "memory_types": ["constraint"], "max_tokens": 100, "render": "{content}"},
	    {"name": "HISTORY", "priority": 2, "memory_types": ["history"], "max_tokens": %d, "render": "{content}"}]}`, capTokens))
	big := strings.Repeat("row 17: 6.9% APR over 60 months, fixed; ", 60) // ≈ 600 tokens
	start := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	turn := func(d declare.Declaration, n int) declare.Declaration {
		at := start.Add(time.Duration(n) * time.Minute)
		d.LastModified = &at
		return d
	}
	older := []declare.Declaration{
		turn(msg("u1", declare.RoleUser, "Hello, I want a car loan."), 1),
		turn(msg("a1", declare.RoleAssistant, "Happy to help. For how long?"), 2),
		turn(msg("u2", declare.RoleUser, "Sixty months. What is the rate?"), 3),
		turn(msg("a2", declare.RoleAssistant, "", "c1"), 4),
		turn(msg("r2", declare.RoleTool, big, "c1"), 5),
	}
	for _, tt := range []struct {
		name  string
		decls []declare.Declaration
		want  []string // the messages the body must hold
	}{
		{"the current turn", older, []string{"u1", "a1", "u2", "a2", "r2"}},
		{"an older turn", append(slices.Clone(older),
			turn(msg("a3", declare.RoleAssistant, "It is 6.9% APR over 60 months."), 6),
			turn(msg("u3", declare.RoleUser, "And over 48?"), 7)),
			[]string{"u1", "a1", "u2", "a2", "r2", "a3", "u3"}},
	} {
		for _, format := range []chat.Format{chat.FormatOpenAI, chat.FormatAnthropic} {
			t.Run(tt.name+"/"+format.String(), func(t *testing.T) {
				eng := newEngine(t, contextasm.Config{}, global("rule", declare.Constraint, "Quote rates with their APR."))
				if err := eng.Declare(tt.decls...); err != nil {
					t.Fatal(err)
				}
				res := assemble(t, eng, contextasm.Request{Template: tpl, Now: start.Add(time.Hour), SessionID: "s1", Format: format})
				var ids []string
				for _, s := range res.Sections() {
					for _, b := range s.Blocks {
						if s.Name == "HISTORY" && b.Status != outcome.StatusDropped {
							ids = append(ids, b.RequestID)
						}
					}
				}
				slices.Sort(ids)
				if want := slices.Sorted(slices.Values(tt.want)); !slices.Equal(ids, want) {
					t.Errorf("history kept %v, want %v", ids, want)
				}
				clipped := false
				for _, ev := range res.Events() {
					clipped = clipped || ev.RequestID == "r2" && ev.Reason == outcome.ReasonClipped && ev.Tokens > 0
				}
				if !clipped {
					t.Errorf("no clipped event for r2: %v", res.Events())
				}
				body, err := chat.Encode(format, res.Messages())
				if err != nil {
					t.Fatal(err)
				}
				check := chatcheck.OpenAI
				if format == chat.FormatAnthropic {
					check = chatcheck.Anthropic
				}
				if err := check(body, chatcheck.Options{}); err != nil {
					t.Errorf("%v\n%s", err, body)
				}
				if !strings.Contains(string(body), "tokens left out]") {
					t.Errorf("the body does not mark the clip:\n%s", body)
				}
			})
		}
	}
}
