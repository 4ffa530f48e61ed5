package assemble

import (
	"math"
	"slices"

	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/internal/lexical"
	"github.com/contextasm/contextasm/outcome"
	"github.com/contextasm/contextasm/template"
	"github.com/contextasm/contextasm/truncate"
)

// An incremental assembly (AssembleIndexed) runs the same fill, budget
// cut and rendering as AssembleRefs, with one difference: a section's
// candidates are not all made up front from every block, but pulled from
// an Index, in the same order, while the fill can still use them. When
// the fill has stopped, or every block left is one it would drop without
// counting (its lower bound exceeds the room left and no cut is possible,
// or it ranks under the floor of a section that shed), the rest are never
// looked at: they are dropped, as AssembleRefs drops them, and only the
// rows and events that list them are missing from the Output, which the
// caller gets from AssembleRefs when asked.

// incremental is an incremental assembly's pull from its Index.
type incremental struct {
	on         bool
	w          walk       // the section being pulled
	pulled     []*Block   // the blocks pulled, which candidates index
	pulledE    []*ixEntry // their entries
	priorAll   []*ixEntry // every prior item's entry, pulled or not
	looked     int        // index entries looked at (TestTurnLooksAtWhatItKeeps)
	passed     int        // units passed over whole (passUnit; TestIndexedEqualsFull)
	passedHits int        // of them, units with a relevance hit (TestPassUnitWithHits)
	remembered int        // incumbents found as the last assembly wrote them (priorItems; TestIndexedEqualsFull)
	extended   int        // plans of summaries extended, by every assembly (extendPlan; TestIndexedEqualsFull)
	plansMade  int        // plans of summaries made again, by every assembly (planOf; TestToolExchangesKeepThePlan)
	sought     int        // blocks of plans of summaries the plan had not found yet (planEntry; TestSummarisedAsItGoes)
	histRead   int        // history entries pullHistory read (TestSummarisedAsItGoes)
	queries    int        // lexical queries (findHits), by every assembly (TestSummariesQueryOnce)
	// toBeat, when beat, is what the assembly with summaries represents,
	// which the walk without them must beat to be taken: explain stops at
	// represented when it does not.
	beat   bool
	toBeat int
	made   int // candidates made (take), by both walks of an assembly with summaries
	// The planning's (currentTurnIndexed, planUnitsIndexed): the entries
	// required for this assembly (markReq), which the walks take first;
	// the current turn's assistant turn, whose reasoning is written;
	// run.current, which take fills as it pulls the current turn; and the
	// units (unitwalk.go).
	reqd     []reqdEntry
	curAsst  *ixEntry
	current  map[int32]bool
	units    unitWalk
	keys     []walkKey          // each pulled entry's place in its walk (settleOrder)
	x        *Index             // the Index pulled from
	pulledBy map[*ixEntry]int32 // scratch of pullHistory: a candidate's position by entry
	// With a query: the hits (of the lexical index, or the host's) in
	// the order found, each with its relevance in ixEntry.rel.
	hits   []relHit
	raises []relRaise // neighbourHits' scratch
	xhist  []extraRef
	xruns  []int32         // neighbourHits' scratch: each section's run of xhist
	events []outcome.Event // the walk's events, reused (assembleIndexed)
	sumRel []sumRelevance  // findHits' scratch: the summaries' relevance
	lex    []lexical.Hit   // scratch of the lexical index's Score
	// lexQ and lexKey are the query lex holds the hits of, in this
	// assembly (nil: none yet): its walk without summaries reads them
	// again, as the index and the query are the first walk's.
	lexQ   *lexical.Query
	lexKey string
	scorer lexical.Scorer // scoreSummaries': the query weighed once
	byRank []*ixEntry     // sortByRank's other array
	// Summaries (replindex.go): the sections' plans; the sections that
	// have replacements; the Output events go to.
	plans   []planRef
	replSec []bool
	out     *Output
}

// walk is the pull of one section's candidates from an Index: the base
// and the extra entries in rank order, merged with the prior entries of a
// sticky section (incumbents and news, taken out of rank order by the
// margin) as prepareSticky orders them.
type walk struct {
	looked *int // entries looked at, for the tests
	s      *ixSection
	// lc are the base's lanes' cursors, heap the lanes not done, by
	// their heads' rank order (lanes.go); xi is the next extra
	// position, gapX the first passed over, else len.
	lc       []laneCursor
	heap     []int32
	xi, gapX int
	// replLane, in a section with summaries, is its replacements'
	// entries in rank order (from fi), merged with the other lanes: the
	// base and extra lanes pass over them (markRepl) and over what does
	// not fit, stop at a floor; a full fill decides a replacement at the
	// first of them it comes to, wherever that is (lanes.go).
	replLane []*ixEntry
	fi       int
	// laned: replLane was made, and every replacement's entry of the
	// section holds its replacement (ixEntry.ri) in repls.
	laned    bool
	repls    []repl
	prior    []priorItem // in fill order
	pi       int
	hasFloor bool
	floor    float64
	done     bool
	// With a query (queried), entries score (1 − share)·score + share·
	// relevance: the ones it touches come in their own lane, rel, in that
	// order; every other entry's score is scaled alike, so the base and
	// extra lanes keep their order.
	queried bool
	share   float64
	rel     []relItem
	ri      int
	relGap  []*relItem // items passed over for their lower bound
	relSkip []*relItem // of those, the ones that did not fit (fitsUntilIndexed)
	// unitGap are the members of units passed over for their lower
	// bound (passUnit), noted for the tail as the lanes' gaps are.
	unitGap []*ixEntry
	// tiered: the section follows its previous decision with a query and
	// relevance counts in it (candidate.tier); queryTurn is the query's
	// own turn; took is the tier of what next returned last.
	tiered    bool
	queryTurn *Block
	took      int8
	// lateInc: the fill stopped before a unit with an incumbent member,
	// which would make the section shed when it came up (takeUnit's
	// shedFor); fillSection sheds for it.
	lateInc bool
}

// relItem is an entry the query touches, in a section's relevance lane.
type relItem struct {
	e      *ixEntry
	eff    float64 // its score with its relevance
	recall bool    // the query recalls it (relevanceNews)
	tier   int8    // candidate.tier
}

// tier is the item's candidate.tier.
func (p *priorItem) tier() int8 {
	if p.soft {
		return 1
	}
	return 0
}

// eff returns the score an entry outside the relevance lane ranks with:
// its relevance is 0 unless it is a hit the lane passed over (one marked
// before the lane was made, as a summary its replacement pulls along).
func (w *walk) eff(e *ixEntry) float64 {
	if !w.queried {
		return e.score
	}
	return withRelevance(e.score, w.share, e.rel)
}

// priorItem is an entry of a sticky section that prepareSticky takes out
// of rank order: an incumbent, or a block modified since the previous
// decision.
type priorItem struct {
	e                *ixEntry
	eff              float64 // the score the sticky order weighs: raised by the margin
	inc, news        bool
	prevRecall, soft bool
	prevPos, prevCut int32
	prevForm         int8 // formCleared: the previous decision wrote it cleared
}

// tailBest is the best score among a section's blocks that were never
// pulled (all dropped), for setFloor.
type tailBest struct {
	has   bool
	score float64
}

// HeatRecord is what an incremental assembly counted into heat: served
// again unchanged (a warm re-assembly), it counts the same again.
type HeatRecord struct {
	x     *Index
	epoch uint64
	text  []heatText
	gone  []*ixHeat // entries left out with their unit (count)
}

type heatText struct {
	h   *ixHeat
	b   *Block
	cut bool
}

// Again counts the render again and reports true, when the index has not
// changed since it was made; else the caller counts the render from its
// sections.
func (r *HeatRecord) Again() bool {
	if r.x.epoch != r.epoch {
		return false
	}
	r.x.count(r.text, r.gone)
	return true
}

// InText returns how many blocks the assembly put in its text (kept or
// cut); At returns the i-th, in section order and then the fill's, and
// whether it was cut. Feedback reads them: what the model was shown.
func (r *HeatRecord) InText() int { return len(r.text) }

// At returns the i-th block of the text (see InText) and whether it was
// cut.
func (r *HeatRecord) At(i int) (*Block, bool) { return r.text[i].b, r.text[i].cut }

// count counts one render: every entry drops (lazily), but those in the
// text, which are kept or cut, and those left out with a unit that cannot
// be sent whole (gone), which a full assembly lists in no row.
func (x *Index) count(text []heatText, gone []*ixHeat) {
	x.asm++
	for _, h := range gone {
		h.inText++ // not dropped: not counted at all
	}
	for _, t := range text {
		t.h.inText++
		if t.b.Heat == nil {
			continue
		}
		if t.cut {
			t.b.Heat.Cut.Add(1)
		} else {
			t.b.Heat.Included.Add(1)
		}
	}
}

// AssembleIndexed is AssembleRefs for the blocks x holds (x is at req.Now:
// see Index.Refresh), looking at no more of them than the fill can use;
// lookup returns the block of a request_id in the store x is at, for the
// previous decision's incumbents and the turns summaries name. Its Output
// and error are AssembleRefs', but the Output has no Sections and no
// Events. The assembly is counted into the blocks' heat (see Index), and
// the record returned counts it again. As AssembleRefs, an assembly that
// weighed a summary is made again without summaries, and the one that
// represents more blocks is taken.
//
// It returns ok false, having done nothing, for what only AssembleRefs
// does: another request shape or now than x's, ListHidden, a required
// block without a section or in a unit that cannot be sent whole, blocks
// with variants, max_tokens or supersedes, blocks the shape sees that
// share a conflict_key, and the summaries replindex.go leaves to it.
func (a *Assembler) AssembleIndexed(x *Index, req Request, c truncate.Counter, lookup func(id string) (*Block, bool)) (out *Output, heat *HeatRecord, ok bool, err error) {
	if !x.built || req.ListHidden || !req.Now.Equal(x.shape.Now) ||
		req.SessionID != x.shape.SessionID || req.UserID != x.shape.UserID || !slices.Equal(req.Roles, x.shape.Roles) {
		return nil, nil, false, nil
	}
	for _, b := range x.noSection {
		if b.ValidUntil.IsZero() || req.Now.Before(b.ValidUntil) {
			return nil, nil, false, nil
		}
	}
	if x.degradable > 0 || x.clashes > 0 {
		return nil, nil, false, nil
	}
	a.inc.lexQ = nil
	out, heat, ok, err = a.assembleIndexed(x, req, c, lookup, false)
	if !ok {
		return nil, nil, false, nil
	}
	if a.deg.weighed {
		// A summary took part: it must not leave the model with less
		// than dropping alone would (degrade.go).
		looked, made, read := a.inc.looked, a.inc.made, a.inc.histRead
		if err == nil {
			a.inc.beat, a.inc.toBeat = true, out.represented // explain: a plain walk that does not beat it is not taken
		}
		plain, pheat, pok, perr := a.assembleIndexed(x, req, c, lookup, true)
		a.inc.beat = false
		a.inc.looked += looked // both walks' (TestIndexedServesSummaries)
		a.inc.made += made
		a.inc.histRead += read
		if !pok {
			return nil, nil, false, nil
		}
		if perr == nil && (err != nil || plain.represented > out.represented) {
			out, heat, err = plain, pheat, nil
		}
	}
	if err != nil {
		return nil, nil, true, err
	}
	x.count(heat.text, heat.gone)
	clear(x.lastWritten) // the blocks of the decision before
	x.lastDecision, x.lastWritten = out.Decision, append(x.lastWritten[:0], out.written...)
	out.written = nil
	return out, heat, true, nil
}

// writtenOf returns the blocks the last assembly from x wrote in section
// si of prev, in prev's order, when prev is that assembly's decision; nil
// otherwise. A block there may have changed since: the caller checks it
// still has its entry.
func (x *Index) writtenOf(prev *Decision, si int) []*Block {
	if prev == nil || prev != x.lastDecision {
		return nil
	}
	at := 0
	for s := range si {
		at += len(prev.Sections[s].Blocks)
	}
	n := len(prev.Sections[si].Blocks)
	if at+n > len(x.lastWritten) {
		return nil
	}
	return x.lastWritten[at : at+n]
}

// assembleIndexed is one incremental assembly, plain (no summaries) or
// not; its heat is not counted yet.
func (a *Assembler) assembleIndexed(x *Index, req Request, c truncate.Counter, lookup func(id string) (*Block, bool), plain bool) (*Output, *HeatRecord, bool, error) {
	r := a.begin(x.tpl, nil, &req, c, plain)
	// The events are the walk's scratch (the assembly lists none): their
	// buffer is kept from one assembly to the next.
	r.out.Events = a.inc.events[:0]
	r.x, r.lookup, a.inc.x, a.inc.out = x, lookup, x, r.out
	a.inc.on, a.inc.pulled, a.inc.pulledE, a.inc.keys, a.inc.looked, a.inc.passed, a.inc.passedHits, a.inc.histRead, a.inc.made, a.inc.remembered = true, a.inc.pulled[:0], a.inc.pulledE[:0], a.inc.keys[:0], 0, 0, 0, 0, 0, 0
	a.inc.priorAll = a.inc.priorAll[:0]
	defer a.endWalk()
	if a.chat.on() {
		r.current = make(map[int32]bool)
		a.inc.current = r.current
	}
	a.currentTurnIndexed(r)
	if !a.planUnitsIndexed(r) {
		return nil, nil, false, nil // a unit with a required member cannot be sent whole: the error is AssembleRefs'
	}
	if req.NewestTurnQuery && req.Query == nil && req.Relevance == nil {
		a.queryTurn(r, x.newestTurn(&req))
	}
	if r.req.queried() {
		a.findHits(x, r.req, lookup, r.out.QueryTurn)
	}
	if !a.planReplsIndexed(r) {
		return nil, nil, false, nil
	}
	if err := a.decide(r); err != nil {
		return nil, nil, true, err
	}
	out := r.out
	out.ExcludedCounts = x.excludedCounts()
	clear(out.Events)                              // what they name is not held
	a.inc.events, out.Events = out.Events[:0], nil // a few: not the assembly's list
	heat := &HeatRecord{x: x, epoch: x.epoch}
	for si := range a.secs {
		for i := range a.secs[si].cands {
			if cd := &a.secs[si].cands[i]; cd.inText() {
				e := a.inc.pulledE[cd.Index]
				heat.text = append(heat.text, heatText{h: e.heat, b: e.b, cut: cd.status == outcome.StatusCut})
			}
		}
	}
	heat.gone = a.inc.units.goneHeat(heat.gone)
	return out, heat, true, nil
}

// startWalk starts section si's walk of an incremental assembly (the
// ranking pass's part: the Index keeps the order), as prepareSticky starts
// a full one's fill when the section follows its previous decision.
func (a *Assembler) startWalk(r *run, si int) {
	x := r.x
	share := x.secs[si].share
	if r.req.hostRelevance() {
		share = x.secs[si].hostShare
	}
	a.inc.w = walk{looked: &a.inc.looked, s: &x.secs[si], lc: a.inc.w.lc, heap: a.inc.w.heap, replLane: a.inc.w.replLane[:0], gapX: len(x.secs[si].extra), prior: a.inc.w.prior[:0],
		queried: r.req.queried(), share: share, rel: a.inc.w.rel[:0], relGap: a.inc.w.relGap[:0], relSkip: a.inc.w.relSkip[:0], unitGap: a.inc.w.unitGap[:0],
		tiered: r.follow && r.req.queried() && share > 0, queryTurn: r.out.QueryTurn}
	a.inc.w.startLanes()
	if r.follow {
		a.priorItems(r, si)
	}
	for _, q := range a.inc.reqd {
		if c := q.e; int(q.si) == si && c.mark&markPrior == 0 {
			// Required for this assembly, neither an incumbent nor news:
			// in rank order with the required (prepareSticky weighs it
			// without the margin).
			c.mark |= markPrior
			a.inc.w.prior = append(a.inc.w.prior, priorItem{e: c, eff: a.effOf(c)})
		}
	}
	// The prior lane in the order prepareSticky gives it.
	slices.SortFunc(a.inc.w.prior, func(p, q priorItem) int {
		return compareHeads(p.e, p.eff, p.inc, p.tier(), q.e, q.eff, q.inc, q.tier())
	})
	if a.inc.w.queried {
		a.relevanceLane(r, si)
	}
	if a.inc.replSec[si] && (x.tpl.Section(si).Fill() == template.FillSkip || a.inc.w.hasFloor) {
		// The base and extra lanes pass over what does not fit, or stop
		// at the floor: the replacements come from a lane of their own.
		a.replLane(si)
	}
	a.orderMembers(si)
}

// pullHistory makes candidates of the history blocks of section sec that
// were never pulled and that summarizeCandidates reads: it reads history
// from the newest block back until the blocks left out for room hold the
// section's max_tokens, and every block never pulled was left out for
// room (dropped under the cap, or under the floor). They are appended as
// dropped, after the fill, so nothing else reads them.
func (a *Assembler) pullHistory(x *Index, sec *template.Section, c truncate.Counter, lookup func(string) (*Block, bool)) {
	si := sec.Index()
	s := &x.secs[si]
	if len(s.history) == 0 && !slices.ContainsFunc(s.extra, func(e ixEntry) bool { return e.b.Type == declare.History }) {
		return
	}
	extra := make([]int, 0, len(s.extra))
	for i := range s.extra {
		if s.extra[i].b.Type == declare.History {
			extra = append(extra, i)
		}
	}
	slices.SortFunc(extra, func(i, j int) int { return compareNewest(s.extra[i].b, s.extra[j].b) })
	// The pulled candidates of the section, by entry.
	// (Positions, not pointers: take grows the candidates as it goes.)
	if a.inc.pulledBy == nil {
		a.inc.pulledBy = make(map[*ixEntry]int32)
	}
	pulled := a.inc.pulledBy
	clear(pulled)
	defer clear(pulled)
	for i := range a.secs[si].cands {
		pulled[a.inc.pulledE[a.secs[si].cands[i].Index]] = int32(i)
	}
	skip := s.historySkip(lookup)
	total, bi, xi := 0, 0, 0
	for total < sec.MaxTokens() {
		a.inc.looked++
		a.inc.histRead++
		var e *ixEntry
		for {
			if skip {
				bi = s.skipFrom(bi)
			}
			if bi == len(s.history) || !s.base[s.history[bi]].dead {
				break
			}
			bi++
		}
		switch {
		case bi < len(s.history) && (xi == len(extra) || compareNewest(s.base[s.history[bi]].b, s.extra[extra[xi]].b) < 0):
			e = s.entryAt(s.history[bi])
			bi++
		case xi < len(extra):
			e = &s.extra[extra[xi]]
			xi++
		default:
			return
		}
		if e.mark&markGone != 0 {
			continue // left out with its unit: not a candidate
		}
		var cd *candidate
		if j, ok := pulled[e]; ok {
			cd = &a.secs[si].cands[j]
		} else if a.deg.summarised[e.b.ID] {
			// Never pulled, so not in the text, and a summary names it:
			// dropRuns passes over it without ending a run, as a
			// candidate or not. Made one, a host summarising every run
			// offered would have each call make candidates of all it
			// summarised.
			continue
		} else {
			// Never pulled: dropped without a count, for room.
			inc, news := e.mark&markInc != 0, e.mark&markNews != 0
			cd = a.take(si, e)
			cd.status, cd.reason, cd.inc, cd.news = outcome.StatusDropped, outcome.ReasonSectionCap, inc, news
			if u, ok := a.unitOf(si, e); ok {
				a.bindMember(si, u, len(a.secs[si].cands)-1) // runs never split a unit (mergeUnitRuns)
			}
			a.bindRepl(si, e, cd) // a turn a summary stood in for: not left out for room
		}
		if cd.inText() || !candidateReason(cd.reason) || cd.summary || a.deg.summarised[cd.ID] {
			// dropRuns passes over what a summary names; a summary, a
			// candidate already, it reads at its turns' place.
			continue
		}
		total += a.wholeTokens(sec, e.b, cd, c)
	}
}

// historySkip brings s.hskip up to date with s's plan, whose summaries
// name the turns pullHistory passes over (they are not in the text when
// never pulled, and a run goes on past them: see dropRuns), and reports
// whether there is one. The positions skipped are found by time.
func (s *ixSection) historySkip(lookup func(string) (*Block, bool)) bool {
	p := s.plan
	if p == nil {
		return false
	}
	if s.hskipPlan != p {
		n := len(s.history)
		s.hskip = slices.Grow(s.hskip[:0], n+1)[:n+1]
		for i := range s.hskip {
			s.hskip[i] = int32(i)
		}
		s.hskipPlan, s.hskipDone = p, 0
	}
	for _, id := range p.sumIDs[s.hskipDone:] {
		b, ok := lookup(id)
		if !ok || b.Type != declare.History {
			continue
		}
		k, found := slices.BinarySearchFunc(s.history, b, func(i int32, b *Block) int { return compareNewest(s.base[i].b, b) })
		if found && s.base[s.history[k]].b == b {
			s.hskip[k] = int32(k + 1)
		}
	}
	s.hskipDone = len(p.sumIDs)
	if checkLane {
		for k, i := range s.history {
			if e := &s.base[i]; !e.dead && (s.hskip[k] != int32(k)) != p.summarised[e.b.ID] {
				panic("assemble: pullHistory's skip is not the turns the summaries name")
			}
		}
	}
	return true
}

// skipFrom returns the first position in s.history from i that
// historySkip does not pass over (len(s.history) when none is).
func (s *ixSection) skipFrom(i int) int {
	h := s.hskip
	for int(h[i]) != i {
		h[i] = h[h[i]] // halving the path
		i = int(h[i])
	}
	return i
}

// take makes entry e the next candidate of section si, and returns it.
func (a *Assembler) take(si int, e *ixEntry) *candidate {
	e.mark |= markVisited
	a.inc.made++
	rel := e.rel
	score := e.score
	if a.inc.w.queried {
		score = withRelevance(e.score, a.inc.w.share, rel)
	}
	i := int32(len(a.inc.pulled))
	a.secs[si].cands = append(a.secs[si].cands, candidate{Ranked: Ranked{Index: i, Required: e.required(), Score: score, ID: e.b.ID, Relevance: rel, Base: e.score},
		msg: a.chat.on() && e.b.Type == declare.History})
	if e.mark&markCur != 0 {
		a.inc.current[i] = true
	}
	if e == a.inc.curAsst {
		a.chat.turn = i + 1 // its reasoning is written (reasoningTurn)
	}
	a.inc.pulled = append(a.inc.pulled, e.b)
	a.inc.pulledE = append(a.inc.pulledE, e)
	a.inc.keys = append(a.inc.keys, walkKey{})
	return &a.secs[si].cands[len(a.secs[si].cands)-1]
}

// endWalk takes the marks of an incremental assembly off its entries.
func (a *Assembler) endWalk() {
	for _, e := range a.inc.pulledE {
		e.mark = 0
	}
	for _, e := range a.inc.priorAll {
		e.mark, e.ri = 0, 0
	}
	clear(a.inc.reqd)
	a.inc.reqd, a.inc.curAsst, a.inc.current, a.inc.x = a.inc.reqd[:0], nil, nil, nil
	a.inc.units.reset()
	a.inc.on = false
	a.deg.tpl, a.deg.ctr = nil, nil
	clear(a.inc.pulled)
	clear(a.inc.pulledE)
	clear(a.inc.priorAll)
	for _, h := range a.inc.hits {
		h.e.rel = 0
	}
	clear(a.inc.plans)
	a.inc.plans, a.inc.out = a.inc.plans[:0], nil
	clear(a.inc.hits)
	a.inc.hits = a.inc.hits[:0]
	clear(a.inc.w.rel)
	clear(a.inc.w.relGap)
	clear(a.inc.w.relSkip)
	clear(a.inc.w.replLane)
	a.inc.w = walk{prior: a.inc.w.prior[:0], rel: a.inc.w.rel[:0], relGap: a.inc.w.relGap[:0], relSkip: a.inc.w.relSkip[:0], replLane: a.inc.w.replLane[:0], lc: a.inc.w.lc[:0], heap: a.inc.w.heap[:0]}
}

// more reports whether section si has a candidate at i: made up front by
// AssembleRefs, or pulled now by AssembleIndexed.
func (a *Assembler) more(sec *template.Section, i int, st *fillState, bounded bool, c truncate.Counter) bool {
	if i < len(a.secs[sec.Index()].cands) {
		return true
	}
	return a.inc.on && a.pull(sec, st, bounded, c)
}

// view returns the blocks candidates index: the ones pulled so far, in an
// incremental assembly.
func (a *Assembler) view(blocks []*Block) []*Block {
	if a.inc.on {
		return a.inc.pulled
	}
	return blocks
}

// priorItems starts a sticky section's walk as prepareSticky starts its
// fill: the section follows prev, and its incumbents and news, weighed
// with the margin, make its prior lane (startWalk orders it).
func (a *Assembler) priorItems(r *run, si int) {
	x, prev, prevNow, margin, lookup := r.x, &r.prev.Sections[si], r.prev.Now, r.stick.Margin, r.lookup
	queryChanged := r.req.queried() && r.req.QueryKey != r.prev.Query
	a.secs[si].sticky.on = true
	if prev.Floor != nil {
		a.secs[si].sticky.hasFloor, a.secs[si].sticky.floor = true, *prev.Floor
		a.inc.w.hasFloor, a.inc.w.floor = true, *prev.Floor
	}
	s := &x.secs[si]
	clears, _, _ := x.tpl.Section(si).ClearToolResults()
	add := func(e *ixEntry, p priorItem) {
		p.e, p.eff = e, a.effOf(e)
		if !p.soft { // candidate.holds
			p.eff += margin
		}
		keep := e.mark & (markReq | markCur)
		e.mark = keep | markPrior | markNews
		if p.inc {
			e.mark = keep | markPrior | markInc
		}
		a.inc.priorAll = append(a.inc.priorAll, e)
		a.inc.w.prior = append(a.inc.w.prior, p)
	}
	// Backwards, so that of an id written twice (a damaged record) the
	// last counts, as prepareSticky's map of them has it: an entry marked
	// prior was added already.
	// The blocks the last call wrote, when it was this index's: each one
	// that still has its entry is the store's block of its id (the index
	// is at the request's store), so it is not looked up.
	written := x.writtenOf(r.prev, si)
	for i := len(prev.Blocks) - 1; i >= 0; i-- {
		w := &prev.Blocks[i]
		var e *ixEntry
		var b *Block
		if written != nil && written[i] != nil && written[i].ID == w.ID {
			if e = x.entryOfBlock(si, written[i]); e != nil {
				b = written[i]
				a.inc.remembered++
			}
		}
		if b == nil {
			var ok bool
			if b, ok = lookup(w.ID); !ok {
				continue
			}
		}
		if bs, reason := eligibility(b, x.tpl, &x.shape); reason != "" || bs != si {
			continue
		}
		if e == nil {
			e = x.entryOfBlock(si, b)
		}
		if e == nil || e.mark&markGone != 0 || e.mark&markPrior != 0 {
			continue
		}
		p := priorItem{inc: true, prevPos: int32(i), prevRecall: w.Recalled, soft: a.inc.w.tiered && w.Recalled && queryChanged}
		same := sameKey(w.Key, keyOf(b))
		if same && w.Cleared && clears && !e.required() && b.ToolCallID() != "" {
			p.prevForm = formCleared // cleared: stays so (prepareSticky)
		}
		if w.Cut > 0 && same && a.cutHolds(x.tpl.Section(si), b, p.prevForm, w.Cut) {
			p.prevCut = int32(w.Cut)
		}
		add(e, p)
	}
	anyNews := false
	news := func(e *ixEntry) {
		if !e.dead && e.mark&^(markReq|markCur) == 0 && e.b.LastModified.After(prevNow) {
			add(e, priorItem{news: true})
			anyNews = true
		}
	}
	for _, i := range s.byTime {
		if !s.base[i].b.LastModified.After(prevNow) {
			break
		}
		news(s.entryAt(i))
	}
	for i := range s.extra {
		news(&s.extra[i])
	}
	if !anyNews { // as prepareSticky: nothing new wants the room
		a.secs[si].sticky.hasFloor, a.inc.w.hasFloor = false, false
	}
}

// compareHeads is the order of a sticky fill (prepareSticky): required
// first, then the tier (candidate.tier), then the score weighed (eff),
// incumbents first on a tie, then rank order.
func compareHeads(a *ixEntry, effA float64, incA bool, tierA int8, b *ixEntry, effB float64, incB bool, tierB int8) int {
	reqA, reqB := a.required(), b.required()
	if reqA != reqB {
		if reqA {
			return -1
		}
		return 1
	}
	if tierA != tierB {
		return int(tierA) - int(tierB)
	}
	switch {
	case effA > effB:
		return -1
	case effA < effB:
		return 1
	case incA != incB:
		if incA {
			return -1
		}
		return 1
	}
	return compareRank(a, b, reqA, reqB)
}

// pull appends section sec's next candidate, in fill order, that the fill
// in state st could use; it reports false when none is left. Passed over
// are the blocks the fill would drop without counting: every one once it
// has stopped (nothing required is left then: required blocks come first),
// under fill "skip" one whose lower bound exceeds the room when no cut is
// possible (room, cutDone and shed only move one way, so it would be so at
// its turn too),
// and, in a section that shed, every block of rank order scoring under its
// floor.
func (a *Assembler) pull(sec *template.Section, st *fillState, bounded bool, c truncate.Counter) bool {
	w := &a.inc.w
	si := sec.Index()
	if w.done {
		return false
	}
	if st.stopped {
		w.lateInc = a.lateIncumbentUnit(si)
		a.finishWalk(si)
		return false
	}
	skip, room := false, 0
	// Under stop, the first misfit stops the section. The replacements'
	// lane passes nothing over, so that the fill comes to every
	// replacement where a full fill decides it (fillRepl).
	if bounded && sec.Fill() == template.FillSkip {
		room = sec.MaxTokens() - st.used - st.msgs
		if st.kept > 0 && !a.chat.on() {
			// A message needs no separator: in a chat format the room
			// without it, the larger, passes over only what cannot fit.
			room -= st.sep
		}
		skip = !(sec.Partial() && !st.cutDone && !a.secs[si].sticky.shed && room >= sec.MinPartialTokens())
	}
	e, p, rel := w.next(skip, room)
	for e != nil && (a.passSummarized(e) || a.passUnit(sec, st, e, c)) {
		e, p, rel = w.next(skip, room)
	}
	if e == nil {
		a.finishWalk(si)
		return false
	}
	cd := a.take(si, e)
	applyItem(cd, p, rel, w.took)
	if a.inc.units.hasUnits(si) || len(a.inc.plans) > 0 {
		a.inc.keys[cd.Index] = a.walkKeyOf(e, p, rel)
		a.bindRepl(si, e, cd)
		if _, ok := a.unitOf(si, e); ok {
			a.pullUnit(si, cd)
		}
		a.reserveRepl(si, e)
	}
	return true
}

// walkKey is what the walk orders an entry by (compareHeads), besides the
// entry itself.
type walkKey struct {
	eff  float64
	inc  bool
	tier int8
}

// walkKeyOf returns entry e's walkKey from its prior or relevance item,
// or its lane's.
func (a *Assembler) walkKeyOf(e *ixEntry, p *priorItem, rel *relItem) walkKey {
	switch {
	case p != nil:
		return walkKey{p.eff, p.inc, p.tier()}
	case rel != nil:
		return walkKey{rel.eff, false, rel.tier}
	}
	w := &a.inc.w
	return walkKey{w.eff(e), false, w.tierOf(e)}
}

// applyItem gives cd what the walk knows of its entry: its prior item or
// relevance item, when it is one, and its tier.
func applyItem(cd *candidate, p *priorItem, rel *relItem, tier int8) {
	if p != nil {
		cd.inc, cd.news, cd.prevPos, cd.prevCut, cd.prevRecall = p.inc, p.news, p.prevPos, p.prevCut, p.prevRecall
		if p.prevForm != 0 {
			cd.prevForm = p.prevForm
			setForm(cd, p.prevForm)
		}
	}
	cd.recall = rel != nil && rel.recall
	cd.soft = tier == 1
}

// next returns the next entry in fill order, passing over what skip and
// room allow (see pull), and its prior item when it is one.
func (w *walk) next(skip bool, room int) (*ixEntry, *priorItem, *relItem) {
	m := int32(max(min(room, math.MaxInt32-1), math.MinInt32))
	be := w.baseHead(skip, m)
	xe := w.head(w.s.extra, &w.xi, &w.gapX, skip, m)
	// The least of the three heads.
	for w.pi < len(w.prior) && w.prior[w.pi].e.mark&markVisited != 0 {
		w.pi++ // pulled with its unit (pullUnit)
	}
	var p *priorItem
	if w.pi < len(w.prior) {
		p = &w.prior[w.pi]
	}
	best, bestTier, from := be, w.tierOf(be), (*int)(nil) // nil: the base
	if xt := w.tierOf(xe); xe != nil && (best == nil || xt < bestTier || xt == bestTier && compareEntries(*xe, *best) < 0) {
		best, bestTier, from = xe, xt, &w.xi
	}
	var bestEff float64
	if best != nil {
		bestEff = w.eff(best)
	}
	var rel *relItem
	if r := w.relHead(skip, m); r != nil && (best == nil || compareHeads(r.e, r.eff, false, r.tier, best, bestEff, false, bestTier) < 0) {
		best, bestEff, bestTier, from, rel = r.e, r.eff, r.tier, &w.ri, r
	}
	if re := w.replHead(); re != nil {
		if rt, reff := w.tierOf(re), w.eff(re); best == nil || compareHeads(re, reff, false, rt, best, bestEff, false, bestTier) < 0 {
			best, bestEff, bestTier, from, rel = re, reff, rt, &w.fi, nil
		}
	}
	if p != nil && (best == nil || compareHeads(p.e, p.eff, p.inc, p.tier(), best, bestEff, false, bestTier) < 0) {
		w.pi++
		w.took = p.tier()
		return p.e, p, nil
	}
	switch {
	case best == nil:
	case from == nil:
		w.pullBase()
	default:
		*from++
	}
	w.took = bestTier
	return best, nil, rel
}

// tierOf returns the tier (candidate.tier) an entry of the base, extra or
// relevance lane has in the walk's section: 1 for any but a required
// block and the query's own turn, where tiers count.
func (w *walk) tierOf(e *ixEntry) int8 {
	if e == nil || !w.tiered || e.required() || e.b == w.queryTurn {
		return 0
	}
	return 1
}

// relHead returns the relevance lane's next item the walk may pull,
// passing over what skip and room allow (see pull: room only shrinks, so
// an item passed over stays so) and, in a section that shed, what scores
// under its floor and the query does not recall; nil when none is left.
func (w *walk) relHead(skip bool, m int32) *relItem {
	for w.ri < len(w.rel) {
		r := &w.rel[w.ri]
		switch {
		case r.e.mark&(markVisited|markPassed) != 0: // a candidate, or passed over with its unit
			w.ri++
		case !r.e.req && !r.recall && w.hasFloor && r.eff <= w.floor && r.e.mark&markRepl == 0:
			// Under the floor; one the query recalls may come after it.
			// A replacement's summary or turn is pulled all the same: a
			// full fill decides the replacement at the first of them it
			// comes to, under the floor too, and the replacements' lane
			// leaves a hit to this lane.
			w.relGap = append(w.relGap, r)
			w.ri++
		case skip && !r.e.req && r.e.min > m && r.e.mark&markRepl == 0:
			w.relGap = append(w.relGap, r) // for finishWalk's tail
			w.relSkip = append(w.relSkip, r)
			w.ri++
		default:
			return r
		}
	}
	return nil
}

// head returns the entry of list (the extra entries) at *at that the walk
// may pull, moving *at past the ones it passes over (see pull) and *gap
// back to the first of those; nil when none is left. baseHead is its
// counterpart for the base's lanes.
func (w *walk) head(list []ixEntry, at, gap *int, skip bool, m int32) *ixEntry {
	for *at < len(list) {
		*w.looked++
		e := &list[*at]
		switch {
		case e.dead || e.mark != 0:
			*at++
		case !e.req && w.hasFloor && w.eff(e) <= w.floor:
			*gap = min(*gap, *at)
			*at = len(list) // rank order: every entry after it scores no higher
		case skip && !e.req && e.min > m:
			*gap = min(*gap, *at)
			*at++
		default:
			return e
		}
	}
	return nil
}

// finishWalk ends section si's walk, noting the best score among the
// entries never pulled.
func (a *Assembler) finishWalk(si int) {
	w := &a.inc.w
	w.done = true
	a.finishRepls(si)
	a.settleOrder(si)
	var t tailBest
	note := func(e *ixEntry) {
		if a.summarized(e) {
			return // a turn its summary stands for: not let go by a shed (setFloor)
		}
		if s := a.effOf(e); !e.required() && (!t.has || s > t.score) {
			t.has, t.score = true, s
		}
	}
	if e := w.baseTail(); e != nil {
		note(e)
	}
	for i := min(w.gapX, w.xi); i < len(w.s.extra); i++ {
		if e := &w.s.extra[i]; e.mark == 0 && !e.req {
			note(e)
			break
		}
	}
	for _, p := range w.prior[w.pi:] {
		if p.e.mark&markVisited == 0 {
			note(p.e)
		}
	}
	for _, r := range w.rel[w.ri:] {
		if r.e.mark&markVisited == 0 {
			note(r.e)
		}
	}
	for _, r := range w.relGap {
		note(r.e)
	}
	for _, e := range w.unitGap {
		note(e)
	}
	for _, e := range w.replLane[w.fi:] {
		if !e.dead && e.mark == markRepl {
			note(e)
		}
	}
	a.secs[si].tail = t
}
