package assemble

import (
	"cmp"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/internal/lexical"
	"github.com/contextasm/contextasm/outcome"
	"github.com/contextasm/contextasm/template"
	"github.com/contextasm/contextasm/truncate"
)

// An Index keeps, for one template and one request shape (session, user,
// roles), what assembly reads of the store before it counts anything:
// each section's eligible blocks in rank order with their scores, at one
// "now", and the blocks hidden from the shape, counted per reason. A
// change to the store moves only the blocks it changes (Update); a new
// now re-ranks only the sections whose scores or eligibility move with
// time (Refresh). An Assembler fills sections from it (AssembleIndexed),
// reading the ranked blocks only as far as they can still enter: the
// work of a turn is what changed and what is kept, not the store.
//
// An Index also counts the heat of the assemblies made from it lazily:
// a render's kept and cut blocks at once, its dropped ones (every other
// eligible block) when a block leaves the index or Settle is called.
//
// An Index is not safe for concurrent use; package contextasm locks it.
type Index struct {
	// lastDecision is the decision of the last assembly from the index,
	// and lastWritten the blocks it names, in its order: the next call of
	// the conversation follows that decision, and finds its blocks here
	// rather than by request_id in the store (Assembler.priorItems).
	lastDecision *Decision
	lastWritten  []*Block
	tpl          *template.Template
	shape        Request // SessionID, UserID, Roles; Now is the index's now
	sc           truncate.Scoring
	built        bool
	secs         []ixSection
	hidden       [3]int // out_of_scope, access_denied, audience
	// noSection are the required blocks, not hidden, whose memory type
	// has no section: unless expired, they fail the assembly.
	noSection []*Block
	// degradable counts the blocks with variants, max_tokens or
	// supersedes, and the blocks with replaces that are not history
	// (degrade.go): the Index cannot serve them. Summaries (history with
	// replaces) it serves: each section keeps its own (ixSection.sums).
	degradable int
	// keyed counts the blocks not hidden from the shape per conflict_key,
	// and clashes the keys of two or more (conflict.go): the Index cannot
	// serve them.
	keyed   map[string]int32
	clashes int
	asm     uint64    // assemblies counted into heat (see ixHeat)
	keys    []rankKey // scratch of rank and ixSection.index
	keysTmp []rankKey // the other array of sortRankKeys
	remapTo []int32   // remap's scratch
	// histWas and skipWas are remapSkip's: the history and skip before.
	histWas, skipWas []int32
	epoch            uint64 // moves with every change to the entries
	// lex holds the entries' documents for relevance, once a query asked
	// for them (lexOn); lexOf gives a document's block and section.
	lex   lexical.Index
	lexOn bool
	lexOf []lexRef
	// lexBy is each document's handle by its block, so that a section
	// made again at a new now keeps the documents of the blocks it
	// keeps (their words did not move with the clock); lexKeep marks,
	// by handle, the ones kept in the making under way (lexGen).
	lexBy   map[*Block]lexical.Handle
	lexKeep []uint64
	lexGen  uint64
	// seed, during BuildFrom, is the index whose documents lex copies.
	seed *Index
	// near is where the blocks looked up by block were found last
	// (entryOfBlock), as entryNear's hints; a block leaving the index
	// leaves it.
	near map[*Block]int32
	// scratch of rescore
	perm, place []int32
	permBase    []ixEntry
}

// lexRef is what a document of Index.lex is, and where its entry was
// found last (ixSection.entryNear): a query's hits are found without a
// search while the section keeps its order.
type lexRef struct {
	b      *Block
	si, at int32
}

// ixSection is one section's eligible blocks in rank order: a sorted base
// (entries removed since it was made are marked dead) and the few entries
// added since, sorted apart, merged into the base when they grow.
type ixSection struct {
	base  []ixEntry
	lanes []ixLane // base's lanes (lanes.go)
	// now is the index's now (nowN in Unix nanoseconds, fast when in
	// their range), which entryAt scores the recency lanes' entries at.
	now     time.Time
	nowN    int64
	fast    bool
	dead    int
	tree    minTree // the least MinTokens below each node of base
	byTime  []int32 // base positions, newest first (compareNewest)
	history []int32 // the same, of history blocks only
	// movers are lane 0's positions (ascending) of the entries whose
	// score moves with now: a new now scores them again and checks
	// lane 0's order around them only, so that a section of still
	// scores costs nothing at a new now, however large.
	movers []int32
	extra  []ixEntry
	win    window           // the times its entries hold for
	sc     truncate.Scoring // the section's weights (sectionScoring)
	share  float64          // the section's relevance share
	// hostShare is the share of the host's own relevance
	// (Request.Relevance; sectionScoring).
	hostShare float64
	// links are the entries in a group or a tool call, which the
	// planning of an assembly makes units of (unitwalk.go).
	links map[*Block]struct{}
	units *ixUnits // how they make units (unitwalk.go); nil: to make
	// sums are the summaries among its entries (history with replaces),
	// which the planning of an assembly makes replacements of
	// (replindex.go), and what they stand for, made by an assembly and
	// kept until a change touches it (nil: to make).
	sums map[*Block]struct{}
	plan *replPlan
	// hskip is pullHistory's: a union-find over positions in history
	// (hskip[i] == i: a position it reads) that passes over the turns
	// plan hskipPlan names (its sumIDs up to hskipDone), made again for
	// another plan or time order (index; rescoring keeps the order).
	hskip     []int32
	hskipPlan *replPlan
	hskipDone int
}

// ixEntry is an eligible block with what ranking needs.
type ixEntry struct {
	b     *Block
	score float64
	min   int32          // b.MinTokens
	lex   lexical.Handle // its document in Index.lex, when lexOn
	req   bool
	dead  bool
	mark  uint16 // during an assembly: markPrior or markVisited
	moves uint8  // how its score moves with now (rescore): stillScore, recencyScore or otherScore
	// hist is, for a history entry of base, one more than its place in
	// ixSection.history (made with it, by index): its time neighbours
	// are read there without a search. 0 otherwise.
	hist int32
	// ri is, during an assembly, one more than its replacement's place
	// in Assembler.deg.repls when its section's replacements' lane holds
	// it (replLane): the walk reads its replacement here, not in the
	// plan's map, for every entry it pulls. During a merge it is where
	// the entry was (remap). 0 otherwise.
	ri   int32
	heat *ixHeat
	// rel is, during an assembly with a query, its relevance when the
	// query touches it (a hit, Assembler.inc.hits), and 0 otherwise.
	rel float64
	// For recencyScore: its score's fixed part (scoreParts) and its
	// last_modified in Unix nanoseconds, and the now its score is of (a
	// recency lane's entries are scored when read: ixSection.entryAt).
	fixed float64
	lmN   int64
	at    int64
}

// How an entry's score moves with now.
const (
	stillScore   = iota // it does not
	recencyScore        // by recency alone: scored from fixed and lmN
	otherScore          // otherwise (staleness): scored from its block
)

// Marks an assembly puts on entries, and takes off when it ends.
const (
	markPrior   = 1  // an incumbent or news of a sticky section: taken out of rank order
	markVisited = 2  // made a candidate
	markInc     = 4  // with markPrior: an incumbent
	markNews    = 8  // with markPrior: news
	markRel     = 16 // in the relevance lane of a query (relindex.go)
	// markReq: required in this assembly though not declared so (the
	// chat's current turn, a member of a unit with a required member);
	// it comes in the prior lane.
	markReq = 32
	// markCur: with markReq, of the chat's current turn (run.current).
	markCur = 64
	// markGone: a member of a unit that cannot be sent whole, left out
	// (groupSection).
	markGone = 128
	// markSummarized: a turn whose summary stands in for it, passed over
	// by the walk (replindex.go).
	markSummarized = 256
	// markPassed: a member of a unit the walk passed over (passUnit).
	markPassed = 512
	// markRepl: the summary or a turn of a replacement, which the walk
	// takes from its replacements' lane (walk.replLane), never passing
	// over it, as a full fill decides the replacement at the first of
	// them; the base and extra lanes pass over it.
	markRepl = 1024
)

// required reports whether e ranks as required in the assembly under way:
// declared so, or made so by the planning (markReq).
func (e *ixEntry) required() bool { return e.req || e.mark&markReq != 0 }

// ixHeat is an entry's lazily counted heat: it has been eligible in
// Index.asm − since of the assemblies counted, and in the text in inText
// of them (or, left out with its unit, in no row: count); the others
// dropped it.
type ixHeat struct{ since, inText uint64 }

// window is a stretch of time over which a section's eligibility stays
// the same, [lo, hi), each end open when unset, and within it one over
// which its scores do too: until scoreHi when set, and, with point, only
// at the index's own now.
type window struct {
	lo, hi       time.Time
	hasLo, hasHi bool
	point        bool
	scoreHi      time.Time
	hasScoreHi   bool
}

func (w *window) holds(now, at time.Time) bool {
	if now.Equal(at) {
		return true
	}
	return !w.point && w.within(now) && (!w.hasScoreHi || now.Before(w.scoreHi))
}

// within reports whether now lies in [lo, hi): the section's blocks are
// eligible as at the window's making, though with point its scores move.
func (w *window) within(now time.Time) bool {
	return (!w.hasLo || !now.Before(w.lo)) && (!w.hasHi || now.Before(w.hi))
}

func (w *window) after(t time.Time) { // now ≥ t is needed
	if !w.hasLo || t.After(w.lo) {
		w.lo, w.hasLo = t, true
	}
}

func (w *window) before(t time.Time) { // now < t is needed
	if !w.hasHi || t.Before(w.hi) {
		w.hi, w.hasHi = t, true
	}
}

// narrow narrows w to the times b's eligibility and score hold for, seen
// at now.
func (w *window) narrow(b *Block, now time.Time, sc *truncate.Scoring) {
	if !b.ValidUntil.IsZero() {
		if !now.Before(b.ValidUntil) {
			w.after(b.ValidUntil) // expired: it stays out from then on
			return
		}
		w.before(b.ValidUntil)
	}
	w.narrowScore(b, now, sc)
}

// narrowScore is narrow's part for b's score: its staleness, before, in
// or after its penalty's ramp, and its recency, moving or still 1 (a
// future-dated turn).
func (w *window) narrowScore(b *Block, now time.Time, sc *truncate.Scoring) {
	if !b.StaleFrom.IsZero() {
		switch end := b.StaleFrom.Add(b.StaleAfter); {
		case now.Before(b.StaleFrom):
			w.before(b.StaleFrom)
		case b.StaleAfter <= 0:
			w.after(b.StaleFrom)
		case now.Before(end):
			w.point = true // the penalty grows with every instant
		default:
			w.after(end)
		}
	}
	if b.Type == declare.History && sc.Recency != 0 && !b.LastModified.IsZero() {
		w.narrowRecency(now.After(b.LastModified), b.LastModified)
	}
}

// narrowRecency narrows w to what the recency of a turn last modified at
// lm does from now on: it falls with every instant once lm is past, and
// stays 1 until then (a score's move, not eligibility's).
func (w *window) narrowRecency(past bool, lm time.Time) {
	if past {
		w.point = true
	} else if t := lm.Add(1); !w.hasScoreHi || t.Before(w.scoreHi) {
		w.scoreHi, w.hasScoreHi = t, true
	}
}

// NewIndex returns an empty Index for tpl and the shape of req (its
// session, user and roles), ranking with s (each zero field taking its
// default). Build fills it.
func NewIndex(tpl *template.Template, req Request, s truncate.Scoring) *Index {
	x := &Index{tpl: tpl, shape: Request{SessionID: req.SessionID, UserID: req.UserID, Roles: slices.Clone(req.Roles)}, sc: s.WithDefaults(),
		secs: make([]ixSection, tpl.NumSections())}
	for si := range x.secs {
		x.secs[si].sc, x.secs[si].share = sectionScoring(s, tpl.Section(si), false)
		_, x.secs[si].hostShare = sectionScoring(s, tpl.Section(si), true)
	}
	return x
}

// Now returns the instant the index ranks at.
func (x *Index) Now() time.Time { return x.shape.Now }

// Built reports whether Build has filled the index.
func (x *Index) Built() bool { return x.built }

// linked reports whether b belongs to a unit (group.go) in some request.
func linked(b *Block) bool { return b.Group() != "" || len(b.ToolCalls()) > 0 || b.ToolCallID() != "" }

// degradable reports whether b has a field of degrade.go the Index does
// not serve: a summary (isSummary) it does.
func degradable(b *Block) bool {
	return len(b.Variants()) > 0 || b.MaxTokens() > 0 || len(b.Supersedes()) > 0 || len(b.Replaces()) > 0 && !isSummary(b)
}

// isSummary reports whether b is a summary: a history block with
// replaces, standing in for the turns it names (summary.go).
func isSummary(b *Block) bool { return len(b.Replaces()) > 0 && b.Type == declare.History }

// Build fills the index from blocks, at now, counting the heat of the
// entries it had first.
func (x *Index) Build(blocks []*Block, now time.Time) {
	x.Settle()
	x.shape.Now = now
	x.hidden = [3]int{}
	x.noSection = x.noSection[:0]
	x.degradable = 0
	x.keyed, x.clashes = nil, 0
	clear(x.near) // blocks of a store it no longer holds
	x.built = true
	x.fill(blocks, nil)
}

// BuildFrom is Build, with the lexical documents of donor, an index of
// the same template for another shape (another session, say) that kept
// them, taken over: the documents of the blocks both hold are copied,
// not analysed into postings again, and the rest added or removed, so
// a new session's first query costs the difference, not the store. The
// statistics are those Build makes. donor is only read; nil, another
// template's or one without documents is Build. It reports whether it
// took donor's documents.
func (x *Index) BuildFrom(blocks []*Block, now time.Time, donor *Index) bool {
	if donor == nil || donor.tpl != x.tpl || !donor.lexOn || !donor.built {
		x.Build(blocks, now)
		return false
	}
	x.lexOn, x.seed = true, donor
	x.lex, x.lexOf, x.lexBy, x.lexKeep = donor.lex.Clone(), slices.Clone(donor.lexOf), maps.Clone(donor.lexBy), x.lexKeep[:0]
	x.Build(blocks, now)
	x.seed = nil
	return true
}

// Retarget makes x, an index of another session's shape (the same
// template, user and roles), one of session's. moved must be every
// session-scoped block of the two sessions in the store x is at: the
// only blocks whose eligibility a session changes (eligibility's
// out_of_scope). Each leaves the index under the old shape and comes
// back under the new, as Update would move them, so that x is then the
// index Build makes for session, at the cost of the blocks moved. A
// churn of sessions so reuses an ended session's index instead of
// building one from the store for each (the Engine's spare indexes).
func (x *Index) Retarget(session string, moved []*Block) {
	clear(x.lastWritten) // the old session's conversation
	x.lastDecision, x.lastWritten = nil, x.lastWritten[:0]
	for _, b := range moved {
		x.Update(b, nil)
	}
	x.shape.SessionID = session
	for _, b := range moved {
		x.Update(nil, b)
	}
}

// Serves reports whether the index ranks as it would at now, so that it
// can serve an assembly at now without Refresh.
func (x *Index) Serves(now time.Time) bool {
	if !x.built {
		return false
	}
	for si := range x.secs {
		if !x.secs[si].win.holds(now, x.shape.Now) {
			return false
		}
	}
	return true
}

// Remakes reports whether Refresh to now makes a section again from the
// blocks, which it then needs: it only scores again otherwise.
func (x *Index) Remakes(now time.Time) bool {
	for si := range x.secs {
		if w := &x.secs[si].win; !w.holds(now, x.shape.Now) && !w.within(now) {
			return true
		}
	}
	return false
}

// Refresh moves the index to now: a section whose window does not hold
// now is scored again in place when only its scores move (rescore), and
// made again from blocks (the store the index is at) when a block may
// enter or leave it (blocks may be nil when Remakes reports false).
func (x *Index) Refresh(blocks []*Block, now time.Time) {
	redo := make([]bool, len(x.secs))
	any := false
	was := x.shape.Now
	x.shape.Now = now // rescore's now
	for si := range x.secs {
		x.secs[si].setNow(now)
		switch w := &x.secs[si].win; {
		case w.holds(now, was):
		case w.within(now): // only scores moved
			x.epoch++
			x.rescore(si)
		default:
			redo[si], any = true, true
		}
	}
	if !any {
		return
	}
	for si := range x.secs {
		if redo[si] {
			x.settleSection(si)
		}
	}
	x.fill(blocks, redo)
}

// rescore moves section si to the index's now without making it again:
// its window holds but for the point its scores move at (recency, a
// stale penalty growing), so no block enters or leaves it. Lane 0 and
// the extra entries are scored at now and put in rank order again; the
// other lanes keep their order at every now, and their entries are
// scored when read (lanes.go). The time orders (byTime, history) keep
// their order and are mapped to lane 0's new places. No block is
// admitted, ranked from scratch, or given its document again.
func (x *Index) rescore(si int) {
	s := &x.secs[si]
	// The window's bounds of eligibility stay; what it says of the
	// scores is made again at now.
	s.win.point, s.win.hasScoreHi = false, false
	for _, i := range s.movers {
		s.rescoreEntry(&s.base[i])
	}
	for _, l := range s.lanes[1:] {
		// Scored when read (entryAt). What its window says comes from
		// its oldest entry: the stale window is the lane's, and once a
		// turn is past, its score moves at every instant (before, it
		// stays until the oldest is).
		if s.win.point {
			break
		}
		e := &s.base[l.hi-1]
		if l.key.kind == laneRecency {
			s.win.narrowRecency(s.nowN > e.lmN, e.b.LastModified)
		} else {
			s.win.narrowScore(e.b, s.now, &s.sc)
		}
	}
	for i := range s.extra {
		s.rescoreEntry(&s.extra[i])
	}
	slices.SortFunc(s.extra, compareEntries)
	s.resortRest(&x.perm, &x.place, &x.permBase)
}

// rescoreEntry scores e, of section s, at s's now, and narrows the
// section's window to what its score does from now on.
func (s *ixSection) rescoreEntry(e *ixEntry) {
	if e.moves == stillScore {
		return // its score, and what it says of the window, stay
	}
	s.scoreNow(e)
	switch {
	case e.dead:
	case e.moves == recencyScore && s.fast:
		if !s.win.point { // once point, the window says all it can
			s.win.narrowRecency(s.nowN > e.lmN, e.b.LastModified)
		}
	default:
		s.win.narrowScore(e.b, s.now, &s.sc)
	}
}

// setNow makes now s's now, which its recency lanes' entries are scored
// at when read.
func (s *ixSection) setNow(now time.Time) {
	s.now, s.nowN, s.fast = now, now.UnixNano(), inNanos(now)
}

// entryAt returns the entry at position i of s's base, scored at s's now:
// a recency lane's entries are scored when read, not at every new now.
func (s *ixSection) entryAt(i int32) *ixEntry {
	e := &s.base[i]
	if e.moves != stillScore && e.at != s.nowN {
		s.scoreNow(e)
	}
	return e
}

// scoreNow scores entry e of s at s's now.
func (s *ixSection) scoreNow(e *ixEntry) {
	if e.moves == recencyScore && s.fast {
		e.score = recencyAt(s.sc, e.fixed, e.lmN, s.nowN)
	} else {
		frac, stale := e.b.staleness(s.now)
		e.score = score(s.sc, e.b, s.now, frac, stale)
	}
	e.at = s.nowN
}

// inOrder reports whether entry a, just before b in a base that was in
// rank order before its entries were scored again, may stay before it
// (compareEntries).
func inOrder(a, b *ixEntry) bool {
	if a.moves == stillScore && b.moves == stillScore {
		return true // neither moved, and the base was in order
	}
	return rankOrder(a, b) <= 0
}

// rankOrder is compareEntries, deciding by the score, and then for two
// history turns scored by recency by their last_modified, without
// reading the blocks when it can.
func rankOrder(a, b *ixEntry) int {
	if a.req == b.req {
		switch {
		case a.score > b.score:
			return -1
		case a.score < b.score:
			return 1
		case a.moves == recencyScore && b.moves == recencyScore && a.lmN != b.lmN: // both history: newer first
			if a.lmN > b.lmN {
				return -1
			}
			return 1
		}
	}
	return compareRank(a, b, a.req, b.req)
}

// fill makes the sections redo names again from blocks, at the index's
// now; with redo nil it makes every section and counts the hidden blocks
// and noSection too.
func (x *Index) fill(blocks []*Block, redo []bool) {
	x.epoch++
	all := redo == nil
	if x.lexOn && all && x.seed == nil {
		x.lex, x.lexOf, x.lexBy = lexical.Index{}, x.lexOf[:0], nil
	}
	lists := make([][]ixEntry, len(x.secs))
	for si := range x.secs {
		if all || redo[si] {
			x.secs[si].setNow(x.shape.Now)
			x.secs[si].win, x.secs[si].links, x.secs[si].sums = window{}, nil, nil
			if !all { // a section is made again at about the size it had
				lists[si] = make([]ixEntry, 0, len(x.secs[si].base)-x.secs[si].dead+len(x.secs[si].extra)+1)
			}
		}
	}
	for _, b := range blocks {
		if !all {
			// Only the sections made again look at a block: one whose
			// type goes elsewhere adds to no count here.
			if sj, ok := x.tpl.SectionFor(b.Type); !ok || !redo[sj] {
				continue
			}
		}
		if si := x.admit(b, redo); si >= 0 {
			lists[si] = append(lists[si], x.entry(b, si))
		}
	}
	for si := range x.secs {
		if !all && !redo[si] {
			continue
		}
		heat := make([]ixHeat, len(lists[si]))
		for i := range lists[si] {
			heat[i].since = x.asm
			lists[si][i].heat = &heat[i]
		}
		s := &x.secs[si]
		old := *s
		base, lanes := x.layout(lists[si], &s.sc, s.lanes)
		*s = ixSection{base: base, lanes: lanes, now: s.now, nowN: s.nowN, fast: s.fast, win: s.win, links: s.links, sums: s.sums, tree: s.tree, byTime: s.byTime[:0], history: s.history[:0], movers: s.movers[:0], sc: s.sc, share: s.share, hostShare: s.hostShare}
		s.index(&x.keys, &x.keysTmp)
		switch {
		case x.lexOn && all && x.seed != nil:
			x.lexRemake(si, &x.seed.secs[si]) // the donor's documents, copied
		case x.lexOn && all:
			x.lexAddSection(si) // into a new lexical index
		case x.lexOn:
			x.lexRemake(si, &old)
		}
	}
}

// lexRemake gives section si's entries, just made again, their documents:
// the ones its entries before (old) had, for the blocks it still holds,
// and new ones for the others; the documents of the blocks it no longer
// holds are removed. The lexical statistics are thus the same as made
// from scratch, at the cost of what changed.
func (x *Index) lexRemake(si int, old *ixSection) {
	x.lexGen++
	s := &x.secs[si]
	keep := func(e *ixEntry) {
		if isSummary(e.b) {
			e.lex = noDoc
			return
		}
		if h, ok := x.lexBy[e.b]; ok && x.lexOf[h].si == int32(si) {
			e.lex = h
		} else {
			e.lex = x.lexAdd(e.b, si)
		}
		for int(e.lex) >= len(x.lexKeep) {
			x.lexKeep = append(x.lexKeep, 0)
		}
		x.lexKeep[e.lex] = x.lexGen
	}
	for i := range s.base {
		keep(&s.base[i])
	}
	for i := range s.extra {
		keep(&s.extra[i])
	}
	gone := func(e *ixEntry) {
		if e.lex != noDoc && (int(e.lex) >= len(x.lexKeep) || x.lexKeep[e.lex] != x.lexGen) {
			x.lexRemove(e)
		}
	}
	for i := range old.base {
		if !old.base[i].dead {
			gone(&old.base[i])
		}
	}
	for i := range old.extra {
		gone(&old.extra[i])
	}
}

// admit counts b in what the index keeps beside its entries, as fill and
// insert meet it: the degradable and hidden counts and noSection (with
// redo nil: a whole store or one block added), and the window and linked
// count of the section b's type goes to, when redo is nil or names it. It
// returns that section when b is eligible and it is made, else -1.
func (x *Index) admit(b *Block, redo []bool) int {
	all := redo == nil
	if all && degradable(b) {
		x.degradable++
	}
	si, reason := eligibility(b, x.tpl, &x.shape)
	if all && hiddenIndex(reason) < 0 {
		x.countKey(b, 1)
	}
	if reason != "" {
		if h := hiddenIndex(reason); h >= 0 {
			if all {
				x.hidden[h]++
			}
			return -1
		}
		if sj, ok := x.tpl.SectionFor(b.Type); ok {
			if all || redo[sj] {
				x.secs[sj].win.narrow(b, x.shape.Now, &x.secs[sj].sc)
			}
		} else if all && b.Required {
			x.noSection = append(x.noSection, b)
		}
		return -1
	}
	if !all && !redo[si] {
		return -1
	}
	s := &x.secs[si]
	s.win.narrow(b, x.shape.Now, &s.sc)
	if linked(b) {
		if s.links == nil {
			s.links = make(map[*Block]struct{})
		}
		s.links[b] = struct{}{}
	}
	if isSummary(b) {
		if s.sums == nil {
			s.sums = make(map[*Block]struct{})
		}
		s.sums[b] = struct{}{}
	}
	return si
}

// rank returns list, which is in request_id order, in rank order
// (compareEntries), as AssembleRefs ranks: a radix sort of the scores, which
// keeps request_id order among equal ones, then compareTie within the runs
// of equal scores that hold a history block.
func (x *Index) rank(list []ixEntry) []ixEntry {
	keys := slices.Grow(x.keys[:0], len(list))[:len(list)]
	for i := range list {
		keys[i] = rankKey{score: descending(list[i].score), index: uint32(i), req: 1}
		if list[i].req {
			keys[i].req = 0
		}
	}
	keys = sortRankKeys(keys, &x.keysTmp)
	out := make([]ixEntry, len(list))
	for i, k := range keys {
		out[i] = list[k.index]
	}
	x.keys = keys[:0]
	for i := 0; i < len(out); {
		j, history := i+1, out[i].b.Type == declare.History
		for j < len(out) && out[j].req == out[i].req && out[j].score == out[i].score {
			history = history || out[j].b.Type == declare.History
			j++
		}
		if j-i > 1 && history {
			slices.SortFunc(out[i:j], func(a, b ixEntry) int { return compareTie(a.b, b.b) })
		}
		i = j
	}
	return out
}

// entry returns b's entry in section si at the index's now.
func (x *Index) entry(b *Block, si int) ixEntry {
	e := x.key(b, si)
	e.min = b.MinTokens
	if linked(b) {
		// A unit is decided whole, and its tool results may be clipped
		// or cleared: no walk passes a member over by its own bound.
		e.min = 0
	}
	return e
}

// key returns what finds b's entry in section si (find, entryNear): its
// block, score and required flag, the fields rank order reads, and how
// its score moves, which gives its lane.
func (x *Index) key(b *Block, si int) ixEntry {
	sc := &x.secs[si].sc
	frac, stale := b.staleness(x.shape.Now)
	e := ixEntry{b: b, score: score(*sc, b, x.shape.Now, frac, stale), req: b.Required}
	switch {
	case !b.StaleFrom.IsZero():
		e.moves = otherScore
	case b.Type == declare.History && sc.Recency != 0 && !b.LastModified.IsZero():
		if !inNanos(b.LastModified) {
			e.moves = otherScore // beyond what Unix nanoseconds hold
		} else {
			e.moves, e.fixed, e.lmN, e.at = recencyScore, fixedPart(*sc, b), b.LastModified.UnixNano(), x.secs[si].nowN
		}
	}
	return e
}

// compareEntries is rank order: required first, then score descending,
// then compareTie, as AssembleRefs ranks.
func compareEntries(a, b ixEntry) int { return compareRank(&a, &b, a.req, b.req) }

// compareRank is rank order with a and b required as reqA and reqB say:
// compareEntries, or, in an assembly, the required it marks (compareHeads).
func compareRank(a, b *ixEntry, reqA, reqB bool) int {
	if reqA != reqB {
		if reqA {
			return -1
		}
		return 1
	}
	if ka, kb := descending(a.score), descending(b.score); ka != kb {
		if ka < kb {
			return -1
		}
		return 1
	}
	return compareTie(a.b, b.b)
}

// index makes the base's tree and time order. The time order is a radix
// sort on a key of each entry's last_modified (newestKey), with compareNewest
// deciding only among entries whose keys are equal: a section is indexed
// again at every new now (its scores move with recency), so this is on a
// live conversation's turn. keys and scratch are reused buffers.
func (s *ixSection) index(keys, scratch *[]rankKey) {
	s.hskipPlan = nil // positions in the history made again
	s.tree.build(s.base)
	k := (*keys)[:0]
	for i := range s.base {
		if !s.base[i].dead {
			k = append(k, rankKey{score: newestKey(s.base[i].b.LastModified), index: uint32(i), req: 1})
		}
	}
	k = sortRankKeys(k, scratch)
	sortKeyTies(k, func(a, b rankKey) int { return compareNewest(s.base[a.index].b, s.base[b.index].b) })
	s.byTime = slices.Grow(s.byTime[:0], len(k))
	s.history = s.history[:0]
	for _, e := range k {
		s.byTime = append(s.byTime, int32(e.index))
		s.base[e.index].hist = 0
		if s.base[e.index].b.Type == declare.History {
			s.history = append(s.history, int32(e.index))
			s.base[e.index].hist = int32(len(s.history))
		}
	}
	*keys = k[:0]
	s.movers = s.movers[:0]
	if len(s.lanes) > 0 {
		for i := s.lanes[0].lo; i < s.lanes[0].hi; i++ {
			if s.base[i].moves != stillScore {
				s.movers = append(s.movers, i)
			}
		}
	}
}

// newestKey maps t to a key that sorts ascending where compareNewest puts
// newest first: its Unix nanoseconds, clamped to int64 (so equal keys may
// hold different times only outside the years 1678 to 2262), sign flipped
// for unsigned order and complemented. Blocks carry wall times only (the
// Engine strips monotonic readings), so this is Time.Compare's order.
func newestKey(t time.Time) uint64 {
	const limit = int64(math.MaxInt64 / 1_000_000_000) // whole seconds that fit in nanoseconds
	var n int64
	switch sec := t.Unix(); {
	case sec < -limit:
		n = math.MinInt64
	case sec >= limit:
		n = math.MaxInt64
	default:
		n = sec*1e9 + int64(t.Nanosecond())
	}
	return ^(uint64(n) ^ 1<<63)
}

// CompareNewest orders blocks newest first, as compareNewest does.
func CompareNewest(a, b *Block) int { return compareNewest(a, b) }

// compareNewest orders blocks newest first: last_modified, then
// declaration, then request_id descending (the reverse of the order
// summarizeCandidates reads history in).
func compareNewest(a, b *Block) int {
	if c := b.LastModified.Compare(a.LastModified); c != 0 {
		return c
	}
	if c := cmp.Compare(b.Seq, a.Seq); c != 0 {
		return c
	}
	return strings.Compare(b.ID, a.ID)
}

// Update applies one change of the store: old replaced by new (old nil: a
// block added; new nil: one removed).
func (x *Index) Update(old, new *Block) {
	x.epoch++
	if old != nil {
		x.remove(old)
	}
	if new != nil {
		x.insert(new)
	}
}

func (x *Index) remove(b *Block) {
	delete(x.near, b)
	if degradable(b) {
		x.degradable--
	}
	si, reason := eligibility(b, x.tpl, &x.shape)
	if hiddenIndex(reason) < 0 {
		x.countKey(b, -1)
	}
	if reason != "" {
		if h := hiddenIndex(reason); h >= 0 {
			x.hidden[h]--
		} else if i := slices.Index(x.noSection, b); i >= 0 {
			x.noSection = slices.Delete(x.noSection, i, i+1)
		}
		return
	}
	s := &x.secs[si]
	s.touch(b, false)
	delete(s.links, b)
	delete(s.sums, b)
	e := x.key(b, si)
	if i, ok := find(s.extra, e); ok {
		x.settle(&s.extra[i])
		x.lexRemove(&s.extra[i])
		s.extra = slices.Delete(s.extra, i, i+1)
		return
	}
	if i, ok := s.findBase(&e); ok {
		x.settle(&s.base[i])
		x.lexRemove(&s.base[i])
		s.base[i].dead = true
		s.dead++
		s.tree.set(i, math.MaxInt32)
		if s.dead > len(s.base)/4+64 {
			x.merge(si)
		}
	}
}

// find returns the live entry of e's block in list, which is in rank
// order.
func find(list []ixEntry, e ixEntry) (int, bool) {
	// A search by hand rather than slices.BinarySearchFunc with
	// compareEntries: that copies two entries a comparison, and this is
	// on every hit of a query.
	i, n := 0, len(list)
	for i < n {
		m := int(uint(i+n) >> 1)
		if compareRank(&list[m], &e, list[m].req, e.req) < 0 {
			i = m + 1
		} else {
			n = m
		}
	}
	// Dead versions of the same block may rank alike: look at the run.
	for j := i; j < len(list) && compareRank(&list[j], &e, list[j].req, e.req) == 0; j++ {
		if list[j].b == e.b && !list[j].dead {
			return j, true
		}
	}
	for j := i - 1; j >= 0 && compareRank(&list[j], &e, list[j].req, e.req) == 0; j-- {
		if list[j].b == e.b && !list[j].dead {
			return j, true
		}
	}
	return 0, false
}

func (x *Index) insert(b *Block) {
	si := x.admit(b, nil)
	if si < 0 {
		return
	}
	s := &x.secs[si]
	s.touch(b, true)
	e := x.entry(b, si)
	e.heat = &ixHeat{since: x.asm}
	if x.lexOn {
		e.lex = x.lexAdd(b, si)
	}
	i, _ := slices.BinarySearchFunc(s.extra, e, compareEntries)
	s.extra = slices.Insert(s.extra, i, e)
	if len(s.extra) > 64+2*int(math.Sqrt(float64(len(s.base)))) {
		x.merge(si)
	}
}

// merge makes section si's base again from the live entries of base and
// extra: lane 0's entries and the extra ones scored likewise merged in
// rank order, and the recency entries laid out in lanes again, or, when
// they do not fall into few, ranked with the rest.
func (x *Index) merge(si int) {
	s := &x.secs[si]
	// Each entry carries where it was (in ri, an assembly's scratch, 0
	// between assemblies) to where it goes: remap reads it.
	nBase, nExtra := len(s.base), len(s.extra)
	for i := range s.base {
		s.base[i].ri = int32(i) + 1
	}
	for j := range s.extra {
		s.extra[j].ri = -int32(j) - 1
	}
	var rest, recs, stales, add []ixEntry
	for i := range s.base {
		e := s.entryAt(int32(i)) // scored at now: the stale lanes sort by it
		switch k := laneKeyOf(e, &s.sc); {
		case e.dead:
		case k.kind == laneRecency:
			recs = append(recs, *e)
		case k.kind != laneNone:
			stales = append(stales, *e)
		default:
			rest = append(rest, *e) // of lane 0 (or laned, but in rank order)
		}
	}
	for i := range s.extra {
		switch e := &s.extra[i]; laneKeyOf(e, &s.sc).kind {
		case laneRecency:
			recs = append(recs, *e)
		case laneNone:
			add = append(add, *e) // in rank order
		default:
			stales = append(stales, *e)
		}
	}
	laned := fewLanes(recs, stales, &s.sc)
	if !laned {
		more := append(recs, stales...)
		slices.SortFunc(more, compareEntries)
		rest, recs, stales = mergeRanked(rest, more), nil, nil
	}
	rest = mergeRanked(rest, add)
	if !laned {
		s.base, s.lanes = rest, append(s.lanes[:0], ixLane{hi: int32(len(rest))})
	} else {
		s.base, s.lanes = x.lanesOf(rest, recs, stales, &s.sc, s.lanes)
	}
	s.extra, s.dead = s.extra[:0], 0
	skipped := s.plan != nil && s.hskipPlan == s.plan
	if skipped {
		x.histWas = append(x.histWas[:0], s.history...)
	}
	s.index(&x.keys, &x.keysTmp)
	to := x.remap(si, nBase, nExtra)
	if skipped {
		x.remapSkip(si, to, nBase, nExtra)
	}
	x.remapTo = to[:0]
}

// remapSkip makes section si's pullHistory skip (ixSection.hskip) for
// the history merge made, from the one it had (over x.histWas, the
// history before) and the positions remap found: a turn skipped stays
// so, and one merged in from extra is skipped when a summary names it.
// Made again from the summaries instead, it looked up and searched for
// every turn they name.
func (x *Index) remapSkip(si int, to []int32, nBase, nExtra int) {
	s := &x.secs[si]
	p := s.plan
	n := len(s.history)
	skip := slices.Grow(x.skipWas[:0], n+1)[:n+1]
	for i := range skip {
		skip[i] = int32(i)
	}
	mark := func(nb int32) {
		if nb >= 0 {
			if k := s.base[nb].hist - 1; k >= 0 {
				skip[k] = k + 1
			}
		}
	}
	for k, b := range x.histWas {
		if s.hskip[k] != int32(k) {
			mark(to[b])
		}
	}
	for j := range nExtra {
		if nb := to[nBase+j]; nb >= 0 && p.summarised[s.base[nb].b.ID] {
			mark(nb)
		}
	}
	s.hskip, x.skipWas = skip, s.hskip[:0]
	s.hskipPlan = p
}

// remap brings the places kept of section si's entries (where its plan of
// summaries, its units and the lexical documents found them last) from
// the base and extra merge made the base of, nBase and nExtra entries
// long, to the base, and clears the entries' provenance (ixEntry.ri); it
// returns each old place's new one (base, then extra; -1: gone). A
// place not brought is only sought again (entryIfAt checks each), but a
// conversation's plan holds every turn its summaries stand for: sought
// again after each merge, they made one call in seventy cost five times
// the others.
func (x *Index) remap(si int, nBase, nExtra int) []int32 {
	s := &x.secs[si]
	to := slices.Grow(x.remapTo[:0], nBase+nExtra)[:nBase+nExtra]
	for i := range to {
		to[i] = -1
	}
	for i := range s.base {
		switch o := s.base[i].ri; {
		case o > 0:
			to[o-1] = int32(i)
		case o < 0:
			to[nBase+int(-o-1)] = int32(i)
		}
		s.base[i].ri = 0
	}
	at := func(h *int32) {
		switch {
		case *h >= 0 && int(*h) < nBase:
			*h = to[*h]
		case *h < -1 && int(-2-*h) < nExtra:
			*h = to[nBase+int(-2-*h)]
		}
	}
	if p := s.plan; p != nil {
		for i := range p.all {
			at(&p.all[i].sAt)
			for k := range p.all[i].at {
				at(&p.all[i].at[k])
			}
		}
		for k := range p.goneAt {
			at(&p.goneAt[k])
		}
		for k := range p.sumAt {
			at(&p.sumAt[k])
		}
	}
	if u := s.units; u != nil {
		for k := range u.at {
			at(&u.at[k])
		}
	}
	for h := range x.lexOf {
		if r := &x.lexOf[h]; r.b != nil && int(r.si) == si {
			at(&r.at)
		}
	}
	return to
}

// mergeRanked returns the entries of a and b, each in rank order, in rank
// order.
func mergeRanked(a, b []ixEntry) []ixEntry {
	if len(b) == 0 {
		return a
	}
	out := make([]ixEntry, 0, len(a)+len(b))
	i := 0
	for j := range b {
		for ; i < len(a) && compareEntries(a[i], b[j]) < 0; i++ {
			out = append(out, a[i])
		}
		out = append(out, b[j])
	}
	return append(out, a[i:]...)
}

// excludedCounts returns the count of blocks hidden from the shape per
// reason (out_of_scope, access_denied, audience); nil when there are none.
func (x *Index) excludedCounts() map[outcome.Reason]int {
	var m map[outcome.Reason]int
	for h, n := range x.hidden {
		if n > 0 {
			if m == nil {
				m = make(map[outcome.Reason]int, len(x.hidden))
			}
			m[hiddenReasons[h]] = n
		}
	}
	return m
}

// settle moves e's lazily counted drops into its block's heat.
func (x *Index) settle(e *ixEntry) {
	h := e.heat
	if n := x.asm - h.since - h.inText; n > 0 && e.b.Heat != nil {
		e.b.Heat.Dropped.Add(int64(n))
	}
	h.since, h.inText = x.asm, 0
}

func (x *Index) settleSection(si int) {
	s := &x.secs[si]
	for i := range s.base {
		if !s.base[i].dead {
			x.settle(&s.base[i])
		}
	}
	for i := range s.extra {
		x.settle(&s.extra[i])
	}
}

// Settle moves the drops counted lazily into the blocks' heat, so that
// reading the heat cells gives every render made from the index.
func (x *Index) Settle() {
	for si := range x.secs {
		x.settleSection(si)
	}
}

// minTree is a segment tree of the least MinTokens below each node, over
// a section's base, so that the next entry that may fit a room is found
// without looking at the ones in between.
type minTree struct {
	v    []int32
	size int // leaves: a power of two, at least the entries
	n    int
}

func (t *minTree) build(base []ixEntry) {
	t.n = len(base)
	t.size = 1
	for t.size < t.n {
		t.size *= 2
	}
	t.v = slices.Grow(t.v[:0], 2*t.size)[:2*t.size]
	for i := range t.size {
		m := int32(math.MaxInt32)
		if i < t.n && !base[i].dead {
			m = base[i].min
		}
		t.v[t.size+i] = m
	}
	for i := t.size - 1; i >= 1; i-- {
		t.v[i] = min(t.v[2*i], t.v[2*i+1])
	}
}

func (t *minTree) set(i int, m int32) {
	i += t.size
	t.v[i] = m
	for i >>= 1; i >= 1; i >>= 1 {
		t.v[i] = min(t.v[2*i], t.v[2*i+1])
	}
}

// first returns the first position at or after from whose MinTokens is at
// most m, or n when there is none.
func (t *minTree) first(from int, m int32) int {
	if from >= t.n {
		return t.n
	}
	i := from + t.size
	if t.v[i] > m {
		// Climb to the next subtree to the right that holds one.
		for {
			for i > 1 && i&1 == 1 {
				i >>= 1
			}
			if i <= 1 {
				return t.n
			}
			i++
			if t.v[i] <= m {
				break
			}
		}
		for i < t.size {
			i *= 2
			if t.v[i] > m {
				i++
			}
		}
	}
	return min(i-t.size, t.n)
}
