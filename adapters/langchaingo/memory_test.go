package langchaingoadapter_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/tmc/langchaingo/chains"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/memory"

	langchaingoadapter "github.com/contextasm/contextasm/adapters/langchaingo"
	"github.com/contextasm/contextasm/chat"
	"github.com/contextasm/contextasm/contextasm"
	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/feedback"
	"github.com/contextasm/contextasm/template"
)

const tplSrc = `{"budget": 160, "sections": [
    {"name": "RULES", "priority": 1, "memory_types": ["constraint"], "max_tokens": 60, "render": "<rule id=\"{request_id}\">{content}</rule>"},
    {"name": "HISTORY", "priority": 2, "memory_types": ["history"], "max_tokens": 100, "order": "time", "render": "{content}"}]}`

func setup(t *testing.T) (*contextasm.Engine, *template.Template) {
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
	tpl, err := template.Parse([]byte(tplSrc), "template.json")
	if err != nil {
		t.Fatal(err)
	}
	return eng, tpl
}

// clock returns a clock a minute later at each call.
func clock() func() time.Time {
	t := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	return func() time.Time { t = t.Add(time.Minute); return t }
}

// TestConversationChain runs LangChainGo's conversation chain with the
// memory: every prompt holds the rules and the newest turns, within the
// budget, and the answers' citations teach the Engine.
func TestConversationChain(t *testing.T) {
	eng, tpl := setup(t)
	mem, err := langchaingoadapter.New(eng, langchaingoadapter.Config{Template: tpl, SessionID: "s1", Clock: clock()})
	if err != nil {
		t.Fatal(err)
	}
	llm := &model{answers: []string{`<memory_ref id="rule-apr"/> The rate is 6.9% APR, as the rule says.`, "Anything else?"}}
	chain := chains.NewConversation(llm, mem)
	ctx := context.Background()
	for i := range 12 {
		if _, err := chains.Run(ctx, chain, fmt.Sprintf("Question number %d about the car loan?", i)); err != nil {
			t.Fatal(err)
		}
	}
	history, _ := mem.LoadMemoryVariables(ctx, nil)
	text := history["history"].(string)
	if !strings.HasPrefix(text, "[MODEL_CONTEXT_PROTOCOL") || !strings.Contains(text, "Quote rates with their APR.") {
		t.Errorf("the memory is not the assembled context:\n%s", text)
	}
	if !strings.Contains(text, "Human: Question number 11 about") || !strings.Contains(text, "AI: Anything else?") {
		t.Errorf("the newest turns are missing:\n%s", text)
	}
	if i, j := strings.Index(text, "Question number 11 "), strings.LastIndex(text, "AI: Anything else?"); i < 0 || j < i {
		t.Errorf("the turns are not in time order:\n%s", text)
	}
	if strings.Contains(text, "Question number 0 ") {
		t.Errorf("the oldest turn survived a budget it does not fit:\n%s", text)
	}
	last := llm.prompts[len(llm.prompts)-1]
	if !strings.Contains(last, "Human: Question number 10 about") || !strings.HasSuffix(last, "Human: Question number 11 about the car loan?\nAI:") {
		t.Errorf("last prompt:\n%s", last)
	}
	// Six answers cited rule-apr in their first third.
	if got := eng.State().Trust["rule-apr"]; got < 0.79 || got > 0.81 {
		t.Errorf("rule-apr learned trust %v, want 0.8", got)
	}
}

// TestReturnMessages checks the chat form: messages with roles, tool
// calls and results, after the system prompt, round trip.
func TestReturnMessages(t *testing.T) {
	eng, tpl := setup(t)
	history := memory.NewChatMessageHistory()
	msgs := []llms.ChatMessage{
		llms.HumanChatMessage{Content: "What is the car-loan rate?"},
		llms.AIChatMessage{ToolCalls: []llms.ToolCall{{ID: "call_1", Type: "function", FunctionCall: &llms.FunctionCall{Name: "get_rate", Arguments: `{"product":"car-loan"}`}}}},
		llms.ToolChatMessage{ID: "call_1", Content: "6.9% APR"},
		llms.AIChatMessage{Content: "6.9% APR."},
	}
	ctx := context.Background()
	if err := history.SetMessages(ctx, msgs); err != nil {
		t.Fatal(err)
	}
	mem, err := langchaingoadapter.New(eng, langchaingoadapter.Config{Template: tpl, SessionID: "s1", History: history, ReturnMessages: true, MemoryKey: "chat", Clock: clock()})
	if err != nil {
		t.Fatal(err)
	}
	vars, err := mem.LoadMemoryVariables(ctx, map[string]any{"input": "And over 60 months?"})
	if err != nil {
		t.Fatal(err)
	}
	got := vars["chat"].([]llms.ChatMessage)
	sys, ok := got[0].(llms.SystemChatMessage)
	if !ok || !strings.Contains(sys.Content, "<rule id=\"rule-apr\">") {
		t.Fatalf("first message %#v", got[0])
	}
	if !reflect.DeepEqual(got[1:], msgs) {
		t.Errorf("messages\n%#v\nwant\n%#v", got[1:], msgs)
	}
	if mem.GetMemoryKey(ctx) != "chat" || !reflect.DeepEqual(mem.MemoryVariables(ctx), []string{"chat"}) {
		t.Error("memory key")
	}
}

func TestClear(t *testing.T) {
	eng, tpl := setup(t)
	mem, err := langchaingoadapter.New(eng, langchaingoadapter.Config{Template: tpl, SessionID: "s1", Clock: clock()})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	base := eng.Len()
	if _, err := mem.LoadMemoryVariables(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if err := mem.SaveContext(ctx, map[string]any{"input": "Hi"}, map[string]any{"text": "Hello"}); err != nil {
		t.Fatal(err)
	}
	if _, err := mem.LoadMemoryVariables(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if eng.Len() != base+2 {
		t.Fatalf("%d blocks, want %d", eng.Len(), base+2)
	}
	if err := mem.Clear(ctx); err != nil {
		t.Fatal(err)
	}
	if eng.Len() != base {
		t.Errorf("%d blocks after Clear, want %d", eng.Len(), base)
	}
	vars, err := mem.LoadMemoryVariables(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(vars["history"].(string), "Hello") {
		t.Error("a cleared turn is still in the context")
	}
}

func TestViolation(t *testing.T) {
	eng, tpl := setup(t)
	mem, err := langchaingoadapter.New(eng, langchaingoadapter.Config{Template: tpl, SessionID: "s1", Clock: clock()})
	if err != nil {
		t.Fatal(err)
	}
	chain := chains.NewConversation(&model{answers: []string{"Are you married?"}}, mem)
	_, err = chains.Run(context.Background(), chain, "Can I get a loan?")
	var ve *feedback.ViolationError
	if !errors.As(err, &ve) || ve.Violations[0].RequestID != "rule-ecoa" {
		t.Errorf("err %v, want a violation of rule-ecoa", err)
	}
}

func TestUnsupported(t *testing.T) {
	eng, tpl := setup(t)
	history := memory.NewChatMessageHistory()
	ctx := context.Background()
	_ = history.AddMessage(ctx, llms.FunctionChatMessage{Name: "f", Content: "x"})
	mem, err := langchaingoadapter.New(eng, langchaingoadapter.Config{Template: tpl, SessionID: "s1", History: history})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := mem.LoadMemoryVariables(ctx, nil); err == nil || !strings.Contains(err.Error(), "message 0: function messages") {
		t.Errorf("err %v", err)
	}
	for _, cfg := range []langchaingoadapter.Config{{SessionID: "s"}, {Template: tpl}} {
		if _, err := langchaingoadapter.New(eng, cfg); err == nil {
			t.Errorf("New(%+v): no error", cfg)
		}
	}
	if got := langchaingoadapter.ChatMessages(chat.Conversation{}); len(got) != 0 {
		t.Errorf("empty conversation: %v", got)
	}
}
