package genkitadapter_test

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/genkit"

	genkitadapter "github.com/contextasm/contextasm/adapters/genkit"
	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/template"
)

var declaredTools = []declare.Tool{
	{Name: "get_rate", Description: "Today's car-loan rate.", InputSchema: json.RawMessage(`{"type":"object","properties":{"months":{"type":"integer","description":"The loan's term."}},"required":["months"]}`)},
	{Name: "lookup_customer", Description: "Find a customer by name.", InputSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}}}`)},
	{Name: "send_offer", Description: "Email an offer.", InputSchema: json.RawMessage(`{"type":"object"}`), Roles: []string{"supervisor"}},
}

// TestGenerateTools: with tools declared in the Engine, each model call
// is given the tools the request may see (send_offer needs a role it
// lacks) as Genkit's tool definitions, schemas as declared, and Genkit
// still runs the tool the model calls.
func TestGenerateTools(t *testing.T) {
	f := setup(t, func(n int, _ *ai.ModelRequest) *ai.ModelResponse {
		if n == 1 {
			return &ai.ModelResponse{Message: &ai.Message{Role: ai.RoleModel, Content: []*ai.Part{
				ai.NewToolRequestPart(&ai.ToolRequest{Name: "get_rate", Ref: "r1", Input: map[string]any{"months": 60}})}}}
		}
		return &ai.ModelResponse{Message: text(ai.RoleModel, "6.9% APR over 60 months.")}
	})
	if err := f.eng.DeclareTools(declaredTools...); err != nil {
		t.Fatal(err)
	}
	mw, err := genkitadapter.New(f.eng, genkitadapter.Config{Template: f.tpl, SessionID: "s1", Clock: clock()})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := genkit.Generate(context.Background(), f.g, ai.WithModel(f.model), ai.WithTools(f.tool), ai.WithUse(mw),
		ai.WithMessages(text(ai.RoleUser, "Rate over 60 months?")))
	if err != nil {
		t.Fatal(err)
	}
	if len(f.fake.requests) != 2 || !strings.Contains(resp.Text(), "6.9% APR") {
		t.Fatalf("%d model calls, response %q", len(f.fake.requests), resp.Text())
	}
	for _, req := range f.fake.requests {
		var names []string
		for _, td := range req.Tools {
			names = append(names, td.Name)
			i := slices.IndexFunc(declaredTools, func(d declare.Tool) bool { return d.Name == td.Name })
			var want map[string]any
			if i < 0 || json.Unmarshal(declaredTools[i].InputSchema, &want) != nil {
				t.Fatalf("tool %s was never declared", td.Name)
			}
			if td.Description != declaredTools[i].Description || !reflect.DeepEqual(td.InputSchema, want) {
				t.Errorf("%s: %q %v, want %q %v", td.Name, td.Description, td.InputSchema, declaredTools[i].Description, want)
			}
		}
		if !slices.Equal(names, []string{"get_rate", "lookup_customer"}) {
			t.Errorf("the model was given %v", names)
		}
	}
	if rest := f.fake.requests[1].Messages; rest[len(rest)-1].Role != ai.RoleTool {
		t.Errorf("the second call does not end with the tool's response: %v", rest[len(rest)-1])
	}
}

// toolLoop is a conversation of n tool calls whose results are long, a
// tool message each, and a last question.
func toolLoop(n int) []*ai.Message {
	msgs := []*ai.Message{text(ai.RoleUser, "Compare the rates over every term.")}
	for i := range n {
		ref := fmt.Sprintf("call_%d", i+1)
		msgs = append(msgs,
			&ai.Message{Role: ai.RoleModel, Content: []*ai.Part{ai.NewToolRequestPart(&ai.ToolRequest{Name: "get_rate", Ref: ref, Input: map[string]any{"months": 12 * (i + 1)}})}},
			&ai.Message{Role: ai.RoleTool, Content: []*ai.Part{ai.NewToolResponsePart(&ai.ToolResponse{Name: "get_rate", Ref: ref,
				Output: fmt.Sprintf("Term %d months: %s", 12*(i+1), strings.Repeat("rate table row with fees and APR; ", 18))})}})
	}
	return append(msgs, text(ai.RoleModel, "Here are the terms."), text(ai.RoleUser, "Which is cheapest?"))
}

// responses returns the outputs of the tool responses a request sent.
func responses(req *ai.ModelRequest) []string {
	var out []string
	for _, m := range req.Messages {
		for _, p := range m.Content {
			if p.IsToolResponse() {
				out = append(out, fmt.Sprint(p.ToolResponse.Output))
			}
		}
	}
	return out
}

// TestToolResults: Config.ClearToolResults makes the middleware's
// requests clear older tool results, and ToolResultMaxTokens clips them,
// and the model is sent the results as the Result wrote them (before, a
// tool message went whole whatever the Result did with it).
func TestToolResults(t *testing.T) {
	keep := 1
	for _, tc := range []struct {
		name string
		cfg  genkitadapter.Config
		want string // what some result sent starts with
	}{
		{"plain", genkitadapter.Config{}, ""},
		{"clear", genkitadapter.Config{ClearToolResults: &template.ClearToolResults{Keep: &keep}}, "[tool result cleared: get_rate, call call_"},
		{"clip", genkitadapter.Config{ToolResultMaxTokens: 10}, "Term "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := setup(t, func(int, *ai.ModelRequest) *ai.ModelResponse {
				return &ai.ModelResponse{Message: text(ai.RoleModel, "The 12-month term.")}
			})
			cfg := tc.cfg
			cfg.Template, cfg.SessionID, cfg.Clock = f.tpl, "s1", clock()
			mw, err := genkitadapter.New(f.eng, cfg)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := genkit.Generate(context.Background(), f.g, ai.WithModel(f.model), ai.WithUse(mw), ai.WithMessages(toolLoop(6)...)); err != nil {
				t.Fatal(err)
			}
			sent := responses(f.fake.requests[0])
			changed := 0
			for _, r := range sent {
				switch {
				case tc.name == "clear" && strings.HasPrefix(r, tc.want):
					changed++
				case tc.name == "clip" && strings.HasPrefix(r, tc.want) && strings.HasSuffix(r, "tokens left out]"):
					changed++
				}
			}
			if len(sent) == 0 || (tc.want != "") != (changed > 0) {
				t.Errorf("%d results sent, %d written as the Result did: %q", len(sent), changed, sent)
			}
		})
	}
	bad := -1
	if _, err := genkitadapter.New(setup(t, nil).eng, genkitadapter.Config{Template: setup(t, nil).tpl, SessionID: "s", ClearToolResults: &template.ClearToolResults{Keep: &bad}}); err == nil {
		t.Error("a negative keep was accepted")
	}
}
