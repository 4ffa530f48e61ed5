package contextasm_test

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/contextasm/contextasm/chat"
	"github.com/contextasm/contextasm/contextasm"
	"github.com/contextasm/contextasm/contextasm/internal/toolsel"
)

// rawToolsCount is the anthropic-tools count of what res carries, with
// no margin: the tool-use prompt and each definition as the body writes
// it, counted with the template's encoding.
func rawToolsCount(t *testing.T, eng *contextasm.Engine, res *contextasm.Result) int {
	t.Helper()
	n := toolsel.AnthropicToolSystemPrompt
	for _, tl := range res.Messages().Tools {
		tl.CacheBreakpoint = false
		b, err := chat.AnthropicToolJSON(tl)
		if err != nil {
			t.Fatal(err)
		}
		c, _, err := eng.Count(res.Encoding, string(b))
		if err != nil {
			t.Fatal(err)
		}
		n += c
	}
	return n
}

// TestToolsMarginLearned: a provider's usage report of an Anthropic
// request with tools teaches the Engine how far its tools count fell
// short (here the provider counts the tools twice what the Engine did);
// later Anthropic requests count their tools part with that margin, so a
// request like the reported one is within the budget by the provider's
// count; the margin is kept in the usage log (Engine.Usage, Config.Usage)
// and gives the same bodies on another engine; OpenAI's exact rule is
// left as it is.
func TestToolsMarginLearned(t *testing.T) {
	tools, planted := fleet()
	tpl := parseTemplate(t, toolsTemplate)
	eng := toolsEngine(t, contextasm.Config{}, tools)
	req := contextasm.Request{Template: tpl, Now: toolsNow, Format: chat.FormatAnthropic, Query: "refund the invoice payment"}
	first := assemble(t, eng, req)
	openai := req
	openai.Format = chat.FormatOpenAI
	openaiBefore := assemble(t, eng, openai)
	raw := rawToolsCount(t, eng, first)
	if first.Tools.Tokens != raw {
		t.Fatalf("before any report the tools count %d, want the plain count %d", first.Tools.Tokens, raw)
	}
	rest := first.TotalTokens - first.Tools.Tokens
	provider := func(res *contextasm.Result) int { // what the provider counts of res
		return res.TotalTokens - res.Tools.Tokens + 2*rawToolsCount(t, eng, res)
	}
	// A report the rest of the request alone accounts for teaches nothing.
	if err := eng.ReportUsage(first, rest); err != nil {
		t.Fatal(err)
	}
	if len(eng.Usage()) != 0 {
		t.Fatalf("a report within the engine's count learned %v", eng.Usage())
	}
	if _, err := eng.FeedbackResponse(t.Context(), first, contextasm.Response{Text: "Done.", Usage: contextasm.Usage{InputTokens: provider(first)}}); err != nil {
		t.Fatal(err)
	}
	u := eng.Usage()
	if len(u) != 1 {
		t.Fatalf("usage log %v, want one tools margin", u)
	}
	for key, v := range u {
		if !strings.HasPrefix(key, "tools:") || !strings.HasSuffix(key, "o200k_base") || len(v.Ratios) != 1 || math.Abs(v.Ratios[0]-2) > 1e-9 {
			t.Errorf("learned %s: %v, want a ratio of 2", key, v.Ratios)
		}
	}
	later := req
	later.Now = toolsNow.Add(1)
	second := assemble(t, eng, later)
	raw2 := rawToolsCount(t, eng, second)
	if second.Tools.Tokens < 2*raw2 || second.Tools.Tokens > 4000 || len(second.Tools.Kept) >= len(first.Tools.Kept) {
		t.Errorf("after the report: tools %d tokens for %d counted, %d kept (before %d)", second.Tools.Tokens, raw2, len(second.Tools.Kept), len(first.Tools.Kept))
	}
	if p := provider(second); p > second.TotalTokens || second.TotalTokens > tpl.Budget() {
		t.Errorf("the provider would count %d, the engine %d, the budget %d", p, second.TotalTokens, tpl.Budget())
	}
	names := toolNames(second.Tools)
	for _, p := range planted {
		if !slices.Contains(names, p) {
			t.Errorf("%s left out under the margin", p)
		}
	}
	if after := assemble(t, eng, openai); !slices.Equal(toolNames(after.Tools), toolNames(openaiBefore.Tools)) || after.Tools.Tokens != openaiBefore.Tools.Tokens {
		t.Error("a margin learned for Anthropic changed an OpenAI request's tools")
	}
	if err := eng.ReportUsage(openaiBefore, 10_000); !errors.Is(err, contextasm.ErrInvalid) {
		t.Errorf("reporting an exact encoding's OpenAI request: %v, want ErrInvalid", err)
	}
	// Kept across engines, deterministically.
	again := toolsEngine(t, contextasm.Config{Usage: eng.Usage()}, tools)
	body, _ := bodyTools(t, second)
	body2, _ := bodyTools(t, assemble(t, again, later))
	if string(body) != string(body2) {
		t.Error("an engine given the usage log wrote another body")
	}
}

// TestToolsUsageApproximate: an approximate encoding's report of a
// request with tools counts the tools in the text sent, so the tools do
// not make the text's margin as large as if the text were that much
// longer.
func TestToolsUsageApproximate(t *testing.T) {
	tools, _ := fleet()
	tpl := parseTemplate(t, strings.Replace(toolsTemplate, `"o200k_base"`, `"approx:claude"`, 1))
	eng := toolsEngine(t, contextasm.Config{}, tools)
	res := assemble(t, eng, contextasm.Request{Template: tpl, Now: toolsNow, Format: chat.FormatAnthropic, Query: "refund"})
	body, _ := bodyTools(t, res)
	n, _, err := eng.Count("o200k_base", string(body))
	if err != nil {
		t.Fatal(err)
	}
	if err := eng.ReportUsage(res, n*11/10); err != nil {
		t.Fatal(err)
	}
	if r, _ := eng.Usage().Ratio("claude"); r < 1 || r > 2 {
		t.Errorf("the ratio learned from a report of 1.1 times the body's o200k_base count is %.2f", r)
	}
	if _, ok := eng.Usage()["tools:anthropic:approx:claude"]; ok {
		t.Error("an approximate encoding learned a tools margin besides its ratio")
	}
}
