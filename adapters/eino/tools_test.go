package einoadapter_test

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/cloudwego/eino/schema"

	einoadapter "github.com/contextasm/contextasm/adapters/eino"
	"github.com/contextasm/contextasm/chat"
	"github.com/contextasm/contextasm/contextasm"
	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/template"
)

var declaredTools = []declare.Tool{
	{Name: "get_rate", Description: "Today's car-loan rate.", InputSchema: json.RawMessage(`{"type":"object","properties":{"months":{"type":"integer","description":"The loan's term."}},"required":["months"]}`)},
	{Name: "lookup_customer", Description: "Find a customer by name.", InputSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}}}`)},
	{Name: "send_offer", Description: "Email an offer.", InputSchema: json.RawMessage(`{"type":"object"}`), Roles: []string{"supervisor"}},
}

// schemaJSON returns a tool's parameters as JSON Schema, decoded for
// comparison.
func schemaJSON(t *testing.T, ti *schema.ToolInfo) any {
	t.Helper()
	s, err := ti.ToJSONSchema()
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// checkTools holds Eino's tools to the declared ones the request may
// see: the names in order, descriptions and schemas as declared.
func checkTools(t *testing.T, got []*schema.ToolInfo, want ...string) {
	t.Helper()
	var names []string
	for _, ti := range got {
		names = append(names, ti.Name)
		i := slices.IndexFunc(declaredTools, func(d declare.Tool) bool { return d.Name == ti.Name })
		if i < 0 {
			t.Errorf("tool %s was never declared", ti.Name)
			continue
		}
		var decl any
		if err := json.Unmarshal(declaredTools[i].InputSchema, &decl); err != nil {
			t.Fatal(err)
		}
		if ti.Desc != declaredTools[i].Description || !reflect.DeepEqual(schemaJSON(t, ti), decl) {
			t.Errorf("%s: %q %v, want %q %v", ti.Name, ti.Desc, schemaJSON(t, ti), declaredTools[i].Description, decl)
		}
	}
	if !slices.Equal(names, want) {
		t.Errorf("tools %v, want %v", names, want)
	}
}

// TestMiddlewareTools: with tools declared in the Engine, each model call
// is given the tools the request may see (send_offer needs a role the
// request lacks), converted to Eino's, and the agent still runs the tool
// the model calls.
func TestMiddlewareTools(t *testing.T) {
	eng, tpl := engine(t, 1200, 300)
	if err := eng.DeclareTools(declaredTools...); err != nil {
		t.Fatal(err)
	}
	m := &fakeModel{reply: func(n int, _ []*schema.Message) *schema.Message {
		if n == 1 {
			return call("call_1", 60)
		}
		return schema.AssistantMessage("It is 6.9% APR.", nil)
	}}
	if err := runWith(t, eng, einoadapter.Config{Template: tpl, Clock: clock()}, m, []*schema.Message{schema.UserMessage("Today's car-loan rate?")}); err != nil {
		t.Fatal(err)
	}
	if len(m.tools) != 2 {
		t.Fatalf("%d model calls, want 2", len(m.tools))
	}
	for _, tools := range m.tools {
		checkTools(t, tools, "get_rate", "lookup_customer")
	}
	if last := m.inputs[1][len(m.inputs[1])-1]; last.Role != schema.Tool || !strings.Contains(last.Content, "6.9% APR over 60 months") {
		t.Errorf("the second call's last message %+v, want the tool's result", last)
	}
}

// TestToolsOf: Tools converts a Result's tools; a Result without tools
// gives none; the chat template gives the session's last assembly's.
func TestToolsOf(t *testing.T) {
	eng, tpl := engine(t, 1200, 300)
	ctx := context.Background()
	res, err := eng.Assemble(ctx, contextasm.Request{Template: tpl, Now: clock()(), Format: chat.FormatOpenAI})
	if err != nil {
		t.Fatal(err)
	}
	if tools, err := einoadapter.Tools(res); err != nil || tools != nil {
		t.Errorf("no tools declared: %v, %v", tools, err)
	}
	if err := eng.DeclareTools(declaredTools...); err != nil {
		t.Fatal(err)
	}
	ct, err := einoadapter.NewChatTemplate(eng, einoadapter.Config{Template: tpl, Clock: clock(), Roles: []string{"supervisor"}})
	if err != nil {
		t.Fatal(err)
	}
	if tools, err := ct.Tools("s1"); err != nil || tools != nil {
		t.Errorf("before Format: %v, %v", tools, err)
	}
	if _, err := ct.Format(ctx, map[string]any{"session_id": "s1", "query": "Rate?"}); err != nil {
		t.Fatal(err)
	}
	tools, err := ct.Tools("s1")
	if err != nil {
		t.Fatal(err)
	}
	checkTools(t, tools, "get_rate", "lookup_customer", "send_offer")
}

// toolLoop is a conversation of n tool calls whose results are long, and
// a last question.
func toolLoop(n int) []*schema.Message {
	msgs := []*schema.Message{schema.UserMessage("Compare the rates over every term.")}
	for i := range n {
		id := fmt.Sprintf("call_%d", i+1)
		msgs = append(msgs, call(id, 12*(i+1)),
			schema.ToolMessage(fmt.Sprintf("Term %d months: %s", 12*(i+1), strings.Repeat("rate table row with fees and APR; ", 18)), id))
	}
	return append(msgs, schema.AssistantMessage("Here are the terms.", nil))
}

// TestClearToolResults: Config.ClearToolResults makes the adapter's
// requests clear older tool results (a placeholder in their place) before
// whole turns are dropped; without it, the template's own (none here).
func TestClearToolResults(t *testing.T) {
	ctx := context.Background()
	keep := 1
	for _, clear := range []*template.ClearToolResults{nil, {Keep: &keep}} {
		eng, tpl := engine(t, 600, 400)
		ct, err := einoadapter.NewChatTemplate(eng, einoadapter.Config{Template: tpl, Clock: clock(), ClearToolResults: clear})
		if err != nil {
			t.Fatal(err)
		}
		out, err := ct.Format(ctx, map[string]any{"session_id": "s1", "history": toolLoop(6), "query": "Which is cheapest?"})
		if err != nil {
			t.Fatal(err)
		}
		cleared, whole := 0, 0
		for _, m := range out {
			if m.Role != schema.Tool {
				continue
			}
			if strings.HasPrefix(m.Content, "[tool result cleared: get_rate, call call_") {
				cleared++
			} else {
				whole++
			}
		}
		if on := clear != nil; on != (cleared > 0) || whole == 0 {
			t.Errorf("ClearToolResults %v: %d results cleared, %d whole", on, cleared, whole)
		}
		if out[len(out)-1].Content != "Which is cheapest?" {
			t.Errorf("the question is not last: %+v", out[len(out)-1])
		}
	}
	bad := -1
	if _, err := einoadapter.NewChatTemplate(nil, einoadapter.Config{}); err == nil {
		t.Error("NewChatTemplate without an Engine")
	}
	eng, tpl := engine(t, 600, 400)
	if _, err := einoadapter.NewMiddleware(eng, einoadapter.Config{Template: tpl, ClearToolResults: &template.ClearToolResults{Keep: &bad}}); err == nil {
		t.Error("a negative keep was accepted")
	}
}
