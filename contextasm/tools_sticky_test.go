package contextasm_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/contextasm/contextasm/chat"
	"github.com/contextasm/contextasm/contextasm"
	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/learned"
	"github.com/contextasm/contextasm/truncate"
)

// The two topics of TestToolsSticky's conversation, and the tool that is
// clearly about the second.
const (
	topicBilling = "refund the invoice payment"
	topicWiki    = "search the wiki page for words"
)

// stickyFleet is fleet's tools and two that make the wiki question's
// other words count, so that the wiki tools match it only in part.
func stickyFleet() (tools []declare.Tool, planted []string) {
	tools, planted = fleet()
	obj := json.RawMessage(`{"type":"object","properties":{"query":{"type":"string"}}}`)
	return append(tools,
		declare.Tool{Name: "notes_search", Description: "Search the notes for words.", InputSchema: obj},
		declare.Tool{Name: "page_print", Description: "Print a page.", InputSchema: obj}), planted
}

var wikiSearch = declare.Tool{Name: "wiki_page_search", Description: "Search the wiki: finds a wiki page by its words, searching every wiki page.",
	InputSchema: json.RawMessage(`{"type":"object","properties":{"search":{"type":"string","description":"What to search the wiki page for."}}}`)}

func toolNames(tr *contextasm.ToolsResult) []string {
	var out []string
	for _, k := range tr.Kept {
		out = append(out, k.Name)
	}
	return out
}

func relevanceOf(tr *contextasm.ToolsResult, names ...string) (lo, hi float64) {
	lo = 1
	for _, k := range tr.Kept {
		if len(names) == 0 || slices.Contains(names, k.Name) {
			lo, hi = min(lo, k.Relevance), max(hi, k.Relevance)
		}
	}
	for _, l := range tr.LeftOut {
		if len(names) == 0 || slices.Contains(names, l.Name) {
			lo, hi = min(lo, l.Relevance), max(hi, l.Relevance)
		}
	}
	return lo, hi
}

// stickyMargin measures, with requests without a session, how far the
// wiki question ranks the wiki tools above the billing question's tools,
// and the new wiki tool above those; and returns a margin between the
// two gaps.
func stickyMargin(t *testing.T, tools []declare.Tool) float64 {
	t.Helper()
	tpl := parseTemplate(t, toolsTemplate)
	probe := toolsEngine(t, contextasm.Config{}, tools)
	req := contextasm.Request{Template: tpl, Now: toolsNow, Format: chat.FormatOpenAI}
	req.Query = topicBilling
	incumbents := toolNames(assemble(t, probe, req).Tools)
	req.Query = topicWiki
	wiki := assemble(t, probe, req).Tools
	weakest, _ := relevanceOf(wiki, incumbents...)
	_, topic := relevanceOf(wiki)
	if err := probe.DeclareTools(wikiSearch); err != nil {
		t.Fatal(err)
	}
	after := assemble(t, probe, req).Tools
	_, clear := relevanceOf(after, wikiSearch.Name)
	weakestAfter, _ := relevanceOf(after, incumbents...)
	t.Logf("the wiki question ranks the topic's tools %.3f above the kept ones, the new tool %.3f", topic-weakest, clear-weakestAfter)
	if topic-weakest >= clear-weakestAfter-0.1 {
		t.Fatalf("the wiki tools outrank the billing tools by %.3f, the new one by %.3f: no room for a margin between", topic-weakest, clear-weakestAfter)
	}
	return (topic - weakest + clear - weakestAfter) / 2
}

// TestToolsSticky: in a conversation whose questions alternate between
// two topics, the tools array stays byte-identical (the tools the other
// topic would bring are left out with reason sticky), until a tool
// arrives that outranks the kept ones by more than the margin; the same
// calls give the same bodies on another engine; the selection is in the
// conversation's state, which another engine on the same store follows;
// and a Fresh request selects as a request without a session does.
func TestToolsSticky(t *testing.T) {
	tools, planted := stickyFleet()
	margin := stickyMargin(t, tools)
	cfg := contextasm.Config{Stickiness: truncate.Stickiness{Margin: margin}}
	tpl := parseTemplate(t, toolsTemplate)
	call := func(eng *contextasm.Engine, i int, q string) (*contextasm.Result, string) {
		res := assemble(t, eng, contextasm.Request{Template: tpl, Now: toolsNow.Add(time.Duration(i) * time.Minute), SessionID: "s1", Format: chat.FormatOpenAI, Query: q})
		body, arr := bodyTools(t, res)
		if res.TotalTokens > tpl.Budget() || res.Tools.Tokens > 4000 {
			t.Fatalf("call %d: %d tokens (tools %d)", i, res.TotalTokens, res.Tools.Tokens)
		}
		return res, string(body) + "\x00" + string(arr)
	}
	arrayOf := func(s string) string { return s[strings.IndexByte(s, 0)+1:] }
	run := func(eng *contextasm.Engine) (bodies []string) {
		first, b := call(eng, 0, topicBilling)
		bodies = append(bodies, b)
		for _, p := range planted {
			if !slices.Contains(toolNames(first.Tools), p) {
				t.Fatalf("the first call left %s out", p)
			}
		}
		for i, q := range []string{topicWiki, topicBilling, topicWiki, topicBilling, topicWiki} {
			res, b := call(eng, i+1, q)
			bodies = append(bodies, b)
			if arrayOf(b) != arrayOf(bodies[0]) {
				t.Errorf("call %d (%q): the tools array changed within the margin %.3f: %v", i+1, q, margin, toolNames(res.Tools))
			}
			if q != topicWiki {
				continue
			}
			sticky := 0
			for _, l := range res.Tools.LeftOut {
				if l.Reason == string(contextasm.ReasonToolSticky) {
					sticky++
				}
			}
			events := 0
			for _, e := range res.Events() {
				if e.Section == "tools" && e.Reason == contextasm.ReasonToolSticky {
					events++
				}
			}
			if sticky == 0 || events != sticky {
				t.Errorf("call %d: %d tools left out as sticky, %d events", i+1, sticky, events)
			}
		}
		// A tool clearly about the question arrives: it takes a place.
		if err := eng.DeclareTools(wikiSearch); err != nil {
			t.Fatal(err)
		}
		res, b := call(eng, 10, topicWiki)
		bodies = append(bodies, b)
		if !slices.Contains(toolNames(res.Tools), wikiSearch.Name) || arrayOf(b) == arrayOf(bodies[0]) {
			t.Errorf("the clearly relevant %s did not come in: %v", wikiSearch.Name, toolNames(res.Tools))
		}
		// And the next call keeps it.
		_, b = call(eng, 11, topicBilling)
		if arrayOf(b) != arrayOf(bodies[len(bodies)-1]) {
			t.Error("the call after the switch changed the array again")
		}
		return append(bodies, b)
	}
	one := run(toolsEngine(t, cfg, tools))
	two := run(toolsEngine(t, cfg, tools))
	if !slices.Equal(one, two) {
		t.Error("the same calls on another engine gave other bodies")
	}

	// The selection is part of the conversation's state: an engine on
	// the same store follows it.
	path := filepath.Join(t.TempDir(), "state.json")
	stored := cfg
	stored.State = learned.NewFileStore(path)
	eng := toolsEngine(t, stored, tools)
	first, _ := call(eng, 0, topicBilling)
	found := false
	for _, ss := range eng.State().Sessions {
		var rec struct{ Tools []string }
		if json.Unmarshal(ss.Data, &rec) == nil && slices.Equal(rec.Tools, toolNames(first.Tools)) {
			found = true
		}
	}
	if !found {
		t.Error("no session state records the tools the call carried")
	}
	if err := eng.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	next, _ := call(toolsEngine(t, stored, tools), 1, topicWiki)
	if !slices.Equal(toolNames(next.Tools), toolNames(first.Tools)) {
		t.Errorf("another engine on the store did not follow the tools: %v", toolNames(next.Tools))
	}

	// Fresh: today's selection, as without a session.
	eng = toolsEngine(t, cfg, tools)
	call(eng, 0, topicBilling)
	fresh := assemble(t, eng, contextasm.Request{Template: tpl, Now: toolsNow.Add(time.Minute), SessionID: "s1", Format: chat.FormatOpenAI, Query: topicWiki, Fresh: true})
	alone := assemble(t, eng, contextasm.Request{Template: tpl, Now: toolsNow.Add(time.Minute), Format: chat.FormatOpenAI, Query: topicWiki})
	if !slices.Equal(toolNames(fresh.Tools), toolNames(alone.Tools)) || slices.Equal(toolNames(fresh.Tools), toolNames(first.Tools)) {
		t.Errorf("Fresh kept %v; without a session %v", toolNames(fresh.Tools), toolNames(alone.Tools))
	}
	for _, l := range fresh.Tools.LeftOut {
		if l.Reason != string(contextasm.ReasonToolsCap) {
			t.Errorf("Fresh left %s out for %s", l.Name, l.Reason)
		}
	}
}

// TestToolsStickyMargin: the template's tools sticky_margin sets the
// tools' margin apart from the blocks' (Config.Stickiness.Margin).
func TestToolsStickyMargin(t *testing.T) {
	tools, _ := stickyFleet()
	margin := stickyMargin(t, tools)
	for _, tc := range []struct {
		margin float64
		stays  bool
	}{{margin, true}, {0, false}} {
		src := strings.Replace(toolsTemplate, `"tools": {"max_tokens": 4000}`, fmt.Sprintf(`"tools": {"max_tokens": 4000, "sticky_margin": %v}`, tc.margin), 1)
		tpl := parseTemplate(t, src)
		eng := toolsEngine(t, contextasm.Config{Stickiness: truncate.Stickiness{Margin: 0.9}}, tools)
		var arrays []string
		for i, q := range []string{topicBilling, topicWiki} {
			res := assemble(t, eng, contextasm.Request{Template: tpl, Now: toolsNow.Add(time.Duration(i) * time.Minute), SessionID: "s1", Format: chat.FormatOpenAI, Query: q})
			_, arr := bodyTools(t, res)
			arrays = append(arrays, string(arr))
		}
		if stayed := arrays[0] == arrays[1]; stayed != tc.stays {
			t.Errorf("sticky_margin %.3f: the array stayed %v, want %v", tc.margin, stayed, tc.stays)
		}
	}
}
