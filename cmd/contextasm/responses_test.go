package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/contextasm/contextasm/chat"
	"github.com/contextasm/contextasm/contextasm"
	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/internal/bpe"
	"github.com/contextasm/contextasm/internal/chatcheck"
	"github.com/contextasm/contextasm/outcome"
	"github.com/contextasm/contextasm/template"
)

// A session on a model that reasons (testdata/reasoning): reasoning items
// of both providers on an old turn and on the turn that made the pending
// calls, and Kimi's call ids.
const (
	reasoningTemplate = "testdata/reasoning/template.json"
	reasoningMemories = "testdata/reasoning/memories.jsonl"
)

func reasoningArgs(extra ...string) []string {
	return append([]string{"render", "-t", reasoningTemplate, "-m", reasoningMemories, "--now", "2026-11-30T09:00:00Z", "--session", "sess-r", "--user", "u-ana"}, extra...)
}

// checkBody holds a body to its format's rules with the independent
// checker.
func checkBody(f chat.Format, body []byte) error {
	switch f {
	case chat.FormatAnthropic:
		return chatcheck.Anthropic(body, chatcheck.Options{})
	case chat.FormatResponses:
		return chatcheck.Responses(body, chatcheck.Options{})
	}
	return chatcheck.OpenAI(body, chatcheck.Options{})
}

func TestResponsesGolden(t *testing.T) {
	tests := []struct {
		golden string
		f      chat.Format
		args   []string
	}{
		{"demo.responses.json", chat.FormatResponses, []string{"demo", "--format", "responses"}},
		{"tools.responses.json", chat.FormatResponses, toolsArgs("--format", "responses")},
		{"tools-500.responses.json", chat.FormatResponses, toolsArgs("--format", "responses", "--budget", "500")},
		{"reasoning.openai.json", chat.FormatOpenAI, reasoningArgs("--format", "openai")},
		{"reasoning.anthropic.json", chat.FormatAnthropic, reasoningArgs("--format", "anthropic")},
		{"reasoning.responses.json", chat.FormatResponses, reasoningArgs("--format", "responses")},
	}
	for _, tt := range tests {
		t.Run(tt.golden, func(t *testing.T) {
			code, out, errOut := runCLI(t, tt.args...)
			if code != exitOK {
				t.Fatalf("exit %d, stderr:\n%s", code, errOut)
			}
			golden(t, tt.golden, out)
			if err := checkBody(tt.f, []byte(out)); err != nil {
				t.Error(err)
			}
		})
	}
}

// The reasoning items of the turn that made the pending calls are in the
// body of each provider that takes them, and counted; every other item is
// left out with a reasoning_dropped notice counting its tokens.
func TestReasoningWrittenAndCounted(t *testing.T) {
	tpl, err := template.LoadFile(reasoningTemplate)
	if err != nil {
		t.Fatal(err)
	}
	decls, err := declare.LoadFile(reasoningMemories)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := bpe.Load(bpe.O200kBase)
	if err != nil {
		t.Fatal(err)
	}
	items := map[string][]declare.Reasoning{}
	for _, d := range decls {
		if len(d.Reasoning) > 0 {
			items[d.RequestID] = d.Reasoning
		}
	}
	count := func(rs []chat.Reasoning, keep func(chat.Reasoning) bool) int {
		n := 0
		for _, r := range rs {
			if keep(r) {
				n += tok.Count(string(r.JSON))
			}
		}
		return n
	}
	for _, f := range formats3 {
		t.Run(f.String(), func(t *testing.T) {
			eng, err := contextasm.New(contextasm.Config{})
			if err != nil {
				t.Fatal(err)
			}
			if err := eng.Declare(decls...); err != nil {
				t.Fatal(err)
			}
			res, err := eng.Assemble(context.Background(), contextasm.Request{Template: tpl, Now: time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC),
				SessionID: "sess-r", UserID: "u-ana", Format: f})
			if err != nil {
				t.Fatal(err)
			}
			conv := res.Messages()
			// The count, recomputed: the system prompt and every message,
			// ids as written, reasoning items as written.
			want := tok.Count(res.Text) + 3 + tok.Count("system") + 3
			var written []string
			for _, m := range conv.Messages {
				want += 3 + tok.Count(string(m.Role)) + tok.Count(m.Content)
				if m.ToolCallID != "" {
					want += tok.Count(chat.WireID(m.ToolCallID))
				}
				for _, c := range m.ToolCalls {
					want += tok.Count(chat.WireID(c.ID)) + tok.Count(c.Name) + tok.Count(c.Arguments)
				}
				want += count(m.Reasoning, func(chat.Reasoning) bool { return true })
				for _, r := range m.Reasoning {
					written = append(written, m.BlockIDs[0]+":"+r.Type)
				}
			}
			if res.TotalTokens != want {
				t.Errorf("TotalTokens %d, counted %d", res.TotalTokens, want)
			}
			wantWritten := map[chat.Format]string{chat.FormatOpenAI: "", chat.FormatAnthropic: "t2-agent:thinking t2-agent:redacted_thinking", chat.FormatResponses: "t2-agent:reasoning"}[f]
			if got := strings.Join(written, " "); got != wantWritten {
				t.Errorf("reasoning written: %q, want %q", got, wantWritten)
			}
			dropped := map[string]int{}
			for _, e := range res.Events() {
				if e.Reason == outcome.ReasonReasoningDropped {
					if e.Kind != outcome.KindNotice {
						t.Errorf("%+v: want a notice", e)
					}
					dropped[e.RequestID] = e.Tokens
				}
			}
			notFor := func(r chat.Reasoning) bool { return !r.For(f) }
			all := func(chat.Reasoning) bool { return true }
			wantDropped := map[string]int{"t1-agent": count(items["t1-agent"], all), "t2-agent": count(items["t2-agent"], notFor)}
			if fmt.Sprint(dropped) != fmt.Sprint(wantDropped) {
				t.Errorf("reasoning_dropped = %v, want %v", dropped, wantDropped)
			}
			body, err := chat.Encode(f, conv)
			if err != nil {
				t.Fatal(err)
			}
			if err := checkBody(f, body); err != nil {
				t.Error(err)
			}
		})
	}
}

var formats3 = []chat.Format{chat.FormatOpenAI, chat.FormatAnthropic, chat.FormatResponses}

// A block of nothing but spaces in a section rendered as bare {content},
// after more than 1,024 tokens of system prompt, made the Anthropic body's
// system prompt split at a cache breakpoint into a part that was only
// white space, which the API refuses: render failed (exit 1, "system[1]:
// text is only white space") where text and openai succeeded. Every
// format now renders, and the Anthropic body passes the API's rules.
func TestRenderBlankBlockAtABreakpoint(t *testing.T) {
	dir := t.TempDir()
	tplPath, memPath := filepath.Join(dir, "template.json"), filepath.Join(dir, "memories.jsonl")
	tpl := `{"budget": 4000, "cache_ttl": "1h", "sections": [
  {"name": "RULES", "priority": 1, "memory_types": ["constraint"], "max_tokens": 2500, "render": "<rule>{content}</rule>"},
  {"name": "PAGE", "priority": 2, "memory_types": ["external"], "max_tokens": 100, "render": "{content}"},
  {"name": "HISTORY", "priority": 3, "memory_types": ["history"], "max_tokens": 500, "render": "{content}", "order": "time"}]}`
	var mem strings.Builder
	for i := range 24 {
		fmt.Fprintf(&mem, `{"request_id":"rule-%02d","memory_type":"constraint","scope":"global","content":"Rule %d: %s"}`+"\n", i, i, strings.Repeat("quote the annual percentage rate with every figure, ", 8))
	}
	mem.WriteString(`{"request_id":"blank-page","memory_type":"external","scope":"global","content":"     "}` + "\n")
	mem.WriteString(`{"request_id":"q","memory_type":"history","scope":"session","session_id":"s","last_modified":"2026-11-30T08:00:00Z","content":"What is the rate?"}` + "\n")
	for name, s := range map[string]string{tplPath: tpl, memPath: mem.String()} {
		if err := os.WriteFile(name, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range formats3 {
		code, out, stderr := runCLI(t, "render", "-t", tplPath, "-m", memPath, "--now", "2026-11-30T09:00:00Z", "--session", "s", "--format", f.String())
		if code != exitOK {
			t.Fatalf("%v: exit %d, stderr %s", f, code, stderr)
		}
		if err := checkBody(f, []byte(out)); err != nil {
			t.Errorf("%v: %v", f, err)
		}
		if f == chat.FormatAnthropic && (strings.Count(out, `"ttl": "1h"`) < 2 || !strings.Contains(out, `</rule>\n     \n",`)) {
			t.Errorf("want the blank page joined to the rules, and 1h breakpoints:\n%s", out)
		}
	}
}
