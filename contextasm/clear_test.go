package contextasm_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/contextasm/contextasm/chat"
	"github.com/contextasm/contextasm/contextasm"
	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/outcome"
)

// clearRun is what a tool-heavy conversation of calls calls looked like
// to the model, under a history section's extra settings.
type clearRun struct {
	represented float64 // history messages per call, on average
	stable      float64 // share of calls whose messages extend the previous call's
	cleared     int     // cleared notices
}

// toolConversation runs a conversation of calls model calls, each an
// assistant tool call and its result (of 120 to 200 tokens) after the
// user's question, in the OpenAI format, and checks every call's body.
func toolConversation(t *testing.T, calls int, extra string) clearRun {
	t.Helper()
	tpl := parseTemplate(t, `{"budget": 4000, "sections": [
	    {"name": "HISTORY", "priority": 1, "memory_types": ["history"], "max_tokens": 1500, "render": "{content}"`+extra+`}]}`)
	eng := newEngine(t, contextasm.Config{})
	start := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	at := func(n int) *time.Time { t := start.Add(time.Duration(n) * time.Second); return &t }
	user := msg("q", declare.RoleUser, "Compare the rates for every term from 12 to 600 months.")
	user.LastModified = at(0)
	if err := eng.Declare(user); err != nil {
		t.Fatal(err)
	}
	var run clearRun
	var prev []string
	for n := 1; n <= calls; n++ {
		id := fmt.Sprintf("call_%d", n)
		a, r := msg("a"+id, declare.RoleAssistant, "", id), msg("r"+id, declare.RoleTool, strings.Repeat(fmt.Sprintf("%d months: %d.%d%% APR; ", 6*n, 5+n%4, n%10), 12+n%7), id)
		a.ToolCalls[0].Name = "get_rate"
		a.LastModified, r.LastModified = at(2*n-1), at(2*n)
		if err := eng.Declare(a, r); err != nil {
			t.Fatal(err)
		}
		res := assemble(t, eng, contextasm.Request{Template: tpl, Now: *at(2*n + 1), SessionID: "s1", Format: chat.FormatOpenAI})
		var msgs []string
		for _, m := range res.Messages().Messages {
			msgs = append(msgs, string(m.Role)+":"+m.ToolCallID+":"+m.Content)
		}
		if !strings.Contains(msgs[0], "Compare the rates") {
			t.Fatalf("call %d: the question is not first: %q", n, msgs[0])
		}
		if last := msgs[len(msgs)-1]; strings.Contains(last, "cleared") {
			t.Fatalf("call %d: the current turn's result was cleared: %q", n, last)
		}
		run.represented += float64(len(msgs))
		if n > 1 && len(msgs) >= len(prev) && strings.Join(msgs[:len(prev)], "\x00") == strings.Join(prev, "\x00") {
			run.stable++
		}
		for _, ev := range res.Events() {
			if ev.Reason != outcome.ReasonCleared {
				continue
			}
			run.cleared++
			if ev.Tokens < 100 {
				t.Errorf("call %d: %s cleared %d tokens", n, ev.RequestID, ev.Tokens)
			}
			want := fmt.Sprintf("tool:%s:[tool result cleared: get_rate, call %s, %d tokens]", strings.TrimPrefix(ev.RequestID, "r"), strings.TrimPrefix(ev.RequestID, "r"), ev.Tokens)
			if !strings.Contains(strings.Join(msgs, "\n"), want) {
				t.Errorf("call %d: no message %q", n, want)
			}
		}
		prev = msgs
	}
	run.represented /= float64(calls)
	run.stable /= float64(calls - 1)
	return run
}

// TestClearToolResults: on a 100-call tool-heavy conversation, a history
// that clears older tool results represents more turns than one that
// drops them, its prompt extends the previous call's about as often
// (within 0.05), the question and the current result are never cleared,
// and each cleared result has its notice and its placeholder.
func TestClearToolResults(t *testing.T) {
	const calls = 100
	drop := toolConversation(t, calls, "")
	clr := toolConversation(t, calls, `, "clear_tool_results": {"keep": 2, "at_least": 400}`)
	t.Logf("dropping: %.1f messages a call, %.2f stable; clearing: %.1f messages, %.2f stable, %d cleared notices", drop.represented, drop.stable, clr.represented, clr.stable, clr.cleared)
	if drop.cleared != 0 {
		t.Errorf("%d results cleared in a section that does not clear", drop.cleared)
	}
	if clr.cleared == 0 || clr.represented <= drop.represented {
		t.Errorf("clearing represents %.1f messages a call, dropping %.1f: want more", clr.represented, drop.represented)
	}
	if clr.stable < drop.stable-0.05 {
		t.Errorf("clearing extends the previous prompt on %.2f of calls, dropping on %.2f: want within 0.05", clr.stable, drop.stable)
	}
}

// TestClearingFreesRoom: a history that sheds by clearing its oldest tool
// results, among which some say less than their placeholder would ("ok"),
// clears only the ones that free room, and stays within its cap at every
// call, in the text format and a chat format. Clearing a result shorter
// than its placeholder took room instead: a section that shed so could go
// over its cap, as conversation 81 of TestChatConversationProperties did
// (217 tokens of 213).
func TestClearingFreesRoom(t *testing.T) {
	tpl := parseTemplate(t, `{"budget": 4000, "sections": [
	    {"name": "HISTORY", "priority": 1, "memory_types": ["history"], "max_tokens": 220, "render": "{content}", "partial": true,
	     "clear_tool_results": {"keep": 1, "at_least": 30}}]}`)
	for _, format := range []chat.Format{0, chat.FormatOpenAI} {
		eng := newEngine(t, contextasm.Config{})
		start := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
		cleared := 0
		for n := 1; n <= 30; n++ {
			at := func(k int) *time.Time { t := start.Add(time.Duration(3*n+k) * time.Second); return &t }
			id := fmt.Sprintf("call_%d", n)
			content := "ok"
			if n%3 == 0 {
				content = strings.Repeat(fmt.Sprintf("%d months: %d.%d%% APR; ", 6*n, 5+n%4, n%10), 4)
			}
			u, a, r := msg(fmt.Sprintf("u%02d", n), declare.RoleUser, "And the next term?"), msg("a"+id, declare.RoleAssistant, "", id), msg("r"+id, declare.RoleTool, content, id)
			u.LastModified, a.LastModified, r.LastModified = at(0), at(1), at(2)
			if err := eng.Declare(u, a, r); err != nil {
				t.Fatal(err)
			}
			res := assemble(t, eng, contextasm.Request{Template: tpl, Now: *at(3), SessionID: "s1", Format: format})
			for _, s := range res.Sections() {
				if s.UsedTokens > s.MaxTokens {
					t.Fatalf("%v call %d: section %s uses %d tokens, over its cap %d", format, n, s.Name, s.UsedTokens, s.MaxTokens)
				}
			}
			for _, ev := range res.Events() {
				if ev.Reason != outcome.ReasonCleared {
					continue
				}
				cleared++
				if k, _ := strconv.Atoi(strings.TrimPrefix(ev.RequestID, "rcall_")); k%3 != 0 {
					t.Fatalf("%v call %d: %s, which says %q, is cleared: its placeholder says more", format, n, ev.RequestID, "ok")
				}
			}
		}
		if cleared == 0 {
			t.Errorf("%v: no result was cleared: the conversation does not shed by clearing", format)
		}
	}
}
