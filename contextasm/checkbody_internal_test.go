package contextasm

import (
	"errors"
	"strings"
	"testing"

	"github.com/contextasm/contextasm/chat"
)

// TestCheckBodyRefuses: the bodies an API refuses fail checkBody with
// chat.ErrInvalid and the rule. The writer never makes them (its own
// checks agree), so they are written here by hand.
func TestCheckBodyRefuses(t *testing.T) {
	for _, tt := range []struct {
		format chat.Format
		body   string
		rule   string
	}{
		{chat.FormatOpenAI, `{"messages":[{"role":"tool","tool_call_id":"c1","content":"6.9%"}]}`, "tool"},
		{chat.FormatAnthropic, `{"messages":[{"role":"assistant","content":"Hi."}]}`, "user"},
		{chat.FormatAnthropic, `{"system":[{"type":"text","text":"  "}],"messages":[{"role":"user","content":"Rate?"}]}`, "white"},
	} {
		err := checkBody(tt.format, []byte(tt.body))
		if !errors.Is(err, chat.ErrInvalid) || !strings.Contains(err.Error(), tt.rule) {
			t.Errorf("%v %s: err = %v, want chat.ErrInvalid naming %q", tt.format, tt.body, err, tt.rule)
		}
	}
	if err := checkBody(chat.FormatOpenAI, []byte(`{"messages":[{"role":"user","content":"Rate?"}]}`)); err != nil {
		t.Errorf("a valid body: %v", err)
	}
}
