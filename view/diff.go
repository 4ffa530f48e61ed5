package view

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/contextasm/contextasm/outcome"
)

// ChangeKind says what changed for one block between two dumps.
type ChangeKind string

// The kinds of change, in the order a diff lists them. A block gets the
// first that applies.
const (
	// Appeared: the block is in B's dump and not in A's (declared since,
	// or reported for the first time).
	Appeared ChangeKind = "appeared"
	// Disappeared: the block is in A's dump and not in B's.
	Disappeared ChangeKind = "disappeared"
	// LeftOut: the block was in A's text (kept or cut) and is not in B's
	// (dropped or excluded). B's reason says why.
	LeftOut ChangeKind = "left_out"
	// NewlyCut: the block was kept whole in A and is cut in B.
	NewlyCut ChangeKind = "newly_cut"
	// BackIn: the block was dropped or excluded in A and is in B's text,
	// or was cut in A and is kept whole in B.
	BackIn ChangeKind = "back_in"
	// ReasonChanged: the block is out of both texts, for another reason or
	// with another status (dropped, excluded).
	ReasonChanged ChangeKind = "reason_changed"
	// RankChanged: the block's rank in its section changed relative to
	// the blocks both dumps rank there. Blocks that merely move down one
	// place because a block appeared above them are not reported.
	RankChanged ChangeKind = "rank_changed"
	// Changed: the same decision, with other tokens, score, section or
	// notes (a new stale notice, say).
	Changed ChangeKind = "changed"
)

// changeOrder is the order of the kinds in a diff.
var changeOrder = []ChangeKind{Appeared, Disappeared, LeftOut, NewlyCut, BackIn, ReasonChanged, RankChanged, Changed}

// DiffResult is what changed between two render dumps, A (before) and B
// (after). Its JSON is the output of `contextasm diff --format json`.
type DiffResult struct {
	// A summarises the dump before.
	A DumpSummary `json:"a"`
	// B summarises the dump after.
	B DumpSummary `json:"b"`
	// SameTemplate reports whether both dumps have the same fingerprint:
	// when they do not, caps, priorities or render rules may differ too.
	SameTemplate bool `json:"same_template"`
	// SameQuery reports whether relevance came from the same query in
	// both: the same sha256, or no query in either.
	SameQuery bool `json:"same_query"`
	// Sections are the sections of either dump, B's order first.
	Sections []SectionShift `json:"sections"`
	// Changes are the blocks whose decision changed, in changeOrder, then
	// by section and rank in B (in A for blocks B lacks), then by id.
	Changes []BlockChange `json:"changes"`
	// Unchanged counts the blocks both dumps decided the same way.
	Unchanged int `json:"unchanged"`
	// FirstDifference is where the two texts part, byte for byte: what a
	// prompt cache holding A can reuse for B. Nil when the texts are the
	// same.
	FirstDifference *FirstDifference `json:"first_difference"`
}

// DumpSummary identifies one side of a diff.
type DumpSummary struct {
	// Fingerprint is the dump's template fingerprint.
	Fingerprint string `json:"fingerprint"`
	// RenderHash (render_hash) is the dump's render hash.
	RenderHash string `json:"render_hash"`
	// Budget is the budget the dump's assembly applied.
	Budget int `json:"budget"`
	// TotalTokens (total_tokens) is the token count of the dump's text.
	TotalTokens int `json:"total_tokens"`
	// Now is the instant of the dump's assembly, RFC 3339.
	Now string `json:"now"`
	// Query is what the dump's relevance came from, by hash (never its
	// text); absent when relevance did not count.
	Query *outcome.Query `json:"query,omitempty"`
}

// SectionShift is one section's token shift from A to B. A section one
// dump lacks has zeros on that side.
type SectionShift struct {
	Name       string `json:"name"`         // the section's name
	UsedA      int    `json:"used_a"`       // the section's used_tokens in A
	UsedB      int    `json:"used_b"`       // … in B
	Shift      int    `json:"shift"`        // UsedB − UsedA
	MaxTokensA int    `json:"max_tokens_a"` // the section's cap (max_tokens) in A
	MaxTokensB int    `json:"max_tokens_b"` // … in B
	// InTextA and InTextB count the section's kept and cut blocks.
	InTextA int `json:"in_text_a"`
	InTextB int `json:"in_text_b"` // B's count
}

// BlockChange is one block whose decision changed.
type BlockChange struct {
	// RequestID (request_id) is the block's id.
	RequestID string `json:"request_id"`
	// Change is what changed: the first ChangeKind that applies.
	Change ChangeKind `json:"change"`
	// A and B are the block's state in each dump; null where the dump
	// does not have the block.
	A *BlockState `json:"a"`
	B *BlockState `json:"b"` // the block's state in B; null where B lacks it
}

// BlockState is what one dump decided about one block.
type BlockState struct {
	// Section is "" for a block excluded before ranking.
	Section string `json:"section,omitempty"`
	// Status is kept, cut, dropped or excluded.
	Status string `json:"status"`
	// Reason is why the block is cut, dropped or excluded (see
	// outcome.Reason); empty for a kept block.
	Reason outcome.Reason `json:"reason,omitempty"`
	// Rank is the 1-based position in the section's rank order; 0 for an
	// excluded block.
	Rank int `json:"rank,omitempty"`
	// Tokens is the block's token count in the dump (0 for an excluded
	// block).
	Tokens int `json:"tokens"`
	// Score is the block's ranking score (0 for an excluded block).
	Score float64 `json:"score"`
	// Relevance is the block's relevance to the dump's query, and
	// RelevancePoints (relevance_points) what it added to Score; absent
	// when 0.
	Relevance float64 `json:"relevance,omitempty"`
	// RelevancePoints is what relevance added to the score.
	RelevancePoints float64 `json:"relevance_points,omitempty"`
	// Notes are "required" and the block's notices (stale, escaped).
	Notes []string `json:"notes,omitempty"`

	section int // index in its dump's sections; len(sections) when excluded
	common  int // rank among the blocks of its section that both dumps rank there
}

func (s *BlockState) inText() bool { return s.Status == statusKept || s.Status == statusCut }

// states returns each block's state in d, by request_id. A block a dump
// names twice (two excluded events, say) keeps its first state.
func states(m *model) map[string]*BlockState {
	out := make(map[string]*BlockState)
	for si, s := range m.sections {
		for _, r := range s.Rows {
			if _, ok := out[r.RequestID]; ok {
				continue
			}
			out[r.RequestID] = &BlockState{
				Section: s.Name, Status: r.Status, Reason: r.Reason, Rank: r.Rank,
				Tokens: r.Tokens, Score: r.Score, Relevance: r.Relevance, RelevancePoints: r.RelevancePoints,
				Notes: slices.Clone(r.Notes), section: si,
			}
		}
	}
	for _, g := range m.groups {
		if !notBlock(g.Kind) {
			continue
		}
		for _, id := range g.IDs {
			if _, ok := out[id]; !ok {
				out[id] = &BlockState{Status: statusExcluded, Reason: g.Reason, section: len(m.sections)}
			}
		}
	}
	return out
}

// Diff compares two dumps block by block (matched by request_id) and
// section by section (matched by name).
func Diff(a, b *outcome.Dump) DiffResult {
	ma, mb := analyse(a), analyse(b)
	sa, sb := states(ma), states(mb)
	res := DiffResult{
		A:               summary(a),
		B:               summary(b),
		SameTemplate:    a.Fingerprint == b.Fingerprint,
		SameQuery:       sameQuery(a.Query, b.Query),
		Sections:        []SectionShift{},
		Changes:         []BlockChange{},
		FirstDifference: firstDifference(a, b),
	}

	// Sections: B's order, then those only A has.
	idx := make(map[string]int)
	add := func(s sectionView, isA bool) {
		i, ok := idx[s.Name]
		if !ok {
			i = len(res.Sections)
			idx[s.Name] = i
			res.Sections = append(res.Sections, SectionShift{Name: s.Name})
		}
		sh := &res.Sections[i]
		in := 0
		for _, r := range s.Rows {
			if r.Status == statusKept || r.Status == statusCut {
				in++
			}
		}
		if isA {
			sh.UsedA, sh.MaxTokensA, sh.InTextA = s.UsedTokens, s.MaxTokens, in
		} else {
			sh.UsedB, sh.MaxTokensB, sh.InTextB = s.UsedTokens, s.MaxTokens, in
		}
		sh.Shift = sh.UsedB - sh.UsedA
	}
	for _, s := range mb.sections {
		add(s, false)
	}
	for _, s := range ma.sections {
		add(s, true)
	}

	// Ranks among the blocks both dumps rank in the same section.
	commonRanks(ma, sa, sb)
	commonRanks(mb, sb, sa)

	ids := make([]string, 0, len(sa)+len(sb))
	for id := range sa {
		ids = append(ids, id)
	}
	for id := range sb {
		if _, ok := sa[id]; !ok {
			ids = append(ids, id)
		}
	}
	for _, id := range ids {
		x, y := sa[id], sb[id]
		kind, changed := classify(x, y)
		if !changed {
			res.Unchanged++
			continue
		}
		res.Changes = append(res.Changes, BlockChange{RequestID: id, Change: kind, A: x, B: y})
	}
	slices.SortFunc(res.Changes, func(p, q BlockChange) int {
		return cmp.Or(
			cmp.Compare(slices.Index(changeOrder, p.Change), slices.Index(changeOrder, q.Change)),
			cmp.Compare(where(p, len(mb.sections))[0], where(q, len(mb.sections))[0]),
			cmp.Compare(where(p, len(mb.sections))[1], where(q, len(mb.sections))[1]),
			cmp.Compare(p.RequestID, q.RequestID),
		)
	})
	return res
}

// where is a change's sort position: B's section and rank, or A's (after
// all of B's sections) for a block B lacks.
func where(c BlockChange, nb int) [2]int {
	if c.B != nil {
		return [2]int{c.B.section, c.B.Rank}
	}
	return [2]int{nb + 1 + c.A.section, c.A.Rank}
}

// commonRanks sets the common rank of each block of m that the other dump
// ranks in a section of the same name.
func commonRanks(m *model, mine, other map[string]*BlockState) {
	for _, s := range m.sections {
		n := 0
		for _, r := range s.Rows {
			st := mine[r.RequestID]
			if o := other[r.RequestID]; o != nil && o.Section == s.Name && st.Section == s.Name {
				n++
				st.common = n
			}
		}
	}
}

// classify returns what changed between x (in A) and y (in B), and false
// when nothing did.
func classify(x, y *BlockState) (ChangeKind, bool) {
	switch {
	case x == nil:
		return Appeared, true
	case y == nil:
		return Disappeared, true
	case x.inText() && !y.inText():
		return LeftOut, true
	case x.Status == statusKept && y.Status == statusCut:
		return NewlyCut, true
	case !x.inText() && y.inText(), x.Status == statusCut && y.Status == statusKept:
		return BackIn, true
	case x.Status != y.Status || x.Reason != y.Reason:
		return ReasonChanged, true
	case x.Section == y.Section && x.common != y.common:
		return RankChanged, true
	case x.Section != y.Section || tokensDiffer(x, y) || x.Score != y.Score || !slices.Equal(x.Notes, y.Notes),
		differs(x.RelevancePoints, y.RelevancePoints):
		return Changed, true
	}
	return "", false
}

// sameQuery reports whether two dumps' relevance came from the same
// query: both without one, or both with the same hash.
func sameQuery(a, b *outcome.Query) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.SHA256 == b.SHA256
}

// differs reports whether two figures a dump rounds to four decimals
// differ at those four: the rounding, or a float's last bit, is no change.
func differs(a, b float64) bool {
	return math.Round(a*1e4) != math.Round(b*1e4)
}

func summary(d *outcome.Dump) DumpSummary {
	return DumpSummary{Fingerprint: d.Fingerprint, RenderHash: d.RenderHash, Budget: d.Budget, TotalTokens: d.TotalTokens, Now: d.Now, Query: d.Query}
}

// changeTitle heads each kind's list in the text output.
var changeTitle = map[ChangeKind]string{
	Appeared:      "Appeared: in B's dump, not in A's",
	Disappeared:   "Disappeared: in A's dump, not in B's",
	LeftOut:       "Left out: in A's text, not in B's",
	NewlyCut:      "Newly cut: whole in A, cut in B",
	BackIn:        "Back in: in B's text again, or whole again",
	ReasonChanged: "Out in both, for another reason",
	RankChanged:   "Rank changed within the section",
	Changed:       "Same decision, other numbers",
}

// changeMark starts each change's line.
var changeMark = map[ChangeKind]string{
	Appeared: "+", Disappeared: "-", LeftOut: "-", NewlyCut: "~", BackIn: "+",
	ReasonChanged: "~", RankChanged: "↕", Changed: "~",
}

// WriteDiff writes r for a terminal, in at most DefaultWidth columns: the
// two dumps, the token shift per section, then each kind of change with
// its blocks, their decisions in A and B and the reasons.
func WriteDiff(w io.Writer, r DiffResult) error {
	t := newTermWriter(w, DefaultWidth, false)
	side := func(name string, s DumpSummary) {
		t.line("", fmt.Sprintf("  %s  %s  %d/%d tokens  now %s", name, clean(s.Fingerprint), s.TotalTokens, s.Budget, clean(s.Now)))
	}
	t.line("", "contextasm diff: A → B")
	side("A", r.A)
	side("B", r.B)
	if r.SameTemplate {
		t.line("", "  same template (fingerprint unchanged)")
	} else {
		t.line("", "  the template changed: caps, priorities or render rules may differ")
	}
	if q := queryShift(r); q != "" {
		for i, l := range wrap(q, t.width-2, t.width-4) {
			indent := "    "
			if i == 0 {
				indent = "  "
			}
			t.line("", indent+l)
		}
	}
	if f := r.FirstDifference; f == nil {
		t.line("", "  the texts are the same, byte for byte")
	} else {
		at := fmt.Sprintf("the texts part at byte %d (line %d, column %d)", f.Byte, f.Line, f.Column)
		if f.Block != "" {
			at += ", in " + clean(f.Section) + " at " + clean(f.Block)
		}
		for i, l := range wrap(at, t.width-2, t.width-4) {
			indent := "    "
			if i == 0 {
				indent = "  "
			}
			t.line("", indent+l)
		}
	}

	t.blank()
	t.line("", "Token shift per section")
	shift := func(a, b int) string {
		if a == b {
			return strconv.Itoa(b)
		}
		return fmt.Sprintf("%d → %d", a, b)
	}
	budget := shift(r.A.Budget, r.B.Budget) + " (budget)"
	nameW, capW := len("total"), textWidth(budget)
	for _, s := range r.Sections {
		nameW = max(nameW, textWidth(clean(s.Name)))
		capW = max(capW, textWidth(shift(s.MaxTokensA, s.MaxTokensB)))
	}
	// Numbers take 37 columns with the gaps; names get the rest.
	nameW = max(min(nameW, t.width-37-capW), 8)
	row := func(name, a, b, sh, in, cap string) {
		t.line("", "  "+pad(ellipsis(name, nameW), nameW)+"  "+padLeft(a, 6)+"  "+padLeft(b, 6)+"  "+padLeft(sh, 6)+"  "+padLeft(in, 7)+"  "+cap)
	}
	row("section", "A", "B", "shift", "in text", "cap")
	for _, s := range r.Sections {
		row(clean(s.Name), strconv.Itoa(s.UsedA), strconv.Itoa(s.UsedB), signed(s.Shift),
			fmt.Sprintf("%d→%d", s.InTextA, s.InTextB), shift(s.MaxTokensA, s.MaxTokensB))
	}
	row("total", strconv.Itoa(r.A.TotalTokens), strconv.Itoa(r.B.TotalTokens), signed(r.B.TotalTokens-r.A.TotalTokens), "", budget)

	if len(r.Changes) == 0 {
		t.blank()
		t.line("", fmt.Sprintf("No block changed: both dumps decided the same for all %d blocks.", r.Unchanged))
		return t.w.Flush()
	}
	idW := 0
	for _, c := range r.Changes {
		idW = max(idW, textWidth(clean(c.RequestID)))
	}
	idW = min(idW, 32)
	for i, c := range r.Changes {
		if i == 0 || c.Change != r.Changes[i-1].Change {
			n := 0
			for _, d := range r.Changes[i:] {
				if d.Change == c.Change {
					n++
				}
			}
			t.blank()
			t.line("", fmt.Sprintf("%s (%d)", changeTitle[c.Change], n))
		}
		head := "  " + changeMark[c.Change] + " " + pad(ellipsis(clean(c.RequestID), idW), idW) + "  "
		detail := describe(c)
		// The details follow the id when they fit, else go on the next
		// line, wrapped.
		if textWidth(head)+textWidth(detail) <= t.width {
			t.line("", head+detail)
		} else {
			t.line("", strings.TrimRight(head, " "))
			for _, l := range wrap(detail, t.width-6, t.width-6) {
				t.line("", "      "+l)
			}
		}
		if m := more(c); m != "" {
			for _, l := range wrap(m, t.width-6, t.width-6) {
				t.line("", "      "+l)
			}
		}
	}
	t.blank()
	t.line("", fmt.Sprintf("%d changed, %d unchanged.", len(r.Changes), r.Unchanged))
	return t.w.Flush()
}

// describe says what one change was: where the block is, its decisions in
// A and B, and the reason.
func describe(c BlockChange) string {
	x, y := c.A, c.B
	switch c.Change {
	case Appeared:
		return state(y)
	case Disappeared:
		return "was " + state(x)
	case RankChanged:
		return fmt.Sprintf("%s  %s #%d → #%d  score %s", clean(y.Section), y.Status, x.Rank, y.Rank, scoreShift(x.Score, y.Score)) + notesShift(x, y)
	case Changed:
		var parts []string
		if x.Section != y.Section {
			parts = append(parts, clean(x.Section)+" → "+clean(y.Section))
		} else {
			parts = append(parts, clean(y.Section))
		}
		parts = append(parts, y.Status)
		if tokensDiffer(x, y) {
			parts = append(parts, tokShift(x.Tokens, y.Tokens))
		}
		if x.Score != y.Score {
			parts = append(parts, "score "+scoreShift(x.Score, y.Score))
		}
		return strings.Join(parts, "  ") + notesShift(x, y)
	}
	// A decision changed: left out, newly cut, back in, another reason.
	tokens := tokShift(x.Tokens, y.Tokens)
	if x.Section == y.Section && x.Section != "" {
		return clean(y.Section) + "  " + decision(x) + " → " + decision(y) + "  " + tokens
	}
	return state(x) + " → " + state(y)
}

// more is what a change's second line says: how the block's relevance
// moved, and for a decision that changed, its notes (a block now lost on
// relevance says so); "" for nothing.
func more(c BlockChange) string {
	if c.A == nil || c.B == nil {
		return ""
	}
	s := relevanceShift(c.A, c.B)
	switch c.Change {
	case RankChanged, Changed: // their line names the notes
	default:
		s += notesShift(c.A, c.B)
	}
	return strings.TrimSpace(s)
}

// relevanceShift says how a block's relevance to the query moved, when
// it is not 0 on both sides and moved at the four decimals shown:
// "  relevance 0.0478 → 0.0988".
func relevanceShift(x, y *BlockState) string {
	if !differs(x.Relevance, y.Relevance) {
		return ""
	}
	return "relevance " + decimals4(x.Relevance) + " → " + decimals4(y.Relevance)
}

// queryShift says whether the two dumps' relevance came from the same
// query, by hash; "" when neither had one.
func queryShift(r DiffResult) string {
	a, b := r.A.Query, r.B.Query
	switch {
	case a == nil && b == nil:
		return ""
	case r.SameQuery:
		return "same query: " + queryName(b)
	}
	return "the query changed: " + queryName(a) + " → " + queryName(b)
}

// queryName names a query by the first 12 hex digits of its sha256 and
// where it came from: the turn, or "request" or "host".
func queryName(q *outcome.Query) string {
	if q == nil {
		return "none"
	}
	hex := clean(strings.TrimPrefix(q.SHA256, "sha256:"))
	if len(hex) > 12 {
		hex = hex[:12]
	}
	from := q.From
	if q.Block != "" {
		from = q.Block
	}
	return hex + " (" + clean(from) + ")"
}

// decision is a block's status, rank and reason: "dropped #4 (budget)".
func decision(s *BlockState) string {
	d := s.Status
	if s.Rank > 0 {
		d += " #" + strconv.Itoa(s.Rank)
	}
	if s.Reason != "" && (s.Status != statusCut || s.Reason != outcome.ReasonCut) {
		d += " (" + clean(string(s.Reason)) + ")"
	}
	return d
}

// state is a block's decision in one dump: "HISTORY  kept #2  23 tok" or
// "excluded (expired)".
func state(s *BlockState) string {
	d := decision(s)
	if s.Section != "" {
		d = clean(s.Section) + "  " + d
	}
	if s.Status != statusExcluded {
		d += "  " + tokShift(s.Tokens, s.Tokens)
	}
	return d
}

// tokensDiffer reports whether a block's count differs between the dumps.
// A dropped block counted in one and not in the other (0: under fill
// "stop" nothing after a misfit is counted) has not changed size.
func tokensDiffer(x, y *BlockState) bool {
	if x.Status == statusDropped && y.Status == statusDropped && (x.Tokens == 0 || y.Tokens == 0) {
		return false
	}
	return x.Tokens != y.Tokens
}

// tokShift shows a block's count in A and B: "23 tok", "23 → 25 tok", and
// "not counted" for 0, the count of a block dropped without counting.
func tokShift(a, b int) string {
	tok := func(n int) string {
		if n == 0 {
			return "not counted"
		}
		return strconv.Itoa(n) + " tok"
	}
	switch {
	case a == b:
		return tok(b)
	case a == 0 || b == 0:
		return tok(a) + " → " + tok(b)
	}
	return fmt.Sprintf("%d → %d tok", a, b)
}

func scoreShift(a, b float64) string {
	if a == b {
		return strconv.FormatFloat(a, 'f', 4, 64)
	}
	return strconv.FormatFloat(a, 'f', 4, 64) + " → " + strconv.FormatFloat(b, 'f', 4, 64)
}

// notesShift names the notices of B (new ones as such) and the notes B
// no longer has: a score that fell because the block went stale says so.
func notesShift(x, y *BlockState) string {
	var s string
	for _, n := range y.Notes {
		switch {
		case !slices.Contains(x.Notes, n):
			s += "  now " + clean(n)
		case n != noteRequired:
			s += "  " + clean(n)
		}
	}
	for _, n := range x.Notes {
		if !slices.Contains(y.Notes, n) {
			s += "  no longer " + clean(n)
		}
	}
	return s
}

func signed(n int) string {
	if n > 0 {
		return "+" + strconv.Itoa(n)
	}
	return strconv.Itoa(n)
}
