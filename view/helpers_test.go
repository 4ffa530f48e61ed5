package view

import (
	"flag"
	"os"
	"strings"
	"testing"

	"github.com/contextasm/contextasm/internal/goldenfile"
	"github.com/contextasm/contextasm/outcome"
)

var update = flag.Bool("update", false, "rewrite golden files")

// The command's golden dumps are the real dumps these views are for.
const (
	demoDump         = "../cmd/contextasm/testdata/demo.json"
	multilingualDump = "../cmd/contextasm/testdata/multilingual.json"
)

func loadDump(t *testing.T, path string) *outcome.Dump {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	d, err := ReadDump(f, path)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// golden compares got with testdata/name, or rewrites it under -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	goldenfile.Check(t, name, got, *update)
}

// wideDump is a hand-made dump with everything that strains a layout:
// CJK section names and ids, a 300-character MCP id, control characters
// and a bidi override in ids, every status, exclusions, a source problem
// and a notice about a block no section has.
func wideDump() *outcome.Dump {
	long := "mcp:handbook:file:///srv/" + strings.Repeat("policies/", 30) + "loans.md"
	text := "[MODEL_CONTEXT_PROTOCOL v1.2 | fp:sha256:0123456789abcdef]\n【规则】不得透露身份证号码。【/规则】\nhello"
	off := len("[MODEL_CONTEXT_PROTOCOL v1.2 | fp:sha256:0123456789abcdef]\n")
	rule := "【规则】不得透露身份证号码。【/规则】"
	return &outcome.Dump{
		ProtocolVersion: "1.2", Fingerprint: "sha256:0123456789abcdef", RenderHash: "sha256:" + strings.Repeat("ab", 32),
		Encoding: "o200k_base", Budget: 1000, TotalTokens: 60, Now: "2026-11-30T10:00:00Z",
		Sections: []outcome.SectionResult{
			{Name: "硬性规则", Priority: 1, MaxTokens: 100, UsedTokens: 40, Blocks: []outcome.BlockResult{
				{RequestID: "规则-隐私-身份证号码", MemoryType: "constraint", Tokens: 40, Score: 0.9, Status: outcome.StatusKept, Required: true, Offset: off, Length: len(rule), SourceID: "法规库"},
				{RequestID: long, MemoryType: "constraint", Tokens: 300, Score: 0.5, Status: outcome.StatusDropped, Reason: outcome.ReasonSectionCap, URI: "file:///srv/x"},
			}},
			{Name: "HISTORY_WITH_A_RATHER_LONG_SECTION_NAME_THAT_GOES_ON_AND_ON_PAST_EIGHTY", Priority: 2, MaxTokens: 50, UsedTokens: 10, Blocks: []outcome.BlockResult{
				{RequestID: "turn-\x1b[31mred", MemoryType: "history", Tokens: 10, Score: 0.5, Status: outcome.StatusCut, Reason: outcome.ReasonCut, Offset: len(text) - 5, Length: 5},
				{RequestID: "turn-\u202eevil", MemoryType: "history", Tokens: 0, Score: 0.25, Status: outcome.StatusDropped, Reason: outcome.ReasonBudget},
			}},
			{Name: "EMPTY", Priority: 3, MaxTokens: 10},
		},
		Events: []outcome.Event{
			{Kind: outcome.KindExcluded, RequestID: "过期的规则", Reason: outcome.ReasonExpired},
			{Kind: outcome.KindExcluded, RequestID: "other-session", Reason: outcome.ReasonOutOfScope},
			{Kind: outcome.KindExcluded, RequestID: "another-session", Reason: outcome.ReasonOutOfScope},
			{Kind: outcome.KindNotice, Section: "硬性规则", RequestID: "规则-隐私-身份证号码", Reason: outcome.ReasonStale},
			{Kind: outcome.KindDropped, Section: "硬性规则", RequestID: long, Reason: outcome.ReasonSectionCap, Tokens: 300},
			{Kind: outcome.KindSource, RequestID: "mcp:scanner:file:///scan.pdf", Reason: outcome.ReasonBinary},
			{Kind: outcome.KindNotice, RequestID: "ghost", Reason: outcome.ReasonEscaped},
		},
		Text: text,
	}
}

// queryDump is a hand-made dump of a chat request with a query: a
// history section where relevance counted and lifted one turn past
// another that then did not fit (lost on relevance), a rules section
// where relevance was scored but took no share, and a tools part with
// tools sent, one left out, and hidden ones.
func queryDump() *outcome.Dump {
	blk := func(id string, st outcome.Status, reason outcome.Reason, tokens int, score, rel, points float64) outcome.BlockResult {
		return outcome.BlockResult{RequestID: id, MemoryType: "history", Status: st, Reason: reason, Tokens: tokens, Score: score, Relevance: rel, RelevancePoints: points}
	}
	history := []outcome.BlockResult{
		blk("turn-9-user", outcome.StatusKept, "", 20, 0.7000, 0.6000, 0.3000),
		blk("turn-3-refund", outcome.StatusKept, "", 30, 0.4500, 0.5000, 0.2500),           // 0.2000 without relevance
		blk("turn-8-agent", outcome.StatusDropped, outcome.ReasonBudget, 40, 0.4000, 0, 0), // 0.4000: lost on relevance
		blk("turn-2-user", outcome.StatusDropped, outcome.ReasonBudget, 25, 0.1900, 0.0200, 0.0100),
	}
	outcome.MarkLostOnRelevance(history)
	rule := outcome.BlockResult{RequestID: "rule-refunds", MemoryType: "constraint", Status: outcome.StatusKept, Tokens: 10, Score: 0.8, Relevance: 0.31, Required: true}
	return &outcome.Dump{
		ProtocolVersion: "1.2", Fingerprint: "sha256:00112233445566778899", RenderHash: "sha256:" + strings.Repeat("cd", 32),
		Encoding: "o200k_base", Budget: 200, TotalTokens: 188, Now: "2026-11-30T10:00:00Z",
		Sections: []outcome.SectionResult{
			{Name: "RULES", Priority: 1, MaxTokens: 40, UsedTokens: 10, Blocks: []outcome.BlockResult{rule}},
			{Name: "HISTORY", Priority: 2, MaxTokens: 120, UsedTokens: 50, Blocks: history},
		},
		Events: []outcome.Event{
			{Kind: outcome.KindDropped, Section: "HISTORY", RequestID: "turn-8-agent", Reason: outcome.ReasonBudget, Tokens: 40},
			{Kind: outcome.KindDropped, Section: "HISTORY", RequestID: "turn-2-user", Reason: outcome.ReasonBudget, Tokens: 25},
			{Kind: outcome.KindDropped, Section: "tools", RequestID: "send_email", Reason: "tools_cap", Tokens: 35},
		},
		Query: &outcome.Query{From: outcome.QueryRequest, SHA256: "sha256:" + strings.Repeat("9f", 32), Tokens: 7},
		Tools: &outcome.Tools{
			Kept:    []outcome.ToolKept{{Name: "issue_refund", Source: "mcp:billing", Tokens: 60, Relevance: 0.42}, {Name: "lookup_order", Source: "host", Tokens: 45, Required: true}},
			LeftOut: []outcome.ToolLeftOut{{Name: "send_email", Source: "host", Tokens: 35, Relevance: 0.05, Reason: "tools_cap"}},
			Hidden:  map[string]int{"role": 3},
			Tokens:  108, Cap: 110, Method: "anthropic-tools", Approximate: true,
		},
		Text: "[MODEL_CONTEXT_PROTOCOL v1.2 | fp:sha256:00112233445566778899]\n",
	}
}

// contains reports each of wants that got (the output of what) lacks,
// then got once.
func contains(t *testing.T, what, got string, wants ...string) {
	t.Helper()
	missing := false
	for _, w := range wants {
		if !strings.Contains(got, w) {
			t.Errorf("%s lacks %q", what, w)
			missing = true
		}
	}
	if missing {
		t.Logf("%s:\n%s", what, got)
	}
}
