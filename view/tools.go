package view

import (
	"fmt"
	"maps"
	"slices"

	"github.com/contextasm/contextasm/outcome"
)

// The tools part of a chat request's dump (docs/tools.md), in the report.

// reasonToolsCap is the reason of a tool left out for the tools cap.
const reasonToolsCap outcome.Reason = "tools_cap"

func init() {
	reasonHelp[reasonToolsCap] = "a tool that did not fit the template's tools cap: others were more relevant to the query, or came first by name"
}

// tools: the tools sent, those left out with their reasons, and how many
// the request's roles may not see, counted and never named.
func (r *reportWriter) tools() {
	tp, t := r.d.Tools, r.t
	if tp == nil {
		return
	}
	approx := ""
	if tp.Approximate {
		approx = ", approximate"
	}
	hidden := 0
	for _, n := range tp.Hidden {
		hidden += n
	}
	t.blank()
	t.add(sgrBold, "Tools").add(sgrDim, fmt.Sprintf(" · %d sent · %d left out · %d hidden · %s of the budget (cap %d, %s%s)",
		len(tp.Kept), len(tp.LeftOut), hidden, plural(tp.Tokens, "token"), tp.Cap, clean(tp.Method), approx)).end()
	t.add("", "  ").bar(sgrCyan, tp.Tokens, tp.Cap, max(t.width-2, 10)).end()
	width := 4
	for _, k := range tp.Kept {
		width = max(width, len(k.Name))
	}
	for _, l := range tp.LeftOut {
		width = max(width, len(l.Name))
	}
	width = min(width, 40)
	for _, k := range tp.Kept {
		why := clean(k.Source)
		if k.Required {
			why += " · required"
		}
		t.add(statusColor[statusKept], "  "+pad("sent", 8)).add("", "  "+padLeft(tokensText(k.Tokens), 6)+"  "+pad(ellipsis(clean(k.Name), width), width)+"  ").add(sgrDim, why).end()
	}
	for _, l := range tp.LeftOut {
		t.add(statusColor[statusDropped], "  "+pad("left out", 8)).add("", "  "+padLeft(tokensText(l.Tokens), 6)+"  "+pad(ellipsis(clean(l.Name), width), width)+"  ").add(statusColor[statusDropped], clean(l.Reason)).end()
	}
	for _, reason := range slices.Sorted(maps.Keys(tp.Hidden)) {
		t.add(sgrDim, fmt.Sprintf("  hidden    %s not named: %s (the request's roles lack what they need)", plural(tp.Hidden[reason], "tool"), clean(reason))).end()
	}
}
