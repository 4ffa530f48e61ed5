package contextasm_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/contextasm/contextasm/chat"
	"github.com/contextasm/contextasm/contextasm"
	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/template"
)

// A conversation with a tool call, assembled for a chat API: history
// blocks become messages, and the call travels with its result.
func ExampleResult_Messages() {
	eng, err := contextasm.New(contextasm.Config{})
	if err != nil {
		log.Fatal(err)
	}
	at := func(min int) *time.Time {
		t := time.Date(2026, 11, 30, 8, min, 0, 0, time.UTC)
		return &t
	}
	err = eng.Declare(
		declare.Declaration{RequestID: "rule", MemoryType: declare.Constraint, Scope: declare.ScopeGlobal, Content: "Quote rates with their APR."},
		declare.Declaration{RequestID: "t1", MemoryType: declare.History, Scope: declare.ScopeSession, SessionID: "s1",
			LastModified: at(1), Content: "Today's car-loan rate?"},
		declare.Declaration{RequestID: "t2", MemoryType: declare.History, Role: declare.RoleAssistant, Scope: declare.ScopeSession, SessionID: "s1",
			LastModified: at(2), ToolCalls: []declare.ToolCall{{ID: "call_1", Name: "get_rate", Arguments: `{"product":"car-loan"}`}}},
		declare.Declaration{RequestID: "t3", MemoryType: declare.History, Role: declare.RoleTool, ToolCallID: "call_1", Scope: declare.ScopeSession, SessionID: "s1",
			LastModified: at(3), Content: "6.9% APR"},
	)
	if err != nil {
		log.Fatal(err)
	}
	tpl, err := template.Parse([]byte(`{"budget": 200, "sections": [
	    {"name": "RULES", "priority": 1, "memory_types": ["constraint"], "max_tokens": 50, "render": "<rule>{content}</rule>"},
	    {"name": "HISTORY", "priority": 2, "memory_types": ["history"], "max_tokens": 120, "render": "{content}"}]}`), "template.json")
	if err != nil {
		log.Fatal(err)
	}
	res, err := eng.Assemble(context.Background(), contextasm.Request{Template: tpl, SessionID: "s1",
		Now: time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC), Format: chat.FormatOpenAI})
	if err != nil {
		log.Fatal(err)
	}
	conv := res.Messages()
	fmt.Printf("system: %q\n", conv.SystemText())
	for _, m := range conv.Messages {
		fmt.Printf("%s %v content=%q calls=%v answers=%q\n", m.Role, m.BlockIDs, m.Content, m.ToolCalls, m.ToolCallID)
	}
	fmt.Println("tokens:", res.TotalTokens, "of", res.Budget) // the messages and their overhead included
	body, err := chat.OpenAI(conv)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s\n", body)
	// Output:
	// system: "[MODEL_CONTEXT_PROTOCOL v1.2 | fp:sha256:232c9632b8d37428]\n<rule>Quote rates with their APR.</rule>\n"
	// user [t1] content="Today's car-loan rate?" calls=[] answers=""
	// assistant [t2] content="" calls=[{call_1 get_rate {"product":"car-loan"}}] answers=""
	// tool [t3] content="6.9% APR" calls=[] answers="call_1"
	// tokens: 80 of 200
	// {"messages":[{"role":"system","content":"[MODEL_CONTEXT_PROTOCOL v1.2 | fp:sha256:232c9632b8d37428]\n<rule>Quote rates with their APR.</rule>\n"},{"role":"user","content":"Today's car-loan rate?"},{"role":"assistant","tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_rate","arguments":"{\"product\":\"car-loan\"}"}}]},{"role":"tool","content":"6.9% APR","tool_call_id":"call_1"}]}
}
