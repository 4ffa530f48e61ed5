package view

import (
	"bytes"
	"html"
	"strings"
	"testing"

	"github.com/contextasm/contextasm/outcome"
)

// conversationDump is the demo as the second render of a conversation:
// with a prefix and cache breakpoints.
func conversationDump(t *testing.T) *outcome.Dump {
	d := loadDump(t, demoDump)
	d.Prefix = &outcome.Prefix{StableBytes: 2000, StableTokens: 540, FirstChangedSection: "HISTORY", FirstChangedBlock: "turn-06-agent", Reason: outcome.PrefixAppended}
	d.CacheBreakpoints = []outcome.Breakpoint{{Section: "CORE_CONSTRAINTS", Offset: 1100, Tokens: 300}, {Section: "SOURCES", Offset: 2000, Tokens: 540}}
	return d
}

// The report and the page say how much of the text the previous render
// shares, where it parts and why, and where a cache may end; a dump
// without them (a conversation's first render) says nothing of it.
func TestViewsShowCache(t *testing.T) {
	d := conversationDump(t)
	rep := report(t, d, ReportOptions{})
	var page bytes.Buffer
	if err := WriteHTML(&page, d); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"the first 540 of 791 tokens (68%, 2000 bytes) are the previous render's; it parts in HISTORY at turn-06-agent: the previous text, then new blocks",
		"after CORE_CONSTRAINTS: byte 1100, 300 tokens",
		"after SOURCES: byte 2000, 540 tokens",
	} {
		// The report wraps; compare with its line breaks and indents folded.
		folded := strings.Join(strings.Fields(rep), " ")
		if !strings.Contains(folded, want) {
			t.Errorf("the report lacks %q:\n%s", want, rep)
		}
		if !strings.Contains(html.UnescapeString(page.String()), want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if !strings.Contains(rep, "Prefix  the first") || !strings.Contains(rep, "Cache   after CORE_CONSTRAINTS") {
		t.Errorf("the report's cache lines:\n%s", rep)
	}
	d.Prefix = &outcome.Prefix{StableBytes: len(d.Text), StableTokens: d.TotalTokens, Reason: outcome.PrefixUnchanged}
	if rep := report(t, d, ReportOptions{}); !strings.Contains(rep, "all 791 tokens are the previous render's") {
		t.Errorf("an unchanged text:\n%s", rep)
	}
	first := loadDump(t, demoDump)
	page.Reset()
	if err := WriteHTML(&page, first); err != nil {
		t.Fatal(err)
	}
	if rep := report(t, first, ReportOptions{}); strings.Contains(rep, "Prefix") || strings.Contains(rep, "Cache ") || strings.Contains(page.String(), `id="prefix"`) {
		t.Error("a first render talks about a prefix")
	}
}

// diff names the first byte where two renders part, and where in B it is.
func TestDiffFirstDifference(t *testing.T) {
	a := loadDump(t, demoDump)
	b := loadDump(t, demoDump)
	if r := Diff(a, b); r.FirstDifference != nil {
		t.Errorf("the same dump twice: %+v", *r.FirstDifference)
	}
	var hist *outcome.BlockResult
	for si := range b.Sections {
		for bi := range b.Sections[si].Blocks {
			if blk := &b.Sections[si].Blocks[bi]; blk.RequestID == "turn-05-user" {
				hist = blk
			}
		}
	}
	if hist == nil || hist.Length == 0 {
		t.Fatal("fixture: turn-05-user is not in the demo's text")
	}
	at := hist.Offset + 3
	b.Text = b.Text[:at] + "X" + b.Text[at+1:]
	r := Diff(a, b)
	f := r.FirstDifference
	line := 1 + strings.Count(b.Text[:at], "\n")
	if f == nil || f.Byte != at || f.Section != "HISTORY" || f.Block != "turn-05-user" || f.Line != line || f.Column != 4 {
		t.Fatalf("first difference %+v, want byte %d, line %d, column 4, HISTORY/turn-05-user", f, at, line)
	}
	var out bytes.Buffer
	if err := WriteDiff(&out, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(strings.Fields(out.String()), " "), "the texts part at byte ") {
		t.Errorf("WriteDiff does not name the byte:\n%s", out.String())
	}
}
