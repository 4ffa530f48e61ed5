package view

import (
	"testing"

	"github.com/contextasm/contextasm/outcome"
)

// TestReportTools: a chat dump's tools part is in the report: each tool
// sent and left out with its tokens and reason, the hidden ones counted.
func TestReportTools(t *testing.T) {
	d := loadDump(t, demoDump)
	d.Tools = &outcome.Tools{
		Kept:    []outcome.ToolKept{{Name: "get_rate_sheet", Source: "host", Tokens: 50}, {Name: "quote_payment", Source: "mcp:calc", Tokens: 51, Required: true}},
		LeftOut: []outcome.ToolLeftOut{{Name: "send_offer_email", Source: "host", Tokens: 35, Reason: "tools_cap"}},
		Hidden:  map[string]int{"role": 2},
		Tokens:  113, Cap: 120, Method: "openai-functions",
	}
	d.Events = append(d.Events, outcome.Event{Kind: outcome.KindDropped, Section: "tools", RequestID: "send_offer_email", Reason: "tools_cap", Tokens: 35})
	got := report(t, d, ReportOptions{Width: 100})
	contains(t, "the report", got,
		"Tools · 2 sent · 1 left out · 2 hidden · 113 tokens of the budget (cap 120, openai-functions)",
		"sent          50  get_rate_sheet    host",
		"sent          51  quote_payment     mcp:calc · required",
		"left out      35  send_offer_email  tools_cap",
		"hidden    2 tools not named: role",
		"tools_cap",
	)
	golden(t, "tools.report.txt", got)
}
