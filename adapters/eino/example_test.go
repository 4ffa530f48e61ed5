package einoadapter_test

import (
	"context"
	"fmt"
	"log"
	"sync"
	"time"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/schema"

	einoadapter "github.com/contextasm/contextasm/adapters/eino"
	"github.com/contextasm/contextasm/contextasm"
	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/template"
)

// A ChatModelAgent whose model sees the context contextasm assembles: the
// agent's instruction and the host's rules in one system message, then the
// conversation.
func Example() {
	ctx := context.Background()
	eng, err := contextasm.New(contextasm.Config{})
	if err != nil {
		log.Fatal(err)
	}
	err = eng.Declare(declare.Declaration{RequestID: "rule-apr", MemoryType: declare.Constraint, Scope: declare.ScopeGlobal,
		Content: "Quote rates with their APR."})
	if err != nil {
		log.Fatal(err)
	}
	tpl, err := template.Parse([]byte(`{"budget": 300, "sections": [
	    {"name": "RULES", "priority": 1, "memory_types": ["constraint"], "max_tokens": 60, "render": "<rule>{content}</rule>"},
	    {"name": "HISTORY", "priority": 2, "memory_types": ["history"], "max_tokens": 200, "render": "{content}"}]}`), "template.json")
	if err != nil {
		log.Fatal(err)
	}
	mw, err := einoadapter.NewMiddleware(eng, einoadapter.Config{Template: tpl,
		Clock: func() time.Time { return time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC) }})
	if err != nil {
		log.Fatal(err)
	}
	m := &fakeModel{reply: func(int, []*schema.Message) *schema.Message { // a fake model recording its inputs
		return schema.AssistantMessage("6.9% APR.", nil)
	}}
	agent, err := adk.NewChatModelAgent(ctx, &adk.ChatModelAgentConfig{Name: "loans", Description: "loan questions",
		Instruction: "You are a loan agent.", Model: m, Handlers: []adk.ChatModelAgentMiddleware{mw}})
	if err != nil {
		log.Fatal(err)
	}
	iter := adk.NewRunner(ctx, adk.RunnerConfig{Agent: agent}).Query(ctx, "Today's car-loan rate?",
		adk.WithSessionValues(map[string]any{"session_id": "s1"}))
	for ev, ok := iter.Next(); ok; ev, ok = iter.Next() {
		if ev.Err != nil {
			log.Fatal(ev.Err)
		}
	}
	for _, msg := range m.inputs[0] {
		fmt.Printf("%s: %s\n", msg.Role, msg.Content)
	}
	// Output:
	// system: [MODEL_CONTEXT_PROTOCOL v1.2 | fp:sha256:cc32c653d70c060a]
	// <rule>You are a loan agent.</rule>
	// <rule>Quote rates with their APR.</rule>
	//
	// user: Today's car-loan rate?
}

// fakeModel is a model.ToolCallingChatModel that records its inputs and
// tools and answers with reply(call number, input).
type fakeModel struct {
	mu     sync.Mutex
	inputs [][]*schema.Message
	tools  [][]*schema.ToolInfo // the tools each call was given (model.WithTools)
	reply  func(n int, input []*schema.Message) *schema.Message
}

func (m *fakeModel) Generate(_ context.Context, input []*schema.Message, opts ...model.Option) (*schema.Message, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.inputs = append(m.inputs, input)
	m.tools = append(m.tools, model.GetCommonOptions(nil, opts...).Tools)
	return m.reply(len(m.inputs), input), nil
}

func (m *fakeModel) Stream(ctx context.Context, input []*schema.Message, opts ...model.Option) (*schema.StreamReader[*schema.Message], error) {
	msg, err := m.Generate(ctx, input, opts...)
	if err != nil {
		return nil, err
	}
	return schema.StreamReaderFromArray([]*schema.Message{msg}), nil
}

func (m *fakeModel) WithTools([]*schema.ToolInfo) (model.ToolCallingChatModel, error) { return m, nil }
