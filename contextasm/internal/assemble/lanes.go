package assemble

import (
	"cmp"
	"slices"
	"time"

	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/truncate"
)

// Lanes: a section's base is a row of lanes, each a run of entries in an
// order that is their rank order at every now (laneKey says which
// entries share one). A history block's score is (fixed + R·H/(H+age))/
// sum, so of two blocks with the same fixed part the newer never ranks
// lower, whatever the now; stale blocks of one stale window share its
// penalty. Lane 0 holds every other entry, in rank order at the index's
// now, sorted again when a new now unorders it. A new now then scores
// again lane 0's entries whose scores move (ixSection.movers: few, for
// a section of constraints or documents, which do not) and sorts
// nothing else: a lane's entries are scored when
// read (ixSection.entryAt), and the walk merges the lanes' heads (a
// heap) only until the section stops filling.
//
// A section whose entries fall into too many lanes for lanes to pay (a
// host scoring each turn apart) keeps one lane in rank order, sorted
// again at every new now, as before lanes.

// ixLane is one lane of a section's base: positions [lo, hi), of the
// entries whose laneKey is key (lane 0: of none).
type ixLane struct {
	lo, hi int32
	key    laneKey
}

// laneKey is what the entries of one lane share, so that their order is
// their rank order at every now:
//   - laneRecency: history scored by recency alone, of one fixed part, in
//     compareTie order (newest first);
//   - laneStale: stale blocks whose score has no recency, of one stale
//     window (from, after): each score is its unstale score times the
//     window's penalty at now, the same for all, so they keep the order
//     of their unstale scores;
//   - laneStaleRecency: stale history of one fixed part and one stale
//     window, newest first.
type laneKey struct {
	kind        uint8
	req         uint32 // rankKey's: 0 for required
	fixed       uint64 // descending(fixed part), of history
	from, after int64  // the stale window, in Unix nanoseconds
}

// The kinds of lanes (laneKey.kind); lane 0 is of none.
const (
	laneNone = iota
	laneRecency
	laneStale
	laneStaleRecency
)

func compareLaneKeys(a, b laneKey) int {
	if c := cmp.Compare(a.kind, b.kind); c != 0 {
		return c
	}
	if c := cmp.Compare(a.req, b.req); c != 0 {
		return c
	}
	if c := cmp.Compare(a.fixed, b.fixed); c != 0 {
		return c
	}
	if c := cmp.Compare(a.from, b.from); c != 0 {
		return c
	}
	return cmp.Compare(a.after, b.after)
}

// Lanes pay when there are few of them for many entries: a walk starts
// with a heap over all of them. (A variable, for the differential tests
// to lay out every section in lanes.)
const maxLanes = 1024

var entriesPerLane = 8

// laneKeyOf returns entry e's lane key in a section scored by sc, kind
// laneNone when it goes in lane 0.
func laneKeyOf(e *ixEntry, sc *truncate.Scoring) laneKey {
	k := laneKey{req: 1}
	if e.req {
		k.req = 0
	}
	b := e.b
	switch {
	case e.moves == recencyScore:
		k.kind, k.fixed = laneRecency, descending(e.fixed)
	case e.moves != otherScore || b.StaleFrom.IsZero() || !inNanos(b.StaleFrom):
	case b.Type != declare.History || sc.Recency == 0 || b.LastModified.IsZero():
		k.kind, k.from, k.after = laneStale, b.StaleFrom.UnixNano(), int64(b.StaleAfter)
	case inNanos(b.LastModified):
		k.kind, k.fixed = laneStaleRecency, descending(fixedPart(*sc, b))
		k.from, k.after = b.StaleFrom.UnixNano(), int64(b.StaleAfter)
	}
	return k
}

// inNanos reports whether t is in the years Unix nanoseconds hold.
func inNanos(t time.Time) bool { y := t.Year(); return y >= 1700 && y <= 2250 }

// newestFirst reports whether lane key k's entries are in compareTie order
// (else in rank order).
func (k laneKey) newestFirst() bool { return k.kind != laneStale }

// layout returns list's entries, in request_id order, as a base in lanes
// and the lanes (reusing lanes' array).
func (x *Index) layout(list []ixEntry, sc *truncate.Scoring, lanes []ixLane) ([]ixEntry, []ixLane) {
	var rest, recs, stales []ixEntry
	for i := range list {
		switch laneKeyOf(&list[i], sc).kind {
		case laneNone:
			rest = append(rest, list[i])
		case laneRecency:
			recs = append(recs, list[i])
		default:
			stales = append(stales, list[i])
		}
	}
	if !fewLanes(recs, stales, sc) {
		base := x.rank(list)
		return base, append(lanes[:0], ixLane{hi: int32(len(base))})
	}
	return x.lanesOf(x.rank(rest), recs, stales, sc, lanes)
}

// lanesOf returns the base of lane 0's entries rest, in rank order, then
// the recency entries recs and the stale ones stales, in any order, put in
// their lanes (reusing rest's and lanes' arrays), and the lanes.
func (x *Index) lanesOf(rest, recs, stales []ixEntry, sc *truncate.Scoring, lanes []ixLane) ([]ixEntry, []ixLane) {
	keys := slices.Grow(x.keys[:0], len(recs))
	for i := range recs {
		keys = append(keys, rankKey{score: newestKey(recs[i].b.LastModified), index: uint32(i), req: 1})
	}
	keys = sortRankKeys(keys, &x.keysTmp) // newest first
	byTime := make([]ixEntry, len(keys))
	for i, k := range keys {
		byTime[i] = recs[k.index]
	}
	// Then by lane, stably: lanes in key order, each newest first.
	keys = keys[:0]
	for i := range byTime {
		k := laneKeyOf(&byTime[i], sc)
		keys = append(keys, rankKey{score: k.fixed, index: uint32(i), req: k.req})
	}
	keys = sortRankKeys(keys, &x.keysTmp)
	x.keys = keys[:0]
	base := slices.Grow(rest, len(recs)+len(stales))
	lanes = append(lanes[:0], ixLane{hi: int32(len(base))})
	add := func(e *ixEntry, k laneKey) {
		if l := &lanes[len(lanes)-1]; len(lanes) == 1 || l.key != k {
			lanes = append(lanes, ixLane{lo: int32(len(base)), key: k})
		}
		base = append(base, *e)
		lanes[len(lanes)-1].hi = int32(len(base))
	}
	for _, k := range keys {
		add(&byTime[k.index], laneKey{kind: laneRecency, req: k.req, fixed: k.score})
	}
	// The stale entries, few, by their keys made once.
	type keyed struct {
		k laneKey
		e *ixEntry
	}
	sk := make([]keyed, len(stales))
	for i := range stales {
		sk[i] = keyed{laneKeyOf(&stales[i], sc), &stales[i]}
	}
	slices.SortFunc(sk, func(a, b keyed) int {
		if c := compareLaneKeys(a.k, b.k); c != 0 {
			return c
		}
		if a.k.newestFirst() {
			return compareTie(a.e.b, b.e.b)
		}
		return compareRank(a.e, b.e, a.e.req, b.e.req)
	})
	for _, s := range sk {
		add(s.e, s.k)
	}
	for _, l := range lanes[1:] {
		if l.key.kind == laneRecency {
			sortTies(base[l.lo:l.hi])
		}
	}
	return base, lanes
}

// fewLanes reports whether the lanes of recency entries recs and stale
// ones stales are few enough, for their entries, to pay.
func fewLanes(recs, stales []ixEntry, sc *truncate.Scoring) bool {
	n := len(recs) + len(stales)
	if n < 2*entriesPerLane {
		return false
	}
	limit := min(maxLanes, n/entriesPerLane)
	seen := make(map[laneKey]struct{}, min(limit, 64))
	for _, list := range [2][]ixEntry{recs, stales} {
		for i := range list {
			seen[laneKeyOf(&list[i], sc)] = struct{}{}
			if len(seen) > limit {
				return false
			}
		}
	}
	return true
}

// sortTies puts the runs of a recency lane's entries of one last_modified
// in compareTie order (the radix sort left them in request_id order).
func sortTies(lane []ixEntry) {
	for i := 0; i < len(lane); {
		j := i + 1
		for j < len(lane) && lane[j].lmN == lane[i].lmN {
			j++
		}
		if j-i > 1 {
			slices.SortFunc(lane[i:j], func(a, b ixEntry) int { return compareTie(a.b, b.b) })
		}
		i = j
	}
}

// laneOf returns the lane of section s that holds entry e (as entry makes
// it), or false when none does.
func (s *ixSection) laneOf(e *ixEntry) (int, bool) {
	if len(s.lanes) == 1 {
		return 0, true
	}
	k := laneKeyOf(e, &s.sc)
	if k.kind == laneNone {
		return 0, true
	}
	i, ok := slices.BinarySearchFunc(s.lanes[1:], k, func(l ixLane, k laneKey) int { return compareLaneKeys(l.key, k) })
	return i + 1, ok
}

// findBase returns the position of e's live entry in s's base.
func (s *ixSection) findBase(e *ixEntry) (int, bool) {
	li, ok := s.laneOf(e)
	if !ok {
		return 0, false
	}
	l := s.lanes[li]
	lane := s.base[l.lo:l.hi]
	if l.key.kind == laneNone {
		i, ok := find(lane, *e)
		return int(l.lo) + i, ok
	}
	newest := l.key.newestFirst()
	order := func(m int) int {
		if newest {
			return compareTie(lane[m].b, e.b)
		}
		q := s.entryAt(l.lo + int32(m)) // scored at now, as e
		return compareRank(q, e, q.req, e.req)
	}
	i, n := 0, len(lane)
	for i < n {
		m := int(uint(i+n) >> 1)
		if order(m) < 0 {
			i = m + 1
		} else {
			n = m
		}
	}
	for j := i; j < len(lane) && order(j) == 0; j++ {
		if lane[j].b == e.b && !lane[j].dead {
			s.entryAt(l.lo + int32(j))
			return int(l.lo) + j, true
		}
	}
	for j := i - 1; !newest && j >= 0 && order(j) == 0; j-- {
		if lane[j].b == e.b && !lane[j].dead {
			return int(l.lo) + j, true
		}
	}
	return 0, false
}

// laneCursor is where a walk is in one lane: the next position, and the
// first it passed over (hi when none).
type laneCursor struct{ at, gap int32 }

// startLanes starts the walk's cursors at each lane's start, and its heap
// of the lanes not empty.
func (w *walk) startLanes() {
	w.lc, w.heap = w.lc[:0], w.heap[:0]
	for li, l := range w.s.lanes {
		w.lc = append(w.lc, laneCursor{at: l.lo, gap: l.hi})
		if l.lo < l.hi {
			w.heap = append(w.heap, int32(li))
		}
	}
	w.heapify()
}

// heapify puts the walk's heap of lanes in heap order.
func (w *walk) heapify() {
	for i := len(w.heap)/2 - 1; i >= 0; i-- {
		w.down(i)
	}
}

// forkUnfloored returns a copy of w that walks on without moving w, and
// without the floor: the lanes the floor ended go on from where it ended
// them (what the walk took since is marked, and passed over).
func (w *walk) forkUnfloored() walk {
	c := *w
	c.lc, c.hasFloor = slices.Clone(w.lc), false
	c.heap = make([]int32, 0, len(w.lc))
	for li, l := range w.s.lanes {
		if lc := &c.lc[li]; lc.gap < lc.at {
			lc.at = lc.gap
		}
		if c.lc[li].at < l.hi {
			c.heap = append(c.heap, int32(li))
		}
	}
	c.heapify()
	c.xi = min(c.xi, c.gapX)
	return c
}

// laneLess reports whether lane p's head ranks before lane q's.
func (w *walk) laneLess(p, q int32) bool {
	a, b := w.s.entryAt(w.lc[p].at), w.s.entryAt(w.lc[q].at)
	if c := compareRank(a, b, a.req, b.req); c != 0 {
		return c < 0
	}
	return p < q
}

func (w *walk) down(i int) {
	h := w.heap
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		if r := l + 1; r < len(h) && w.laneLess(h[r], h[l]) {
			l = r
		}
		if !w.laneLess(h[l], h[i]) {
			return
		}
		h[i], h[l] = h[l], h[i]
		i = l
	}
}

// pop takes the heap's top lane out: it is done.
func (w *walk) pop() {
	n := len(w.heap) - 1
	w.heap[0] = w.heap[n]
	w.heap = w.heap[:n]
	if n > 0 {
		w.down(0)
	}
}

// baseHead returns the base's next entry in rank order that the walk may
// pull (head's rules, over the lanes' heads), nil when none is left.
func (w *walk) baseHead(skip bool, m int32) *ixEntry {
	for len(w.heap) > 0 {
		li := w.heap[0]
		c, l := &w.lc[li], &w.s.lanes[li]
		at := c.at
		e := w.laneHead(c, l.hi, skip, m)
		switch {
		case e == nil:
			w.pop()
			continue
		case c.at != at:
			w.down(0) // its head moved down: another lane's may lead
			if w.heap[0] != li {
				continue
			}
		}
		if !e.req && w.hasFloor && w.eff(e) <= w.floor {
			// Rank order: every entry after it scores no higher.
			for _, lj := range w.heap {
				c := &w.lc[lj]
				c.gap = min(c.gap, c.at)
				c.at = w.s.lanes[lj].hi
			}
			w.heap = w.heap[:0]
			return nil // the replacements under it come from their lane (replHead)
		}
		return e
	}
	return nil
}

// replHead returns the replacements' lane's next entry that the walk
// has not taken (nor taken out of rank order: an incumbent, news, a
// relevance hit or a required block, which come in their own lanes), nil
// when none is left. It passes over a turn whose summary stands in for
// it, as the fill would (passSummarized), without the fill: such turns
// are most of the lane when a summary stands for a long conversation.
func (w *walk) replHead() *ixEntry {
	for w.fi < len(w.replLane) {
		*w.looked++
		if e := w.replLane[w.fi]; !e.dead && e.mark == markRepl {
			if r := &w.repls[e.ri-1]; r.state != replOn || e.b == r.sBlock {
				return e
			}
		}
		w.fi++
	}
	return nil
}

// replLane makes the walk's replacements' lane of section si: its
// replacements' summaries and turns, in rank order, marked so that the
// base and extra lanes pass over them (markRepl).
func (a *Assembler) replLane(si int) {
	w := &a.inc.w
	for i := range a.deg.repls {
		r := &a.deg.repls[i]
		if r.si != si {
			continue
		}
		for j := -1; j < len(r.mBlocks); j++ {
			b, at := r.sBlock, r.sAt
			if j >= 0 {
				b, at = r.mBlocks[j], &r.mAt[j]
			}
			if e := a.planEntry(si, b, at); e != nil {
				switch ri := int32(i) + 1; e.ri {
				case 0:
					e.ri = ri
				case ri:
				default:
					e.ri = -1 // a summary another names: the plan says whose
				}
				w.replLane = append(w.replLane, e)
			}
		}
	}
	w.replLane = a.sortByRank(w.replLane)
	w.replLane = slices.Compact(w.replLane)
	for _, e := range w.replLane {
		e.mark |= markRepl
		if e.ri < 0 {
			ri, _ := a.planIndex(e)
			e.ri = ri + 1
		}
		if checkLane {
			if ri, ok := a.planIndex(e); !ok || ri != e.ri-1 {
				panic("assemble: a replacements' lane's entry is not its plan's")
			}
		}
	}
	a.inc.priorAll = append(a.inc.priorAll, w.replLane...) // unmarked by endWalk
	w.laned, w.repls = true, a.deg.repls
}

// sortByRank returns es in rank order (compareRank's), sorted as rank
// keys: the lane of a section with many summaries holds every turn they
// stand for, and comparing entries through their pointers cost more than
// the rest of the walk. Only runs of equal keys are compared by block
// (compareTie). The result is es's array or a.inc.byRank's; the other
// becomes a.inc.byRank.
func (a *Assembler) sortByRank(es []*ixEntry) []*ixEntry {
	if len(es) < 2 {
		return es
	}
	keys := a.keys[:0]
	for i, e := range es {
		keys = append(keys, rankKeyOf(e.score, e.req, i))
	}
	keys = a.sortRankKeys(keys)
	sortKeyTies(keys, func(p, q rankKey) int { return compareTie(es[p.index].b, es[q.index].b) })
	out := slices.Grow(a.inc.byRank[:0], len(es))
	for _, k := range keys {
		out = append(out, es[k.index])
	}
	a.keys = keys[:0]
	clear(es)
	a.inc.byRank = es[:0]
	return out
}

// laneHead is head for one lane, ending at hi.
func (w *walk) laneHead(c *laneCursor, hi int32, skip bool, m int32) *ixEntry {
	for c.at < hi {
		*w.looked++
		e := w.s.entryAt(c.at)
		switch {
		case e.dead || e.mark != 0:
			c.at++
		case skip && !e.req && e.min > m:
			c.gap = min(c.gap, c.at)
			c.at = int32(min(w.s.tree.first(int(c.at)+1, m), int(hi)))
		default:
			return e
		}
	}
	return nil
}

// pullBase moves past the base's head, which the walk took.
func (w *walk) pullBase() {
	li := w.heap[0]
	c := &w.lc[li]
	c.at++
	if c.at >= w.s.lanes[li].hi {
		w.pop()
		return
	}
	w.down(0)
}

// baseTail returns the first entry in rank order the walk never pulled,
// of those finishWalk notes, or nil: each lane's first, the best of them.
func (w *walk) baseTail() *ixEntry {
	var best *ixEntry
	for li, l := range w.s.lanes {
		c := w.lc[li]
		for i := min(c.gap, c.at); i < l.hi; i++ {
			if e := w.s.entryAt(i); !e.dead && e.mark == 0 && !e.req {
				if best == nil || compareRank(e, best, false, false) < 0 {
					best = e
				}
				break // rank order: the first is the lane's best
			}
		}
	}
	return best
}

// resortRest puts lane 0 of section s in rank order again after its
// entries were scored again, mapping the time orders to the new places,
// unless it is in order. The entries whose scores do not move keep their
// order: when the others are few, they alone are sorted and merged in,
// so that a few stale blocks do not sort a large section. perm, place
// and permBase are scratch.
func (s *ixSection) resortRest(perm, place *[]int32, permBase *[]ixEntry) {
	l := s.lanes[0]
	lane := s.base[l.lo:l.hi]
	// Two still entries are in order (the lane was): only the pairs
	// with a mover need a look.
	sorted, moving := true, len(s.movers)
	for _, m := range s.movers {
		i := int(m - l.lo)
		if i > 0 && !inOrder(&lane[i-1], &lane[i]) || i+1 < len(lane) && !inOrder(&lane[i], &lane[i+1]) {
			sorted = false
			break
		}
	}
	if sorted {
		return
	}
	all := moving*8 > len(lane) // else only the moving ones are sorted
	p := (*perm)[:0]
	for i := range lane {
		if all || lane[i].moves != stillScore {
			p = append(p, int32(i))
		}
	}
	slices.SortFunc(p, func(a, b int32) int { return rankOrder(&lane[a], &lane[b]) })
	if !all {
		// Merge the still entries, in order already, with the sorted
		// moving ones.
		n := len(p)
		p = slices.Grow(p, len(lane))
		mv, out := p[:n], p[n:n]
		j := 0
		for i := range lane {
			if lane[i].moves != stillScore {
				continue
			}
			for ; j < len(mv) && rankOrder(&lane[mv[j]], &lane[i]) < 0; j++ {
				out = append(out, mv[j])
			}
			out = append(out, int32(i))
		}
		out = append(out, mv[j:]...)
		p = append(p[:0], out...) // copy moves the overlap right
	}
	tmp := slices.Grow((*permBase)[:0], len(lane))
	pl := slices.Grow((*place)[:0], len(lane))[:len(lane)]
	for i, q := range p {
		tmp = append(tmp, lane[q])
		pl[q] = int32(i)
	}
	copy(lane, tmp)
	for _, pos := range [2][]int32{s.byTime, s.history} {
		for i, q := range pos {
			if q >= l.lo && q < l.hi {
				pos[i] = l.lo + pl[q-l.lo]
			}
		}
	}
	for i, m := range s.movers {
		s.movers[i] = l.lo + pl[m-l.lo]
	}
	slices.Sort(s.movers)
	s.tree.build(s.base)
	*perm, *place, *permBase = p[:0], pl[:0], tmp[:0]
}
