package contextasm_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/contextasm/contextasm/chat"
	"github.com/contextasm/contextasm/contextasm"
	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/internal/chatcheck"
)

const toolsTemplate = `{"budget": 6000, "encoding": "o200k_base",
  "tools": {"max_tokens": 4000},
  "sections": [
    {"name": "RULES", "priority": 1, "memory_types": ["constraint"], "max_tokens": 200, "render": "{content}"},
    {"name": "HISTORY", "priority": 2, "memory_types": ["history"], "max_tokens": 1500, "render": "{content}"}
  ]}`

var toolsNow = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

// fleet returns 200 tools about other things than billing, and the three
// billing tools a refund question needs.
func fleet() (tools []declare.Tool, planted []string) {
	areas := []string{"calendar", "drive", "crm", "tickets", "wiki", "chat", "builds", "metrics"}
	for i := range 200 {
		a := areas[i%len(areas)]
		tools = append(tools, declare.Tool{
			Name:        fmt.Sprintf("%s_op_%03d", a, i),
			Description: fmt.Sprintf("Operation %d on the %s service: reads or changes %s records for the current workspace.", i, a, a),
			InputSchema: json.RawMessage(fmt.Sprintf(`{"type":"object","properties":{"record_id":{"type":"string","description":"The %s record."},"limit":{"type":"integer"}}}`, a)),
		})
	}
	planted = []string{"billing_refund", "billing_invoice_lookup", "billing_payment_void"}
	for i, d := range []string{"Refund a payment to the customer.", "Look up an invoice by its number.", "Void a card payment that has not settled."} {
		tools = append(tools, declare.Tool{Name: planted[i], Description: d, InputSchema: json.RawMessage(`{"type":"object","properties":{"invoice":{"type":"string"}}}`)})
	}
	return tools, planted
}

func toolsEngine(t *testing.T, cfg contextasm.Config, tools []declare.Tool) *contextasm.Engine {
	t.Helper()
	eng := newEngine(t, cfg,
		declare.Declaration{RequestID: "rule", MemoryType: declare.Constraint, Scope: declare.ScopeGlobal, Content: "Answer briefly."},
		declare.Declaration{RequestID: "t1", MemoryType: declare.History, Scope: declare.ScopeSession, SessionID: "s1", LastModified: ptr(toolsNow.Add(-time.Minute)), Content: "My invoice 1043 was charged twice; please refund the payment."},
	)
	if err := eng.DeclareTools(tools...); err != nil {
		t.Fatal(err)
	}
	return eng
}

// bodyTools returns a result's request body and its "tools" array as
// written.
func bodyTools(t *testing.T, res *contextasm.Result) (body []byte, tools json.RawMessage) {
	t.Helper()
	body, err := chat.Encode(res.Format, res.Messages())
	if err != nil {
		t.Fatal(err)
	}
	var b struct {
		Tools json.RawMessage `json:"tools"`
	}
	if err := json.Unmarshal(body, &b); err != nil {
		t.Fatal(err)
	}
	return body, b.Tools
}

// TestToolsUnderCap: 200 declared tools and a 4,000-token cap: the tools
// part counts within the cap by the provider's rule, the whole request
// within the budget, the planted tools are kept, and every tool left out
// has an event.
func TestToolsUnderCap(t *testing.T) {
	tools, planted := fleet()
	eng := toolsEngine(t, contextasm.Config{}, tools)
	tpl := parseTemplate(t, toolsTemplate)
	for _, f := range []chat.Format{chat.FormatOpenAI, chat.FormatAnthropic} {
		t.Run(f.String(), func(t *testing.T) {
			res := assemble(t, eng, contextasm.Request{Template: tpl, Now: toolsNow, SessionID: "s1", Format: f})
			tr := res.Tools
			if tr == nil || tr.Tokens > 4000 || tr.Tokens == 0 || tr.Cap != 4000 {
				t.Fatalf("tools part %+v", tr)
			}
			if res.TotalTokens > tpl.Budget() || res.TotalTokens <= tr.Tokens {
				t.Errorf("total %d tokens with tools %d, budget %d", res.TotalTokens, tr.Tokens, tpl.Budget())
			}
			if want := f == chat.FormatAnthropic; tr.Approximate != want {
				t.Errorf("approximate %v, want %v (%s)", tr.Approximate, want, tr.Method)
			}
			var kept []string
			sum := 0
			for _, k := range tr.Kept {
				kept = append(kept, k.Name)
				sum += k.Tokens
			}
			for _, p := range planted {
				if !slices.Contains(kept, p) {
					t.Errorf("planted %s left out; kept %v", p, kept)
				}
			}
			if fixed := tr.Tokens - sum; fixed != map[chat.Format]int{chat.FormatOpenAI: 12, chat.FormatAnthropic: 346}[f] {
				t.Errorf("fixed cost %d", fixed)
			}
			if len(tr.Kept)+len(tr.LeftOut) != len(tools) || len(tr.LeftOut) == 0 {
				t.Errorf("kept %d, left out %d, of %d", len(tr.Kept), len(tr.LeftOut), len(tools))
			}
			var events []string
			for _, e := range res.Events() {
				if e.Section == "tools" {
					events = append(events, e.RequestID)
					if e.Reason != contextasm.ReasonToolsCap || e.Tokens <= 0 {
						t.Errorf("event %+v", e)
					}
				}
			}
			for _, l := range tr.LeftOut {
				if !slices.Contains(events, l.Name) {
					t.Errorf("left-out %s has no event", l.Name)
				}
			}
			t.Logf("%v: %d of %d tools kept, %d tokens (cap 4000, %s), total %d of %d", f, len(tr.Kept), len(tools), tr.Tokens, tr.Method, res.TotalTokens, tpl.Budget())
			body, arr := bodyTools(t, res)
			check := chatcheck.OpenAI
			if f == chat.FormatAnthropic {
				check = chatcheck.Anthropic
			}
			if err := check(body, chatcheck.Options{}); err != nil {
				t.Error(err)
			}
			var list []json.RawMessage
			if err := json.Unmarshal(arr, &list); err != nil || len(list) != len(tr.Kept) {
				t.Errorf("body has %d tools, kept %d (%v)", len(list), len(tr.Kept), err)
			}
			if f == chat.FormatAnthropic && !bytes.Contains(list[len(list)-1], []byte(`"cache_control":{"type":"ephemeral"}`)) {
				t.Error("the last tool carries no cache breakpoint")
			}
			if !strings.Contains(dumpJSON(t, res), `"tools":{"kept":[`) {
				t.Error("the dump has no tools part")
			}
		})
	}
	t.Run("text", func(t *testing.T) {
		res := assemble(t, eng, contextasm.Request{Template: tpl, Now: toolsNow, SessionID: "s1"})
		if res.Tools != nil || strings.Contains(dumpJSON(t, res), `"tools"`) {
			t.Error("the text format carries tools")
		}
	})
}

// TestToolsArrayStable: the tools array is byte-identical across calls
// whose allowed set did not change, whatever else did (a new turn, a
// later now, tools declared again in another order, a schema written
// with other white space).
func TestToolsArrayStable(t *testing.T) {
	tools := []declare.Tool{
		{Name: "b_tool", Description: "B.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		{Name: "a_tool", Description: "A.", InputSchema: json.RawMessage("{ \"type\": \"object\",\n \"properties\": {\"x\": {\"type\": \"string\"}} }")},
	}
	eng := toolsEngine(t, contextasm.Config{}, tools)
	tpl := parseTemplate(t, toolsTemplate)
	for _, f := range []chat.Format{chat.FormatOpenAI, chat.FormatAnthropic} {
		req := contextasm.Request{Template: tpl, Now: toolsNow, SessionID: "s1", Format: f}
		_, first := bodyTools(t, assemble(t, eng, req))
		if err := eng.Declare(declare.Declaration{RequestID: fmt.Sprintf("t2-%v", f), MemoryType: declare.History, Scope: declare.ScopeSession, SessionID: "s1", LastModified: ptr(toolsNow), Content: "Also, what is the fee?"}); err != nil {
			t.Fatal(err)
		}
		slices.Reverse(tools)
		for i := range tools {
			if tools[i].Name == "a_tool" {
				tools[i].InputSchema = json.RawMessage(`{"type":"object","properties":{"x":{"type":"string"}}}`)
			}
		}
		if err := eng.DeclareTools(tools...); err != nil {
			t.Fatal(err)
		}
		req.Now = toolsNow.Add(time.Hour)
		_, again := bodyTools(t, assemble(t, eng, req))
		if !bytes.Equal(first, again) || len(first) == 0 {
			t.Errorf("%v: the tools array changed:\n%s\n%s", f, first, again)
		}
		if !bytes.HasPrefix(first, []byte(`[{`)) || bytes.Index(first, []byte("a_tool")) > bytes.Index(first, []byte("b_tool")) {
			t.Errorf("%v: tools not in name order: %s", f, first)
		}
		// A change of the allowed set changes it.
		eng.ForgetTools("b_tool")
		_, fewer := bodyTools(t, assemble(t, eng, req))
		if bytes.Equal(first, fewer) {
			t.Errorf("%v: a forgotten tool is still offered", f)
		}
		if err := eng.DeclareTools(tools...); err != nil {
			t.Fatal(err)
		}
	}
}

// TestToolsRoleScope: a tool whose roles the request lacks is absent from
// the body, the events and the dump, and counted; a template's hint role
// keeps destructive tools from a request without it.
func TestToolsRoleScope(t *testing.T) {
	no, yes := false, true
	tools := []declare.Tool{
		{Name: "lookup_rate", InputSchema: json.RawMessage(`{"type":"object"}`), Annotations: declare.ToolAnnotations{ReadOnly: &yes, OpenWorld: &no}},
		{Name: "secret_send_wire", Roles: []string{"treasurer"}, InputSchema: json.RawMessage(`{"type":"object"}`)},
		{Name: "secret_wipe_account", InputSchema: json.RawMessage(`{"type":"object"}`)}, // destructive by MCP's default
	}
	eng := toolsEngine(t, contextasm.Config{}, tools)
	tpl := parseTemplate(t, strings.Replace(toolsTemplate, `"max_tokens": 4000}`, `"max_tokens": 4000, "destructive_role": "admin"}`, 1))
	res := assemble(t, eng, contextasm.Request{Template: tpl, Now: toolsNow, SessionID: "s1", Roles: []string{"viewer"}, Format: chat.FormatOpenAI})
	body, _ := bodyTools(t, res)
	for _, out := range []string{string(body), dumpJSON(t, res)} {
		if strings.Contains(out, "secret_") {
			t.Errorf("a hidden tool is named: %s", out)
		}
	}
	if len(res.Tools.Kept) != 1 || res.Tools.Kept[0].Name != "lookup_rate" {
		t.Errorf("kept %+v", res.Tools.Kept)
	}
	if res.Tools.Hidden["role"] != 1 || res.Tools.Hidden["hint_role"] != 1 {
		t.Errorf("hidden %v", res.Tools.Hidden)
	}
	res = assemble(t, eng, contextasm.Request{Template: tpl, Now: toolsNow, SessionID: "s1", Roles: []string{"treasurer", "admin"}, Format: chat.FormatOpenAI})
	if len(res.Tools.Kept) != 3 {
		t.Errorf("a treasurer and admin gets %+v", res.Tools.Kept)
	}
}

// TestAuthorize: a tool shown to a request is refused at call time once
// the request's roles changed, the refusal naming both halves, logged as
// an audit event; a tool's own roles and the template's hint role both
// refuse; an unknown tool is its own error.
func TestAuthorize(t *testing.T) {
	var audit bytes.Buffer
	tools := []declare.Tool{
		{Name: "send_email", Description: "Send an email.", Roles: []string{"mailbox-owner", "editor"}, InputSchema: json.RawMessage(`{"type":"object"}`)},
		{Name: "browse", Description: "Fetch a web page.", InputSchema: json.RawMessage(`{"type":"object"}`), Annotations: declare.ToolAnnotations{ReadOnly: ptr(true)}},
	}
	eng := toolsEngine(t, contextasm.Config{Audit: slog.New(slog.NewJSONHandler(&audit, nil))}, tools)
	tpl := parseTemplate(t, strings.Replace(toolsTemplate, `"max_tokens": 4000}`, `"max_tokens": 4000, "open_world_role": "web"}`, 1))
	ctx := context.Background()
	req := contextasm.Request{Template: tpl, Now: toolsNow, SessionID: "s1", Roles: []string{"editor", "web"}, Format: chat.FormatAnthropic}
	if res := assemble(t, eng, req); len(res.Tools.Kept) != 2 {
		t.Fatalf("an editor is shown %+v", res.Tools.Kept)
	}
	if err := eng.Authorize(ctx, req, "send_email"); err != nil {
		t.Fatal(err)
	}
	req.Roles = []string{"viewer"} // demoted between the listing and the call
	err := eng.Authorize(ctx, req, "send_email")
	var ref *contextasm.ToolRefusal
	if !errors.As(err, &ref) || !errors.Is(err, contextasm.ErrToolRefused) {
		t.Fatalf("got %v, want a *ToolRefusal", err)
	}
	if !slices.Equal(ref.Roles, []string{"viewer"}) || !slices.Equal(ref.Needs, []string{"mailbox-owner", "editor"}) || ref.Hint != "" {
		t.Errorf("refusal %+v", ref)
	}
	if msg := err.Error(); !strings.Contains(msg, "roles viewer") || !strings.Contains(msg, "mailbox-owner, editor") {
		t.Errorf("the refusal does not name both halves: %s", msg)
	}
	err = eng.Authorize(ctx, req, "browse")
	if !errors.As(err, &ref) || ref.Hint != "open_world" || !slices.Equal(ref.Needs, []string{"web"}) {
		t.Errorf("open-world tool without the template's role: %v", err)
	}
	eng.ForgetTools("browse")
	req.Roles = []string{"web"}
	if err := eng.Authorize(ctx, req, "browse"); !errors.Is(err, contextasm.ErrUnknownTool) {
		t.Errorf("a forgotten tool: %v", err)
	}
	if n := strings.Count(audit.String(), `"kind":"tool_refused"`); n != 3 {
		t.Errorf("%d refusals logged, want 3:\n%s", n, audit.String())
	}
}

// TestToolsRequiredOverCap: required tools that do not fit the cap fail
// the assembly as required blocks do; an untrusted source's required is a
// hint only.
func TestToolsRequiredOverCap(t *testing.T) {
	big := declare.Tool{Name: "big", Description: strings.Repeat("a long description ", 300), Required: true, InputSchema: json.RawMessage(`{"type":"object"}`)}
	tpl := parseTemplate(t, strings.Replace(toolsTemplate, `"max_tokens": 4000}`, `"max_tokens": 300}`, 1))
	eng := toolsEngine(t, contextasm.Config{}, []declare.Tool{big})
	_, err := eng.Assemble(context.Background(), contextasm.Request{Template: tpl, Now: toolsNow, SessionID: "s1", Format: chat.FormatOpenAI})
	if !errors.Is(err, contextasm.ErrBudgetTooSmall) {
		t.Fatalf("got %v, want ErrBudgetTooSmall", err)
	}
	big.Untrusted = true
	if err := eng.DeclareTools(big); err != nil {
		t.Fatal(err)
	}
	res := assemble(t, eng, contextasm.Request{Template: tpl, Now: toolsNow, SessionID: "s1", Format: chat.FormatOpenAI})
	if len(res.Tools.Kept) != 0 || len(res.Tools.LeftOut) != 1 {
		t.Errorf("an untrusted required tool: %+v", res.Tools)
	}
}

func TestDeclareToolsInvalid(t *testing.T) {
	eng := newEngine(t, contextasm.Config{})
	err := eng.DeclareTools(declare.Tool{Name: "ok", InputSchema: json.RawMessage(`{"type":"object"}`)}, declare.Tool{Name: "bad", InputSchema: json.RawMessage(`[]`)})
	if !errors.Is(err, declare.ErrInvalid) || !strings.Contains(err.Error(), `tools["bad"].input_schema`) {
		t.Fatalf("got %v", err)
	}
	if len(eng.Tools()) != 0 {
		t.Error("a refused call declared some tools")
	}
}
