package view

import (
	"flag"
	"os"
	"strings"
	"testing"

	"github.com/contextasm/contextasm/contextasm"
	"github.com/contextasm/contextasm/internal/goldenfile"
	"github.com/contextasm/contextasm/truncate"
)

var update = flag.Bool("update", false, "rewrite golden files")

// The command's golden dumps are the real dumps these views are for.
const (
	demoDump         = "../cmd/contextasm/testdata/demo.json"
	multilingualDump = "../cmd/contextasm/testdata/multilingual.json"
)

func loadDump(t *testing.T, path string) *contextasm.Dump {
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
func wideDump() *contextasm.Dump {
	long := "mcp:handbook:file:///srv/" + strings.Repeat("policies/", 30) + "loans.md"
	text := "[MODEL_CONTEXT_PROTOCOL v1.2 | fp:sha256:0123456789abcdef]\n【规则】不得透露身份证号码。【/规则】\nhello"
	off := len("[MODEL_CONTEXT_PROTOCOL v1.2 | fp:sha256:0123456789abcdef]\n")
	rule := "【规则】不得透露身份证号码。【/规则】"
	return &contextasm.Dump{
		ProtocolVersion: "1.2", Fingerprint: "sha256:0123456789abcdef", RenderHash: "sha256:" + strings.Repeat("ab", 32),
		Encoding: "o200k_base", Budget: 1000, TotalTokens: 60, Now: "2026-11-30T10:00:00Z",
		Sections: []contextasm.SectionResult{
			{Name: "硬性规则", Priority: 1, MaxTokens: 100, UsedTokens: 40, Blocks: []contextasm.BlockResult{
				{RequestID: "规则-隐私-身份证号码", MemoryType: "constraint", Tokens: 40, Score: 0.9, Status: truncate.Kept, Required: true, Offset: off, Length: len(rule), SourceID: "法规库"},
				{RequestID: long, MemoryType: "constraint", Tokens: 300, Score: 0.5, Status: truncate.Dropped, Reason: truncate.ReasonSectionCap, URI: "file:///srv/x"},
			}},
			{Name: "HISTORY_WITH_A_RATHER_LONG_SECTION_NAME_THAT_GOES_ON_AND_ON_PAST_EIGHTY", Priority: 2, MaxTokens: 50, UsedTokens: 10, Blocks: []contextasm.BlockResult{
				{RequestID: "turn-\x1b[31mred", MemoryType: "history", Tokens: 10, Score: 0.5, Status: truncate.Cut, Reason: truncate.ReasonCut, Offset: len(text) - 5, Length: 5},
				{RequestID: "turn-\u202eevil", MemoryType: "history", Tokens: 0, Score: 0.25, Status: truncate.Dropped, Reason: truncate.ReasonBudget},
			}},
			{Name: "EMPTY", Priority: 3, MaxTokens: 10},
		},
		Events: []contextasm.Event{
			{Kind: truncate.KindExcluded, RequestID: "过期的规则", Reason: truncate.ReasonExpired},
			{Kind: truncate.KindExcluded, RequestID: "other-session", Reason: truncate.ReasonOutOfScope},
			{Kind: truncate.KindExcluded, RequestID: "another-session", Reason: truncate.ReasonOutOfScope},
			{Kind: truncate.KindNotice, Section: "硬性规则", RequestID: "规则-隐私-身份证号码", Reason: truncate.ReasonStale},
			{Kind: truncate.KindDropped, Section: "硬性规则", RequestID: long, Reason: truncate.ReasonSectionCap, Tokens: 300},
			{Kind: truncate.KindSource, RequestID: "mcp:scanner:file:///scan.pdf", Reason: truncate.ReasonBinary},
			{Kind: truncate.KindNotice, RequestID: "ghost", Reason: truncate.ReasonEscaped},
		},
		Text: text,
	}
}
