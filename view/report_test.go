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
