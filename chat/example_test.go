package chat_test

import (
	"encoding/json"
	"fmt"

	"github.com/contextasm/contextasm/chat"
)

// A conversation with a tool call, as both APIs' request bodies. The host
// adds "model" and its other parameters, and sends the body.
func Example() {
	conv := chat.Conversation{
		System: []chat.SystemPart{{Text: "You quote rates with their APR.", CacheBreakpoint: true}},
		Messages: []chat.Message{
			{Role: chat.RoleUser, Content: "Today's car-loan rate?"},
			{Role: chat.RoleAssistant, ToolCalls: []chat.ToolCall{{ID: "call_1", Name: "get_rate", Arguments: `{"product":"car-loan"}`}}},
			{Role: chat.RoleTool, ToolCallID: "call_1", Content: "6.9% APR"},
		},
	}
	openai, err := chat.OpenAI(conv)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s\n", openai)
	anthropic, err := chat.Anthropic(conv)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s\n", anthropic)
	// Output:
	// {"messages":[{"role":"system","content":"You quote rates with their APR."},{"role":"user","content":"Today's car-loan rate?"},{"role":"assistant","tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_rate","arguments":"{\"product\":\"car-loan\"}"}}]},{"role":"tool","content":"6.9% APR","tool_call_id":"call_1"}]}
	// {"system":[{"type":"text","text":"You quote rates with their APR.","cache_control":{"type":"ephemeral"}}],"messages":[{"role":"user","content":[{"type":"text","text":"Today's car-loan rate?"}]},{"role":"assistant","content":[{"type":"tool_use","id":"call_1","name":"get_rate","input":{"product":"car-loan"}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"call_1","content":"6.9% APR"}]}]}
}

// A tool result without its call is refused, not sent to be rejected by
// the API.
func ExampleConversation_Check() {
	conv := chat.Conversation{Messages: []chat.Message{
		{Role: chat.RoleUser, Content: "Today's rate?"},
		{Role: chat.RoleTool, ToolCallID: "call_1", Content: "6.9% APR"},
	}}
	fmt.Println(conv.Check(chat.FormatOpenAI))
	// Output:
	// chat: openai: messages[1]: tool result for call "call_1" does not follow the assistant message that makes it
}

// The same conversation as a Responses API body, its call made by a turn
// with a reasoning item, under an id as Kimi emits it: written as an id
// every API takes, the same for the call and its output.
func ExampleResponses() {
	var rs chat.Reasoning
	if err := json.Unmarshal([]byte(`{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"gAAAA"}`), &rs); err != nil {
		fmt.Println(err)
		return
	}
	conv := chat.Conversation{
		System: []chat.SystemPart{{Text: "You quote rates with their APR."}},
		Messages: []chat.Message{
			{Role: chat.RoleUser, Content: "Today's car-loan rate?"},
			{Role: chat.RoleAssistant, Reasoning: []chat.Reasoning{rs}, ToolCalls: []chat.ToolCall{{ID: "functions.get_rate:0", Name: "get_rate", Arguments: `{"product":"car-loan"}`}}},
			{Role: chat.RoleTool, ToolCallID: "functions.get_rate:0", Content: "6.9% APR"},
		},
	}
	body, err := chat.Responses(conv)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s\n", body)
	// Output:
	// {"instructions":"You quote rates with their APR.","input":[{"type":"message","role":"user","content":"Today's car-loan rate?"},{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"gAAAA"},{"type":"function_call","call_id":"functions_get_rate_0_e9a5cf7707","name":"get_rate","arguments":"{\"product\":\"car-loan\"}"},{"type":"function_call_output","call_id":"functions_get_rate_0_e9a5cf7707","output":"6.9% APR"}]}
}
