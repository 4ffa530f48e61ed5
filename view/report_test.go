package view

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/contextasm/contextasm/outcome"
)

var ansi = regexp.MustCompile("\x1b\\[[0-9;]*m")

func report(t *testing.T, d *outcome.Dump, opt ReportOptions) string {
	t.Helper()
	var b bytes.Buffer
	if err := WriteReport(&b, d, opt); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// Readable at 80 columns: no line is wider, counting East Asian wide
// characters as two columns, whatever the dump holds.
func TestReportFitsWidth(t *testing.T) {
	dumps := map[string]*outcome.Dump{
		"demo":         loadDump(t, demoDump),
		"multilingual": loadDump(t, multilingualDump),
		"wide":         wideDump(),
	}
	for name, d := range dumps {
		for _, width := range []int{0, 80, 60, 40} {
			out := report(t, d, ReportOptions{Width: width})
			limit := width
			if width == 0 {
				limit = 80
			}
			for i, line := range strings.Split(out, "\n") {
				if w := textWidth(line); w > limit {
					t.Errorf("%s at width %d: line %d is %d columns: %q", name, width, i+1, w, line)
				}
			}
		}
	}
}

// Colour changes no layout: without its escapes, the coloured report is
// the plain one. The plain one has no escape at all, even when the dump's
// ids carry one.
func TestReportColor(t *testing.T) {
	for _, d := range []*outcome.Dump{loadDump(t, demoDump), wideDump()} {
		plain := report(t, d, ReportOptions{})
		colored := report(t, d, ReportOptions{Color: true})
		if strings.Contains(plain, "\x1b") {
			t.Errorf("the plain report has an escape character:\n%s", plain)
		}
		if !strings.Contains(colored, "\x1b[32mkept") {
			t.Errorf("the coloured report has no green 'kept'")
		}
		if got := ansi.ReplaceAllString(colored, ""); got != plain {
			t.Errorf("the coloured report without its escapes differs from the plain one:\n%s\n---\n%s", got, plain)
		}
	}
}

// Every block the dump decided about is in the report, on one line with
// its status and reason, or under its reason's heading.
func TestReportNamesEveryDecision(t *testing.T) {
	d := loadDump(t, demoDump)
	out := report(t, d, ReportOptions{})
	lines := strings.Split(out, "\n")
	lineWith := func(s string) string {
		for _, l := range lines {
			if strings.Contains(l, " "+s+" ") || strings.HasSuffix(l, " "+s) {
				return l
			}
		}
		return ""
	}
	for _, s := range d.Sections {
		if !strings.Contains(out, s.Name+" · priority") {
			t.Errorf("no heading for section %s", s.Name)
		}
		for _, b := range s.Blocks {
			l := lineWith(b.RequestID)
			if l == "" || !strings.Contains(l, " "+b.Status.String()+" ") || !strings.Contains(l, string(b.Reason)) {
				t.Errorf("block %s (%s, %s): line %q", b.RequestID, b.Status, b.Reason, l)
			}
		}
	}
	for _, e := range d.Events {
		if e.Kind != "excluded" {
			continue
		}
		i := strings.Index(out, "\n  "+string(e.Reason)+" · ")
		j := strings.Index(out, "\n    "+e.RequestID+"\n")
		if i < 0 || j < i {
			t.Errorf("excluded %s (%s) is not under its reason's heading", e.RequestID, e.Reason)
		}
	}
	for _, want := range []string{"Budget  ", "Total  ", "Excluded before ranking: 5", "Conflicts: 1", "    lost memo-dti-48  trust 0.55, decided by trust", "What the reasons mean", "budget       removed to fit the budget"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q", want)
		}
	}
}

// The hand-made dump's report: CJK columns line up, long ids keep both
// ends, control characters are escaped, every kind of event is grouped.
func TestReportGolden(t *testing.T) {
	golden(t, "wide.report.golden", report(t, wideDump(), ReportOptions{}))
}

// TestReportRelevance: with a query the report names it by hash, never
// its text, shows each block's relevance and points, and says under a
// block that lost on relevance which block it lost to, with the figures.
func TestReportRelevance(t *testing.T) {
	got := report(t, queryDump(), ReportOptions{})
	contains(t, "the report", got,
		"Query   the request's query · 7 tokens · sha256:9f9f9f9f9f9f…",
		"  #  status   tokens  score    rel   points  block",
		"  2  kept         30  0.4500  0.50  +0.2500  turn-3-refund",
		"  3  dropped      40  0.4000     -        -  turn-8-agent   budget",
		"↳ lost on relevance to turn-3-refund, ranked above it: without relevance",
		"scores 0.2000, this block 0.4000",
		"  1  kept         10  0.8000  0.31        -  rule-refunds   required",
		"  left out      35  send_email    tools_cap · host · rel 0.0500",
		"lost_on_relevance  left out for room",
	)
	if strings.Count(got, "lost on relevance to") != 1 {
		t.Errorf("want one block lost on relevance (turn-2-user ranks below the kept ones without relevance too):\n%s", got)
	}
	// The tools part says the tools left out; no group repeats it.
	if strings.Contains(got, "Other dropped events") {
		t.Errorf("the tool left out is listed twice:\n%s", got)
	}
	golden(t, "query.report.golden", got)

	// Without a query, no relevance columns and no query line.
	d := wideDump()
	if got := report(t, d, ReportOptions{}); strings.Contains(got, "points") || strings.Contains(got, "Query ") {
		t.Errorf("a dump without a query shows relevance:\n%s", got)
	}
}
