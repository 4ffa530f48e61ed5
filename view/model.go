package view

import (
	"cmp"
	"math"
	"slices"
	"strconv"

	"github.com/contextasm/contextasm/outcome"
)

// Statuses as the views name them: a section's block is kept, cut or
// dropped (outcome.Status); a block that never reached a section is
// excluded.
const (
	statusKept     = "kept"
	statusCut      = "cut"
	statusDropped  = "dropped"
	statusExcluded = "excluded"
)

// statuses in the order the views list them.
var statuses = [...]string{statusKept, statusCut, statusDropped, statusExcluded}

// reasonHelp says in a few words what each reason means to a person.
// The first seven are the demo's wording (cmd/contextasm uses ReasonHelp).
var reasonHelp = map[outcome.Reason]string{
	outcome.ReasonExpired:           "past its valid_until",
	outcome.ReasonStale:             "past its stale point, so ranked lower: refresh it",
	outcome.ReasonOutOfScope:        "belongs to another session or user",
	outcome.ReasonAccessDenied:      "needs a role the request does not hold",
	outcome.ReasonAudience:          "meant for the user only, never the model",
	outcome.ReasonNoSection:         "no template section takes its memory type",
	outcome.ReasonEscaped:           "content imitated a delimiter or header and was neutralised",
	outcome.ReasonSectionCap:        "did not fit its section's max_tokens",
	outcome.ReasonBudget:            "removed to fit the budget (lowest-priority section, lowest rank first)",
	outcome.ReasonCut:               "cut at a token boundary to fill the room left in its section",
	outcome.ReasonBinary:            "binary content and no decoder: skipped",
	outcome.ReasonSourceUnavailable: "its source could not be read",
	outcome.ReasonOutsideRoot:       "outside its source's root directory: refused",
	outcome.ReasonSourceCut:         "the source listed more than a bound takes: the rest is not collected",
	outcome.ReasonStateUnavailable:  "the learned state could not be reached: ranked with the last snapshot of it",
	outcome.ReasonOrphan:            "a tool call without its result, or a result without its call: never sent alone",
	outcome.ReasonGroup:             "left out with its group (a tool call travels with its results), kept or dropped whole",
	outcome.ReasonFirstMessage:      "came before the first user turn, and the chat format must open with one",
	outcome.ReasonSticky:            "the conversation's previous decision stands: the score moved by less than the margin",
	outcome.ReasonSlack:             "let go with older blocks at once, so the next calls only append",
	noteLost:                        "left out for room, and a block kept above it outranked it by its relevance to the query alone: its score less its relevance points is lower",
	outcome.ReasonDegraded:          "written as a shorter variant, the richest that fitted",
	outcome.ReasonClipped:           "content past its max_tokens cut off, with a marker saying how much",
	outcome.ReasonCleared:           "an older tool result replaced by a placeholder, so its turn stays",
	outcome.ReasonReasoningDropped:  "its reasoning items not sent: the provider needs them only on the turn that made the pending tool calls",
	outcome.ReasonSuperseded:        "a newer block supersedes it",
	outcome.ReasonConflict:          "a more trusted block states the same fact or rule (its conflict_key): see Conflicts",
	outcome.ReasonSummarized:        "a summary in the context stands in for it",
	outcome.ReasonTurnsKept:         "a summary not needed: every turn it replaces is in the context",
	outcome.ReasonNoGain:            "a summary not used: without summaries and variants more blocks fitted",
}

// noteRequired marks a required block among a row's notes.
const noteRequired = "required"

// noteLost marks a block the dump says lost on relevance
// (outcome.BlockResult.LostOnRelevance) among a row's notes.
const noteLost = "lost_on_relevance"

// ReasonHelp says in a few words what an event or block reason means, for
// people reading a report; "" for a reason it does not know.
func ReasonHelp(r outcome.Reason) string {
	if r == noteRequired {
		return "the host requires it: never dropped or cut"
	}
	return reasonHelp[r]
}

// reasonOrder is the order reasons are grouped and listed in: the order
// decisions are made (docs/assembly.md), then notices and source problems.
var reasonOrder = []outcome.Reason{
	outcome.ReasonExpired, outcome.ReasonOutOfScope, outcome.ReasonAccessDenied,
	outcome.ReasonAudience, outcome.ReasonNoSection, outcome.ReasonOrphan,
	outcome.ReasonSectionCap, outcome.ReasonCut, outcome.ReasonBudget, outcome.ReasonGroup,
	outcome.ReasonFirstMessage,
	outcome.ReasonSlack, outcome.ReasonSticky, noteLost,
	outcome.ReasonSuperseded, outcome.ReasonConflict, outcome.ReasonNoGain, outcome.ReasonSummarized, outcome.ReasonTurnsKept,
	outcome.ReasonDegraded, outcome.ReasonClipped, outcome.ReasonCleared, outcome.ReasonReasoningDropped,
	outcome.ReasonStale, outcome.ReasonEscaped,
	outcome.ReasonBinary, outcome.ReasonSourceUnavailable, outcome.ReasonOutsideRoot,
	outcome.ReasonSourceCut, outcome.ReasonStateUnavailable,
}

// compareReasons orders reasons as reasonOrder does, unknown ones last by
// name.
func compareReasons(a, b outcome.Reason) int {
	ia, ib := slices.Index(reasonOrder, a), slices.Index(reasonOrder, b)
	if ia < 0 {
		ia = len(reasonOrder)
	}
	if ib < 0 {
		ib = len(reasonOrder)
	}
	return cmp.Or(cmp.Compare(ia, ib), cmp.Compare(a, b))
}

// row is one block of a section as the views show it.
type row struct {
	outcome.BlockResult
	Rank   int      // 1-based position in the section's rank order
	Status string   // kept, cut or dropped
	Notes  []string // "required", and notices such as stale and escaped
	Why    []string // the reason, then the notes
	// ScoreText is the score with four decimals.
	ScoreText string
	// RelevanceText and PointsText are the relevance and the points it
	// added to the score, with four decimals ("+0.1200"); "-" for 0.
	RelevanceText, PointsText string
	// Lost says, for a block the dump says lost on relevance, which block
	// above it outranked it by relevance alone; nil when the rows do not
	// show one (a dump edited by hand).
	Lost *lostTo
}

// lostTo is the block a row lost on relevance to, with the figures that
// show it: each one's score less its relevance points.
type lostTo struct {
	Rival     string // its request_id
	RivalBase string // its score without relevance, four decimals
	Base      string // the row's own
}

// text says it in a sentence.
func (l *lostTo) text() string {
	return "lost on relevance to " + l.Rival + ", ranked above it: without relevance it scores " + l.RivalBase + ", this block " + l.Base
}

// sectionView is one section with its rows.
type sectionView struct {
	outcome.SectionResult
	Rows      []row
	CapPct    int // used tokens, % of the section's cap
	BudgetPct int // used tokens, % of the budget
}

// group is the events of one reason that no section row shows: blocks
// excluded before ranking, sources' problems, notices about blocks not in
// any section.
type group struct {
	Kind   outcome.Kind
	Reason outcome.Reason
	Help   string
	IDs    []string // sorted
	// Unnamed is how many more blocks the group holds whose ids the dump
	// does not name: hidden exclusions, counted per reason.
	Unnamed int
}

// size is the number of blocks in the group.
func (g *group) size() int { return len(g.IDs) + g.Unnamed }

// unnamedText says how many blocks a group holds without naming them.
func unnamedText(n int) string {
	return plural(n, "block") + " hidden from this request: counted, not named"
}

// legendEntry is one reason or note the views show, with what it means and
// how often it occurs.
type legendEntry struct {
	Reason   outcome.Reason
	Help     string // "" for a reason this version does not know
	Rows     int    // section rows with it as reason or note
	Excluded int    // blocks excluded (or never delivered) for it
}

// model is the one explanation of a dump that every view lays out: the
// terminal report and the HTML page format it, each in its own way, and
// compute nothing of their own, so they cannot tell different stories.
type model struct {
	sections  []sectionView
	groups    []group // excluded first, then source, then anything else
	counts    map[string]int
	used      int // sum of the sections' used tokens
	budgetPct int // total tokens, % of the budget
	free      int // budget minus total tokens
	legend    []legendEntry
	cache     cacheView
	// queried: the assembly had a query (or a block a relevance), so the
	// views show relevance; query says where it came from, by hash.
	queried bool
	query   string
	tools   *toolsView // the tools part; nil without one
}

// kindOrder is the order of event groups in the views.
var kindOrder = []outcome.Kind{outcome.KindExcluded, outcome.KindSource, outcome.KindNotice, outcome.KindDropped, outcome.KindCut}

// analyse arranges d for the views. It trusts nothing in d: names and ids
// may be anything, events may name blocks no section has.
func analyse(d *outcome.Dump) *model {
	a := &analysis{d: d, where: make(map[blockKey][2]int), byID: make(map[string][2]int), groups: make(map[[2]string]*group),
		m: &model{counts: make(map[string]int), budgetPct: percent(d.TotalTokens, d.Budget), free: d.Budget - d.TotalTokens, cache: cacheOf(d),
			queried: d.Query != nil, query: queryText(d.Query), tools: toolsOf(d)}}
	a.rows()
	a.events()
	a.hidden()
	a.sortGroups()
	a.legend()
	return a.m
}

// analysis is analyse's state: the model being built, where each block's
// row is, and the groups of events no row says.
type analysis struct {
	d      *outcome.Dump
	m      *model
	where  map[blockKey][2]int  // section and row index of each block
	byID   map[string][2]int    // of the first block of each id
	groups map[[2]string]*group // by kind and reason
}

type blockKey struct{ section, id string }

// rows makes a row of every block of every section, in rank order.
func (a *analysis) rows() {
	for si, s := range a.d.Sections {
		sv := sectionView{SectionResult: s, Rows: make([]row, len(s.Blocks))}
		a.m.used += s.UsedTokens
		for bi, b := range s.Blocks {
			r := row{BlockResult: b, Rank: bi + 1, Status: b.Status.String()}
			if b.Required {
				r.Notes = append(r.Notes, noteRequired)
			}
			if b.LostOnRelevance {
				r.Notes = append(r.Notes, noteLost)
			}
			a.m.queried = a.m.queried || b.Relevance != 0 || b.RelevancePoints != 0
			sv.Rows[bi] = r
			a.m.counts[r.Status]++
			a.where[blockKey{s.Name, b.RequestID}] = [2]int{si, bi}
			if _, ok := a.byID[b.RequestID]; !ok {
				a.byID[b.RequestID] = [2]int{si, bi}
			}
		}
		for i, rival := range outcome.LostOnRelevance(s.Blocks) {
			if r := &sv.Rows[i]; r.LostOnRelevance {
				by := s.Blocks[rival]
				r.Lost = &lostTo{Rival: by.RequestID, RivalBase: withoutRelevance(by), Base: withoutRelevance(s.Blocks[i])}
			}
		}
		a.m.sections = append(a.m.sections, sv)
	}
}

// withoutRelevance is a row's score less its relevance points, with four
// decimals: how it ranks without the query.
func withoutRelevance(b outcome.BlockResult) string {
	return decimals4(math.Round(b.Score*1e4)/1e4 - math.Round(b.RelevancePoints*1e4)/1e4)
}

// decimals4 formats v with four decimals.
func decimals4(v float64) string { return strconv.FormatFloat(v, 'f', 4, 64) }

// relevanceText formats a relevance figure with four decimals (sign
// before it, for points that add to a score), "-" for 0.
func relevanceText(v float64, sign string) string {
	if v == 0 {
		return "-"
	}
	return sign + decimals4(v)
}

// queryText says what an assembly's relevance came from, by its hash and
// token count, never its text; "" without a query.
func queryText(q *outcome.Query) string {
	if q == nil {
		return ""
	}
	var from string
	switch q.From {
	case outcome.QueryRequest:
		from = "the request's query"
	case outcome.QueryNewestUserTurn:
		from = "the newest user turn"
		if q.Block != "" {
			from += " (" + clean(q.Block) + ")"
		}
	case outcome.QueryHost:
		from = "the host's relevance scores, for " + plural(q.Scores, "block")
	default:
		from = clean(q.From)
	}
	if q.Tokens > 0 {
		from += " · " + plural(q.Tokens, "token")
	}
	return from + " · " + short(q.SHA256)
}

// events puts each event on its block's row (a notice as a note; a
// reason the row already has is said by it), and every other one in the
// group of its kind and reason.
func (a *analysis) events() {
	for _, e := range a.d.Events {
		if a.onRow(e) || a.m.tools.leftOut(e) {
			continue
		}
		g := a.group(e.Kind, e.Reason)
		g.IDs = append(g.IDs, e.RequestID)
		if notBlock(e.Kind) {
			a.m.counts[statusExcluded]++
		}
	}
}

// onRow reports whether event e is said on its block's row, adding it as
// a note when it is a notice.
func (a *analysis) onRow(e outcome.Event) bool {
	pos, ok := a.where[blockKey{e.Section, e.RequestID}]
	if !ok && e.Section == "" {
		pos, ok = a.byID[e.RequestID]
	}
	if !ok || e.Kind == outcome.KindExcluded || e.Kind == outcome.KindSource {
		return false
	}
	r := &a.m.sections[pos[0]].Rows[pos[1]]
	switch {
	case e.Kind == outcome.KindNotice:
		if !slices.Contains(r.Notes, string(e.Reason)) {
			r.Notes = append(r.Notes, string(e.Reason))
		}
		return true
	case e.Reason == r.Reason:
		return true // the row says it
	}
	return false
}

// group returns the group of a kind and reason, made on first use.
func (a *analysis) group(kind outcome.Kind, reason outcome.Reason) *group {
	k := [2]string{string(kind), string(reason)}
	g := a.groups[k]
	if g == nil {
		g = &group{Kind: kind, Reason: reason}
		a.groups[k] = g
	}
	return g
}

// hidden counts the blocks excluded for a hidden reason, which no event
// names, into the excluded groups.
func (a *analysis) hidden() {
	for r, n := range a.d.ExcludedCounts {
		if n <= 0 {
			continue
		}
		a.group(outcome.KindExcluded, r).Unnamed += n
		a.m.counts[statusExcluded] += n
	}
}

// sortGroups orders the groups by kind (kindOrder), then reason, each
// group's ids sorted and its reason explained.
func (a *analysis) sortGroups() {
	for _, g := range a.groups {
		slices.Sort(g.IDs)
		g.Help = ReasonHelp(g.Reason)
		a.m.groups = append(a.m.groups, *g)
	}
	slices.SortFunc(a.m.groups, func(x, y group) int {
		kx, ky := slices.Index(kindOrder, x.Kind), slices.Index(kindOrder, y.Kind)
		if kx < 0 {
			kx = len(kindOrder)
		}
		if ky < 0 {
			ky = len(kindOrder)
		}
		return cmp.Or(cmp.Compare(kx, ky), cmp.Compare(x.Kind, y.Kind), compareReasons(x.Reason, y.Reason))
	})
}

// legend fills each row's figures and why, and lists every reason the rows
// and the groups give, with how many blocks each.
func (a *analysis) legend() {
	legend := make(map[outcome.Reason]*legendEntry)
	entry := func(r outcome.Reason) *legendEntry {
		e := legend[r]
		if e == nil {
			e = &legendEntry{Reason: r, Help: ReasonHelp(r)}
			legend[r] = e
		}
		return e
	}
	for si := range a.m.sections {
		s := &a.m.sections[si]
		s.CapPct, s.BudgetPct = percent(s.UsedTokens, s.MaxTokens), percent(s.UsedTokens, a.d.Budget)
		for ri := range s.Rows {
			r := &s.Rows[ri]
			r.ScoreText = decimals4(r.Score)
			r.RelevanceText, r.PointsText = relevanceText(r.Relevance, ""), relevanceText(r.RelevancePoints, "+")
			if r.Reason != "" {
				r.Why = append(r.Why, string(r.Reason))
			}
			r.Why = append(r.Why, r.Notes...)
			for _, w := range r.Why {
				entry(outcome.Reason(w)).Rows++
			}
		}
	}
	for _, g := range a.m.groups {
		if notBlock(g.Kind) {
			entry(g.Reason).Excluded += g.size()
		}
	}
	if v := a.m.tools; v != nil {
		for _, row := range v.Rows {
			if row.Reason != "" {
				e := entry(outcome.Reason(row.Reason))
				e.Rows++
				e.Help = row.Help
			}
		}
	}
	for _, e := range legend {
		a.m.legend = append(a.m.legend, *e)
	}
	slices.SortFunc(a.m.legend, func(x, y legendEntry) int { return compareForLegend(x.Reason, y.Reason) })
}

// percent is 100·part/whole rounded to an integer, 0 when whole is not
// positive.
func percent(part, whole int) int {
	if whole <= 0 {
		return 0
	}
	return (200*part + whole) / (2 * whole)
}

// notBlock reports whether events of kind k are about blocks that never
// reached a section: excluded before ranking, or a source's problem (a
// resource that never became a block). The views count both as excluded.
func notBlock(k outcome.Kind) bool {
	return k == outcome.KindExcluded || k == outcome.KindSource
}
