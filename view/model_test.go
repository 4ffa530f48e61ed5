package view

import (
	"fmt"
	"strings"
	"testing"

	"github.com/contextasm/contextasm/outcome"
)

// TestReportAndHTMLTellOneStory: the terminal report and the HTML page of
// the same dump show the same block counts, the same section figures and
// the same reasons, because both lay out the one model analyse builds.
func TestReportAndHTMLTellOneStory(t *testing.T) {
	p, err := loadPage()
	if err != nil {
		t.Fatal(err)
	}
	for name, d := range map[string]*outcome.Dump{
		"demo":         loadDump(t, demoDump),
		"multilingual": loadDump(t, multilingualDump),
		"wide":         wideDump(),
	} {
		t.Run(name, func(t *testing.T) {
			var rep strings.Builder
			if err := WriteReport(&rep, d, ReportOptions{Width: 200}); err != nil {
				t.Fatal(err)
			}
			h := buildHTML(d, p)
			var counts []string
			for _, c := range h.Counts {
				counts = append(counts, fmt.Sprintf("%d %s", c.N, c.Status))
			}
			if line := "Blocks  " + strings.Join(counts, " · "); !strings.Contains(rep.String(), line) {
				t.Errorf("report lacks the page's counts %q:\n%s", line, rep.String())
			}
			for _, s := range h.Sections {
				stats := fmt.Sprintf("%d/%d tok (%d%% of cap) · %d%% of budget", s.Used, s.Max, s.CapPct, s.BudgetPct)
				if !strings.Contains(rep.String(), stats) {
					t.Errorf("section %s: report lacks the page's figures %q", s.Name, stats)
				}
				for _, r := range s.Rows {
					if !strings.Contains(rep.String(), r.Score) {
						t.Errorf("section %s, block %s: report lacks score %s", s.Name, r.ID, r.Score)
					}
				}
			}
			for _, rc := range h.Reasons {
				if !strings.Contains(rep.String(), rc.Reason) {
					t.Errorf("the page filters by %q, which the report never names", rc.Reason)
				}
			}
		})
	}
}

// TestReasonHelpFitsEveryStatus: a notice can sit on a kept, cut or
// dropped row, so its help must not claim a status ("kept but near its
// valid_until" read wrong on a dropped stale block).
func TestReasonHelpFitsEveryStatus(t *testing.T) {
	for _, r := range []outcome.Reason{outcome.ReasonStale, outcome.ReasonEscaped} {
		help := ReasonHelp(r)
		for _, status := range []string{"kept", "cut ", "dropped"} {
			if strings.Contains(help, status) {
				t.Errorf("%s: help %q claims the status %q", r, help, status)
			}
		}
	}
}
