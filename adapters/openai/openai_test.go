package openaiadapter_test

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

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	openaiadapter "github.com/contextasm/contextasm/adapters/openai"
	"github.com/contextasm/contextasm/chat"
	"github.com/contextasm/contextasm/contextasm"
	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/template"
	"github.com/contextasm/contextasm/truncate"
)

var now = time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)

const tplSrc = `{"budget": 800, "sections": [
    {"name": "RULES", "priority": 1, "memory_types": ["constraint"], "max_tokens": 100, "render": "<rule id=\"{request_id}\">{content}</rule>"},
    {"name": "FACTS", "priority": 2, "memory_types": ["context"], "max_tokens": 200, "render": "<fact id=\"{request_id}\">{content}</fact>"},
    {"name": "HISTORY", "priority": 3, "memory_types": ["history"], "max_tokens": 400, "render": "{content}"}]}`

// setup returns an engine holding rules, a fact from a web page and a
// conversation with a tool exchange, and its first assembly for OpenAI.
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
		fact,
	); err != nil {
		t.Fatal(err)
	}
	conv := chat.Conversation{Messages: []chat.Message{
		{Role: chat.RoleUser, Content: "What is the car-loan rate?"},
		{Role: chat.RoleAssistant, ToolCalls: []chat.ToolCall{{ID: "call_1", Name: "get_rate", Arguments: `{"product":"car-loan"}`}}},
		{Role: chat.RoleTool, ToolCallID: "call_1", Content: "6.9% APR"},
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
	res, err := eng.Assemble(context.Background(), contextasm.Request{Template: tpl, Now: now, SessionID: "s1", Format: chat.FormatOpenAI})
	if err != nil {
		t.Fatal(err)
	}
	return eng, res
}

// plain reads a request body's messages with every content written as one
// string, and the indexes of the parts that carry a cache breakpoint.
func plain(t *testing.T, body []byte) (msgs []map[string]any, marks []string) {
	t.Helper()
	var b struct {
		Messages []map[string]any `json:"messages"`
	}
	if err := json.Unmarshal(body, &b); err != nil {
		t.Fatal(err)
	}
	for i, m := range b.Messages {
		parts, ok := m["content"].([]any)
		if !ok {
			continue
		}
		var text strings.Builder
		for j, p := range parts {
			p := p.(map[string]any)
			text.WriteString(p["text"].(string))
			if bp, ok := p["prompt_cache_breakpoint"]; ok {
				if !reflect.DeepEqual(bp, map[string]any{"mode": "explicit"}) {
					t.Errorf("message %d part %d: breakpoint %v", i, j, bp)
				}
				marks = append(marks, m["role"].(string)+":"+p["text"].(string))
			}
		}
		m["content"] = text.String()
	}
	return b.Messages, marks
}

// TestParamsAsChatEncoder checks that the SDK's parameters say what
// chat.OpenAI writes, and mark the conversation's cache breakpoints.
func TestParamsAsChatEncoder(t *testing.T) {
	_, res := setup(t)
	conv := res.Messages()
	want, err := chat.OpenAI(conv)
	if err != nil {
		t.Fatal(err)
	}
	wantMsgs, _ := plain(t, want)
	var wantMarks []string
	for _, p := range conv.System {
		if p.CacheBreakpoint {
			wantMarks = append(wantMarks, "system:"+p.Text)
		}
	}
	for _, m := range conv.Messages {
		if m.CacheBreakpoint {
			wantMarks = append(wantMarks, string(m.Role)+":"+m.Content)
		}
	}
	if len(wantMarks) < 3 {
		t.Fatalf("the fixture marks %d breakpoints, want the two text sections' and the last message's", len(wantMarks))
	}
	for _, o := range []openaiadapter.Options{{}, {PlainContent: true}} {
		p, err := openaiadapter.Params(res, openai.ChatCompletionNewParams{Model: openai.ChatModelGPT5_5,
			Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("extra")}}, o)
		if err != nil {
			t.Fatal(err)
		}
		body, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		got, marks := plain(t, body)
		if last := got[len(got)-1]; last["content"] != "extra" {
			t.Errorf("the host's message is not last: %v", last)
		}
		got = got[:len(got)-1]
		if !reflect.DeepEqual(got, wantMsgs) {
			t.Errorf("PlainContent %v: messages\n%v\nwant\n%v", o.PlainContent, got, wantMsgs)
		}
		if o.PlainContent {
			wantMarks = nil
		}
		if !reflect.DeepEqual(marks, wantMarks) {
			t.Errorf("PlainContent %v: breakpoints %q, want %q", o.PlainContent, marks, wantMarks)
		}
	}
}

// TestRoundTrip sends the parameters through the SDK's client to a fake
// model on a loopback port, and feeds its completion back.
func TestRoundTrip(t *testing.T) {
	eng, res := setup(t)
	reply := `Über 60 Monate: 6.9% APR <memory_ref id="rule-apr"/>, see the rate sheet.`
	at := strings.Index(reply, "see")
	var sent []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/chat/completions" {
			http.NotFound(w, r)
			return
		}
		sent, _ = io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{
			"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "gpt-5.5",
			"choices": []any{map[string]any{"index": 0, "finish_reason": "stop", "message": map[string]any{
				"role": "assistant", "content": reply, "refusal": nil,
				"annotations": []any{map[string]any{"type": "url_citation", "url_citation": map[string]any{
					"url": "https://bank.example/rates", "title": "Rates", "start_index": len([]rune(reply[:at])), "end_index": len([]rune(reply)) - 1}}},
			}}},
			"usage": map[string]any{"prompt_tokens": 300, "completion_tokens": 20, "total_tokens": 320,
				"prompt_tokens_details": map[string]any{"cached_tokens": 256}},
		})
	}))
	defer srv.Close()
	client := openai.NewClient(option.WithBaseURL(srv.URL), option.WithAPIKey("test"), option.WithMaxRetries(0))
	params, err := openaiadapter.Params(res, openai.ChatCompletionNewParams{Model: openai.ChatModelGPT5_5}, openaiadapter.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	completion, err := client.Chat.Completions.New(ctx, params)
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

	r := openaiadapter.Response(res, completion)
	if r.Text != reply || len(r.Cited) != 1 || r.Cited[0].Offset != at || r.Cited[0].ID != "https://bank.example/rates" {
		t.Errorf("response %+v (citation at byte %d)", r, at)
	}
	if r.Usage != (contextasm.Usage{InputTokens: 300, CachedTokens: 256}) {
		t.Errorf("usage %+v", r.Usage)
	}
	fb, err := openaiadapter.Feedback(ctx, eng, res, completion)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, ref := range fb.Refs {
		ids = append(ids, ref.RequestID+"@"+string(ref.Position))
	}
	if want := []string{"rule-apr@middle", "fact-rate@end"}; !reflect.DeepEqual(ids, want) {
		t.Errorf("refs %q, want %q", ids, want)
	}
	if len(fb.UnknownRefs) != 0 {
		t.Errorf("unknown refs %q", fb.UnknownRefs)
	}
}

func TestMessage(t *testing.T) {
	var m openai.ChatCompletionMessage
	if err := json.Unmarshal([]byte(`{"role":"assistant","content":"","refusal":null,"tool_calls":[
		{"id":"call_2","type":"function","function":{"name":"get_rate","arguments":"{\"months\":60}"}},
		{"id":"call_3","type":"custom","custom":{"name":"grammar","input":"free text"}}]}`), &m); err != nil {
		t.Fatal(err)
	}
	got := openaiadapter.Message(m)
	want := chat.Message{Role: chat.RoleAssistant, ToolCalls: []chat.ToolCall{{ID: "call_2", Name: "get_rate", Arguments: `{"months":60}`}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Message = %+v, want %+v", got, want)
	}
}

func TestResponseOffsets(t *testing.T) {
	_, res := setup(t)
	text := "añb€c"
	for _, tt := range []struct {
		index int64
		want  int
	}{{-1, 0}, {0, 0}, {1, 1}, {2, 3}, {3, 4}, {4, 7}, {5, 8}, {99, 8}} {
		var c openai.ChatCompletion
		body := `{"choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"` + text + `","refusal":null,
			"annotations":[{"type":"url_citation","url_citation":{"url":"u","title":"t","start_index":` + jsonInt(tt.index) + `,"end_index":0}}]}}]}`
		if err := json.Unmarshal([]byte(body), &c); err != nil {
			t.Fatal(err)
		}
		if r := openaiadapter.Response(res, &c); len(r.Cited) != 1 || r.Cited[0].Offset != tt.want {
			t.Errorf("start_index %d: cited %+v, want byte %d", tt.index, r.Cited, tt.want)
		}
	}
	if r := openaiadapter.Response(res, nil); r.Text != "" || r.Cited != nil {
		t.Errorf("nil completion: %+v", r)
	}
}

func jsonInt(i int64) string { b, _ := json.Marshal(i); return string(b) }
