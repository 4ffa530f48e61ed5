package truncate

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/contextasm/contextasm/fingerprint"
	"github.com/contextasm/contextasm/template"
)

// Assembler runs assemblies and keeps scratch space between them. It is not
// safe for concurrent use; use one per goroutine.
type Assembler struct {
	// Scoring weighs blocks for ranking; the zero value means DefaultScoring.
	Scoring Scoring

	ranked [][]Ranked    // per section, in file order
	cands  [][]candidate // per section, rank order
	used   []int         // per section: the sum the cap is applied to
	render []byte
	text   []byte
	order  []int

	protected   []string // the delimiters of protectedOf
	protectedOf *template.Template
}

// candidate is an eligible block's working state inside its section.
type candidate struct {
	Ranked
	text    string // rendered (and possibly cut) block; "" until counted
	tokens  int
	status  Status
	reason  Reason
	escaped bool
	offset  int
}

func (c *candidate) inText() bool { return c.status == Kept || c.status == Cut }

func (a *Assembler) reset(n int) {
	if cap(a.ranked) < n {
		a.ranked = make([][]Ranked, n)
		a.cands = make([][]candidate, n)
		a.used = make([]int, n)
	}
	a.ranked, a.cands, a.used = a.ranked[:n], a.cands[:n], a.used[:n]
	for i := range n {
		a.ranked[i] = a.ranked[i][:0]
		clear(a.cands[i]) // drop references to the last call's strings
		a.cands[i] = a.cands[i][:0]
		a.used[i] = 0
	}
}

// Assemble selects, cuts and renders blocks under tpl for req, counting
// tokens with c. Blocks should come in a fixed order (package contextasm
// sorts them by request_id) so that events come in a fixed order too; the
// text does not depend on it.
func (a *Assembler) Assemble(tpl *template.Template, blocks []Block, req Request, c Counter) (*Output, error) {
	n := tpl.NumSections()
	a.reset(n)
	sc := a.Scoring.orDefault()
	out := &Output{}
	var misses []RequiredMiss

	for i := range blocks {
		b := &blocks[i]
		if reason := eligibility(b, tpl, &req); reason != "" {
			out.Events = append(out.Events, Event{Kind: KindExcluded, RequestID: b.ID, Reason: reason})
			if reason == ReasonNoSection && b.Required {
				misses = append(misses, RequiredMiss{RequestID: b.ID, Reason: ReasonNoSection})
			}
			continue
		}
		si, _ := tpl.SectionFor(b.Type)
		if _, stale := b.staleness(req.Now); stale {
			out.Events = append(out.Events, Event{Kind: KindNotice, Section: tpl.Section(si).Name(), RequestID: b.ID, Reason: ReasonStale})
		}
		a.ranked[si] = append(a.ranked[si], Ranked{Index: int32(i), Required: b.Required, Score: sc.Score(b, req.Now), ID: b.ID})
	}

	for k := range n {
		si := tpl.ByPriority(k)
		Rank(a.ranked[si])
		for _, r := range a.ranked[si] {
			a.cands[si] = append(a.cands[si], candidate{Ranked: r})
		}
		misses = a.fill(tpl.Section(si), blocks, c, out, misses)
	}
	if len(misses) > 0 {
		return nil, &RequiredError{Misses: misses}
	}

	if err := a.fitBudget(tpl, blocks, c, out); err != nil {
		return nil, err
	}
	a.results(tpl, blocks, out)
	return out, nil
}

// eligibility returns why b cannot enter the context, or "" if it can.
func eligibility(b *Block, tpl *template.Template, req *Request) Reason {
	switch {
	case !b.ValidUntil.IsZero() && !req.Now.Before(b.ValidUntil):
		return ReasonExpired
	case b.Scope == "session" && b.SessionID != req.SessionID,
		b.Scope == "user" && b.UserID != req.UserID:
		return ReasonOutOfScope
	case len(b.Roles) > 0 && !anyShared(b.Roles, req.Roles):
		return ReasonAccessDenied
	case !b.ForAssistant:
		return ReasonAudience
	}
	if _, ok := tpl.SectionFor(b.Type); !ok {
		return ReasonNoSection
	}
	return ""
}

func anyShared(have, want []string) bool {
	for _, h := range have {
		if slices.Contains(want, h) {
			return true
		}
	}
	return false
}

// renderBlock renders b (with content in place of its own) for sec.
func (a *Assembler) renderBlock(sec *template.Section, b *Block, content string) (string, bool) {
	var escaped bool
	a.render, escaped = sec.AppendRender(a.render[:0], template.Fields{
		Content: content, RequestID: b.ID, MemoryType: string(b.Type), SourceID: b.SourceID,
	})
	return string(a.render), escaped
}

// fill selects the section's blocks in rank order under its cap.
func (a *Assembler) fill(sec *template.Section, blocks []Block, c Counter, out *Output, misses []RequiredMiss) []RequiredMiss {
	si := sec.Index()
	cands := a.cands[si]
	capTokens := sec.MaxTokens()
	sepTokens := c.Count(sec.Separator())
	used, kept := 0, 0
	stopped, cutDone := false, false
	drop := func(cd *candidate) {
		cd.status, cd.reason = Dropped, ReasonSectionCap
		out.Events = append(out.Events, Event{Kind: KindDropped, Section: sec.Name(), RequestID: cd.ID, Reason: ReasonSectionCap, Tokens: cd.tokens})
	}
	for i := range cands {
		cd := &cands[i]
		b := &blocks[cd.Index]
		if stopped && !cd.Required {
			drop(cd) // not counted: it cannot enter
			continue
		}
		cd.text, cd.escaped = a.renderBlock(sec, b, b.Content)
		cd.tokens = c.Count(cd.text)
		sep := 0
		if kept > 0 {
			sep = sepTokens
		}
		if used+sep+cd.tokens <= capTokens || cd.Required {
			if used+sep+cd.tokens > capTokens {
				misses = append(misses, RequiredMiss{RequestID: cd.ID, Section: sec.Name(), Tokens: cd.tokens, Limit: capTokens, Reason: ReasonSectionCap})
			}
			cd.status = Kept
			used += sep + cd.tokens
			kept++
			continue
		}
		room := capTokens - used - sep
		if sec.Partial() && !cutDone && room >= sec.MinPartialTokens() && a.cut(sec, b, cd, room, c) {
			cd.status, cd.reason = Cut, ReasonCut
			out.Events = append(out.Events, Event{Kind: KindCut, Section: sec.Name(), RequestID: cd.ID, Reason: ReasonCut, Tokens: cd.tokens})
			used += sep + cd.tokens
			kept++
			cutDone = true
		} else {
			cd.text = "" // not in the text; keep only its count
			drop(cd)
		}
		if sec.Fill() == template.FillStop {
			stopped = true
		}
	}
	a.used[si] = used
	return misses
}

// cut shrinks b's content so that its rendering fits room tokens, at a
// token boundary of the content. It reports false when nothing fits.
func (a *Assembler) cut(sec *template.Section, b *Block, cd *candidate, room int, c Counter) bool {
	empty, _ := a.renderBlock(sec, b, "")
	target := room - c.Count(empty)
	// Cutting the content and rendering it around again can change the
	// count at the joins (and neutralising adds characters), so verify and
	// shrink by the excess a few times.
	for range 8 {
		if target <= 0 {
			return false
		}
		part := c.Cut(b.Content, target)
		if part == "" {
			return false
		}
		text, escaped := a.renderBlock(sec, b, part)
		tokens := c.Count(text)
		if tokens <= room {
			cd.text, cd.tokens, cd.escaped = text, tokens, escaped
			return true
		}
		target -= max(tokens-room, 1)
	}
	return false
}

// sectionUsed recomputes the sum a section's cap applies to.
func sectionUsed(cands []candidate, sepTokens int) int {
	used, kept := 0, 0
	for i := range cands {
		if cands[i].inText() {
			used += cands[i].tokens
			kept++
		}
	}
	if kept > 1 {
		used += (kept - 1) * sepTokens
	}
	return used
}

// fitBudget drops blocks, lowest-priority section and lowest-ranked block
// first, until the final text's exact count fits the budget, and renders it.
func (a *Assembler) fitBudget(tpl *template.Template, blocks []Block, c Counter, out *Output) error {
	budget := tpl.Budget()
	n := tpl.NumSections()
	joinTokens := c.Count("\n")
	estimate := c.Count(tpl.Header())
	for si := range n {
		if a.used[si] > 0 || hasKept(a.cands[si]) {
			estimate += joinTokens + a.used[si]
		}
	}
	cursor := dropCursor{k: n - 1, j: -2}
	dropNext := func() bool {
		si, j, ok := cursor.next(tpl, a.cands)
		if !ok {
			return false
		}
		cd := &a.cands[si][j]
		cd.status, cd.reason = Dropped, ReasonBudget
		cd.text = ""
		sec := tpl.Section(si)
		out.Events = append(out.Events, Event{Kind: KindDropped, Section: sec.Name(), RequestID: cd.ID, Reason: ReasonBudget, Tokens: cd.tokens})
		before := a.used[si]
		a.used[si] = sectionUsed(a.cands[si], c.Count(sec.Separator()))
		estimate -= before - a.used[si]
		if !hasKept(a.cands[si]) {
			estimate -= joinTokens
		}
		return true
	}
	for estimate > budget && dropNext() {
	}
	for {
		a.writeText(tpl, blocks)
		out.Text = string(a.text)
		out.TotalTokens = c.Count(out.Text)
		if out.TotalTokens <= budget {
			return nil
		}
		if !dropNext() {
			return a.overBudget(tpl, budget, c)
		}
	}
}

// overBudget builds the error for required blocks that alone exceed the
// budget.
func (a *Assembler) overBudget(tpl *template.Template, budget int, c Counter) error {
	var misses []RequiredMiss
	for si := range a.cands {
		for _, cd := range a.cands[si] {
			if cd.inText() && cd.Required {
				misses = append(misses, RequiredMiss{RequestID: cd.ID, Section: tpl.Section(si).Name(), Tokens: cd.tokens, Limit: budget, Reason: ReasonBudget})
			}
		}
	}
	if len(misses) == 0 {
		return fmt.Errorf("%w: the protocol header alone takes %d tokens, more than the budget of %d",
			ErrBudgetTooSmall, c.Count(tpl.Header()), budget)
	}
	return &RequiredError{Misses: misses}
}

func hasKept(cands []candidate) bool {
	for i := range cands {
		if cands[i].inText() {
			return true
		}
	}
	return false
}

// dropCursor walks blocks in budget-cut order: sections from the least
// important, blocks from the lowest-ranked, skipping required blocks and
// blocks not in the text.
type dropCursor struct{ k, j int }

func (d *dropCursor) next(tpl *template.Template, cands [][]candidate) (si, j int, ok bool) {
	for d.k >= 0 {
		si = tpl.ByPriority(d.k)
		if d.j == -2 {
			d.j = len(cands[si]) - 1
		}
		for ; d.j >= 0; d.j-- {
			cd := &cands[si][d.j]
			if cd.inText() && !cd.Required {
				j = d.j
				d.j--
				return si, j, true
			}
		}
		d.k--
		d.j = -2
	}
	return 0, 0, false
}

// writeText renders the header and every section with blocks into a.text,
// recording each block's offset.
func (a *Assembler) writeText(tpl *template.Template, blocks []Block) {
	if a.protectedOf != tpl {
		a.protected, a.protectedOf = tpl.Protected(), tpl
	}
	protected := a.protected
	a.text = append(a.text[:0], tpl.Header()...)
	for si := range tpl.NumSections() {
		sec := tpl.Section(si)
		cands := a.cands[si]
		a.order = a.order[:0]
		for i := range cands {
			if cands[i].inText() {
				a.order = append(a.order, i)
			}
		}
		if len(a.order) == 0 {
			continue
		}
		switch sec.Order() {
		case template.OrderDeclared:
			slices.SortStableFunc(a.order, func(x, y int) int {
				return cmp.Compare(blocks[cands[x].Index].Seq, blocks[cands[y].Index].Seq)
			})
		case template.OrderTime:
			slices.SortStableFunc(a.order, func(x, y int) int {
				return blocks[cands[x].Index].LastModified.Compare(blocks[cands[y].Index].LastModified)
			})
		}
		a.text = append(a.text, '\n')
		for w, i := range a.order {
			if w > 0 {
				a.appendJoined(sec.Separator(), protected)
			}
			a.appendJoined(cands[i].text, protected)
			cands[i].offset = len(a.text) - len(cands[i].text)
		}
	}
}

// results fills out.Sections and the escaped notices.
func (a *Assembler) results(tpl *template.Template, blocks []Block, out *Output) {
	out.Sections = make([]SectionResult, tpl.NumSections())
	for si := range out.Sections {
		sec := tpl.Section(si)
		sr := SectionResult{Name: sec.Name(), Priority: sec.Priority(), MaxTokens: sec.MaxTokens(), UsedTokens: a.used[si]}
		sr.Blocks = make([]BlockResult, len(a.cands[si]))
		for i := range a.cands[si] {
			cd := &a.cands[si][i]
			br := BlockResult{
				RequestID: cd.ID, MemoryType: blocks[cd.Index].Type, Tokens: cd.tokens,
				Score: math.Round(cd.Score*1e4) / 1e4, Status: cd.status, Reason: cd.reason, Required: cd.Required,
				Trust: blocks[cd.Index].Trust, ViolationPatterns: blocks[cd.Index].ViolationPatterns,
				SourceID: blocks[cd.Index].SourceID, SourceLocation: blocks[cd.Index].SourceLocation, URI: blocks[cd.Index].URI,
			}
			if cd.inText() {
				br.Offset, br.Length = cd.offset, len(cd.text)
			}
			sr.Blocks[i] = br
		}
		out.Sections[si] = sr
	}
	for si := range a.cands {
		for i := range a.cands[si] {
			if cd := &a.cands[si][i]; cd.inText() && cd.escaped {
				out.Events = append(out.Events, Event{Kind: KindNotice, Section: tpl.Section(si).Name(), RequestID: cd.ID, Reason: ReasonEscaped})
			}
		}
	}
}

// appendJoined appends s to the text, with a joiner before it if the two
// would form a protected delimiter across the join: two blocks written back
// to back (separator "") must not spell one between them.
func (a *Assembler) appendJoined(s string, protected []string) {
	if s == "" {
		return
	}
	if fingerprint.Crosses(a.text, s, protected) {
		a.text = append(a.text, fingerprint.Joiner...)
	}
	a.text = append(a.text, s...)
}
