package view

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/contextasm/contextasm/outcome"
)

// ReportOptions configure [WriteReport].
type ReportOptions struct {
	// Color writes ANSI colours. Set it only when the output is a terminal
	// and the NO_COLOR environment variable is unset or empty.
	Color bool
	// Width is the most terminal columns a line may take; 0 means 80.
	// Widths below 40 are taken as 40.
	Width int
}

// DefaultWidth is the width reports and diffs are laid out for when
// ReportOptions.Width is 0.
const DefaultWidth = 80

// ANSI SGR codes.
const (
	sgrBold    = "1"
	sgrDim     = "2"
	sgrRed     = "31"
	sgrGreen   = "32"
	sgrYellow  = "33"
	sgrMagenta = "35"
	sgrCyan    = "36"
)

// statusColor is the colour of each status.
var statusColor = map[string]string{
	statusKept:     sgrGreen,
	statusCut:      sgrYellow,
	statusDropped:  sgrRed,
	statusExcluded: sgrMagenta,
}

// termWriter writes lines of at most width columns, each built from plain
// and coloured pieces: a line that would be wider is shortened with an
// ellipsis and written without colour, so no layout decision can break the
// width promise.
type termWriter struct {
	w       *bufio.Writer
	width   int
	color   bool
	plain   strings.Builder
	painted strings.Builder
}

func newTermWriter(w io.Writer, width int, color bool) *termWriter {
	if width == 0 {
		width = DefaultWidth
	}
	return &termWriter{w: bufio.NewWriter(w), width: max(width, 40), color: color}
}

// add appends s, in colour sgr ("" for none), to the current line.
func (t *termWriter) add(sgr, s string) *termWriter {
	t.plain.WriteString(s)
	if t.color && sgr != "" && s != "" {
		t.painted.WriteString("\x1b[" + sgr + "m" + s + "\x1b[0m")
	} else {
		t.painted.WriteString(s)
	}
	return t
}

// end writes the current line.
func (t *termWriter) end() {
	plain := strings.TrimRight(t.plain.String(), " ")
	out := t.painted.String()
	if textWidth(plain) > t.width {
		out = ellipsis(plain, t.width)
	} else if !t.color {
		out = plain
	} else {
		out = strings.TrimRight(out, " ")
	}
	t.w.WriteString(out)
	t.w.WriteByte('\n')
	t.plain.Reset()
	t.painted.Reset()
}

// line writes one line in one colour.
func (t *termWriter) line(sgr, s string) { t.add(sgr, s).end() }

// blank writes an empty line.
func (t *termWriter) blank() { t.end() }

// bar draws a bar of w columns filled to part/whole, in eighths of a
// column.
func (t *termWriter) bar(sgr string, part, whole, w int) *termWriter {
	eighths := 0
	if whole > 0 {
		eighths = min(max(part, 0)*w*8/whole, w*8)
	}
	full, rest := eighths/8, eighths%8
	filled := strings.Repeat("█", full)
	if rest > 0 {
		filled += string([]rune("▏▎▍▌▋▊▉")[rest-1])
		full++
	}
	t.add(sgr, filled)
	return t.add(sgrDim, strings.Repeat("░", w-full))
}

// WriteReport writes d as a report for a terminal: the budget and the
// block counts, then per section a bar of its used tokens against its cap
// and its share of the budget, and every block in rank order with its
// status, tokens, score and reason; then the blocks excluded before
// ranking, grouped by reason; and what each reason means. Lines are at
// most opt.Width columns, East Asian wide characters counted as two.
func WriteReport(w io.Writer, d *outcome.Dump, opt ReportOptions) error {
	r := &reportWriter{d: d, m: analyse(d), t: newTermWriter(w, opt.Width, opt.Color)}
	r.header()
	r.templateChoice()
	r.budget()
	r.cache()
	r.query()
	r.sections()
	r.conflicts()
	r.tools()
	r.groups()
	r.legend()
	r.total()
	return r.t.w.Flush()
}

// reportWriter writes the parts of a report, in order, from the explained
// model.
type reportWriter struct {
	d *outcome.Dump
	m *model
	t *termWriter
}

// header: the fingerprint and encoding, the instant, protocol and render.
func (r *reportWriter) header() {
	d, t := r.d, r.t
	t.add(sgrBold, "contextasm report").add("", " · ").add("", clean(d.Fingerprint)).add("", " · ").add("", clean(d.Encoding)).end()
	t.line(sgrDim, "now "+clean(d.Now)+" · protocol v"+clean(d.ProtocolVersion)+" · render "+short(d.RenderHash))
	t.blank()
}

// budget: the tokens used of the budget, as a bar, and the block counts.
func (r *reportWriter) budget() {
	d, m, t := r.d, r.m, r.t
	t.add(sgrBold, "Budget  ").add("", fmt.Sprintf("%d of %d tokens (%d%%) · %d free", d.TotalTokens, d.Budget, m.budgetPct, m.free)).end()
	t.add("", "        ").bar(sgrCyan, d.TotalTokens, d.Budget, t.width-8).end()
	t.add(sgrBold, "Blocks  ")
	for i, st := range statuses {
		if i > 0 {
			t.add("", " · ")
		}
		t.add(statusColor[st], fmt.Sprintf("%d %s", m.counts[st], st))
	}
	t.end()
}

// cache: the prefix shared with the previous render, and the breakpoints.
func (r *reportWriter) cache() {
	t := r.t
	for _, l := range []struct {
		head  string
		lines []string
	}{{"Prefix  ", []string{r.m.cache.Prefix}}, {"Cache   ", r.m.cache.Breakpoints}} {
		for i, s := range l.lines {
			if s == "" {
				continue
			}
			for j, w := range wrap(s, t.width-8, t.width-8) {
				head := "        "
				if i == 0 && j == 0 {
					head = l.head
				}
				t.add(sgrBold, head).add("", w).end()
			}
		}
	}
}

// query: what relevance came from, by hash, and how to read its columns.
func (r *reportWriter) query() {
	t := r.t
	if r.m.query != "" {
		for j, l := range wrap(r.m.query, t.width-8, t.width-8) {
			head := "        "
			if j == 0 {
				head = "Query   "
			}
			t.add(sgrBold, head).add("", l).end()
		}
	}
	if r.m.queried {
		for _, l := range wrap("rel: each block's relevance to the query, 0 to 1; points: what it added to the score", t.width-8, t.width-8) {
			t.line(sgrDim, "        "+l)
		}
	}
}

// columns are the widths of the blocks' table, shared by every section so
// that the tables line up.
type columns struct{ rank, id, stats int }

// relevanceColumns are the relevance and points columns, with the gaps
// after them, of a report whose assembly had a query. Relevance has two
// decimals, so that ids of 22 columns still fit 80 with the reasons; the
// points, which the score adds up from, have the score's four.
const relevanceColumns = 4 + 2 + 7 + 2

// shortRelevance is a row's relevance with two decimals, "-" for 0.
func shortRelevance(v float64) string {
	if v == 0 {
		return "-"
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

func (r *reportWriter) columns(stats []string) columns {
	c := columns{rank: 1, id: 5}
	whyW := 3
	for _, s := range r.m.sections {
		c.rank = max(c.rank, len(strconv.Itoa(len(s.Rows))))
		for _, row := range s.Rows {
			c.id = max(c.id, textWidth(clean(row.RequestID)))
			whyW = max(whyW, textWidth(why(row)))
		}
	}
	fixed := 2 + c.rank + 2 + 7 + 2 + 6 + 2 + 6 + 2
	if r.m.queried {
		fixed += relevanceColumns
	}
	room := r.t.width - fixed
	c.id = min(c.id, max(room-2-whyW, room/2))
	for _, s := range stats {
		c.stats = max(c.stats, textWidth(s))
	}
	return c
}

// sections: per section its bar against its cap, and its blocks in rank
// order.
func (r *reportWriter) sections() {
	stats := make([]string, len(r.m.sections))
	for i, s := range r.m.sections {
		stats[i] = fmt.Sprintf("  %d/%d tok (%d%% of cap) · %d%% of budget", s.UsedTokens, s.MaxTokens, s.CapPct, s.BudgetPct)
	}
	c := r.columns(stats)
	t := r.t
	for i, s := range r.m.sections {
		t.blank()
		t.add(sgrBold, clean(s.Name)).add(sgrDim, fmt.Sprintf(" · priority %d · %s", s.Priority, plural(len(s.Rows), "block"))).end()
		t.add("", "  ").bar(sgrCyan, s.UsedTokens, s.MaxTokens, max(t.width-2-c.stats, 10)).add("", stats[i]).end()
		if len(s.Rows) == 0 {
			continue
		}
		rel := ""
		if r.m.queried {
			rel = padLeft("rel", 4) + "  " + padLeft("points", 7) + "  "
		}
		t.add(sgrDim, "  "+padLeft("#", c.rank)+"  "+pad("status", 7)+"  "+padLeft("tokens", 6)+"  "+pad("score", 6)+"  "+rel+pad("block", c.id)+"  why").end()
		for _, row := range s.Rows {
			t.add("", "  "+padLeft(strconv.Itoa(row.Rank), c.rank)+"  ")
			t.add(statusColor[row.Status], pad(row.Status, 7))
			t.add("", "  "+padLeft(tokensText(row.Tokens), 6)+"  "+row.ScoreText+"  ")
			if r.m.queried {
				t.add("", padLeft(shortRelevance(row.Relevance), 4)+"  "+padLeft(row.PointsText, 7)+"  ")
			}
			t.add("", pad(ellipsis(clean(row.RequestID), c.id), c.id)+"  ")
			t.add(statusColor[row.Status], why(row)).end()
			if row.LostOnRelevance {
				r.lost(row, 2+c.rank+2)
			}
		}
	}
}

// lost says under a row which block it lost on relevance to, with the
// figures, indented by indent columns.
func (r *reportWriter) lost(row row, indent int) {
	t := r.t
	text := "lost on relevance"
	if row.Lost != nil {
		text = clean(row.Lost.text())
	}
	for j, l := range wrap(text, t.width-indent-2, t.width-indent-2) {
		mark := "  "
		if j == 0 {
			mark = "↳ "
		}
		t.add("", strings.Repeat(" ", indent)).add(statusColor[row.Status], mark+l).end()
	}
}

// groupTitles head the groups of events about blocks in no section.
var groupTitles = map[outcome.Kind]string{
	outcome.KindExcluded: "Excluded before ranking",
	outcome.KindSource:   "Source problems",
	outcome.KindNotice:   "Notices about blocks in no section",
}

// groups: the blocks excluded before ranking, source problems and other
// notices, by kind and reason, each reason with what it means.
func (r *reportWriter) groups() {
	groups := r.m.groups
	for i, g := range groups {
		if i == 0 || g.Kind != groups[i-1].Kind {
			r.groupTitle(g.Kind, groups[i:])
		}
		r.group(g)
	}
}

// groupTitle heads the groups of one kind with how many blocks they hold.
func (r *reportWriter) groupTitle(kind outcome.Kind, rest []group) {
	n := 0
	for _, h := range rest {
		if h.Kind == kind {
			n += h.size()
		}
	}
	title := groupTitles[kind]
	if title == "" {
		title = "Other " + clean(string(kind)) + " events"
	}
	r.t.blank()
	r.t.add(sgrBold, title).add("", fmt.Sprintf(": %d", n)).end()
}

// group writes one reason's group: the reason and its meaning, then its
// blocks, and how many it does not name.
func (r *reportWriter) group(g group) {
	t := r.t
	head := clean(string(g.Reason))
	if g.Help != "" {
		head += " · " + g.Help
	}
	for j, l := range wrap(head, t.width-2, t.width-4) {
		if j == 0 {
			t.add("", "  ").add(statusColor[statusExcluded], l).end()
		} else {
			t.line("", "    "+l)
		}
	}
	for _, id := range g.IDs {
		t.line("", "    "+ellipsis(clean(id), t.width-4))
	}
	if g.Unnamed > 0 {
		t.line(sgrDim, "    "+ellipsis(unnamedText(g.Unnamed), t.width-4))
	}
}

// legend: what the reasons on the rows mean (the groups say theirs
// inline).
func (r *reportWriter) legend() {
	t := r.t
	keyW := 0
	for _, e := range r.m.legend {
		if e.Rows > 0 {
			keyW = max(keyW, textWidth(clean(string(e.Reason))))
		}
	}
	if keyW == 0 {
		return
	}
	t.blank()
	t.line(sgrBold, "What the reasons mean")
	for _, e := range r.m.legend {
		if e.Rows == 0 {
			continue
		}
		help := e.Help
		if help == "" {
			help = "(not a reason this version knows)"
		}
		for j, l := range wrap(help, t.width-4-keyW, t.width-4-keyW) {
			key := ""
			if j == 0 {
				key = clean(string(e.Reason))
			}
			t.line("", "  "+pad(key, keyW)+"  "+l)
		}
	}
}

// total: the tokens in sections and those of the header and joins.
func (r *reportWriter) total() {
	d := r.d
	r.t.blank()
	r.t.add(sgrBold, "Total  ").add("", fmt.Sprintf("%d of %d tokens: %d in sections, %d for the header and joins", d.TotalTokens, d.Budget, r.m.used, d.TotalTokens-r.m.used)).end()
}

// why is a row's last column: its reason, then its notes (but for
// lost_on_relevance, which a line of its own says).
func why(r row) string {
	parts := make([]string, 0, len(r.Why))
	for _, w := range r.Why {
		if w != noteLost {
			parts = append(parts, clean(w))
		}
	}
	return strings.Join(parts, ", ")
}

// short returns a hash shortened for a header line, its start kept.
func short(hash string) string {
	hash = clean(hash)
	if textWidth(hash) <= 20 {
		return hash
	}
	var b strings.Builder
	n := 0
	for _, r := range hash {
		if n+runeWidth(r) > 19 {
			break
		}
		n += runeWidth(r)
		b.WriteRune(r)
	}
	return b.String() + "…"
}

// compareForLegend orders reasons with required first, then as
// compareReasons does.
func compareForLegend(a, b outcome.Reason) int {
	if (a == noteRequired) != (b == noteRequired) {
		if a == noteRequired {
			return -1
		}
		return 1
	}
	return compareReasons(a, b)
}

// plural is "1 block", "2 blocks".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

// tokensText shows a block's count, or "-" for a block that was never
// counted (it could not fit whatever its exact count; every rendered block
// counts at least one token, so 0 means exactly that).
func tokensText(n int) string {
	if n == 0 {
		return "-"
	}
	return strconv.Itoa(n)
}
