package genkitadapter_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/genkit"

	genkitadapter "github.com/contextasm/contextasm/adapters/genkit"
	"github.com/contextasm/contextasm/contextasm"
	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/template"
)

// A Genkit generation whose model gets the context contextasm assembles
// from the host's rules and the request's messages and documents.
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
	tpl, err := template.Parse([]byte(`{"budget": 400, "sections": [
	    {"name": "RULES", "priority": 1, "memory_types": ["constraint"], "max_tokens": 60, "render": "<rule>{content}</rule>"},
	    {"name": "DOCS", "priority": 2, "memory_types": ["external"], "max_tokens": 100, "render": "<doc>{content}</doc>"},
	    {"name": "HISTORY", "priority": 3, "memory_types": ["history"], "max_tokens": 200, "render": "{content}"}]}`), "template.json")
	if err != nil {
		log.Fatal(err)
	}

	g := genkit.Init(ctx)
	model := genkit.DefineModelAction(g, "example/fake", &ai.ModelOptions{Supports: &ai.ModelSupports{Multiturn: true, SystemRole: true}},
		func(_ context.Context, req *ai.ModelRequest, _ *struct{}, _ ai.ModelStreamCallback) (*ai.ModelResponse, error) {
			for _, m := range req.Messages { // what the model is sent
				fmt.Printf("%s: %s\n", m.Role, m.Text())
			}
			return &ai.ModelResponse{Request: req, Message: ai.NewModelTextMessage("6.9% APR.")}, nil
		})

	mw, err := genkitadapter.New(eng, genkitadapter.Config{Template: tpl, SessionID: "s1",
		Clock: func() time.Time { return time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC) }})
	if err != nil {
		log.Fatal(err)
	}
	resp, err := genkit.Generate(ctx, g, ai.WithModel(model), ai.WithUse(mw),
		ai.WithPrompt("Today's car-loan rate?"), ai.WithDocs(ai.DocumentFromText("Rate sheet: car loans at 6.9% APR.", nil)))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("answer:", resp.Text())
	// Output:
	// system: [MODEL_CONTEXT_PROTOCOL v1.2 | fp:sha256:b65114b680ae7dc6]
	// <rule>Quote rates with their APR.</rule>
	// <doc>Rate sheet: car loans at 6.9% APR.</doc>
	//
	// user: Today's car-loan rate?
	// answer: 6.9% APR.
}
