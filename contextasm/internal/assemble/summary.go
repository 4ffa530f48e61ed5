package assemble

import (
	"cmp"
	"slices"
	"strings"
	"time"

	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/outcome"
	"github.com/contextasm/contextasm/template"
	"github.com/contextasm/contextasm/truncate"
)

// Summaries (a history block with replaces) and the turns they stand for:
// see the comment at the head of degrade.go.

// replState is how far a replacement is decided.
type replState uint8

const (
	replOpen      replState = iota // not decided yet
	replTurns                      // its turns were kept whole; the summary waits
	replOn                         // the summary stands in for its turns
	replDissolved                  // neither fitted whole: the turns are decided one by one
)

// repl is a summary and the turns it replaces in its section (with the
// groups they belong to): the summary stands in for all of them, or for
// none.
type repl struct {
	si       int
	summary  int32   // the summary's block index
	members  []int32 // the turns' block indices
	ids      int     // how many turns it stands for, present or not
	complete bool    // every id it names is a member
	unusable bool    // a member is required, and required blocks are never dropped
	wasOn    bool    // it stood in for its turns at some point
	state    replState
	sCand    int   // the summary's candidate, once bound
	mCands   []int // the members' candidates, once bound
	at       time.Time
	seq      int64 // the newest member's last_modified and declaration: where it is written
	// In an incremental assembly (replindex.go): the summary, and the
	// turns that are candidates when pulled.
	sBlock  *Block
	mBlocks []*Block
	// sAt and mAt are the plan's (planRepl.sAt, at), which its
	// replacements' lane finds their entries by.
	sAt *int32
	mAt []int32
}

// replOfCand returns cd's replacement, or nil.
func (a *Assembler) replOfCand(cd *candidate) *repl {
	if cd.repl == 0 {
		return nil
	}
	return &a.deg.repls[cd.repl-1]
}

// buildRepls finds, in every section, the summaries among the eligible
// blocks (a.ranked, before ranking) and the turns each replaces there.
func (a *Assembler) buildRepls(tpl *template.Template, blocks []*Block, out *Output) {
	if a.deg.plain {
		return
	}
	for si := range a.secs {
		var sums []int
		for p, r := range a.secs[si].ranked {
			if b := blocks[r.Index]; len(b.Replaces()) > 0 && b.Type == declare.History {
				sums = append(sums, p)
			}
		}
		if len(sums) > 0 {
			a.deg.weighed = true
			a.replSection(tpl.Section(si), blocks, sums, out)
		}
	}
}

// replSection makes the replacements of section sec, whose summaries are
// at sums in its ranked blocks (resolveClaims), and excludes the summaries
// that cannot stand.
func (a *Assembler) replSection(sec *template.Section, blocks []*Block, sums []int, out *Output) {
	si := sec.Index()
	ranked := a.secs[si].ranked
	stand, gone := resolveClaims(ranked, blocks, a.plan.unitOf, sums)
	drop := make(map[int]bool, len(gone))
	for _, g := range gone {
		out.Events = append(out.Events, outcome.Event{Kind: outcome.KindExcluded, Section: sec.Name(), RequestID: blocks[ranked[g.at].Index].ID, Reason: outcome.ReasonSuperseded, By: blocks[ranked[g.by].Index].ID})
		drop[g.at] = true
	}
	for k := range stand {
		a.addRepl(si, &stand[k], ranked, blocks)
	}
	if len(drop) > 0 {
		kept := ranked[:0]
		for p, r := range ranked {
			if !drop[p] {
				kept = append(kept, r)
			}
		}
		clear(ranked[len(kept):])
		a.secs[si].ranked = kept
	}
}

// superseded is a summary that cannot stand (at, a position in ranked),
// the summary standing instead (by), and whether another summary names
// it (claim.named: where it is taken).
type superseded struct {
	at, by int
	named  bool
}

// resolveClaims returns what the summaries at sums among one section's
// ranked blocks stand for, in the order they are taken, and the summaries
// that cannot stand. A summary stands for the turns it names, the turns a
// summary it names stands for, and the groups of all of them (unitOf
// gives a block index's unit). Two summaries that stand for a common
// block, or one that names the other, cannot both stand: the one named by
// the other, else the older (by last_modified, then declaration), is
// excluded as superseded. ranked need not be every eligible block of the
// section, only those a summary may reach (an incremental assembly's).
func resolveClaims(ranked []Ranked, blocks []*Block, unitOf map[int32]int32, sums []int) (stand []claim, gone []superseded) {
	cl := claimer{ranked: ranked, blocks: blocks, pos: make(map[string]int, len(ranked)), unitOf: unitOf}
	for p, r := range ranked {
		cl.pos[blocks[r.Index].ID] = p
	}
	if len(unitOf) > 0 {
		cl.unitMembers = make(map[int32][]int)
		for p, r := range ranked {
			if u, ok := unitOf[r.Index]; ok {
				cl.unitMembers[u] = append(cl.unitMembers[u], p)
			}
		}
	}
	claims := make([]claim, len(sums))
	for k, p := range sums {
		claims[k].summaryAt = p
	}
	cl.markNamed(claims)
	taken := make(map[string]int) // id → the claim standing for it
	for _, k := range cl.order(claims) {
		c := &claims[k]
		b := blocks[ranked[c.summaryAt].Index]
		owner, clash := taken[b.ID]
		if !clash {
			// What it stands for, worked out only for a summary nothing
			// taken so far stands for: in a chain of summaries each naming
			// the one before, only the newest one's.
			named := c.named
			*c = cl.claimOf(c.summaryAt)
			c.named = named
			owner, clash = c.clashes(b.ID, taken)
		}
		if clash {
			gone = append(gone, superseded{at: c.summaryAt, by: claims[owner].summaryAt, named: c.named})
			continue
		}
		taken[b.ID] = k
		for _, id := range c.names {
			taken[id] = k
		}
		stand = append(stand, *c)
	}
	return stand, gone
}

// claim is what one summary stands for in its section.
type claim struct {
	set       []int    // the positions (in ranked) it stands for, sorted
	names     []string // every id it stands for, here or not
	ids       int      // how many turns it stands for, here or not
	complete  bool     // every id it names is here
	unusable  bool     // a block it stands for is required
	named     bool     // another summary here names it
	summaryAt int      // its own position
}

// claimer finds claims among one section's ranked blocks.
type claimer struct {
	ranked      []Ranked
	blocks      []*Block
	pos         map[string]int  // request_id → position in ranked
	unitOf      map[int32]int32 // block index → unit (plan.unitOf)
	unitMembers map[int32][]int // unit → its members' positions
}

// claimOf returns the claim of the summary at position p: the turns it
// names, those the summaries it names stand for, and their units'
// members, found breadth first.
func (cl *claimer) claimOf(p int) claim {
	b := cl.blocks[cl.ranked[p].Index]
	c := claim{complete: true, summaryAt: p}
	for _, id := range b.Replaces() {
		if _, ok := cl.pos[id]; !ok {
			c.complete = false
		}
	}
	seen := map[string]bool{b.ID: true}
	queue := slices.Clone(b.Replaces())
	for len(queue) > 0 {
		id := queue[0]
		queue = queue[1:]
		if seen[id] {
			continue
		}
		seen[id] = true
		c.names = append(c.names, id)
		q, ok := cl.pos[id]
		if !ok {
			c.ids++ // not here: the summary is all there is of it
			continue
		}
		qb := cl.blocks[cl.ranked[q].Index]
		if len(qb.Replaces()) > 0 {
			queue = append(queue, qb.Replaces()...)
		} else {
			c.ids++
		}
		c.set = append(c.set, q)
		c.unusable = c.unusable || cl.ranked[q].Required
		if u, ok := cl.unitOf[cl.ranked[q].Index]; ok {
			for _, m := range cl.unitMembers[u] {
				queue = append(queue, cl.blocks[cl.ranked[m].Index].ID)
			}
		}
	}
	slices.Sort(c.set)
	return c
}

// markNamed marks the claims whose summary another claim stands for
// (claimOf's names of another summary hold its id), in one pass over the
// section's summaries and what they stand for: a walk from every summary
// at once, each block remembering up to two of the summaries it is
// reached from (so that what a block leads to is reached from every
// summary that reaches it, but the one it leads back to).
func (cl *claimer) markNamed(claims []claim) {
	type item struct {
		id     string
		origin int // the claim the walk comes from
	}
	const none = -1
	type reached struct{ a, b int } // up to two origins, none when unset
	seen := make(map[string]reached)
	var queue []item
	for k := range claims {
		for _, id := range cl.blocks[cl.ranked[claims[k].summaryAt].Index].Replaces() {
			queue = append(queue, item{id, k})
		}
	}
	for len(queue) > 0 {
		it := queue[0]
		queue = queue[1:]
		q, here := cl.pos[it.id]
		if here && q == claims[it.origin].summaryAt {
			continue // a summary's own walk never counts it
		}
		r, ok := seen[it.id]
		if !ok {
			r = reached{none, none}
		}
		switch {
		case r.a == it.origin || r.b == it.origin || r.b != none:
			continue // reached from this origin, or from two already
		case r.a == none:
			r.a = it.origin
		default:
			r.b = it.origin
		}
		seen[it.id] = r
		if !here {
			continue
		}
		if rep := cl.blocks[cl.ranked[q].Index].Replaces(); len(rep) > 0 {
			for _, id := range rep {
				queue = append(queue, item{id, it.origin})
			}
		}
		if u, ok := cl.unitOf[cl.ranked[q].Index]; ok {
			for _, m := range cl.unitMembers[u] {
				queue = append(queue, item{cl.blocks[cl.ranked[m].Index].ID, it.origin})
			}
		}
	}
	for k := range claims {
		// Its own walk never reaches it: reached at all is by another.
		_, claims[k].named = seen[cl.blocks[cl.ranked[claims[k].summaryAt].Index].ID]
	}
}

// order returns the claims in the order they are taken: those no other
// summary names first, then the newest summary first (last_modified,
// declaration, request_id).
func (cl *claimer) order(claims []claim) []int {
	order := make([]int, len(claims))
	for k := range order {
		order[k] = k
	}
	slices.SortFunc(order, func(x, y int) int {
		cx, cy := &claims[x], &claims[y]
		return compareTake(cx.named, cl.blocks[cl.ranked[cx.summaryAt].Index], cy.named, cl.blocks[cl.ranked[cy.summaryAt].Index])
	})
	return order
}

// compareTake orders two summaries' claims as resolveClaims takes them:
// one no other summary names (named false) first, then the newest
// (last_modified, declaration, request_id).
func compareTake(xNamed bool, x *Block, yNamed bool, y *Block) int {
	if xNamed != yNamed {
		if yNamed {
			return -1
		}
		return 1
	}
	if c := y.LastModified.Compare(x.LastModified); c != 0 {
		return c
	}
	if c := cmp.Compare(y.Seq, x.Seq); c != 0 {
		return c
	}
	return strings.Compare(y.ID, x.ID)
}

// clashes returns the claim already standing for the summary (id) or for
// one of the blocks c stands for, if any.
func (c *claim) clashes(id string, taken map[string]int) (int, bool) {
	if owner, ok := taken[id]; ok {
		return owner, true
	}
	for _, n := range c.names {
		if owner, ok := taken[n]; ok {
			return owner, true
		}
	}
	return 0, false
}

// addRepl makes claim c a replacement of section si. A summary of turns
// none of which is here still stands for them: a replacement without
// members, decided as any block is.
func (a *Assembler) addRepl(si int, c *claim, ranked []Ranked, blocks []*Block) {
	r := newRepl(si, c, ranked, blocks)
	if a.deg.replOf == nil {
		a.deg.replOf = make(map[int32]int32)
	}
	ri := int32(len(a.deg.repls))
	a.deg.replOf[r.summary] = ri
	for _, m := range r.members {
		a.deg.replOf[m] = ri
	}
	a.deg.repls = append(a.deg.repls, r)
}

// newRepl returns the replacement of claim c, of section si: its
// summary, its members (block indexes, as ranked gives them) and where it
// is written.
func newRepl(si int, c *claim, ranked []Ranked, blocks []*Block) repl {
	b := blocks[ranked[c.summaryAt].Index]
	r := repl{si: si, summary: ranked[c.summaryAt].Index, ids: c.ids, complete: c.complete, unusable: c.unusable,
		at: b.LastModified, seq: b.Seq}
	for i, q := range c.set {
		m := blocks[ranked[q].Index]
		r.members = append(r.members, ranked[q].Index)
		if i == 0 || m.LastModified.After(r.at) || (m.LastModified.Equal(r.at) && m.Seq > r.seq) {
			r.at, r.seq = m.LastModified, m.Seq
		}
	}
	return r
}

// bindRepls records where section si's replacements stand among its
// ranked candidates, and holds back each summary that is decided with its
// turns: one ranked below its best turn is decided when that comes up.
// A summary that is required, names a turn that is not here, or was
// written by the previous decision is decided when it or its best turn
// comes up, whichever is first, trying the summary before the turns; one
// ranked above all its turns, when it comes up (see fillRepl).
func (a *Assembler) bindRepls(si int, blocks []*Block, out *Output) {
	if len(a.deg.replOf) == 0 {
		return
	}
	cands := a.secs[si].cands
	for i := range cands {
		cd := &cands[i]
		ri, ok := a.deg.replOf[cd.Index]
		if !ok {
			continue
		}
		r := &a.deg.repls[ri]
		cd.repl = ri + 1
		if cd.Index == r.summary {
			cd.summary, r.sCand = true, i
		} else {
			r.mCands = append(r.mCands, i)
		}
	}
	sec := a.deg.tpl.Section(si)
	for ri := range a.deg.repls {
		r := &a.deg.repls[ri]
		if r.si != si {
			continue
		}
		s := &cands[r.sCand]
		switch {
		case r.unusable:
			s.done = true
			r.state = replDissolved
			a.drop(sec, s, blocks[s.Index], outcome.ReasonTurnsKept, out)
		case s.Required || !r.complete || s.inc:
		case len(r.mCands) > 0 && r.sCand < slices.Min(r.mCands):
			// Ranked above its turns: decided where it comes up, by what
			// would fit until the last of them (see fillRepl).
		default:
			s.done, s.status = true, outcome.StatusDropped // decided with its turns
		}
	}
}

// fillRepl decides replacement r when cur, its summary or one of its
// turns, comes up in the section's fill: its turns, if all of them fit
// the room left (its summary then waits, with reason turns_kept unless
// the budget lets it stand in later); else its summary, in the richest
// form that fits, standing in for the turns (summarized); else neither:
// the summary is dropped and the turns are decided one by one. It
// reports whether cur is decided; when it is not, the fill goes on with
// cur as with any block.
func (f *filler) fillRepl(r *repl, cur *candidate) bool {
	if f.a.inc.on {
		f.a.pullSummary(r) // decided with the first of them (reserveRepl made its room)
	}
	s := &f.cands()[r.sCand]
	preferSummary := s.Required || !r.complete || s.inc
	if cur == s && !preferSummary {
		// The summary comes up before its turns: if everything ranked from
		// here down to the last of them fits the room left, the turns will
		// fit and the summary waits for them; otherwise some must go, and
		// the summary takes its place now, at its own rank.
		if f.fitsUntil(r) || !f.replSummary(r) {
			s.done, s.status = true, outcome.StatusDropped
		}
		return true
	}
	if preferSummary && (f.replSummary(r) || f.replTurns(r)) || !preferSummary && (f.replTurns(r) || f.replSummary(r)) {
		return true
	}
	r.state = replDissolved
	s.done = true
	f.drop(s, outcome.ReasonSectionCap)
	return cur == s
}

// replTurns keeps r's turns, when all of them fit the room left, and
// reports whether it did.
func (f *filler) replTurns(r *repl) bool {
	cands := f.cands()
	s := &cands[r.sCand]
	if !r.complete || (f.st.stopped && !s.Required) {
		return false
	}
	if f.a.inc.on && f.unpulledBelowFloor(r) {
		return false // a turn not pulled yet stays out, as below
	}
	need, texts := 0, 0
	for _, j := range r.mCands {
		m := &cands[j]
		if f.belowFloor(m) && !m.inc {
			return false // let go when the section shed: it stays out
		}
		f.a.blockTokens(f.sec, f.block(m), m, f.c)
		need += m.tokens
		if !m.msg {
			texts++
		}
	}
	if f.a.inc.on {
		need, texts = f.unpulledNeed(r, need, texts)
	}
	if texts > 0 {
		need += (texts - 1) * f.st.sep
		if f.st.kept > 0 {
			need += f.st.sep
		}
	}
	if f.st.used+f.st.msgs+need > f.sec.MaxTokens() {
		return false
	}
	if f.a.inc.on {
		f.a.pullTurns(r)
		cands = f.cands()
	}
	for _, j := range r.mCands {
		cands[j].done = true
		f.keep(&cands[j], outcome.StatusKept)
	}
	r.state = replTurns
	// The summary waits, out of the text: settleRepls gives it its
	// reason, unless the budget lets it stand in first.
	s.done, s.status = true, outcome.StatusDropped
	return true
}

// replSummary keeps r's summary in the richest form that fits the room
// left, standing in for its turns, and reports whether it did (a
// required summary always is, and misses when it does not fit).
func (f *filler) replSummary(r *repl) bool {
	cands := f.cands()
	s := &cands[r.sCand]
	if f.st.stopped && !s.Required {
		return false
	}
	sb := f.block(s)
	room := f.room(s)
	f.a.blockTokens(f.sec, sb, s, f.c)
	if s.tokens > room && !f.a.degrade(f.sec, sb, s, room, f.c) {
		if !s.Required {
			return false
		}
		f.miss(s)
	}
	s.done = true
	f.keep(s, outcome.StatusKept)
	r.state, r.wasOn = replOn, true
	for _, j := range r.mCands {
		m := &cands[j]
		m.done = true
		m.text, m.rendered = "", false
		f.a.dropFor(f.sec, m, f.block(m), outcome.ReasonSummarized, s.ID, f.out)
	}
	return true
}

// fitsUntil reports whether every undecided block of the section ranked
// after r's summary, down to the last of its turns, fits the room left:
// then the turns fit when they come up. It counts blocks only until they
// overflow the room.
func (f *filler) fitsUntil(r *repl) bool {
	if f.a.inc.on {
		return f.fitsUntilIndexed(r)
	}
	cands := f.cands()
	room := f.sec.MaxTokens() - f.st.used - f.st.msgs
	last := slices.Max(r.mCands)
	u := untilNeed{texts: f.st.kept, sep: f.st.sep}
	for i := r.sCand + 1; i <= last; i++ {
		cd := &cands[i]
		if cd.done {
			continue
		}
		f.a.blockTokens(f.sec, f.block(cd), cd, f.c)
		if u.add(cd.tokens, cd.msg) > room {
			return false
		}
	}
	return true
}

// untilNeed is what fitsUntil counts: the blocks' tokens, and the
// separators the text blocks need after the section's kept ones.
type untilNeed struct{ need, texts, sep int }

// add counts a block of n tokens (a message when msg) and returns the
// need so far.
func (u *untilNeed) add(n int, msg bool) int {
	u.need += n
	if !msg {
		if u.texts > 0 {
			u.need += u.sep
		}
		u.texts++
	}
	return u.need
}

// dropFor marks cd dropped for reason, with an event naming by, the block
// that stands for it.
func (a *Assembler) dropFor(sec *template.Section, cd *candidate, b *Block, reason outcome.Reason, by string, out *Output) {
	a.drop(sec, cd, b, reason, out)
	out.Events[cd.event-1].By = by
}

// standIn lets r's summary stand in for its turns during the budget cut:
// the turns in the text leave it (summarized), the summary enters in the
// richest form that fits its section's cap and brings the estimate within
// budget, or, unless leftover, at least lowers it. It reports whether the
// summary entered.
func (a *Assembler) standIn(r *repl, budget int, estimate *int, blocks []*Block, out *Output, c truncate.Counter, leftover bool) bool {
	if a.deg.plain || r.unusable || r.state == replOn {
		return false
	}
	si := r.si
	sec := a.deg.tpl.Section(si)
	cands := a.secs[si].cands
	s := &cands[r.sCand]
	sb := blocks[s.Index]
	used, kept, msgs := a.secs[si].used, a.secs[si].kept, a.secs[si].msgs
	someOut := r.unpulled() // never pulled: not in the text
	for _, j := range r.mCands {
		m := &cands[j]
		switch {
		case !m.inText():
			someOut = true
		case m.msg:
			msgs -= m.tokens
		default:
			if kept--; kept == 0 {
				used = 0
			} else {
				used -= m.tokens + a.secs[si].sep
			}
		}
	}
	if !someOut && leftover {
		return false // every turn is in the text: they are used, not the summary
	}
	before := a.sectionTokens(a.deg.tpl, si)
	saved := saveForm(s)
	for f := int8(0); int(f) <= len(sb.Variants()); f++ {
		setForm(s, f)
		a.blockTokens(sec, sb, s, c)
		u, k, m := used, kept, msgs
		if s.msg {
			m += s.tokens
		} else {
			if k > 0 {
				u += a.secs[si].sep
			}
			u += s.tokens
			k++
		}
		est := *estimate - before + a.sectionSum(sec, u, k, m)
		if u+m > sec.MaxTokens() || !(est <= budget || !leftover && est < *estimate) {
			continue
		}
		for _, j := range r.mCands {
			m := &cands[j]
			switch {
			case m.inText():
				a.dropBlock(sec, si, j, outcome.ReasonSummarized, blocks, out)
				out.Events[m.event-1].By = s.ID
			case m.event > 0:
				m.reason = outcome.ReasonSummarized
				out.Events[m.event-1].Reason, out.Events[m.event-1].By = outcome.ReasonSummarized, s.ID
			default:
				m.done = true
				a.dropFor(sec, m, blocks[m.Index], outcome.ReasonSummarized, s.ID, out)
			}
		}
		a.void(s, out)
		s.status, s.reason = outcome.StatusKept, ""
		a.addBlock(si, s)
		r.state, r.wasOn = replOn, true
		a.deg.weighed = true
		*estimate = est
		return true
	}
	saved.restore(s)
	return false
}

// standInAll gives every summary whose turns did not all stay a chance to
// stand in for them in the room left once the budget cut is done (after
// a section shed, say).
func (a *Assembler) standInAll(budget int, estimate *int, blocks []*Block, out *Output, c truncate.Counter) bool {
	entered := false
	for ri := range a.deg.repls {
		if a.standIn(&a.deg.repls[ri], budget, estimate, blocks, out, c, true) {
			entered = true
		}
	}
	return entered
}

// settleRepls gives every summary its final event: a summary that stood
// in and then went takes its turns with it (their events get its
// reason), and one that never stood in is dropped with reason turns_kept
// when all its turns are in the text, else budget.
func (a *Assembler) settleRepls(tpl *template.Template, blocks []*Block, out *Output) {
	for ri := range a.deg.repls {
		r := &a.deg.repls[ri]
		sec := tpl.Section(r.si)
		cands := a.secs[r.si].cands
		s := &cands[r.sCand]
		if s.inText() {
			continue
		}
		if r.wasOn {
			for _, j := range r.mCands {
				if m := &cands[j]; m.reason == outcome.ReasonSummarized {
					m.reason = s.reason
					if m.event > 0 {
						out.Events[m.event-1].Reason = s.reason
					}
				}
			}
		}
		if s.event > 0 {
			continue
		}
		all := !r.unpulled()
		for _, j := range r.mCands {
			all = all && cands[j].inText()
		}
		reason := outcome.ReasonBudget
		if all {
			reason = outcome.ReasonTurnsKept
		}
		s.text, s.rendered = "", false
		a.drop(sec, s, blocks[s.Index], reason, out)
	}
}

// byOf returns the block that stands for cd: its summary, for a turn its
// summary stood in for.
func (a *Assembler) byOf(cd *candidate, blocks []*Block) string {
	if r := a.replOfCand(cd); r != nil && !cd.summary && r.wasOn && !cd.inText() {
		return blocks[r.summary].ID
	}
	return ""
}

// placeOf returns where a block is written in time or declaration order:
// a summary standing in for turns takes the newest one's place.
func (a *Assembler) placeOf(cd *candidate, b *Block) (time.Time, int64) {
	if cd.summary {
		return a.deg.repls[cd.repl-1].at, a.deg.repls[cd.repl-1].seq
	}
	return b.LastModified, b.Seq
}
