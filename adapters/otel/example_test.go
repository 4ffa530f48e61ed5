package oteladapter_test

import (
	"context"
	"fmt"
	"log"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	oteladapter "github.com/contextasm/contextasm/adapters/otel"
	"github.com/contextasm/contextasm/contextasm"
	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/template"
)

// An instrumented Engine traces each assembly and each feedback, linked.
func Example() {
	eng, err := contextasm.New(contextasm.Config{})
	if err != nil {
		log.Fatal(err)
	}
	high := 0.9
	err = eng.Declare(
		declare.Declaration{RequestID: "rule-apr", MemoryType: declare.Constraint, Scope: declare.ScopeGlobal, Content: "Quote rates with their APR."},
		declare.Declaration{RequestID: "fact-rate", MemoryType: declare.Context, Scope: declare.ScopeGlobal, Content: "The car-loan rate is 6.9% APR.", Priority: &high},
		declare.Declaration{RequestID: "fact-old", MemoryType: declare.Context, Scope: declare.ScopeGlobal, Content: "Last year's rate was 7.4% APR."},
	)
	if err != nil {
		log.Fatal(err)
	}
	tpl, err := template.Parse([]byte(`{"budget": 100, "sections": [
	    {"name": "RULES", "priority": 1, "memory_types": ["constraint"], "max_tokens": 30, "render": "<rule>{content}</rule>"},
	    {"name": "FACTS", "priority": 2, "memory_types": ["context"], "max_tokens": 20, "render": "<fact>{content}</fact>"}]}`), "template.json")
	if err != nil {
		log.Fatal(err)
	}

	spans := tracetest.NewSpanRecorder() // a host gives its exporter's provider
	tel, err := oteladapter.New(eng, oteladapter.Config{TracerProvider: sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))})
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	res, err := tel.Assemble(ctx, contextasm.Request{Template: tpl, Now: time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC), SessionID: "s1"})
	if err != nil {
		log.Fatal(err)
	}
	if _, err := tel.Feedback(ctx, res, `6.9% APR <memory_ref id="fact-rate"/>`); err != nil {
		log.Fatal(err)
	}

	for _, s := range spans.Ended() {
		fmt.Println(s.Name(), "links:", len(s.Links()))
		for _, kv := range s.Attributes() {
			switch kv.Key {
			case "gen_ai.operation.name", "gen_ai.conversation.id", "contextasm.used_tokens", "contextasm.blocks.dropped", "contextasm.refs":
				fmt.Printf("  %s=%s\n", kv.Key, kv.Value.String())
			}
		}
		for _, ev := range s.Events() {
			fmt.Println("  event", ev.Name)
		}
	}
	// Output:
	// assemble_context links: 0
	//   gen_ai.operation.name=assemble_context
	//   gen_ai.conversation.id=s1
	//   contextasm.used_tokens=52
	//   contextasm.blocks.dropped=1
	//   event contextasm.dropped
	// contextasm.feedback links: 1
	//   contextasm.refs=1
}
