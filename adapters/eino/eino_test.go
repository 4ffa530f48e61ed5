package einoadapter_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/components/tool/utils"
	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/schema"

	einoadapter "github.com/contextasm/contextasm/adapters/eino"
	"github.com/contextasm/contextasm/chat"
	"github.com/contextasm/contextasm/contextasm"
	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/feedback"
	"github.com/contextasm/contextasm/template"
)

const tplSrc = `{"budget": %d, "sections": [
    {"name": "RULES", "priority": 1, "memory_types": ["constraint"], "max_tokens": 80, "render": "<rule id=\"{request_id}\">{content}</rule>"},
    {"name": "HISTORY", "priority": 2, "memory_types": ["history"], "max_tokens": %d, "render": "{content}"}]}`

func engine(t *testing.T, budget, history int) (*contextasm.Engine, *template.Template) {
	t.Helper()
	eng, err := contextasm.New(contextasm.Config{})
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
	tpl, err := template.Parse(fmt.Appendf(nil, tplSrc, budget, history), "template.json")
	if err != nil {
		t.Fatal(err)
	}
	return eng, tpl
}

type rateInput struct {
	Months int `json:"months"`
}

func rateTool(t *testing.T) tool.BaseTool {
	t.Helper()
	tl, err := utils.InferTool("get_rate", "today's car-loan rate", func(_ context.Context, in rateInput) (string, error) {
		return fmt.Sprintf("6.9%% APR over %d months", in.Months), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return tl
}

func clock() func() time.Time {
	t := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	return func() time.Time { t = t.Add(time.Second); return t }
}

// run runs an agent with the middleware on msgs in session s1 and returns
// the run's error, if any.
func run(t *testing.T, eng *contextasm.Engine, tpl *template.Template, m *fakeModel, msgs []*schema.Message) error {
	t.Helper()
	ctx := context.Background()
	mw, err := einoadapter.NewMiddleware(eng, einoadapter.Config{Template: tpl, Clock: clock()})
	if err != nil {
		t.Fatal(err)
	}
	agent, err := adk.NewChatModelAgent(ctx, &adk.ChatModelAgentConfig{
		Name: "loans", Description: "answers loan questions", Instruction: "You are a loan agent.",
		Model:         m,
		ToolsConfig:   adk.ToolsConfig{ToolsNodeConfig: compose.ToolsNodeConfig{Tools: []tool.BaseTool{rateTool(t)}}},
		Handlers:      []adk.ChatModelAgentMiddleware{mw},
		MaxIterations: 40,
	})
	if err != nil {
		t.Fatal(err)
	}
	iter := adk.NewRunner(ctx, adk.RunnerConfig{Agent: agent}).Run(ctx, msgs, adk.WithSessionValues(map[string]any{"session_id": "s1"}))
	for {
		ev, ok := iter.Next()
		if !ok {
			return nil
		}
		if ev.Err != nil {
			return ev.Err
		}
	}
}

func call(id string, months int) *schema.Message {
	return schema.AssistantMessage("", []schema.ToolCall{{ID: id, Type: "function", Function: schema.FunctionCall{Name: "get_rate", Arguments: fmt.Sprintf(`{"months":%d}`, months)}}})
}

// TestMiddleware runs a ChatModelAgent through a tool call: the model sees
// the assembled context, the tool exchange travels whole, and the reply
// teaches the Engine.
func TestMiddleware(t *testing.T) {
	eng, tpl := engine(t, 400, 300)
	m := &fakeModel{reply: func(n int, _ []*schema.Message) *schema.Message {
		if n == 1 {
			return call("call_1", 60)
		}
		reply := schema.AssistantMessage(`<memory_ref id="rule-apr"/> It is 6.9% APR over 60 months.`, nil)
		reply.ResponseMeta = &schema.ResponseMeta{Usage: &schema.TokenUsage{PromptTokens: 120, PromptTokenDetails: schema.PromptTokenDetails{CachedTokens: 64}}}
		return reply
	}}
	user := schema.UserMessage("What is the rate over 60 months?")
	if err := run(t, eng, tpl, m, []*schema.Message{user}); err != nil {
		t.Fatal(err)
	}
	if len(m.inputs) != 2 {
		t.Fatalf("%d model calls, want 2", len(m.inputs))
	}
	first, second := m.inputs[0], m.inputs[1]
	sys := first[0]
	if sys.Role != schema.System || !strings.HasPrefix(sys.Content, "[MODEL_CONTEXT_PROTOCOL") ||
		!strings.Contains(sys.Content, "You are a loan agent.") || !strings.Contains(sys.Content, `<rule id="rule-apr">`) {
		t.Fatalf("first call's system message:\n%s", sys.Content)
	}
	if len(first) != 2 || first[1].Content != user.Content {
		t.Errorf("first call: %v", first)
	}
	// The second call reads the first's input, then the exchange: the
	// system message is byte for byte the same.
	if second[0].Content != sys.Content {
		t.Errorf("the system message changed:\n%s\n---\n%s", sys.Content, second[0].Content)
	}
	if len(second) != 4 || second[1].Content != user.Content || len(second[2].ToolCalls) != 1 || second[3].Role != schema.Tool ||
		second[3].ToolCallID != "call_1" || second[3].Content != "6.9% APR over 60 months" {
		t.Errorf("second call: %v", second)
	}
	if got := eng.State().Trust["rule-apr"]; got != 0.55 {
		t.Errorf("rule-apr learned trust %v, want 0.55", got)
	}
}

// TestStablePrefix runs a long tool loop on a small history budget: every
// call but those where history is shed in a batch sends the previous
// call's messages, then new ones, and the system message never changes.
// That is what keeps a provider's prompt cache warm through the
// middleware's rewrites. The user's request is the current turn, which
// stays (it is required), so the cap holds it and several exchanges.
func TestStablePrefix(t *testing.T) {
	eng, tpl := engine(t, 400, 200)
	const calls = 16
	m := &fakeModel{reply: func(n int, _ []*schema.Message) *schema.Message {
		if n < calls {
			return call(fmt.Sprintf("call_%d", n), 12*n)
		}
		return schema.AssistantMessage("Done.", nil)
	}}
	if err := run(t, eng, tpl, m, []*schema.Message{schema.UserMessage("Compare the rates for every term.")}); err != nil {
		t.Fatal(err)
	}
	if len(m.inputs) != calls {
		t.Fatalf("%d model calls, want %d", len(m.inputs), calls)
	}
	appends, sheds := 0, 0
	for i := 1; i < calls; i++ {
		prev, cur := m.inputs[i-1], m.inputs[i]
		if cur[0].Content != prev[0].Content {
			t.Fatalf("call %d: the system message changed", i+1)
		}
		// The previous call's reply and the tool's result follow its input.
		if len(cur) >= len(prev) && reflect.DeepEqual(contents(cur[:len(prev)]), contents(prev)) {
			appends++
		} else {
			sheds++
			// A call adds an exchange (two messages): a batch drops two.
			if gone := len(prev) + 2 - len(cur); gone < 4 {
				t.Errorf("call %d dropped %d messages, not a batch of exchanges", i+1, gone)
			}
		}
	}
	if sheds == 0 {
		t.Fatal("the history never outgrew its cap: the test proves nothing")
	}
	if appends < 2*sheds {
		t.Errorf("%d calls appended and %d shed: history is not shed in batches", appends, sheds)
	}
	t.Logf("%d calls appended to the previous input, %d shed a batch", appends, sheds)
}

func contents(msgs []*schema.Message) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = string(m.Role) + ":" + m.Content + ":" + m.ToolCallID
		for _, tc := range m.ToolCalls {
			out[i] += ":" + tc.ID
		}
	}
	return out
}

func TestViolationStopsRun(t *testing.T) {
	eng, tpl := engine(t, 400, 300)
	m := &fakeModel{reply: func(int, []*schema.Message) *schema.Message { return schema.AssistantMessage("Are you married?", nil) }}
	err := run(t, eng, tpl, m, []*schema.Message{schema.UserMessage("Can I get a loan?")})
	if !errors.Is(err, feedback.ErrConstraintViolation) {
		t.Errorf("err %v, want a constraint violation", err)
	}
}

func TestNoSession(t *testing.T) {
	eng, tpl := engine(t, 400, 300)
	mw, err := einoadapter.NewMiddleware(eng, einoadapter.Config{Template: tpl})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	agent, err := adk.NewChatModelAgent(ctx, &adk.ChatModelAgentConfig{Name: "a", Description: "d", Model: &fakeModel{},
		Handlers: []adk.ChatModelAgentMiddleware{mw}})
	if err != nil {
		t.Fatal(err)
	}
	iter := adk.NewRunner(ctx, adk.RunnerConfig{Agent: agent}).Query(ctx, "hi")
	var got error
	for ev, ok := iter.Next(); ok; ev, ok = iter.Next() {
		if ev.Err != nil {
			got = ev.Err
		}
	}
	if got == nil || !strings.Contains(got.Error(), `session value "session_id"`) {
		t.Errorf("err %v", got)
	}
	if _, err := einoadapter.NewMiddleware(eng, einoadapter.Config{}); err == nil {
		t.Error("a Config without a template")
	}
}

// TestMessages maps Eino's messages to chat's and back.
func TestMessages(t *testing.T) {
	msgs := []*schema.Message{
		schema.SystemMessage("Be brief."),
		schema.UserMessage("Rate?"),
		{Role: schema.Assistant, ToolCalls: []schema.ToolCall{{ID: "c1", Function: schema.FunctionCall{Name: "get_rate"}}}, ReasoningContent: "think"},
		schema.ToolMessage("6.9%", "c1"),
	}
	conv, from, err := einoadapter.Conversation(msgs)
	if err != nil {
		t.Fatal(err)
	}
	want := chat.Conversation{System: []chat.SystemPart{{Text: "Be brief."}}, Messages: []chat.Message{
		{Role: chat.RoleUser, Content: "Rate?"},
		{Role: chat.RoleAssistant, ToolCalls: []chat.ToolCall{{ID: "c1", Name: "get_rate", Arguments: "{}"}}},
		{Role: chat.RoleTool, ToolCallID: "c1", Content: "6.9%"},
	}}
	if !reflect.DeepEqual(conv, want) || !reflect.DeepEqual(from, []int{1, 2, 3}) {
		t.Errorf("Conversation = %+v %v", conv, from)
	}
	// The middleware's own system message stands for the texts it replaced.
	eng, tpl := engine(t, 400, 300)
	decls, err := declare.Conversation(conv, declare.ConversationOptions{SessionID: "s9", Prefix: "eino/s9/", Now: time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	if err := eng.ReplacePrefix("eino/s9/", decls...); err != nil {
		t.Fatal(err)
	}
	res, err := eng.Assemble(context.Background(), contextasm.Request{Template: tpl, Now: time.Date(2026, 11, 30, 9, 1, 0, 0, time.UTC), SessionID: "s9", Format: chat.FormatOpenAI})
	if err != nil {
		t.Fatal(err)
	}
	original := map[string]*schema.Message{decls[1].RequestID: msgs[1], decls[2].RequestID: msgs[2]} // not the tool result
	out := einoadapter.Messages(res, []string{"Be brief."}, original)
	if len(out) != 4 || out[1] != msgs[1] || out[2] != msgs[2] || out[3] == msgs[3] || out[3].Content != "6.9%" || out[3].ToolCallID != "c1" {
		t.Errorf("Messages = %v", out)
	}
	back, _, err := einoadapter.Conversation(out)
	if err != nil || !reflect.DeepEqual(back, want) {
		t.Errorf("round trip: %+v, %v", back, err)
	}
	if _, _, err := einoadapter.Conversation([]*schema.Message{{Role: "critic"}}); err == nil {
		t.Error("an unknown role")
	}
}

// TestChatTemplate runs the chat template in a compose chain.
func TestChatTemplate(t *testing.T) {
	eng, tpl := engine(t, 400, 300)
	ct, err := einoadapter.NewChatTemplate(eng, einoadapter.Config{Template: tpl, Clock: clock()})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	chain, err := compose.NewChain[map[string]any, []*schema.Message]().AppendChatTemplate(ct).Compile(ctx)
	if err != nil {
		t.Fatal(err)
	}
	history := []*schema.Message{schema.UserMessage("Rate?"), schema.AssistantMessage("6.9% APR.", nil)}
	out, err := chain.Invoke(ctx, map[string]any{"session_id": "s1", "history": history, "query": "Over 60 months?"})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 4 || out[0].Role != schema.System || out[1] != history[0] || out[2] != history[1] || out[3].Content != "Over 60 months?" {
		t.Fatalf("Format = %v", out)
	}
	fb, err := ct.Feedback(ctx, "s1", schema.AssistantMessage(`<memory_ref id="rule-apr"/> Still 6.9% APR.`, nil))
	if err != nil || len(fb.Refs) != 1 {
		t.Errorf("Feedback = %+v, %v", fb, err)
	}
	if fb, err := ct.Feedback(ctx, "nobody", schema.AssistantMessage("x", nil)); fb != nil || err != nil {
		t.Errorf("Feedback for an unknown session = %+v, %v", fb, err)
	}
	for _, vs := range []map[string]any{{}, {"session_id": "s1", "history": "no"}, {"session_id": "s1", "query": 3}} {
		if _, err := ct.Format(ctx, vs); err == nil {
			t.Errorf("Format(%v): no error", vs)
		}
	}
}
