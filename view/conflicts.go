package view

import (
	"fmt"
	"strconv"

	"github.com/contextasm/contextasm/outcome"
)

// conflictView is one conflict_key of a dump as the views show it: the
// winner and each loser together, with the trusts compared.
type conflictView struct {
	Key         string
	Winner      string
	WinnerTrust string
	Losers      []conflictLoserView
	Rows        int // the winner's and the losers' rows
}

// conflictLoserView is one block a conflict excluded.
type conflictLoserView struct {
	ID, Trust, Rule string
}

// conflictViews returns the dump's conflicts, in its order, their numbers
// formatted.
func conflictViews(d *outcome.Dump) []conflictView {
	var out []conflictView
	for _, c := range d.Conflicts {
		cv := conflictView{Key: c.Key, Winner: c.Winner, WinnerTrust: trustText(c.WinnerTrust)}
		for _, l := range c.Losers {
			cv.Losers = append(cv.Losers, conflictLoserView{ID: l.RequestID, Trust: trustText(l.Trust), Rule: string(l.Rule)})
		}
		cv.Rows = 1 + len(cv.Losers)
		out = append(out, cv)
	}
	return out
}

func trustText(t float64) string { return strconv.FormatFloat(t, 'f', -1, 64) }

// conflicts: each conflict_key shared by eligible blocks, its winner and
// the blocks it excluded, with the trusts compared and the rule that
// decided (the losers are also among the excluded blocks, reason
// conflict).
func (r *reportWriter) conflicts() {
	cs := conflictViews(r.d)
	if len(cs) == 0 {
		return
	}
	t := r.t
	t.blank()
	t.add(sgrBold, "Conflicts").add("", fmt.Sprintf(": %d", len(cs))).add(sgrDim, " · blocks sharing a conflict_key: the most trusted enters").end()
	for _, c := range cs {
		t.add("", "  ").add(sgrBold, ellipsis(clean(c.Key), t.width-2)).end()
		t.add("", "    ").add(statusColor[statusKept], "won ").add("", ellipsis(clean(c.Winner), t.width-20)).add(sgrDim, "  trust "+c.WinnerTrust).end()
		for _, l := range c.Losers {
			t.add("", "    ").add(statusColor[statusExcluded], "lost").add("", " "+ellipsis(clean(l.ID), t.width-40)).
				add(sgrDim, "  trust "+l.Trust+", decided by "+clean(l.Rule)).end()
		}
	}
}

// templateChoice: which template of a fallback chain was used, and why
// each earlier one was not.
func (r *reportWriter) templateChoice() {
	c := r.d.Template
	if c == nil {
		return
	}
	t := r.t
	t.add(sgrBold, "Template").add("", fmt.Sprintf(" %d of the chain · %s", c.Used+1, clean(c.Fingerprint))).end()
	for i, s := range c.Skipped {
		t.add("", "  ").add(statusColor[statusExcluded], "skipped").
			add("", ellipsis(fmt.Sprintf(" %d · %s · v%s · %s", i+1, clean(s.Fingerprint), clean(s.ProtocolVersion), clean(string(s.Reason))), t.width-9)).end()
	}
	t.blank()
}
