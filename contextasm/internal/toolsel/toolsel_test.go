package toolsel

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/contextasm/contextasm/chat"
	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/internal/bpe"
	"github.com/contextasm/contextasm/internal/lexical"
	"github.com/contextasm/contextasm/template"
	"github.com/contextasm/contextasm/truncate"
)

func counter(t testing.TB) truncate.Counter {
	t.Helper()
	tok, err := bpe.Load(bpe.O200kBase)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

var nouns = []string{"calendar", "ticket", "weather", "repository", "spreadsheet", "contact", "shipment", "warehouse", "playlist", "recipe"}
var verbs = []string{"list", "create", "update", "delete", "archive", "export", "import", "share", "search", "summarize"}

// manyTools returns 200 tools, about 40 tokens each, none of them about
// invoices or refunds; and three planted ones that are.
func manyTools() (all []declare.Tool, planted []string) {
	for i := range 200 {
		v, n := verbs[i%len(verbs)], nouns[(i/len(verbs))%len(nouns)]
		all = append(all, declare.Tool{
			Name:        fmt.Sprintf("%s_%s_%03d", v, n, i),
			Description: fmt.Sprintf("%s a %s in workspace %d. Use it when the user asks to %s their %s.", v, n, i, v, n),
			InputSchema: json.RawMessage(fmt.Sprintf(`{"type":"object","properties":{"%s_id":{"type":"string","description":"The %s's id."},"dry_run":{"type":"boolean"},"mode":{"type":"string","enum":["fast","safe"]}},"required":["%s_id"]}`, n, n, n)),
		})
	}
	planted = []string{"issue_refund", "lookup_invoice", "void_payment"}
	all = append(all,
		declare.Tool{Name: "issue_refund", Description: "Refund a customer's payment for an invoice.", InputSchema: json.RawMessage(`{"type":"object","properties":{"invoice_id":{"type":"string"},"amount":{"type":"number"}}}`)},
		declare.Tool{Name: "lookup_invoice", Description: "Find an invoice by number or customer.", InputSchema: json.RawMessage(`{"type":"object","properties":{"invoice_number":{"type":"string"}}}`)},
		declare.Tool{Name: "void_payment", Description: "Void a card payment before it settles.", InputSchema: json.RawMessage(`{"type":"object","properties":{"payment_id":{"type":"string"}}}`)},
	)
	return all, planted
}

// openaiRule counts a Chat Completions body's "tools" by the cookbook's
// rule, read from the wire form: an implementation of its own, to hold
// Select's count to.
func openaiRule(t *testing.T, c truncate.Counter, body []byte) int {
	var b struct {
		Tools []struct {
			Function struct {
				Name, Description string
				Parameters        struct {
					Properties map[string]struct {
						Type, Description string
						Enum              []string
					}
				}
			}
		}
	}
	if err := json.Unmarshal(body, &b); err != nil {
		t.Fatal(err)
	}
	if len(b.Tools) == 0 {
		return 0
	}
	n := 12
	for _, tl := range b.Tools {
		f := tl.Function
		n += 7 + c.Count(f.Name+":"+strings.TrimSuffix(f.Description, "."))
		if len(f.Parameters.Properties) > 0 {
			n += 3
			for k, p := range f.Parameters.Properties {
				n += 3
				if p.Enum != nil {
					n -= 3
					for _, e := range p.Enum {
						n += 3 + c.Count(e)
					}
				}
				n += c.Count(k + ":" + p.Type + ":" + strings.TrimSuffix(p.Description, "."))
			}
		}
	}
	return n
}

// body writes the kept tools as the encoder does.
func body(t *testing.T, set *Set, res *Result, f chat.Format) []byte {
	c := chat.Conversation{Messages: []chat.Message{{Role: chat.RoleUser, Content: "hi"}}}
	for _, k := range res.Kept {
		tl := set.Tool(k.Index)
		c.Tools = append(c.Tools, chat.Tool{Name: tl.Name, Description: tl.Description, InputSchema: tl.InputSchema})
	}
	b, err := chat.Encode(f, c)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestSelectUnderCap(t *testing.T) {
	c := counter(t)
	all, planted := manyTools()
	set := NewSet(all)
	part := &template.ToolsDefinition{MaxTokens: 4000, Select: template.SelectRelevance}
	res, err := Select(Input{Set: set, Part: part, Budget: 100_000, Format: chat.FormatOpenAI, Query: lexical.NewQuery("Please refund the payment on invoice 1043"), Counter: c, Encoding: "o200k_base"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Tokens > 4000 || res.Tokens == 0 {
		t.Fatalf("tools part counts %d tokens, cap 4000", res.Tokens)
	}
	if got := openaiRule(t, c, body(t, set, res, chat.FormatOpenAI)); got != res.Tokens {
		t.Errorf("Select counts %d, the rule over the body %d", res.Tokens, got)
	}
	if res.Approximate {
		t.Error("flat schemas in o200k_base are covered by the published rule, but the count says approximate")
	}
	var kept []string
	for _, k := range res.Kept {
		kept = append(kept, set.Tool(k.Index).Name)
	}
	for _, p := range planted {
		if !slices.Contains(kept, p) {
			t.Errorf("planted tool %s left out; kept %v", p, kept)
		}
	}
	if !slices.IsSorted(kept) {
		t.Errorf("kept tools not in name order: %v", kept)
	}
	if len(res.Kept)+len(res.Left) != len(all) || len(res.Left) == 0 {
		t.Errorf("kept %d + left %d, of %d", len(res.Kept), len(res.Left), len(all))
	}
	for _, l := range res.Left {
		if l.Reason != ReasonToolsCap || l.Tokens <= 0 {
			t.Errorf("left out %+v", l)
		}
	}
	// Anthropic: the tool-use system prompt and the definitions as JSON,
	// approximate.
	ares, err := Select(Input{Set: set, Part: part, Budget: 100_000, Format: chat.FormatAnthropic, Query: lexical.NewQuery("refund invoice"), Counter: c, Encoding: "o200k_base"})
	if err != nil {
		t.Fatal(err)
	}
	sum := AnthropicToolSystemPrompt
	for _, k := range ares.Kept {
		sum += c.Count(string(AnthropicTool(set.Tool(k.Index))))
	}
	if ares.Tokens != sum || ares.Tokens > 4000 || !ares.Approximate || ares.Method != "anthropic-tools" {
		t.Errorf("anthropic: %d tokens (sum %d), approximate %v, method %s", ares.Tokens, sum, ares.Approximate, ares.Method)
	}
}

func TestSelectRolesAndRequired(t *testing.T) {
	c := counter(t)
	obj := json.RawMessage(`{"type":"object"}`)
	no := false
	set := NewSet([]declare.Tool{
		{Name: "send_email", Roles: []string{"agent"}, InputSchema: obj, Annotations: declare.ToolAnnotations{Destructive: &no}},
		{Name: "delete_all", InputSchema: obj, Required: true}, // destructive by MCP's default
		{Name: "read_doc", InputSchema: obj, Untrusted: true, Required: true, Annotations: declare.ToolAnnotations{ReadOnly: ptr(true), OpenWorld: &no}},
		{Name: "big", Description: strings.Repeat("word ", 400), InputSchema: obj},
	})
	part := &template.ToolsDefinition{MaxTokens: 200, DestructiveRole: "admin"}
	res, err := Select(Input{Set: set, Roles: []string{"viewer"}, Part: part, Budget: 10_000, Format: chat.FormatOpenAI, Counter: c, Encoding: "o200k_base"})
	if err != nil {
		t.Fatal(err)
	}
	// send_email: role; delete_all and big: destructive by default, the
	// request lacks admin; read_doc: read-only, but untrusted so not
	// required.
	if res.Hidden[ReasonRole] != 1 || res.Hidden[ReasonHintRole] != 2 {
		t.Errorf("hidden %v, want 1 role and 2 hint_role", res.Hidden)
	}
	if len(res.Kept) != 1 || set.Tool(res.Kept[0].Index).Name != "read_doc" || res.Kept[0].Required {
		t.Errorf("kept %+v, want read_doc, not required", res.Kept)
	}
	// An admin sees delete_all, required; big does not fit the cap.
	res, err = Select(Input{Set: set, Roles: []string{"admin"}, Part: part, Budget: 10_000, Format: chat.FormatOpenAI, Counter: c, Encoding: "o200k_base"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Left) != 1 || set.Tool(res.Left[0].Index).Name != "big" {
		t.Errorf("left %+v, want big", res.Left)
	}
	// A required tool over the cap fails the request.
	part.MaxTokens = 20
	_, err = Select(Input{Set: set, Roles: []string{"admin"}, Part: part, Budget: 10_000, Format: chat.FormatOpenAI, Counter: c, Encoding: "o200k_base"})
	if !errors.Is(err, ErrRequiredTooLarge) || !errors.Is(err, truncate.ErrBudgetTooSmall) {
		t.Errorf("required over the cap: got %v", err)
	}
}

func TestAccessNamesBothHalves(t *testing.T) {
	tl := &declare.Tool{Name: "send_email", Roles: []string{"agent", "owner"}}
	if ok, why, needs := Access(tl, []string{"viewer"}, nil); ok || why != ReasonRole || !slices.Equal(needs, []string{"agent", "owner"}) {
		t.Errorf("got %v %v %v", ok, why, needs)
	}
	if ok, _, _ := Access(tl, []string{"owner"}, nil); !ok {
		t.Error("owner refused")
	}
}

// TestSelectStable: the same allowed set gives the same tools whatever the
// declaration order, and a query that does not change the chosen set
// leaves the array byte-identical.
func TestSelectStable(t *testing.T) {
	c := counter(t)
	all, _ := manyTools()
	rev := slices.Clone(all)
	slices.Reverse(rev)
	part := &template.ToolsDefinition{MaxTokens: 100_000}
	var bodies []string
	for i, tools := range [][]declare.Tool{all, rev} {
		set := NewSet(tools)
		q := []string{"refund invoice", "weather calendar"}[i]
		res, err := Select(Input{Set: set, Part: part, Budget: 200_000, Format: chat.FormatAnthropic, Query: lexical.NewQuery(q), Counter: c, Encoding: "o200k_base"})
		if err != nil {
			t.Fatal(err)
		}
		bodies = append(bodies, string(body(t, set, res, chat.FormatAnthropic)))
	}
	if bodies[0] != bodies[1] {
		t.Error("the same set of tools wrote two arrays")
	}
}

func ptr[T any](v T) *T { return &v }

// BenchmarkSelect200 chooses among 203 tools under a 4,000-token cap, by
// relevance; BenchmarkSelect200ByName is the same without a query, the
// baseline for what relevance costs.
func BenchmarkSelect200(b *testing.B) { benchSelect(b, lexical.NewQuery("refund the invoice payment")) }

func BenchmarkSelect200ByName(b *testing.B) { benchSelect(b, nil) }

func benchSelect(b *testing.B, q *lexical.Query) {
	c := counter(b)
	all, _ := manyTools()
	set := NewSet(all)
	in := Input{Set: set, Part: &template.ToolsDefinition{MaxTokens: 4000}, Budget: 100_000, Format: chat.FormatOpenAI, Query: q, Counter: c, Encoding: "o200k_base"}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Select(in); err != nil {
			b.Fatal(err)
		}
	}
}
