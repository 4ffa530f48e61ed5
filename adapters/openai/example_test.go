package openaiadapter_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"strings"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"

	openaiadapter "github.com/contextasm/contextasm/adapters/openai"
	"github.com/contextasm/contextasm/chat"
	"github.com/contextasm/contextasm/contextasm"
	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/template"
)

// A context assembled for OpenAI becomes the request's messages; the
// completion's citations and usage go back to the Engine.
func Example() {
	ctx := context.Background()
	eng, err := contextasm.New(contextasm.Config{})
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
	res, err := eng.Assemble(ctx, contextasm.Request{Template: tpl, Now: now, SessionID: "s1", Format: chat.FormatOpenAI})
	if err != nil {
		log.Fatal(err)
	}

	params, err := openaiadapter.Params(res, openai.ChatCompletionNewParams{Model: openai.ChatModelGPT5_5}, openaiadapter.Options{})
	if err != nil {
		log.Fatal(err)
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	_ = enc.Encode(params) // the body the SDK sends

	// The model's answer (client.Chat.Completions.New(ctx, params) would return it).
	var completion openai.ChatCompletion
	_ = json.Unmarshal([]byte(`{"choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","refusal":null,
	    "content":"6.9% APR <memory_ref id=\"rule-apr\"/>."}}],"usage":{"prompt_tokens":61,"completion_tokens":9,"total_tokens":70}}`), &completion)
	fb, err := openaiadapter.Feedback(ctx, eng, res, &completion)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("cited %s at the %s; trust %.2f -> %.2f\n", fb.Refs[0].RequestID, fb.Refs[0].Position, fb.TrustChanges[0].From, fb.TrustChanges[0].To)
	// Output:
	// {
	//   "messages": [
	//     {
	//       "content": "[MODEL_CONTEXT_PROTOCOL v1.2 | fp:sha256:263637cff61b6b7b]\n<rule id=\"rule-apr\">Quote rates with their APR.</rule>\n",
	//       "role": "system"
	//     },
	//     {
	//       "content": "Today's car-loan rate?",
	//       "role": "user"
	//     }
	//   ],
	//   "model": "gpt-5.5"
	// }
	// cited rule-apr at the start; trust 0.50 -> 0.55
}

// A context assembled for the Responses API becomes the request's
// instructions and input items; the reasoning item of the turn that made
// the pending call goes back before that call, under an id every API
// takes.
func ExampleResponsesParams() {
	now := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	eng, err := contextasm.New(contextasm.Config{})
	if err != nil {
		log.Fatal(err)
	}
	var rs chat.Reasoning
	if err := json.Unmarshal([]byte(`{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"gAAAA"}`), &rs); err != nil {
		log.Fatal(err)
	}
	turns, err := declare.Conversation(chat.Conversation{Messages: []chat.Message{
		{Role: chat.RoleUser, Content: "Today's car-loan rate?"},
		{Role: chat.RoleAssistant, Reasoning: []chat.Reasoning{rs}, ToolCalls: []chat.ToolCall{{ID: "functions.get_rate:0", Name: "get_rate", Arguments: "{}"}}},
		{Role: chat.RoleTool, ToolCallID: "functions.get_rate:0", Content: "6.9% APR"},
	}}, declare.ConversationOptions{SessionID: "s1", Now: now})
	if err != nil {
		log.Fatal(err)
	}
	if err := eng.Declare(turns...); err != nil {
		log.Fatal(err)
	}
	tpl, err := template.Parse([]byte(`{"budget": 300, "sections": [
	    {"name": "HISTORY", "priority": 1, "memory_types": ["history"], "max_tokens": 200, "render": "{content}"}]}`), "template.json")
	if err != nil {
		log.Fatal(err)
	}
	res, err := eng.Assemble(context.Background(), contextasm.Request{Template: tpl, Now: now, SessionID: "s1", Format: chat.FormatResponses})
	if err != nil {
		log.Fatal(err)
	}

	params, err := openaiadapter.ResponsesParams(res, responses.ResponseNewParams{Model: openai.ChatModelGPT5_5})
	if err != nil {
		log.Fatal(err)
	}
	body, err := json.Marshal(params) // the body the SDK sends
	if err != nil {
		log.Fatal(err)
	}
	var sent struct {
		Input []struct {
			Type   string `json:"type"`
			CallID string `json:"call_id"`
		} `json:"input"`
	}
	if err := json.Unmarshal(body, &sent); err != nil {
		log.Fatal(err)
	}
	for _, item := range sent.Input {
		fmt.Println(strings.TrimSpace(item.Type + " " + item.CallID))
	}
	// Output:
	// message
	// reasoning
	// function_call functions_get_rate_0_e9a5cf7707
	// function_call_output functions_get_rate_0_e9a5cf7707
}
