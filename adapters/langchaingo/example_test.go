package langchaingoadapter_test

import (
	"context"
	"fmt"
	"log"
	"strings"
	"time"

	"github.com/tmc/langchaingo/llms"

	"github.com/tmc/langchaingo/chains"

	langchaingoadapter "github.com/contextasm/contextasm/adapters/langchaingo"
	"github.com/contextasm/contextasm/contextasm"
	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/template"
)

// LangChainGo's conversation chain with a contextasm memory: the prompt's
// history is the assembled context, rules and the conversation's turns.
func Example() {
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
	    {"name": "RULES", "priority": 1, "memory_types": ["constraint"], "max_tokens": 50, "render": "<rule id=\"{request_id}\">{content}</rule>"},
	    {"name": "HISTORY", "priority": 2, "memory_types": ["history"], "max_tokens": 200, "order": "time", "render": "{content}"}]}`), "template.json")
	if err != nil {
		log.Fatal(err)
	}
	now := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	mem, err := langchaingoadapter.New(eng, langchaingoadapter.Config{Template: tpl, SessionID: "s1",
		Clock: func() time.Time { now = now.Add(time.Minute); return now }})
	if err != nil {
		log.Fatal(err)
	}
	llm := &model{answers: []string{`<memory_ref id="rule-apr"/> 6.9% APR.`}} // a fake model recording its prompts
	chain := chains.NewConversation(llm, mem)
	ctx := context.Background()
	for _, q := range []string{"Today's car-loan rate?", "And over 60 months?"} {
		if _, err := chains.Run(ctx, chain, q); err != nil {
			log.Fatal(err)
		}
	}
	fmt.Println(llm.prompts[1])
	fmt.Println("rule-apr trust:", eng.State().Trust["rule-apr"])
	// Output:
	// The following is a friendly conversation between a human and an AI. The AI is talkative and provides lots of specific details from its context. If the AI does not know the answer to a question, it truthfully says it does not know.
	//
	// Current conversation:
	// [MODEL_CONTEXT_PROTOCOL v1.2 | fp:sha256:d62a8e884431f96f]
	// <rule id="rule-apr">Quote rates with their APR.</rule>
	// Human: Today's car-loan rate?
	// AI: <memory_ref id="rule-apr"/> 6.9% APR.
	//
	// Human: And over 60 months?
	// AI:
	// rule-apr trust: 0.6
}

// model is a fake llms.Model: it records each prompt and answers in turn.
type model struct {
	prompts []string
	answers []string
}

func (m *model) GenerateContent(_ context.Context, msgs []llms.MessageContent, _ ...llms.CallOption) (*llms.ContentResponse, error) {
	var b strings.Builder
	for _, msg := range msgs {
		for _, p := range msg.Parts {
			b.WriteString(p.(llms.TextContent).Text)
		}
	}
	m.prompts = append(m.prompts, b.String())
	answer := m.answers[(len(m.prompts)-1)%len(m.answers)]
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: answer}}}, nil
}

func (m *model) Call(ctx context.Context, prompt string, opts ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, m, prompt, opts...)
}
