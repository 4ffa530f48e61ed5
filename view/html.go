package view

import (
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"html/template"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/contextasm/contextasm/internal/delimit"
	"github.com/contextasm/contextasm/outcome"
)

//go:embed assets/page.html.tmpl assets/style.css assets/script.js
var assets embed.FS

// page is the parsed HTML template with its style and script. It is
// immutable once built; html/template may execute it concurrently.
type page struct {
	tmpl *template.Template
	css  template.CSS
	js   template.JS
	csp  string
}

// loadPage parses the embedded assets. The assets are part of the binary,
// so an error here is a bug, caught by every test that writes HTML.
func loadPage() (*page, error) {
	tmpl, err := template.ParseFS(assets, "assets/page.html.tmpl")
	if err != nil {
		return nil, err
	}
	css, err := assets.ReadFile("assets/style.css")
	if err != nil {
		return nil, err
	}
	js, err := assets.ReadFile("assets/script.js")
	if err != nil {
		return nil, err
	}
	// The policy lets in exactly this page's style and script (by hash)
	// and nothing else: no request can leave the page, and markup that
	// escaped escaping still could not run.
	csp := "default-src 'none'; script-src '" + hash(js) + "'; style-src '" + hash(css) +
		"'; style-src-attr 'unsafe-inline'; base-uri 'none'; form-action 'none'"
	return &page{tmpl: tmpl, css: template.CSS(css), js: template.JS(js), csp: csp}, nil
}

func hash(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256-" + base64.StdEncoding.EncodeToString(sum[:])
}

// WriteHTML writes d as one self-contained HTML page: the fingerprint and
// the budget, each section as a stacked bar of its blocks and a table of
// them (status, tokens, score, reason, provenance), the blocks excluded
// before ranking, filters by status and reason, and the rendered text with
// each block's span highlighted and linked to its row.
//
// The page has its style and script inline and loads nothing: no scripts,
// styles, fonts or images from anywhere, enforced by a Content Security
// Policy. Every string from the dump (block text, ids, names) is
// HTML-escaped: a block is untrusted text.
func WriteHTML(w io.Writer, d *outcome.Dump) error {
	p, err := loadPage()
	if err != nil {
		return err
	}
	return p.tmpl.Execute(w, buildHTML(d, p))
}

// The template's data.
type (
	htmlData struct {
		D          *outcome.Dump
		CSP        string
		CSS        template.CSS
		JS         template.JS
		BudgetPct  int
		Free       int
		Rest       int // tokens not in any section's used count
		Total      int // rows
		Counts     []statusCount
		Reasons    []reasonCount
		Sections   []htmlSection
		Excluded   []*htmlRow
		Other      []otherEvent // events about blocks no section shows
		Conflicts  []conflictView
		LeftOut    []*htmlRow
		Segments   []segment
		HasJoiner  bool // the text has a word joiner contextasm inserted
		HasCarried bool // the text has a word joiner a block's content carried
		Cache      cacheView
		Queried    bool   // the tables show relevance and its points
		Query      string // what relevance came from, by hash; "" without a query
		Columns    int    // of a section's table
		Tools      *toolsView
	}
	statusCount struct {
		Status string
		N      int
	}
	reasonCount struct {
		Reason string
		N      int
	}
	htmlSection struct {
		Anchor      string
		Color       int
		Name        string
		Priority    int
		Max, Used   int
		CapPct      int
		BudgetPct   int
		BudgetWidth string // % of the budget bar
		Scale       int    // tokens the full width of the section's bar stands for
		CapPos      string // % position of the cap marker
		Bar         []*htmlRow
		Rows        []*htmlRow
	}
	htmlRow struct {
		Anchor     string
		Span       string // id of the block's span in the text, "" if not in it
		Section    string
		Rank       int
		ID         string
		MemoryType string
		Status     string
		Reason     string
		ReasonHelp string
		Notes      []note
		Reasons    string // reason and notes, space-separated, for the filter
		Tokens     int
		Score      string
		Relevance  string // four decimals, "-" for 0
		Points     string // what relevance added to the score: "+0.1200", "-" for 0
		Lost       bool   // lost on relevance
		Width      string // % of the section's bar
		Provenance []keyValue
		offset     int
		length     int
	}
	otherEvent struct{ Kind, Reason, Help, ID string }
	note       struct{ Name, Help string }
	keyValue   struct{ Key, Value string }
	segment    struct {
		Row   *htmlRow // nil for text between blocks
		Parts []part
	}
	part struct {
		Text    string
		Joiner  bool // a U+2060 contextasm inserted
		Carried bool // a U+2060 the block's own content carried
	}
)

// pct formats 100·part/whole with two decimals, for CSS widths.
func pct(part, whole int) string {
	if whole <= 0 {
		return "0"
	}
	return strconv.FormatFloat(100*float64(max(part, 0))/float64(whole), 'f', 2, 64)
}

func buildHTML(d *outcome.Dump, p *page) *htmlData {
	m := analyse(d)
	h := &htmlData{
		D: d, CSP: p.csp, CSS: p.css, JS: p.js,
		BudgetPct: m.budgetPct,
		Free:      m.free,
		Rest:      d.Budget - m.used,
		Cache:     m.cache,
		Queried:   m.queried,
		Query:     m.query,
		Columns:   8,
		Tools:     m.tools,
	}
	if m.queried {
		h.Columns += 2
	}
	n := 0
	newRow := func() *htmlRow {
		n++
		return &htmlRow{Anchor: "b" + strconv.Itoa(n)}
	}
	var inText []*htmlRow
	for si, s := range m.sections {
		hs := htmlSection{
			Anchor: "s" + strconv.Itoa(si+1), Color: si % 8, Name: s.Name, Priority: s.Priority,
			Max: s.MaxTokens, Used: s.UsedTokens,
			CapPct: s.CapPct, BudgetPct: s.BudgetPct,
			BudgetWidth: pct(s.UsedTokens, d.Budget),
		}
		all := 0
		for _, r := range s.Rows {
			all += max(r.Tokens, 0)
		}
		hs.Scale = max(all, s.MaxTokens, 1)
		hs.CapPos = pct(s.MaxTokens, hs.Scale)
		for _, r := range s.Rows {
			hr := newRow()
			fillRow(hr, s.Name, &r, hs.Scale)
			if r.Length > 0 {
				hr.offset, hr.length = r.Offset, r.Length
				inText = append(inText, hr)
			}
			if r.Status != statusKept {
				h.LeftOut = append(h.LeftOut, hr)
			}
			hs.Rows = append(hs.Rows, hr)
		}
		// The bar: what is in the text first (rank order), then what is not,
		// so the cap marker separates what fit from what did not.
		for _, hr := range hs.Rows {
			if hr.Status != statusDropped {
				hs.Bar = append(hs.Bar, hr)
			}
		}
		for _, hr := range hs.Rows {
			if hr.Status == statusDropped {
				hs.Bar = append(hs.Bar, hr)
			}
		}
		h.Sections = append(h.Sections, hs)
	}
	for _, g := range m.groups {
		if !notBlock(g.Kind) {
			for _, id := range g.IDs {
				h.Other = append(h.Other, otherEvent{Kind: string(g.Kind), Reason: string(g.Reason), Help: g.Help, ID: id})
			}
			continue
		}
		ids := g.IDs
		if g.Unnamed > 0 {
			ids = append(slices.Clip(ids), unnamedText(g.Unnamed))
		}
		for _, id := range ids {
			hr := newRow()
			hr.ID, hr.Status, hr.Reason, hr.ReasonHelp = id, statusExcluded, string(g.Reason), g.Help
			hr.Reasons = string(g.Reason)
			h.Excluded = append(h.Excluded, hr)
			h.LeftOut = append(h.LeftOut, hr)
		}
	}
	h.Total = n
	for _, st := range statuses {
		h.Counts = append(h.Counts, statusCount{st, m.counts[st]})
	}
	for _, e := range m.legend {
		if n := e.Rows + e.Excluded; n > 0 {
			h.Reasons = append(h.Reasons, reasonCount{string(e.Reason), n})
		}
	}
	h.Conflicts = conflictViews(d)
	h.Segments = segments(d.Text, inText)
	h.HasJoiner, h.HasCarried = joinerMarks(h.Segments)
	return h
}

// fillRow sets what hr shows of row r of section name, its bar scaled to
// scale tokens.
func fillRow(hr *htmlRow, name string, r *row, scale int) {
	hr.Section, hr.Rank, hr.ID, hr.MemoryType = name, r.Rank, r.RequestID, string(r.MemoryType)
	hr.Status, hr.Reason, hr.ReasonHelp = r.Status, string(r.Reason), ReasonHelp(r.Reason)
	hr.Tokens, hr.Score = r.Tokens, r.ScoreText
	hr.Relevance, hr.Points, hr.Lost = r.RelevanceText, r.PointsText, r.LostOnRelevance
	hr.Width = pct(r.Tokens, scale)
	for _, nt := range r.Notes {
		help := ReasonHelp(outcome.Reason(nt))
		if nt == noteLost && r.Lost != nil {
			help = r.Lost.text()
		}
		hr.Notes = append(hr.Notes, note{nt, help})
	}
	hr.Reasons = strings.Join(r.Why, " ")
	for _, kv := range []keyValue{{"source", r.SourceID}, {"location", r.SourceLocation}, {"uri", r.URI}} {
		if kv.Value != "" {
			hr.Provenance = append(hr.Provenance, kv)
		}
	}
}

// joinerMarks reports whether the segments show a joiner contextasm
// inserted, and one a block's content carried: the legend explains each.
func joinerMarks(segs []segment) (inserted, carried bool) {
	for _, sg := range segs {
		for _, pt := range sg.Parts {
			inserted, carried = inserted || pt.Joiner, carried || pt.Carried
		}
	}
	return inserted, carried
}

// segments splits text into the spans of the rows (located by byte offset
// and length) and the text between them. A span that lies outside the
// text, splits a UTF-8 character or overlaps an earlier one is not
// highlighted (a hand-edited dump must not break the page); its row then
// has no link to the text.
func segments(text string, rows []*htmlRow) []segment {
	rows = slices.Clone(rows)
	slices.SortStableFunc(rows, func(a, b *htmlRow) int { return a.offset - b.offset })
	var segs []segment
	at := 0
	for _, r := range rows {
		end := r.offset + r.length
		if r.offset < at || end > len(text) || r.length <= 0 ||
			!boundary(text, r.offset) || !boundary(text, end) {
			continue
		}
		if r.offset > at {
			segs = append(segs, segment{Parts: parts(text[at:r.offset], false)})
		}
		r.Span = "t" + strings.TrimPrefix(r.Anchor, "b")
		segs = append(segs, segment{Row: r, Parts: parts(text[r.offset:end], !r.escaped())})
		at = end
	}
	if at < len(text) {
		segs = append(segs, segment{Parts: parts(text[at:], false)})
	}
	return segs
}

// escaped reports whether the block has an escaped notice: contextasm
// broke a delimiter in it.
func (r *htmlRow) escaped() bool {
	return slices.ContainsFunc(r.Notes, func(n note) bool { return n.Name == string(outcome.ReasonEscaped) })
}

// boundary reports whether i starts a character of s (or is its end).
func boundary(s string, i int) bool {
	return i == len(s) || utf8.RuneStart(s[i])
}

// parts splits s around its word joiners, so the page can show where
// contextasm broke a forged delimiter, and which joiners a block's content
// carried itself. contextasm inserts joiners in a block's values only when
// it escapes the block (an escaped notice), and at the joins between
// blocks, outside every block's span; template literals hold none. So a
// joiner in the span of a block that was not escaped is the content's
// (carried); one anywhere else is contextasm's. (In a block that was
// escaped, a joiner its content carried too is shown as inserted: the
// dump does not say which is which.)
func parts(s string, carried bool) []part {
	var ps []part
	for {
		i := strings.Index(s, delimit.Joiner)
		if i < 0 {
			break
		}
		if i > 0 {
			ps = append(ps, part{Text: s[:i]})
		}
		ps = append(ps, part{Text: delimit.Joiner, Joiner: !carried, Carried: carried})
		s = s[i+len(delimit.Joiner):]
	}
	if s != "" {
		ps = append(ps, part{Text: s})
	}
	return ps
}
