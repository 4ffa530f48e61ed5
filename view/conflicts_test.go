package view

import (
	"bytes"
	"strings"
	"testing"

	"github.com/contextasm/contextasm/outcome"
)

func conflictDump() *outcome.Dump {
	return &outcome.Dump{ProtocolVersion: "1.2", Budget: 100, Text: "[MODEL_CONTEXT_PROTOCOL v1.2 | fp:sha256:0123456789abcdef]\n",
		Conflicts: []outcome.Conflict{{Key: "max-rate<script>", Winner: "cap-15", WinnerTrust: 0.6, Losers: []outcome.ConflictLoser{
			{RequestID: "sb-18", Trust: 0.5, Rule: outcome.RuleTrust}, {RequestID: "memo-20\x1b[31m", Trust: 0.6, Rule: outcome.RuleLastModified}}}},
		Events: []outcome.Event{{Kind: outcome.KindExcluded, RequestID: "sb-18", Reason: outcome.ReasonConflict, By: "cap-15"}}}
}

// The report and the page show each conflict's winner and losers together,
// with the trusts compared and the rule; a dump without conflicts shows
// no such part.
func TestConflictViews(t *testing.T) {
	d := conflictDump()
	rep := report(t, d, ReportOptions{})
	for _, want := range []string{"Conflicts: 1", "  max-rate<script>\n", "    won cap-15  trust 0.6\n", "    lost sb-18  trust 0.5, decided by trust\n",
		`    lost memo-20\x1b[31m  trust 0.6, decided by last_modified` + "\n", "a more trusted block states the same fact or rule"} {
		if !strings.Contains(rep, want) {
			t.Errorf("report lacks %q:\n%s", want, rep)
		}
	}
	if strings.Contains(rep, "\x1b") {
		t.Errorf("the report carries the dump's escape character")
	}
	var page bytes.Buffer
	if err := WriteHTML(&page, d); err != nil {
		t.Fatal(err)
	}
	html := page.String()
	for _, want := range []string{`id="conflicts"`, `rowspan="3"`, "max-rate&lt;script&gt;", `<span class="mono id">cap-15</span></td><td>0.6</td>`,
		`<span class="mono id">sb-18</span></td><td>0.5</td><td class="reason">trust</td>`} {
		if !strings.Contains(html, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	d.Conflicts = nil
	if rep := report(t, d, ReportOptions{}); strings.Contains(rep, "Conflicts:") {
		t.Errorf("a report without conflicts has a Conflicts part:\n%s", rep)
	}
	page.Reset()
	if err := WriteHTML(&page, d); err != nil || strings.Contains(page.String(), `id="conflicts"`) {
		t.Errorf("a page without conflicts has a conflicts panel (%v)", err)
	}
}
