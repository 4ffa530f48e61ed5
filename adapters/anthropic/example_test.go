package anthropicadapter_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"time"

	"github.com/anthropics/anthropic-sdk-go"

	anthropicadapter "github.com/contextasm/contextasm/adapters/anthropic"
	"github.com/contextasm/contextasm/chat"
	"github.com/contextasm/contextasm/contextasm"
	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/template"
	"github.com/contextasm/contextasm/truncate"
)

// A context assembled for Anthropic becomes the request's system blocks
// and messages; the answer's citations and usage go back to the Engine.
func Example() {
	ctx := context.Background()
	// Breakpoints from the first token, for this small example; real
	// providers cache prefixes from 1,024 tokens, the default.
	eng, err := contextasm.New(contextasm.Config{Stickiness: truncate.Stickiness{MinCachePrefix: 1}})
	if err != nil {
		log.Fatal(err)
	}
	now := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	err = eng.Declare(declare.Declaration{RequestID: "rule-apr", MemoryType: declare.Constraint, Scope: declare.ScopeGlobal,
		Content: "Quote rates with their APR."})
	if err != nil {
		log.Fatal(err)
	}
	turns, err := declare.Conversation(chat.Conversation{Messages: []chat.Message{{Role: chat.RoleUser, Content: "Today's car-loan rate?"}}},
		declare.ConversationOptions{SessionID: "s1", Now: now})
	if err != nil {
		log.Fatal(err)
	}
	if err := eng.ReplacePrefix("s1/", turns...); err != nil {
		log.Fatal(err)
	}
	tpl, err := template.Parse([]byte(`{"budget": 300, "sections": [
	    {"name": "RULES", "priority": 1, "memory_types": ["constraint"], "max_tokens": 50, "render": "<rule id=\"{request_id}\">{content}</rule>"},
	    {"name": "HISTORY", "priority": 2, "memory_types": ["history"], "max_tokens": 200, "render": "{content}"}]}`), "template.json")
	if err != nil {
		log.Fatal(err)
	}
	res, err := eng.Assemble(ctx, contextasm.Request{Template: tpl, Now: now, SessionID: "s1", Format: chat.FormatAnthropic})
	if err != nil {
		log.Fatal(err)
	}

	params, err := anthropicadapter.Params(res, anthropic.MessageNewParams{Model: anthropic.ModelClaudeSonnet5_5, MaxTokens: 512})
	if err != nil {
		log.Fatal(err)
	}
	for _, b := range params.System {
		fmt.Printf("system %q cache_control=%q\n", b.Text, b.CacheControl.Type)
	}
	for _, m := range params.Messages {
		for _, b := range m.Content {
			fmt.Printf("%s %q cache_control=%q\n", m.Role, b.OfText.Text, b.OfText.CacheControl.Type)
		}
	}

	// The model's answer (client.Messages.New(ctx, params) would return it).
	var msg anthropic.Message
	_ = json.Unmarshal([]byte(`{"type":"message","role":"assistant","content":[{"type":"text","text":"6.9% APR <memory_ref id=\"rule-apr\"/>."}],
	    "usage":{"input_tokens":12,"cache_read_input_tokens":0,"cache_creation_input_tokens":52,"output_tokens":9}}`), &msg)
	r := anthropicadapter.Response(res, &msg)
	fmt.Printf("input %d tokens, %d written to the cache\n", r.Usage.InputTokens, r.Usage.CacheWriteTokens)
	fb, err := anthropicadapter.Feedback(ctx, eng, res, &msg)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("cited %s at the %s; trust %.2f -> %.2f\n", fb.Refs[0].RequestID, fb.Refs[0].Position, fb.TrustChanges[0].From, fb.TrustChanges[0].To)
	// Output:
	// system "[MODEL_CONTEXT_PROTOCOL v1.2 | fp:sha256:263637cff61b6b7b]\n<rule id=\"rule-apr\">Quote rates with their APR.</rule>\n" cache_control="ephemeral"
	// user "Today's car-loan rate?" cache_control="ephemeral"
	// input 64 tokens, 52 written to the cache
	// cited rule-apr at the start; trust 0.50 -> 0.55
}
