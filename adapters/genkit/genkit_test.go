package genkitadapter_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/genkit"

	genkitadapter "github.com/contextasm/contextasm/adapters/genkit"
	"github.com/contextasm/contextasm/chat"
	"github.com/contextasm/contextasm/contextasm"
	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/feedback"
	"github.com/contextasm/contextasm/template"
	"github.com/contextasm/contextasm/truncate"
)

const tplSrc = `{"budget": 600, "sections": [
    {"name": "RULES", "priority": 1, "memory_types": ["constraint"], "max_tokens": 100, "render": "<rule id=\"{request_id}\">{content}</rule>"},
    {"name": "DOCS", "priority": 2, "memory_types": ["external"], "max_tokens": 150, "render": "<doc id=\"{request_id}\">{content}</doc>"},
    {"name": "HISTORY", "priority": 3, "memory_types": ["history"], "max_tokens": 300, "render": "{content}"}]}`

// fakeModel records the requests a Genkit model receives and answers with
// reply(call number, request).
type fakeModel struct {
	mu       sync.Mutex
	requests []*ai.ModelRequest
	reply    func(n int, req *ai.ModelRequest) *ai.ModelResponse
}

func (f *fakeModel) generate(_ context.Context, req *ai.ModelRequest, _ *struct{}, _ ai.ModelStreamCallback) (*ai.ModelResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.requests = append(f.requests, req)
	resp := f.reply(len(f.requests), req)
	resp.Request = req
	return resp, nil
}

type fixture struct {
	eng   *contextasm.Engine
	tpl   *template.Template
	g     *genkit.Genkit
	model ai.Model
	fake  *fakeModel
	tool  ai.Tool
}

func setup(t *testing.T, reply func(int, *ai.ModelRequest) *ai.ModelResponse) *fixture {
	t.Helper()
	eng, err := contextasm.New(contextasm.Config{Stickiness: truncate.Stickiness{MinCachePrefix: 1}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	if err := eng.Declare(
		declare.Declaration{RequestID: "rule-apr", MemoryType: declare.Constraint, Scope: declare.ScopeGlobal, Content: "Quote rates with their APR."},
		declare.Declaration{RequestID: "rule-ecoa", MemoryType: declare.Constraint, Scope: declare.ScopeGlobal, Content: "Never ask about marital status.",
			BreakOnViolation: true, ViolationPatterns: []string{"(?i)are you married"}},
	); err != nil {
		t.Fatal(err)
	}
	tpl, err := template.Parse([]byte(tplSrc), "template.json")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	g := genkit.Init(ctx)
	fake := &fakeModel{reply: reply}
	m := genkit.DefineModelAction(g, "test/fake", &ai.ModelOptions{Supports: &ai.ModelSupports{Multiturn: true, SystemRole: true, Tools: true, Context: true}}, fake.generate)
	tool := genkit.DefineTool(g, "get_rate", "today's car-loan rate", func(_ *ai.ToolContext, in struct {
		Months int `json:"months"`
	}) (string, error) {
		return fmt.Sprintf("6.9%% APR over %d months", in.Months), nil
	})
	return &fixture{eng: eng, tpl: tpl, g: g, model: m, fake: fake, tool: tool}
}

func clock() func() time.Time {
	t := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	return func() time.Time { t = t.Add(time.Second); return t }
}

func text(role ai.Role, s string) *ai.Message { return ai.NewTextMessage(role, s) }

// TestGenerate runs a generation through a tool call: each model call
// gets the assembled context (rules, the kept document, the conversation),
// no documents of its own, and the reply teaches the Engine.
func TestGenerate(t *testing.T) {
	f := setup(t, func(n int, _ *ai.ModelRequest) *ai.ModelResponse {
		if n == 1 {
			return &ai.ModelResponse{Message: &ai.Message{Role: ai.RoleModel, Content: []*ai.Part{
				ai.NewToolRequestPart(&ai.ToolRequest{Name: "get_rate", Ref: "r1", Input: map[string]any{"months": 60}})}}}
		}
		return &ai.ModelResponse{Message: text(ai.RoleModel, `<memory_ref id="rule-apr"/> 6.9% APR over 60 months.`),
			Usage: &ai.GenerationUsage{InputTokens: 200, CachedContentTokens: 120}}
	})
	mw, err := genkitadapter.New(f.eng, genkitadapter.Config{Template: f.tpl, SessionID: "s1", Clock: clock()})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	doc := ai.DocumentFromText("Rate sheet: car loans 6.9% APR, 12 to 84 months.", map[string]any{"uri": "https://bank.example/rates"})
	resp, err := genkit.Generate(ctx, f.g, ai.WithModel(f.model), ai.WithTools(f.tool), ai.WithUse(mw),
		ai.WithSystem("You are a loan agent."), ai.WithMessages(text(ai.RoleUser, "Rate over 60 months?")), ai.WithDocs(doc))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(resp.Text(), "6.9% APR") || len(f.fake.requests) != 2 {
		t.Fatalf("response %q after %d model calls", resp.Text(), len(f.fake.requests))
	}
	first, second := f.fake.requests[0], f.fake.requests[1]
	// The system prompt is split at the cache breakpoints: a message each.
	systemOf := func(req *ai.ModelRequest) (string, int) {
		var b strings.Builder
		n := 0
		for _, m := range req.Messages {
			if m.Role == ai.RoleSystem {
				b.WriteString(m.Text())
				n++
			}
		}
		return b.String(), n
	}
	sys, nsys := systemOf(first)
	if first.Messages[0].Role != ai.RoleSystem || !strings.HasPrefix(sys, "[MODEL_CONTEXT_PROTOCOL") || !strings.Contains(sys, "You are a loan agent.") ||
		!strings.Contains(sys, "Quote rates with their APR.") || !strings.Contains(sys, `Rate sheet: car loans`) || nsys < 2 {
		t.Fatalf("first call's system prompt (%d messages):\n%s", nsys, sys)
	}
	if len(first.Docs) != 0 || len(second.Docs) != 0 {
		t.Errorf("documents sent beside the context: %d, %d", len(first.Docs), len(second.Docs))
	}
	if last := first.Messages[len(first.Messages)-1]; last.Role != ai.RoleUser || last.Text() != "Rate over 60 months?" {
		t.Errorf("first call's last message: %v", last)
	}
	sys2, n := systemOf(second)
	if sys2 != sys {
		t.Errorf("the system prompt changed between the calls")
	}
	rest := second.Messages[n:]
	if len(rest) != 3 || rest[1].Role != ai.RoleModel || !rest[1].Content[0].IsToolRequest() || rest[2].Role != ai.RoleTool {
		t.Errorf("second call's conversation: %v", rest)
	}
	if got := f.eng.State().Trust["rule-apr"]; got != 0.55 {
		t.Errorf("rule-apr learned trust %v, want 0.55", got)
	}
}

// TestCacheMarker checks that Genkit's cache marker sits on the message
// ending at the last cache breakpoint, and that the context may be sent as
// user messages.
func TestCacheMarker(t *testing.T) {
	f := setup(t, func(int, *ai.ModelRequest) *ai.ModelResponse {
		return &ai.ModelResponse{Message: text(ai.RoleModel, "Sure.")}
	})
	mw, err := genkitadapter.New(f.eng, genkitadapter.Config{Template: f.tpl, SessionID: "s2", Clock: clock(), CacheTTL: 300, ContextRole: ai.RoleUser})
	if err != nil {
		t.Fatal(err)
	}
	last := text(ai.RoleUser, "Over 60 months?")
	last.Metadata = map[string]any{"source": "web"}
	history := []*ai.Message{text(ai.RoleUser, "Rate?"), text(ai.RoleModel, "6.9% APR."), last}
	if _, err := genkit.Generate(context.Background(), f.g, ai.WithModel(f.model), ai.WithUse(mw), ai.WithMessages(history...)); err != nil {
		t.Fatal(err)
	}
	req := f.fake.requests[0]
	var marked []int
	for i, m := range req.Messages {
		if m.Role == ai.RoleSystem {
			t.Errorf("message %d is a system message", i)
		}
		if c, ok := m.Metadata["cache"].(map[string]any); ok {
			if c["ttlSeconds"] != 300 {
				t.Errorf("message %d: cache metadata %v", i, c)
			}
			marked = append(marked, i)
		}
	}
	// The conversation is marked at its last message (the Result's last
	// breakpoint); one marker only.
	if want := []int{len(req.Messages) - 1}; !reflect.DeepEqual(marked, want) {
		t.Errorf("cache markers on messages %v, want %v", marked, want)
	}
	if !reflect.DeepEqual(last.Metadata, map[string]any{"source": "web"}) {
		t.Errorf("the caller's message was modified: %v", last.Metadata)
	}
	if got := req.Messages[len(req.Messages)-1].Metadata["source"]; got != "web" {
		t.Errorf("the marked message lost its metadata: %v", req.Messages[len(req.Messages)-1].Metadata)
	}
}

func TestViolation(t *testing.T) {
	f := setup(t, func(int, *ai.ModelRequest) *ai.ModelResponse {
		return &ai.ModelResponse{Message: text(ai.RoleModel, "Are you married?")}
	})
	mw, err := genkitadapter.New(f.eng, genkitadapter.Config{Template: f.tpl, SessionID: "s3"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = genkit.Generate(context.Background(), f.g, ai.WithModel(f.model), ai.WithUse(mw), ai.WithPrompt("Can I get a loan?"))
	if !errors.Is(err, feedback.ErrConstraintViolation) {
		t.Errorf("err %v, want a constraint violation", err)
	}
}

// TestConversation maps Genkit's messages, tool requests without a ref
// included, to package chat's.
func TestConversation(t *testing.T) {
	msgs := []*ai.Message{
		text(ai.RoleSystem, "Be brief."),
		text(ai.RoleUser, "Rates?"),
		{Role: ai.RoleModel, Content: []*ai.Part{
			ai.NewToolRequestPart(&ai.ToolRequest{Name: "get_rate", Input: map[string]any{"months": 12}}),
			ai.NewToolRequestPart(&ai.ToolRequest{Name: "get_rate", Input: map[string]any{"months": 24}}),
			ai.NewToolRequestPart(&ai.ToolRequest{Name: "now", Ref: "t1"})}},
		{Role: ai.RoleTool, Content: []*ai.Part{
			ai.NewToolResponsePart(&ai.ToolResponse{Name: "get_rate", Output: "6.9%"}),
			ai.NewToolResponsePart(&ai.ToolResponse{Name: "get_rate", Output: map[string]any{"apr": 7.1}}),
			ai.NewToolResponsePart(&ai.ToolResponse{Name: "now", Ref: "t1", Output: "09:00"})}},
	}
	conv, from, err := genkitadapter.Conversation(msgs)
	if err != nil {
		t.Fatal(err)
	}
	want := chat.Conversation{System: []chat.SystemPart{{Text: "Be brief."}}, Messages: []chat.Message{
		{Role: chat.RoleUser, Content: "Rates?"},
		{Role: chat.RoleAssistant, ToolCalls: []chat.ToolCall{
			{ID: "call_2_0", Name: "get_rate", Arguments: `{"months":12}`},
			{ID: "call_2_1", Name: "get_rate", Arguments: `{"months":24}`},
			{ID: "t1", Name: "now", Arguments: "{}"}}},
		{Role: chat.RoleTool, ToolCallID: "call_2_0", Content: "6.9%"},
		{Role: chat.RoleTool, ToolCallID: "call_2_1", Content: `{"apr":7.1}`},
		{Role: chat.RoleTool, ToolCallID: "t1", Content: "09:00"},
	}}
	if !reflect.DeepEqual(conv, want) || !reflect.DeepEqual(from, []int{1, 2, 3, 3, 3}) {
		t.Errorf("Conversation =\n%+v %v\nwant\n%+v", conv, from, want)
	}
	if err := conv.Check(chat.FormatOpenAI); err != nil {
		t.Errorf("the conversation is not one the APIs take: %v", err)
	}
	bad := []*ai.Message{{Role: ai.RoleModel, Content: []*ai.Part{ai.NewToolRequestPart(&ai.ToolRequest{Name: "x", Input: []int{1}})}}}
	if _, _, err := genkitadapter.Conversation(bad); err == nil || !strings.Contains(err.Error(), "not a JSON object") {
		t.Errorf("array input: %v", err)
	}
	for _, cfg := range []genkitadapter.Config{{SessionID: "s"}, {Template: &template.Template{}}, {Template: &template.Template{}, SessionID: "s", CacheTTL: -1}} {
		if _, err := genkitadapter.New(&contextasm.Engine{}, cfg); err == nil {
			t.Errorf("New(%+v): no error", cfg)
		}
	}
}
