package anthropicadapter_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"

	anthropicadapter "github.com/contextasm/contextasm/adapters/anthropic"
	"github.com/contextasm/contextasm/chat"
	"github.com/contextasm/contextasm/contextasm"
	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/internal/chatcheck"
	"github.com/contextasm/contextasm/template"
	"github.com/contextasm/contextasm/truncate"
)

var now = time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)

const tplSrc = `{"budget": 800, "encoding": "approx:claude", "sections": [
    {"name": "RULES", "priority": 1, "memory_types": ["constraint"], "max_tokens": 200, "render": "<rule id=\"{request_id}\">{content}</rule>"},
    {"name": "FACTS", "priority": 2, "memory_types": ["context"], "max_tokens": 200, "render": "<fact id=\"{request_id}\">{content}</fact>"},
    {"name": "HISTORY", "priority": 3, "memory_types": ["history"], "max_tokens": 400, "render": "{content}"}]}`

// setup returns an engine holding rules, a fact from a web page and a
// conversation with a tool exchange, and its first assembly for Anthropic,
// counted with an approximate encoding (Claude's tokenizer is not public).
func setup(t testing.TB) (*contextasm.Engine, *contextasm.Result) {
	t.Helper()
	// MinCachePrefix 1: this small context gets the breakpoints a large one would.
	eng, err := contextasm.New(contextasm.Config{Stickiness: truncate.Stickiness{MinCachePrefix: 1}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	fact := declare.Declaration{RequestID: "fact-rate", MemoryType: declare.Context, Scope: declare.ScopeGlobal, Content: "The car-loan rate is 6.9% APR."}
	fact.Provenance.URI = "https://bank.example/rates"
	if err := eng.Declare(
		declare.Declaration{RequestID: "rule-apr", MemoryType: declare.Constraint, Scope: declare.ScopeGlobal, Content: "Quote rates with their APR."},
		declare.Declaration{RequestID: "rule-term", MemoryType: declare.Constraint, Scope: declare.ScopeGlobal, Content: "Terms run 12 to 84 months."},
		fact,
	); err != nil {
		t.Fatal(err)
	}
	conv := chat.Conversation{Messages: []chat.Message{
		{Role: chat.RoleUser, Content: "What is the car-loan rate?"},
		{Role: chat.RoleAssistant, Content: "Let me look. ", ToolCalls: []chat.ToolCall{{ID: "toolu_1", Name: "get_rate", Arguments: `{"product":"car-loan"}`}}},
		{Role: chat.RoleTool, ToolCallID: "toolu_1", Content: "6.9% APR"},
		{Role: chat.RoleUser, Content: "And over 60 months?"},
	}}
	decls, err := declare.Conversation(conv, declare.ConversationOptions{SessionID: "s1", Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if err := eng.ReplacePrefix("s1/", decls...); err != nil {
		t.Fatal(err)
	}
	tpl, err := template.Parse([]byte(tplSrc), "template.json")
	if err != nil {
		t.Fatal(err)
	}
	res, err := eng.Assemble(context.Background(), contextasm.Request{Template: tpl, Now: now, SessionID: "s1", Format: chat.FormatAnthropic})
	if err != nil {
		t.Fatal(err)
	}
	return eng, res
}

// normal reads a request body's system and messages, with a tool result's
// content written as one string (the API takes a string or text blocks).
func normal(t *testing.T, body []byte) map[string]any {
	t.Helper()
	var b map[string]any
	if err := json.Unmarshal(body, &b); err != nil {
		t.Fatal(err)
	}
	for _, m := range b["messages"].([]any) {
		for _, c := range m.(map[string]any)["content"].([]any) {
			c := c.(map[string]any)
			if parts, ok := c["content"].([]any); ok && c["type"] == "tool_result" {
				var s strings.Builder
				for _, p := range parts {
					s.WriteString(p.(map[string]any)["text"].(string))
				}
				c["content"] = s.String()
			}
		}
	}
	return map[string]any{"system": b["system"], "messages": b["messages"]}
}

// TestParamsAsChatEncoder checks that the SDK's parameters say what
// chat.Anthropic writes, cache_control included.
func TestParamsAsChatEncoder(t *testing.T) {
	_, res := setup(t)
	want, err := chat.Anthropic(res.Messages())
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(want), `"cache_control"`); n != 3 {
		t.Fatalf("the fixture marks %d breakpoints, want the two text sections' and the last message's:\n%s", n, want)
	}
	p, err := anthropicadapter.Params(res, anthropic.MessageNewParams{Model: anthropic.ModelClaudeSonnet5_5, MaxTokens: 256,
		System:   []anthropic.TextBlockParam{{Text: "host"}},
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("extra"))}})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(p.System); n < 2 || p.System[n-1].Text != "host" {
		t.Errorf("the host's system block is not last: %+v", p.System)
	}
	if n := len(p.Messages); p.Messages[n-1].Content[0].OfText.Text != "extra" {
		t.Errorf("the host's message is not last: %+v", p.Messages[n-1])
	}
	p.System, p.Messages = p.System[:len(p.System)-1], p.Messages[:len(p.Messages)-1]
	body, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := normal(t, body), normal(t, want); !reflect.DeepEqual(got, want) {
		t.Errorf("parameters\n%v\nwant\n%v", got, want)
	}
}

// TestRoundTrip sends the parameters through the SDK's client to a fake
// model on a loopback port, and feeds its answer back.
func TestRoundTrip(t *testing.T) {
	eng, res := setup(t)
	if res.Approximate == nil {
		t.Fatal("the fixture's encoding is not approximate")
	}
	first := `Over 60 months the rate stays 6.9% APR <memory_ref id="rule-apr"/>. `
	second := "It is on the bank's rate sheet."
	var sent []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/messages" {
			http.NotFound(w, r)
			return
		}
		sent, _ = io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{
			"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-5-5", "stop_reason": "end_turn",
			"content": []any{
				map[string]any{"type": "text", "text": first},
				map[string]any{"type": "text", "text": second, "citations": []any{
					map[string]any{"type": "web_search_result_location", "url": "https://bank.example/rates", "title": "Rates", "cited_text": "6.9%", "encrypted_index": "x"},
					map[string]any{"type": "char_location", "document_title": "rule-term", "document_index": 0, "cited_text": "84", "start_char_index": 0, "end_char_index": 2},
				}},
			},
			"usage": map[string]any{"input_tokens": 40, "cache_read_input_tokens": 200, "cache_creation_input_tokens": 60, "output_tokens": 30},
		})
	}))
	defer srv.Close()
	client := anthropic.NewClient(option.WithBaseURL(srv.URL), option.WithAPIKey("test"), option.WithMaxRetries(0))
	params, err := anthropicadapter.Params(res, anthropic.MessageNewParams{Model: anthropic.ModelClaudeSonnet5_5, MaxTokens: 256})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	msg, err := client.Messages.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	built, err := json.Marshal(params)
	if err != nil {
		t.Fatal(err)
	}
	var a, b any
	if json.Unmarshal(built, &a) != nil || json.Unmarshal(sent, &b) != nil || !reflect.DeepEqual(a, b) {
		t.Errorf("the SDK sent\n%s\nnot the parameters built\n%s", sent, built)
	}

	r := anthropicadapter.Response(res, msg)
	if r.Text != first+second || len(r.Cited) != 2 || r.Cited[0].ID != "https://bank.example/rates" || r.Cited[1].ID != "rule-term" || r.Cited[0].Offset != len(first) {
		t.Errorf("response %+v", r)
	}
	if r.Usage != (contextasm.Usage{InputTokens: 300, CachedTokens: 200, CacheWriteTokens: 60}) {
		t.Errorf("usage %+v", r.Usage)
	}
	fb, err := anthropicadapter.Feedback(ctx, eng, res, msg)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, ref := range fb.Refs {
		ids = append(ids, ref.RequestID+"@"+string(ref.Position))
	}
	if want := []string{"rule-apr@middle", "fact-rate@end", "rule-term@end"}; !reflect.DeepEqual(ids, want) {
		t.Errorf("refs %q, want %q", ids, want)
	}
	// The approximate encoding learned its margin from the whole input.
	if ratio, reports := eng.Usage().Ratio("claude"); reports != 1 || ratio <= 0 {
		t.Errorf("usage log: ratio %v from %d reports", ratio, reports)
	}
}

func TestMessage(t *testing.T) {
	var m anthropic.Message
	if err := json.Unmarshal([]byte(`{"id":"msg_2","type":"message","role":"assistant","content":[
		{"type":"thinking","thinking":"Two tools.","signature":"EqQB"},
		{"type":"redacted_thinking","data":"EmwK"},
		{"type":"text","text":"Checking."},
		{"type":"tool_use","id":"toolu_2","name":"get_rate","input":{"months":60}},
		{"type":"tool_use","id":"toolu_3","name":"now","input":{}}]}`), &m); err != nil {
		t.Fatal(err)
	}
	got := anthropicadapter.Message(&m)
	var rs []chat.Reasoning
	if err := json.Unmarshal([]byte(`[{"type":"thinking","thinking":"Two tools.","signature":"EqQB"},{"type":"redacted_thinking","data":"EmwK"}]`), &rs); err != nil {
		t.Fatal(err)
	}
	want := chat.Message{Role: chat.RoleAssistant, Content: "Checking.", Reasoning: rs,
		ToolCalls: []chat.ToolCall{{ID: "toolu_2", Name: "get_rate", Arguments: `{"months":60}`}, {ID: "toolu_3", Name: "now", Arguments: "{}"}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Message = %+v, want %+v", got, want)
	}
	if r := anthropicadapter.Response(nil, nil); r.Text != "" || r.Cited != nil {
		t.Errorf("nil message: %+v", r)
	}
}

// A template's cache_ttl "1h" reaches the SDK's parameters on every
// breakpoint, and the thinking blocks of the turn that made the pending
// call go back first in it, unchanged: a body the API's rules accept.
func TestCacheTTLAndThinking(t *testing.T) {
	eng, err := contextasm.New(contextasm.Config{Stickiness: truncate.Stickiness{MinCachePrefix: 1}})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	var thinking chat.Reasoning
	if err := json.Unmarshal([]byte(`{"type":"thinking","thinking":"The rate is needed.","signature":"EqQBCkYI"}`), &thinking); err != nil {
		t.Fatal(err)
	}
	conv := chat.Conversation{Messages: []chat.Message{
		{Role: chat.RoleUser, Content: "What is the car-loan rate?"},
		{Role: chat.RoleAssistant, Reasoning: []chat.Reasoning{thinking}, ToolCalls: []chat.ToolCall{{ID: "functions.get_rate:0", Name: "get_rate", Arguments: `{}`}}},
		{Role: chat.RoleTool, ToolCallID: "functions.get_rate:0", Content: "6.9% APR"},
	}}
	decls, err := declare.Conversation(conv, declare.ConversationOptions{SessionID: "s1", Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if err := eng.Declare(append(decls, declare.Declaration{RequestID: "rule-apr", MemoryType: declare.Constraint, Scope: declare.ScopeGlobal,
		Content: "Quote rates with their APR."})...); err != nil {
		t.Fatal(err)
	}
	tpl, err := template.Parse([]byte(strings.Replace(tplSrc, `"budget": 800,`, `"budget": 800, "cache_ttl": "1h",`, 1)), "template.json")
	if err != nil {
		t.Fatal(err)
	}
	res, err := eng.Assemble(context.Background(), contextasm.Request{Template: tpl, Now: now, SessionID: "s1", Format: chat.FormatAnthropic})
	if err != nil {
		t.Fatal(err)
	}
	p, err := anthropicadapter.Params(res, anthropic.MessageNewParams{})
	if err != nil {
		t.Fatal(err)
	}
	body, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	var b map[string]any
	if err := json.Unmarshal(body, &b); err != nil {
		t.Fatal(err)
	}
	delete(b, "model")
	delete(b, "max_tokens")
	rest, _ := json.Marshal(b)
	if err := chatcheck.Anthropic(rest, chatcheck.Options{}); err != nil {
		t.Errorf("%v\n%s", err, rest)
	}
	marks, hour := strings.Count(string(body), `"cache_control"`), strings.Count(string(body), `"ttl":"1h"`)
	if marks < 2 || hour != marks {
		t.Errorf("%d breakpoints, %d of them 1h:\n%s", marks, hour, body)
	}
	want := `"content":[{"signature":"EqQBCkYI","thinking":"The rate is needed.","type":"thinking"},{"id":"` + chat.WireID("functions.get_rate:0") + `"`
	if !strings.Contains(string(body), want) {
		t.Errorf("no thinking block first in the turn that made the call:\n%s", body)
	}
}
