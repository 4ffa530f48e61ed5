package assemble

import (
	"math"
	"slices"
	"strings"

	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/outcome"
	"github.com/contextasm/contextasm/template"
)

// Summaries in an incremental assembly. An Index keeps each section's
// summaries (ixSection.sums); the planning of an incremental assembly
// makes their replacements as replSection does, over only the blocks a
// summary reaches (the turns it names, the summaries it names and theirs,
// and the units of all of them, found by request_id from the store), so
// its cost is the summaries' and what they name, not the section's. Each
// replacement's entries map to it (incremental.replOf); the walk binds a
// candidate to its replacement when it pulls it (bindRepl), and the fill
// decides the replacement at the first of them in fill order, as a full
// assembly does (fillRepl): it pulls the summary along, and the turns too
// only when they are kept (replTurns), counting the ones not pulled
// without making them candidates; a turn the summary stands in for is
// dropped when the walk comes to it. A summary ranked above its turns
// looks ahead in a copy of the walk (fitsUntil). The assembly without the
// summaries (degrade.go's plain one) is a second walk with every summary
// left out, and the one that represents more is taken, as AssembleRefs
// takes it.
//
// The walk may pass over what cannot fit (a section that fills by skip)
// and stops at a previous decision's floor, but a full fill decides a
// replacement at the first of its blocks it comes to, fitting or not,
// over the floor or under it: in such a section the replacements' blocks
// come from a lane of their own (walk.replLane), which passes nothing
// over, and the other lanes pass over them.
//
// A host that summarises as it goes declares summaries of the runs it is
// offered, which hold the summaries dropped in them: the plan is then
// extended with them (planextend.go), not made again.
//
// With a query, the index's lexical statistics leave summaries out, as
// the relevance pass's do, and findHits scores them apart
// (scoreSummaries), in the assembly with summaries only.
//
// Served by the full assembly only: a chat whose current turn is a
// summary, and a section that holds a summary in a group or a tool
// exchange.

// planReplsIndexed is buildRepls for an incremental assembly: it makes
// the replacements of every section that has summaries, leaves out (as
// superseded) the summaries that cannot stand, and, in a plain assembly,
// every summary. It reports false when the assembly is the full
// assembly's to make.
func (a *Assembler) planReplsIndexed(r *run) bool {
	x := r.x
	clear(a.inc.plans)
	a.inc.plans = a.inc.plans[:0]
	a.inc.replSec = slices.Grow(a.inc.replSec[:0], len(x.secs))[:len(x.secs)]
	clear(a.inc.replSec)
	for si := range x.secs {
		s := &x.secs[si]
		if len(s.sums) == 0 {
			continue
		}
		sums, ok := s.summaries()
		if !ok {
			return false
		}
		p := a.planOf(r, si, sums) // before a plain assembly leaves the summaries out
		if a.deg.plain {
			for k, b := range p.sumList {
				e := a.planEntry(si, b, &p.sumAt[k])
				if e == nil || e.mark&markReq != 0 {
					return false // a summary as the chat's current turn: a plain assembly finds another
				}
				a.leaveOut(e)
			}
		} else if !a.replsOf(r, si, p) {
			return false
		}
		a.deg.borrowSummarised(p.summarised)
	}
	return true
}

// leaveOut leaves entry e out of the assembly: it is no candidate, and
// no row of a full assembly would list it (markGone).
func (a *Assembler) leaveOut(e *ixEntry) {
	if e.mark&markGone != 0 {
		return
	}
	e.mark |= markGone
	a.inc.priorAll = append(a.inc.priorAll, e) // unmarked by endWalk
	a.inc.units.goneE = append(a.inc.units.goneE, e)
}

// reach is the blocks of one section a summary may reach, in request_id
// order once sorted: what resolveClaims reads of the section.
type reach struct {
	blocks  []*Block
	entries []*ixEntry
	at      map[string]int // request_id → position, while found
}

// replPlan is what a section's summaries stand for, by block: the
// replacements resolveClaims makes of them, with the required blocks
// declared so (an assembly adds the ones it requires), and the summaries
// that cannot stand. An Index keeps it while no change touches a
// summary, a linked block or a block a summary names (ixSection.touch);
// summaries only added are kept to extend it with (extendPlan).
type replPlan struct {
	// all holds every replacement made, by a stable index: those that
	// stand, and those a replacement extended since took in (planRepl.in).
	all   []planRepl
	order []int32  // the ones that stand, in the order resolveClaims takes them
	pos   []int32  // by index in all: the position in order of what it is in
	gone  []*Block // summaries that cannot stand (superseded), in take order
	// goneAt and sumAt are where the entries of gone and of sumList were
	// found last (Index.entryHinted), -1 when not yet: an assembly
	// leaves them out by entry every call.
	goneAt []int32
	sumAt  []int32
	// goneNamed holds, by gone, whether another summary names it: where
	// it is taken (compareTake).
	goneNamed []bool
	of        map[*Block]int32 // a summary's or a member's replacement, in all
	// named holds every request_id the summaries reach or name, held or
	// not: a change to one of them makes the plan again.
	named map[string]struct{}
	// links holds the unit keys (groups, tool calls) of the blocks they
	// reach in the section, candidates or not: a link added or removed
	// that shares one may change what they reach; any other leaves the
	// plan as it is (touch).
	links map[unitKey]struct{}
	// summarised is noteSummary's for the section's summaries, and
	// sumIDs its ids in the order they came (historySkip reads them).
	summarised map[string]bool
	sumIDs     []string
	sums       bool     // some summary is a candidate: the assembly weighs one
	sumList    []*Block // the section's summaries, by request_id
	linked     bool     // one of them is in a group or a tool exchange
	// first is the claim taken first (stand or gone), for an extension's
	// claims to come before; nil when no summary is a candidate.
	first      *Block
	firstNamed bool
	// added are summaries declared since it was made, in sumList but
	// not planned yet (extendPlan).
	added []*Block
}

// summarise notes the ids summary b names in p.summarised.
func (p *replPlan) summarise(b *Block) {
	for _, id := range b.Replaces() {
		if !p.summarised[id] {
			p.summarised[id] = true
			p.sumIDs = append(p.sumIDs, id)
		}
	}
}

// planRepl is one replacement of a replPlan.
type planRepl struct {
	rp      repl // its figures, as newRepl makes them
	summary *Block
	members []*Block // the turns that are candidates, by request_id
	// sAt and at are where the summary's entry and each member's were
	// found last (Index.entryHinted), -1 when not yet: the replacements'
	// lane finds them there each assembly, not in Index.near.
	sAt   int32
	at    []int32
	named bool // another summary names it (claim.named)
	// in is the replacement standing for it: itself, or the one an
	// extension made of a summary naming its own (extendPlan), which
	// holds its index in took.
	in   int32
	took []int32
}

// at returns the position in p.order of replacement i's, or -1.
func (p *replPlan) at(i int32) int32 { return p.pos[p.all[i].in] }

// maxPlanAdded is the most summaries a plan keeps to extend with: more
// declared before an assembly make it again.
const maxPlanAdded = 64

// touch drops s's plan, and its units, when a change of b may move them:
// b added (added true) or removed. Links only added are kept to extend
// the units with (ixUnits.added); a link removed has them made again. A
// summary only added, which no summary planned names, is kept to extend
// the plan with (replPlan.added), in its list of summaries already.
func (s *ixSection) touch(b *Block, added bool) {
	if linked(b) && s.units != nil {
		if added && !s.units.stale {
			s.units.added = append(s.units.added, b)
		} else {
			s.units.stale, s.units.added = true, nil
		}
	}
	p := s.plan
	if p == nil {
		return
	}
	_, named := p.named[b.ID]
	switch {
	case named || linked(b) && (isSummary(b) || p.sharesLink(b)):
		s.plan = nil
	case !isSummary(b):
	case !added || len(p.added) == maxPlanAdded:
		s.plan = nil
	default:
		i, _ := slices.BinarySearchFunc(p.sumList, b, func(p, q *Block) int { return strings.Compare(p.ID, q.ID) })
		p.sumList = slices.Insert(slices.Clip(p.sumList), i, b) // a copy: an assembly may hold the list
		p.sumAt = slices.Insert(slices.Clip(p.sumAt), i, -1)
		p.added = append(p.added, b)
	}
}

// sharesLink reports whether b shares a unit key with a block p's
// summaries reach.
func (p *replPlan) sharesLink(b *Block) bool {
	var buf [4]unitKey
	for _, k := range unitKeys(buf[:0], b) {
		if _, ok := p.links[k]; ok {
			return true
		}
	}
	return false
}

// reachLinks notes b's unit keys in p.links: b is a block of the section
// p's summaries reach.
func (p *replPlan) reachLinks(b *Block) {
	if !linked(b) {
		return
	}
	if p.links == nil {
		p.links = make(map[unitKey]struct{})
	}
	var buf [4]unitKey
	for _, k := range unitKeys(buf[:0], b) {
		p.links[k] = struct{}{}
	}
}

// summaries returns s's summaries by request_id, kept with its plan
// (made when there is none); false when one is linked (a group, a tool
// exchange), which only a full assembly serves.
func (s *ixSection) summaries() ([]*Block, bool) {
	if s.plan != nil {
		return s.plan.sumList, !s.plan.linked
	}
	sums := make([]*Block, 0, len(s.sums))
	linkedSum := false
	for b := range s.sums {
		linkedSum = linkedSum || linked(b)
		sums = append(sums, b)
	}
	slices.SortFunc(sums, func(p, q *Block) int { return strings.Compare(p.ID, q.ID) })
	return sums, !linkedSum
}

// planOf returns section si's plan: the one kept, extended with the
// summaries added since (extendPlan), or, when a change dropped it or it
// cannot be extended, made again from the section's summaries (sums, by
// request_id).
func (a *Assembler) planOf(r *run, si int, sums []*Block) *replPlan {
	s := &r.x.secs[si]
	if p := s.plan; p != nil && (len(p.added) == 0 || a.extendPlan(r, si, p)) {
		if checkPlan != nil {
			checkPlan(a, r, si, p)
		}
		return p
	}
	p := newPlan(sums)
	a.makePlan(r, si, p)
	a.inc.plansMade++
	s.plan = p
	return p
}

// newPlan returns an empty plan of the summaries sums.
func newPlan(sums []*Block) *replPlan {
	return &replPlan{of: make(map[*Block]int32), named: make(map[string]struct{}), summarised: make(map[string]bool), sumList: sums, sumAt: unknownAt(len(sums))}
}

// makePlan makes p, the plan of section si's summaries (p.sumList): the
// blocks they reach, from the store by request_id, and their claims.
func (a *Assembler) makePlan(r *run, si int, p *replPlan) {
	x := r.x
	uw := &a.inc.units
	rc := reach{at: make(map[string]int)}
	var queue []string
	add := func(b *Block) {
		if _, ok := rc.at[b.ID]; ok {
			return
		}
		p.reachLinks(b) // a candidate or not: a link that makes it one changes the plan
		e := x.entryOfBlock(si, b)
		if e == nil || e.mark&markGone != 0 {
			return // not a candidate: no summary stands for it here
		}
		rc.at[b.ID] = len(rc.blocks)
		rc.blocks, rc.entries = append(rc.blocks, b), append(rc.entries, e)
		if isSummary(b) {
			queue = append(queue, b.Replaces()...)
		}
		if u, ok := a.unitOf(si, e); ok {
			for _, m := range uw.members[u] {
				queue = append(queue, m.b.ID)
			}
		}
	}
	for _, b := range p.sumList {
		p.named[b.ID] = struct{}{}
		p.summarise(b)
		add(b)
	}
	for len(queue) > 0 {
		id := queue[0]
		queue = queue[1:]
		p.named[id] = struct{}{}
		if _, ok := rc.at[id]; ok {
			continue
		}
		if b, ok := r.lookup(id); ok {
			if bs, reason := eligibility(b, x.tpl, &x.shape); reason == "" && bs == si {
				add(b)
			}
		}
	}
	ranked, unitOf, sumAt := rc.ranked(uw)
	p.sums = len(sumAt) > 0
	stand, gone := resolveClaims(ranked, rc.blocks, unitOf, sumAt)
	out := make(map[int]bool, len(gone))
	for _, g := range gone {
		out[g.at] = true
		p.gone = append(p.gone, rc.blocks[ranked[g.at].Index])
		p.goneNamed, p.goneAt = append(p.goneNamed, g.named), append(p.goneAt, -1)
	}
	for k := range stand {
		c := &stand[k]
		pr := planRepl{rp: newRepl(si, c, ranked, rc.blocks), summary: rc.blocks[ranked[c.summaryAt].Index], named: c.named, in: int32(k)}
		pr.rp.summary, pr.rp.members = -1, nil // block indexes of the planning: not the walk's
		p.of[pr.summary] = int32(k)
		for _, q := range c.set {
			if !out[q] {
				m := rc.blocks[ranked[q].Index]
				pr.members = append(pr.members, m)
				p.of[m] = int32(k)
			}
		}
		pr.sAt, pr.at = -1, unknownAt(len(pr.members))
		p.all = append(p.all, pr)
		p.order = append(p.order, int32(k))
		p.pos = append(p.pos, int32(k))
	}
	// The claim taken first: the first that stands or the first that
	// does not, whichever is taken first.
	switch {
	case len(stand) > 0 && (len(gone) == 0 || compareTake(stand[0].named, p.all[0].summary, gone[0].named, p.gone[0]) < 0):
		p.first, p.firstNamed = p.all[0].summary, stand[0].named
	case len(gone) > 0:
		p.first, p.firstNamed = p.gone[0], gone[0].named
	}
}

// replsOf makes the replacements of section si from its plan p; it
// reports false when one of them is required for the assembly (the
// chat's current turn).
func (a *Assembler) replsOf(r *run, si int, p *replPlan) bool {
	base := int32(len(a.deg.repls))
	for _, i := range p.order {
		pr := &p.all[i]
		rp := pr.rp
		rp.sBlock, rp.mBlocks, rp.sCand = pr.summary, pr.members, -1
		rp.sAt, rp.mAt = &pr.sAt, pr.at
		a.deg.repls = append(a.deg.repls, rp)
	}
	for _, q := range a.inc.reqd {
		// Required for this assembly, as planUnits makes them before
		// buildRepls: a replacement with one is unusable.
		if int(q.si) != si {
			continue
		}
		if isSummary(q.e.b) {
			return false // a summary as the chat's current turn: a plain assembly finds another
		}
		if i, ok := p.of[q.e.b]; ok {
			a.deg.repls[base+p.at(i)].unusable = true
		}
	}
	for i := base; i < int32(len(a.deg.repls)); i++ {
		if a.deg.repls[i].unusable {
			a.deg.repls[i].state = replDissolved // its summary is dropped when pulled (bindRepl)
		}
	}
	a.inc.plans = append(a.inc.plans, planRef{p: p, base: base})
	if !p.sums {
		return true
	}
	a.deg.weighed = true
	a.inc.replSec[si] = true
	for k, b := range p.gone {
		if e := a.planEntry(si, b, &p.goneAt[k]); e != nil {
			a.leaveOut(e)
		}
	}
	return true
}

// planRef is a section's plan in an assembly, its replacements starting
// at base in Assembler.deg.repls.
type planRef struct {
	p    *replPlan
	base int32
}

// replIndex returns entry e's replacement in Assembler.deg.repls.
func (a *Assembler) replIndex(e *ixEntry) (int32, bool) {
	if e.ri > 0 {
		return e.ri - 1, true
	}
	return a.planIndex(e)
}

// walkReplIndex is replIndex for an entry of the section walked: when its
// replacements' lane was made, an entry it does not hold has none.
func (a *Assembler) walkReplIndex(e *ixEntry) (int32, bool) {
	if e.ri == 0 && a.inc.w.laned {
		if checkLane {
			if _, ok := a.planIndex(e); ok {
				panic("assemble: an entry of a replacement is not in its section's lane")
			}
		}
		return 0, false
	}
	return a.replIndex(e)
}

// planIndex is replIndex read from the plans.
func (a *Assembler) planIndex(e *ixEntry) (int32, bool) {
	for _, pr := range a.inc.plans {
		if i, ok := pr.p.of[e.b]; ok {
			return pr.base + pr.p.at(i), true
		}
	}
	return 0, false
}

// entryOfBlock returns b's entry in section si of the index walked.
func (a *Assembler) entryOfBlock(si int, b *Block) *ixEntry {
	return a.inc.x.entryOfBlock(si, b)
}

// entryHinted is entryOfBlock for a block whose entry was found last at
// *at (-1: not yet), as a plan keeps for its replacements' blocks; *at is
// set to where it is now.
func (x *Index) entryHinted(si int, b *Block, at *int32) *ixEntry {
	if e := x.secs[si].entryIfAt(b, *at); e != nil {
		return e
	}
	e := x.entryOfBlock(si, b)
	if *at = -1; e != nil {
		*at = x.near[b]
	}
	return e
}

// planEntry returns b's entry in section si of the index walked, b being
// a block of the section's plan that the plan found last at *at
// (entryHinted); it counts b when the plan had not found it yet.
func (a *Assembler) planEntry(si int, b *Block, at *int32) *ixEntry {
	if *at == -1 {
		a.inc.sought++
	}
	return a.inc.x.entryHinted(si, b, at)
}

// unknownAt returns n positions not found yet (planRepl.at).
func unknownAt(n int) []int32 {
	at := make([]int32, n)
	for i := range at {
		at[i] = -1
	}
	return at
}

// entryOfBlock returns b's live entry in section si, or nil: where it was
// found last (Index.near) when it is still there, else by its key. The
// blocks an assembly looks up by block (incumbents, summaries and the
// turns they stand for, the current turn's results) are found so in
// a map lookup, not a score and a search each.
func (x *Index) entryOfBlock(si int, b *Block) *ixEntry {
	was, ok := x.near[b]
	if !ok {
		was = -1
	}
	at := was
	e := x.secs[si].entryNear(x, si, b, &at)
	if e == nil {
		if ok {
			delete(x.near, b)
		}
		return nil
	}
	if !ok || at != was { // where it moved
		if x.near == nil {
			x.near = make(map[*Block]int32)
		}
		x.near[b] = at
	}
	return e
}

// ranked sorts rc by request_id, as a full assembly's ranked blocks come,
// and returns them as resolveClaims reads them (Index: a position in rc),
// their units, and the positions of the summaries.
func (rc *reach) ranked(uw *unitWalk) ([]Ranked, map[int32]int32, []int) {
	order := make([]int, len(rc.blocks))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(i, j int) int { return strings.Compare(rc.blocks[i].ID, rc.blocks[j].ID) })
	blocks, entries := make([]*Block, len(order)), make([]*ixEntry, len(order))
	for k, i := range order {
		blocks[k], entries[k] = rc.blocks[i], rc.entries[i]
	}
	rc.blocks, rc.entries = blocks, entries
	ranked := make([]Ranked, len(blocks))
	var unitOf map[int32]int32
	var sumAt []int
	for i, e := range entries {
		ranked[i] = Ranked{Index: int32(i), Required: e.req, ID: e.b.ID} // declared: an assembly adds its own (replsOf)
		if u, ok := uw.of[e]; ok {
			if unitOf == nil {
				unitOf = make(map[int32]int32)
			}
			unitOf[int32(i)] = u
		}
		if isSummary(e.b) {
			sumAt = append(sumAt, i)
		}
	}
	return ranked, unitOf, sumAt
}

// bindRepl binds candidate cd of section si, just pulled from entry e
// with its item, to e's replacement, as bindRepls binds a full
// assembly's: a summary is held back as it would be there, and a turn
// the summary stands in for is dropped.
func (a *Assembler) bindRepl(si int, e *ixEntry, cd *candidate) {
	ri, ok := a.replIndex(e)
	if !ok {
		return
	}
	r := &a.deg.repls[ri]
	pos := len(a.secs[si].cands) - 1
	cd.repl = ri + 1
	sec := a.deg.tpl.Section(si)
	if e.b != r.sBlock {
		r.mCands = append(r.mCands, pos)
		if r.state == replOn {
			cd.done = true
			a.drop(sec, cd, e.b, a.memberReason(r), a.inc.out)
		}
		return
	}
	cd.summary, r.sCand = true, pos
	switch {
	case r.unusable:
		cd.done = true
		a.drop(sec, cd, e.b, outcome.ReasonTurnsKept, a.inc.out)
	case cd.Required || !r.complete || cd.inc:
	case len(r.mBlocks) > 0 && len(r.mCands) == 0:
		// Ranked above its turns: decided where it comes up (fillRepl).
	default:
		cd.done, cd.status = true, outcome.StatusDropped // decided with its turns
	}
}

// memberReason is the reason of a turn r's summary stood in for: as
// settleRepls leaves it.
func (a *Assembler) memberReason(r *repl) outcome.Reason {
	if s := &a.secs[r.si].cands[r.sCand]; r.wasOn && !s.inText() && s.reason != "" {
		return s.reason
	}
	return outcome.ReasonSummarized
}

// reserveRepl makes room in section si's candidates for what deciding
// e's replacement pulls along (its summary and turns), so that the fill's
// pointer to the candidate it decides stays valid.
func (a *Assembler) reserveRepl(si int, e *ixEntry) {
	if ri, ok := a.replIndex(e); ok {
		r := &a.deg.repls[ri]
		a.secs[si].cands = slices.Grow(a.secs[si].cands, 1+len(r.mBlocks))
	}
}

// pullAhead makes entry e a candidate of section si out of its turn in
// the walk (settleOrder puts it back in place), with its item and its
// unit and replacement bound.
func (a *Assembler) pullAhead(si int, e *ixEntry) {
	p, rel := a.memberItems(e)
	k := a.walkKeyOf(e, p, rel)
	m := a.take(si, e)
	applyItem(m, p, rel, k.tier)
	a.inc.keys[m.Index] = k
	uw := &a.inc.units
	uw.ahead = true
	pos := len(a.secs[si].cands) - 1
	if u, ok := a.unitOf(si, e); ok {
		uw.bound[u] = true // every member is the replacement's: pulled along too
		a.bindMember(si, u, pos)
	}
	a.bindRepl(si, e, m)
}

// pullSummary pulls r's summary, when the walk has not yet.
func (a *Assembler) pullSummary(r *repl) {
	if r.sCand < 0 {
		a.pullAhead(r.si, a.entryOfBlock(r.si, r.sBlock))
	}
}

// pullTurns pulls r's turns the walk has not yet, counted: they are
// kept.
func (a *Assembler) pullTurns(r *repl) {
	sec := a.deg.tpl.Section(r.si)
	for _, b := range r.mBlocks {
		if e := a.entryOfBlock(r.si, b); e.mark&markVisited == 0 {
			a.pullAhead(r.si, e)
			a.blockTokens(sec, e.b, &a.secs[r.si].cands[len(a.secs[r.si].cands)-1], a.deg.ctr)
		}
	}
}

// probeTokens returns what entry e counts in section sec as a candidate
// with its items would, without making it one.
func (a *Assembler) probeTokens(sec *template.Section, e *ixEntry, p *priorItem, rel *relItem) (tokens int, msg bool) {
	cd := candidate{Ranked: Ranked{Index: math.MaxInt32 - 1, Required: e.required(), Score: e.score, ID: e.b.ID, Base: e.score},
		msg: a.chat.on() && e.b.Type == declare.History}
	applyItem(&cd, p, rel, 0)
	a.blockTokens(sec, e.b, &cd, a.deg.ctr)
	return cd.tokens, cd.msg
}

// unpulledNeed adds to need and texts what r's turns the walk has not
// pulled count, until they exceed the room left: then the turns do not
// fit, whatever the rest count.
func (f *filler) unpulledNeed(r *repl, need, texts int) (int, int) {
	room := f.sec.MaxTokens() - f.st.used - f.st.msgs
	for _, b := range r.mBlocks {
		if need > room {
			break
		}
		e := f.a.entryOfBlock(f.si, b)
		if e.mark&markVisited != 0 {
			continue
		}
		p, rel := f.a.memberItems(e)
		n, msg := f.a.probeTokens(f.sec, e, p, rel)
		need += n
		if !msg {
			texts++
		}
	}
	return need, texts
}

// unpulledBelowFloor reports whether one of r's turns the walk has not
// pulled would stay out for its section's shed, as belowFloor reads a
// candidate, and is no incumbent: replTurns then keeps none of them, as
// a full fill, which has every turn a candidate, finds.
func (f *filler) unpulledBelowFloor(r *repl) bool {
	ss := &f.a.secs[f.si].sticky
	if !ss.hasFloor {
		return false
	}
	for _, b := range r.mBlocks {
		e := f.a.entryOfBlock(f.si, b)
		if e.mark&markVisited != 0 {
			continue // a candidate: replTurns reads it
		}
		p, rel := f.a.memberItems(e)
		if p != nil && (p.inc || p.news) || rel != nil && rel.recall {
			continue
		}
		if f.a.effOf(e) <= ss.floor {
			return true
		}
	}
	return false
}

// fitsUntilIndexed is fitsUntil for an incremental assembly: it walks a
// copy of the section's walk from r's summary until the last of r's
// turns, counting what a full fill would count there (every candidate not
// decided yet), without making candidates.
//
// The lanes go back to where they first passed over an entry, so the
// copy comes to those that did not fit too; of them, it counts only those
// ranked after the summary, as the full fill has decided the others. A
// relevance hit passed over for not fitting (walk.relSkip) would not fit
// now either: ranked between the summary and an entry the copy comes to,
// it makes the turns not fit there.
func (f *filler) fitsUntilIndexed(r *repl) bool {
	a := f.a
	w := a.inc.w.forkUnfloored() // the walk itself does not move
	room := f.sec.MaxTokens() - f.st.used - f.st.msgs
	u := untilNeed{texts: f.st.kept, sep: f.st.sep}
	left := len(r.mBlocks)
	s := &f.cands()[r.sCand]
	ri := int32(s.repl - 1)
	se, sk := a.inc.pulledE[s.Index], a.inc.keys[s.Index]
	var skipped *relItem // the first hit passed over after the summary
	for _, it := range a.inc.w.relSkip {
		if compareHeads(it.e, it.eff, false, it.tier, se, sk.eff, sk.inc, sk.tier) > 0 &&
			(skipped == nil || compareHeads(it.e, it.eff, false, it.tier, skipped.e, skipped.eff, false, skipped.tier) < 0) {
			skipped = it
		}
	}
	seen := make(map[int32]bool) // replacements a turn of which came before
	for left > 0 {
		e, p, rel := w.next(false, 0)
		if e == nil {
			break
		}
		k := a.walkKeyOf(e, p, rel)
		if compareHeads(e, k.eff, k.inc, k.tier, se, sk.eff, sk.inc, sk.tier) < 0 {
			continue // decided before the summary came up
		}
		if skipped != nil && compareHeads(skipped.e, skipped.eff, false, skipped.tier, e, k.eff, k.inc, k.tier) < 0 {
			return false
		}
		o, in := a.walkReplIndex(e)
		if in && o == ri {
			left--
		}
		if in && a.decidedAhead(o, e, p, seen) {
			continue
		}
		if u.add(a.probeTokens(f.sec, e, p, rel)) > room {
			return false
		}
	}
	return true
}

// decidedAhead reports whether entry e of replacement ri, not pulled yet,
// would be a candidate decided already when a full fill came to it: a
// summary held back for its turns (bindRepls), or a turn its summary
// stands in for. seen holds the replacements a turn of which came before
// in the walk, and takes e's when it is a turn.
func (a *Assembler) decidedAhead(ri int32, e *ixEntry, p *priorItem, seen map[int32]bool) bool {
	r := &a.deg.repls[ri]
	if e.b != r.sBlock {
		seen[ri] = true
		return r.state == replOn
	}
	switch {
	case r.unusable:
		return true
	case e.required() || !r.complete || p != nil && p.inc:
		return false
	}
	above := len(r.mBlocks) > 0 && len(r.mCands) == 0 && !seen[ri]
	return !above
}

// finishRepls decides, once section si's walk ends, the replacements the
// fill never came to: the fill had stopped, and a full fill, coming to
// them after, drops them as fillRepl does then. Every summary is then a
// candidate, for the budget cut to let stand in.
func (a *Assembler) finishRepls(si int) {
	if !a.inc.replSec[si] {
		return
	}
	sec := a.deg.tpl.Section(si)
	for ri := range a.deg.repls {
		r := &a.deg.repls[ri]
		if r.si != si {
			continue
		}
		a.pullSummary(r)
		s := &a.secs[si].cands[r.sCand]
		if r.state != replOpen || len(r.mBlocks) == 0 && !(s.Required || !r.complete || s.inc) {
			continue
		}
		r.state = replDissolved
		s.done = true
		s.text, s.rendered = "", false
		a.drop(sec, s, r.sBlock, outcome.ReasonSectionCap, a.inc.out)
	}
}

// summarized reports whether e, an entry of the section walked, is a turn
// whose summary stands in for it (its replacement is on).
func (a *Assembler) summarized(e *ixEntry) bool {
	if len(a.inc.plans) == 0 {
		return false
	}
	ri, ok := a.walkReplIndex(e)
	return ok && a.deg.repls[ri].state == replOn && e.b != a.deg.repls[ri].sBlock
}

// passSummarized passes over e, when it is a turn its summary stands in
// for, as decided already: a full fill meets it done and dropped, and
// only the rows (and summarizeCandidates, through pullHistory) list it.
func (a *Assembler) passSummarized(e *ixEntry) bool {
	if !a.summarized(e) {
		return false
	}
	e.mark |= markSummarized
	a.inc.priorAll = append(a.inc.priorAll, e) // unmarked by endWalk
	return true
}

// unpulled reports whether some of r's turns were never made candidates
// (an incremental assembly's): they are not in the text.
func (r *repl) unpulled() bool { return len(r.mBlocks) > len(r.mCands) }
