package langchaingoadapter_test

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/memory"

	langchaingoadapter "github.com/contextasm/contextasm/adapters/langchaingo"
	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/template"
)

const loopTplSrc = `{"budget": 700, "sections": [
    {"name": "RULES", "priority": 1, "memory_types": ["constraint"], "max_tokens": 60, "render": "<rule id=\"{request_id}\">{content}</rule>"},
    {"name": "HISTORY", "priority": 2, "memory_types": ["history"], "max_tokens": 300, "render": "{content}"}]}`

var declaredTools = []declare.Tool{
	{Name: "get_rate", Description: "Today's car-loan rate.", InputSchema: json.RawMessage(`{"type":"object","properties":{"months":{"type":"integer","description":"The loan's term."}},"required":["months"]}`)},
	{Name: "lookup_customer", Description: "Find a customer by name.", InputSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}}}`)},
	{Name: "send_offer", Description: "Email an offer.", InputSchema: json.RawMessage(`{"type":"object"}`), Roles: []string{"supervisor"}},
}

// toolHistory is a chat history of n tool calls with long results.
func toolHistory(t *testing.T, n int) *memory.ChatMessageHistory {
	t.Helper()
	ctx := context.Background()
	h := memory.NewChatMessageHistory()
	add := func(m llms.ChatMessage) {
		if err := h.AddMessage(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	add(llms.HumanChatMessage{Content: "Compare the rates over every term."})
	for i := range n {
		id := fmt.Sprintf("call_%d", i+1)
		add(llms.AIChatMessage{ToolCalls: []llms.ToolCall{{ID: id, Type: "function", FunctionCall: &llms.FunctionCall{Name: "get_rate", Arguments: fmt.Sprintf(`{"months":%d}`, 12*(i+1))}}}})
		add(llms.ToolChatMessage{ID: id, Content: fmt.Sprintf("Term %d months: %s", 12*(i+1), strings.Repeat("rate table row with fees and APR; ", 18))})
	}
	add(llms.HumanChatMessage{Content: "Which is cheapest?"})
	return h
}

// TestMemoryTools: with tools declared in the Engine and ReturnMessages,
// Memory.Tools gives the tools the last assembly carried (send_offer
// needs a role the memory lacks) as LangChainGo's, until SaveContext; the
// text format carries none.
func TestMemoryTools(t *testing.T) {
	eng, tpl := setup(t)
	if err := eng.DeclareTools(declaredTools...); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, chatFormat := range []bool{true, false} {
		mem, err := langchaingoadapter.New(eng, langchaingoadapter.Config{Template: tpl, SessionID: "s1", Clock: clock(), ReturnMessages: chatFormat})
		if err != nil {
			t.Fatal(err)
		}
		if tools, err := mem.Tools(); tools != nil || err != nil {
			t.Errorf("before a load: %v, %v", tools, err)
		}
		if _, err := mem.LoadMemoryVariables(ctx, nil); err != nil {
			t.Fatal(err)
		}
		tools, err := mem.Tools()
		if err != nil {
			t.Fatal(err)
		}
		if !chatFormat {
			if tools != nil {
				t.Errorf("the text format carries tools: %v", tools)
			}
			continue
		}
		var names []string
		for _, tl := range tools {
			names = append(names, tl.Function.Name)
			i := slices.IndexFunc(declaredTools, func(d declare.Tool) bool { return d.Name == tl.Function.Name })
			var want map[string]any
			if i < 0 || json.Unmarshal(declaredTools[i].InputSchema, &want) != nil {
				t.Fatalf("tool %s was never declared", tl.Function.Name)
			}
			if tl.Type != "function" || tl.Function.Description != declaredTools[i].Description || !reflect.DeepEqual(tl.Function.Parameters, want) {
				t.Errorf("%s: %+v, want %q %v", tl.Function.Name, tl.Function, declaredTools[i].Description, want)
			}
		}
		if !slices.Equal(names, []string{"get_rate", "lookup_customer"}) {
			t.Errorf("tools %v", names)
		}
		if err := mem.SaveContext(ctx, map[string]any{"input": "Rate?"}, map[string]any{"output": "6.9% APR."}); err != nil {
			t.Fatal(err)
		}
		if tools, _ := mem.Tools(); tools != nil {
			t.Error("tools after SaveContext")
		}
	}
}

// TestClearToolResults: Config.ClearToolResults makes the memory's
// requests clear older tool results before whole turns are dropped.
func TestClearToolResults(t *testing.T) {
	eng, _ := setup(t)
	tpl, err := template.Parse([]byte(loopTplSrc), "template.json")
	if err != nil {
		t.Fatal(err)
	}
	keep := 1
	for _, clear := range []*template.ClearToolResults{nil, {Keep: &keep}} {
		mem, err := langchaingoadapter.New(eng, langchaingoadapter.Config{Template: tpl, SessionID: "s1", Clock: clock(), ReturnMessages: true,
			History: toolHistory(t, 6), ClearToolResults: clear})
		if err != nil {
			t.Fatal(err)
		}
		vars, err := mem.LoadMemoryVariables(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		cleared, whole := 0, 0
		for _, m := range vars["history"].([]llms.ChatMessage) {
			if tm, ok := m.(llms.ToolChatMessage); ok {
				if strings.HasPrefix(tm.Content, "[tool result cleared: get_rate, call call_") {
					cleared++
				} else {
					whole++
				}
			}
		}
		if on := clear != nil; on != (cleared > 0) || whole == 0 {
			t.Errorf("ClearToolResults %v: %d results cleared, %d whole", on, cleared, whole)
		}
	}
	bad := -1
	if _, err := langchaingoadapter.New(eng, langchaingoadapter.Config{Template: tpl, SessionID: "s", ClearToolResults: &template.ClearToolResults{Keep: &bad}}); err == nil {
		t.Error("a negative keep was accepted")
	}
}
