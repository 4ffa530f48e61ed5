package view

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/contextasm/contextasm/outcome"
)

// The tools part of a chat request's dump (docs/tools.md), in the report
// and on the page.

// reasonToolsCap is the reason of a tool left out for the tools cap.
const reasonToolsCap outcome.Reason = "tools_cap"

// Why a tool was left out for the cap, by how the tools were taken: by
// relevance to the query, or by name (no query, "select": "name", or a
// query no tool shares a word with).
const (
	toolsCapByRelevance = "a tool that did not fit the template's tools cap: the tools sent were more relevant to the query, or as relevant and first by name"
	toolsCapByName      = "a tool that did not fit the template's tools cap: the tools were taken by name (no relevance to a query), and those sent came first"
)

func init() {
	reasonHelp[reasonToolsCap] = "a tool that did not fit the template's tools cap: others were more relevant to the query, or came first by name"
}

// toolsView is a dump's tools part as the views show it.
type toolsView struct {
	outcome.Tools
	Rows      []toolRow    // the tools sent, then those left out, each in name order
	Hidden    []hiddenTool // by reason
	HiddenN   int          // the hidden tools' count
	Relevance bool         // some tool has a relevance: the tools were taken by it
	CapHelp   string       // what tools_cap means for this dump
}

// toolRow is one tool sent or left out.
type toolRow struct {
	Status    string // kept (sent) or dropped (left out)
	Label     string // "sent" or "left out"
	Name      string
	Source    string
	Tokens    int
	Relevance string // four decimals; "-" for 0
	Required  bool
	Reason    string // why a tool was left out
	Help      string // what the reason means
}

// hiddenTool counts the tools hidden from the request for one reason.
type hiddenTool struct {
	Reason string
	N      int
}

// toolsOf arranges d's tools part; nil without one.
func toolsOf(d *outcome.Dump) *toolsView {
	tp := d.Tools
	if tp == nil {
		return nil
	}
	v := &toolsView{Tools: *tp, CapHelp: toolsCapByName}
	for _, k := range tp.Kept {
		v.Relevance = v.Relevance || k.Relevance != 0
	}
	for _, l := range tp.LeftOut {
		v.Relevance = v.Relevance || l.Relevance != 0
	}
	if v.Relevance {
		v.CapHelp = toolsCapByRelevance
	}
	for _, k := range tp.Kept {
		v.Rows = append(v.Rows, toolRow{Status: statusKept, Label: "sent", Name: k.Name, Source: k.Source, Tokens: k.Tokens,
			Relevance: relevanceText(k.Relevance, ""), Required: k.Required})
	}
	for _, l := range tp.LeftOut {
		help := ReasonHelp(outcome.Reason(l.Reason))
		if outcome.Reason(l.Reason) == reasonToolsCap {
			help = v.CapHelp
		}
		v.Rows = append(v.Rows, toolRow{Status: statusDropped, Label: "left out", Name: l.Name, Source: l.Source, Tokens: l.Tokens,
			Relevance: relevanceText(l.Relevance, ""), Reason: l.Reason, Help: help})
	}
	for _, reason := range slices.Sorted(maps.Keys(tp.Hidden)) {
		if n := tp.Hidden[reason]; n > 0 {
			v.Hidden = append(v.Hidden, hiddenTool{reason, n})
			v.HiddenN += n
		}
	}
	return v
}

// leftOut reports whether the tools part says event e: a tool left out,
// by its name and reason, in section "tools".
func (v *toolsView) leftOut(e outcome.Event) bool {
	if v == nil || e.Section != "tools" {
		return false
	}
	return slices.ContainsFunc(v.LeftOut, func(l outcome.ToolLeftOut) bool {
		return l.Name == e.RequestID && l.Reason == string(e.Reason)
	})
}

// hiddenText says how many tools one reason hides, never naming them.
func hiddenText(h hiddenTool) string {
	return plural(h.N, "tool") + " not named: " + h.Reason + " (the request's roles lack what they need)"
}

// summary is the part's heading line, after "Tools".
func (v *toolsView) summary() string {
	approx := ""
	if v.Approximate {
		approx = ", approximate"
	}
	return fmt.Sprintf("%d sent · %d left out · %d hidden · %s of the budget (cap %d, %s%s)",
		len(v.Kept), len(v.LeftOut), v.HiddenN, plural(v.Tokens, "token"), v.Cap, v.Method, approx)
}

// tools: the tools sent, those left out with their reasons, and how many
// the request's roles may not see, counted and never named.
func (r *reportWriter) tools() {
	v, t := r.m.tools, r.t
	if v == nil {
		return
	}
	t.blank()
	for j, l := range wrap("Tools · "+clean(v.summary()), t.width, t.width-2) {
		if j == 0 {
			l = strings.TrimPrefix(l, "Tools")
			t.add(sgrBold, "Tools").add(sgrDim, l).end()
		} else {
			t.line(sgrDim, "  "+l)
		}
	}
	t.add("", "  ").bar(sgrCyan, v.Tools.Tokens, v.Cap, max(t.width-2, 10)).end()
	width := 4
	for _, row := range v.Rows {
		width = max(width, textWidth(clean(row.Name)))
	}
	width = min(width, 40)
	for _, row := range v.Rows {
		why := clean(row.Source)
		if row.Required {
			why += " · required"
		}
		if v.Relevance {
			why += " · rel " + row.Relevance
		}
		line := t.add(statusColor[row.Status], "  "+pad(row.Label, 8)).add("", "  "+padLeft(tokensText(row.Tokens), 6)+"  "+pad(ellipsis(clean(row.Name), width), width)+"  ")
		if row.Reason != "" {
			line.add(statusColor[row.Status], clean(row.Reason)+" · ")
		}
		line.add(sgrDim, why).end()
	}
	for _, h := range v.Hidden {
		t.add(sgrDim, "  hidden    "+clean(hiddenText(h))).end()
	}
}
