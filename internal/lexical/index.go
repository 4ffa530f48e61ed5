package lexical

import (
	"maps"
	"math"
	"slices"
	"unsafe"
)

// A Handle names a document of an Index. The Index picks it (Add) and may
// give it to another document once this one is removed.
type Handle uint32

// A Hit is a document that holds a query term, with its relevance.
type Hit struct {
	Doc       Handle
	Relevance float64 // in (0, 1)
}

// An Index keeps the postings and statistics of a set of documents,
// updated one document at a time, so that a query costs its terms'
// postings and not the set. Statistics are those of the documents in it:
// keep in one Index the documents one request may see (see the package
// documentation). An Index is not safe for concurrent use.
//
// A removed document's postings are left in place, marked stale by the
// generation of its slot, and dropped when a term's list holds more
// stale postings than live ones, so that a removal costs its terms, not
// their lists, and a query reads at most twice a term's live postings
// (plus a few).
type Index struct {
	lists  map[uint64]int32 // term key → its list in plists
	plists []plist
	spare  []int32 // plists no term uses
	slots  []slot  // by Handle: what a query reads of a document
	byDoc  []Doc   // by Handle: its terms, for Remove
	free   []Handle
	docs   int
	length uint64
	pcap   int // the postings' capacity, all lists together (Bytes)

	// groups are the long lists' runs (prune.go), by list.
	groups map[int32]*grouping

	// Query scratch.
	acc  []float64 // by Handle; 0 when untouched
	seen []Handle
	qs   []qterm
	top  []float64 // ScoreTop's heap
	// ScoreTop's pruning's (prune.go).
	qruns         []qrun
	qstart, qnext []int32
	wit           []Handle
	mask          []uint64  // by Handle: the terms read for it (0 when untouched)
	bounds        []float64 // by term: its next bound
	read          int       // postings the last pruned query read, for tests
	stopped       int       // pruned queries that stopped before the end, for tests
	classN        []int32   // by class
	pcls          []uint16
	ptmp          []posting
}

// slot is what scoring reads of a document, kept apart from its terms so
// that the slots of 200,000 documents take 1.6 MB of cache, not 8.
type slot struct {
	length uint32 // Doc.Len
	// gen counts the documents the slot has held: a posting is live when
	// it carries its slot's gen, and a removal moves the gen on, so a
	// stale posting never matches (a free slot gets no postings until
	// it is used again).
	gen  uint16
	live bool
}

// retired is the generation at which a slot is not used again: one more
// would wrap around to generations stale postings may still carry.
const retired = math.MaxUint16

type plist struct {
	p    []posting
	df   int32 // live postings
	dead int32 // stale postings
}

type posting struct {
	doc Handle
	gen uint16
	tf  uint16
}

// minCompact is how many stale postings a list keeps before it is
// compacted, whatever its live ones: compacting a short list for every
// removal would cost more than reading its few stale postings.
const minCompact = 8

// Len returns the number of documents in x.
func (x *Index) Len() int { return x.docs }

// Add puts d in x and returns its handle.
func (x *Index) Add(d Doc) Handle {
	if x.lists == nil {
		x.lists = make(map[uint64]int32)
	}
	var h Handle
	if n := len(x.free); n > 0 {
		h, x.free = x.free[n-1], x.free[:n-1]
	} else {
		h = Handle(len(x.slots))
		x.slots = append(x.slots, slot{})
		x.byDoc = append(x.byDoc, Doc{})
		x.acc = append(x.acc, 0)
	}
	s := &x.slots[h]
	s.length, s.live = d.length, true
	x.byDoc[h] = d
	for _, e := range d.terms {
		li, ok := x.lists[e>>16]
		if !ok {
			if n := len(x.spare); n > 0 {
				li, x.spare = x.spare[n-1], x.spare[:n-1]
			} else {
				li = int32(len(x.plists))
				x.plists = append(x.plists, plist{})
			}
			x.lists[e>>16] = li
		}
		pl := &x.plists[li]
		c := cap(pl.p)
		pl.p = append(pl.p, posting{doc: h, gen: s.gen, tf: uint16(e)})
		x.pcap += cap(pl.p) - c
		pl.df++
	}
	x.docs++
	x.length += uint64(d.length)
	return h
}

// Clone returns a copy of x that shares nothing with it that either may
// change: the same documents under the same handles, so that an Index
// of a set close to x's is made from it by the difference, at the cost
// of copying its postings, not of adding every document again.
func (x *Index) Clone() Index {
	c := Index{lists: maps.Clone(x.lists), spare: slices.Clone(x.spare), slots: slices.Clone(x.slots),
		byDoc: slices.Clone(x.byDoc), free: slices.Clone(x.free), docs: x.docs, length: x.length}
	if x.acc != nil {
		c.acc = make([]float64, len(x.acc)) // scratch, zero between queries
	}
	n := 0
	for i := range x.plists {
		n += len(x.plists[i].p)
	}
	c.pcap = n
	if x.groups != nil {
		c.groups = make(map[int32]*grouping, len(x.groups))
		for li, g := range x.groups {
			c.groups[li] = &grouping{n: g.n, runs: slices.Clone(g.runs)}
		}
	}
	slab := make([]posting, 0, n) // one allocation; each list capped, so an append copies it out
	c.plists = make([]plist, len(x.plists))
	for i, pl := range x.plists {
		at := len(slab)
		slab = append(slab, pl.p...)
		c.plists[i] = plist{p: slab[at:len(slab):len(slab)], df: pl.df, dead: pl.dead}
	}
	return c
}

// Bytes returns about how many bytes x holds: its postings, lists and
// slots, and its map of terms; not its documents' terms, which their
// analysis holds (Analyze's caller). It costs O(1).
func (x *Index) Bytes() int {
	return x.pcap*int(unsafe.Sizeof(posting{})) + cap(x.plists)*int(unsafe.Sizeof(plist{})) +
		cap(x.slots)*int(unsafe.Sizeof(slot{})) + cap(x.byDoc)*int(unsafe.Sizeof(Doc{})) +
		cap(x.acc)*8 + (cap(x.free)+cap(x.spare))*4 + mapBytes(len(x.lists), 8+4) + x.groupBytes()
}

// mapBytes is about what a map of n entries of k+v bytes each holds: a
// Swiss table's slots with their control bytes, at the load (between 7/16
// and 7/8) a table grown by inserts has on average.
func mapBytes(n, kv int) int { return n * (kv + 1) * 3 / 2 }

// Remove takes the document of h out of x. A handle not in x (never given,
// or removed already) is ignored.
func (x *Index) Remove(h Handle) {
	if int(h) >= len(x.slots) || !x.slots[h].live {
		return
	}
	s := &x.slots[h]
	d := x.byDoc[h]
	x.byDoc[h], s.length, s.live = Doc{}, 0, false
	s.gen++
	if s.gen != retired {
		x.free = append(x.free, h)
	}
	x.docs--
	x.length -= uint64(d.length)
	for _, e := range d.terms {
		li := x.lists[e>>16]
		pl := &x.plists[li]
		pl.df--
		pl.dead++
		switch {
		case pl.df == 0:
			delete(x.lists, e>>16)
			x.pcap -= cap(pl.p)
			*pl = plist{}
			x.spare = append(x.spare, li)
			x.ungroup(li)
		case pl.dead > pl.df && pl.dead >= minCompact:
			x.compact(pl)
			x.ungroup(li) // its postings moved
		}
	}
}

// compact drops a list's stale postings.
func (x *Index) compact(pl *plist) {
	live := pl.p[:0]
	for _, p := range pl.p {
		if x.slots[p.doc].gen == p.gen {
			live = append(live, p)
		}
	}
	clear(pl.p[len(live):])
	pl.p, pl.dead = live, 0
}

// Score appends to dst every document of x that holds a term of q, with
// its relevance, in no particular order; documents it does not append
// have relevance 0. It reads the postings of q's terms only.
func (x *Index) Score(q *Query, dst []Hit) []Hit {
	return x.ScoreTop(q, 0, dst)
}

// ScoreTop appends to dst what Score does, but for documents below the k
// most relevant: every document whose relevance is at least the k-th
// largest (all the documents tied there), each with the relevance Score
// gives it, bit for bit, in no particular order; it may append a few
// more that are close below. A caller that keeps only the k most relevant
// (ties split as it pleases) thus keeps the same ones at the cost of k
// hits, not of every document that holds a common term. k <= 0 means no
// limit: ScoreTop is then Score.
func (x *Index) ScoreTop(q *Query, k int, dst []Hit) []Hit {
	if x.docs == 0 || len(q.keys) == 0 {
		return dst
	}
	w, max := x.terms(q)
	if len(x.qs) == 0 {
		return dst
	}
	if k > 0 {
		if out, ok := x.scoreTopPruned(k, &w, max, dst); ok {
			return out
		}
	}
	for _, qt := range x.qs {
		x.accumulate(x.plists[qt.list].p, &w, qt.idf, 0)
	}
	return x.hits(k, max, dst)
}

// accumulate adds to the sums what the live postings ps, of a term of
// inverse frequency idf, add, noting the documents touched first, and,
// when bit is not 0, the term in their masks (prune.go).
func (x *Index) accumulate(ps []posting, w *weights, idf float64, bit uint64) {
	acc, slots := x.acc, x.slots
	for _, p := range ps {
		s := slots[p.doc]
		if s.gen != p.gen {
			continue
		}
		if acc[p.doc] == 0 {
			x.seen = append(x.seen, p.doc)
		}
		acc[p.doc] += w.term(idf, p.tf, s.length)
		if bit != 0 {
			x.mask[p.doc] |= bit
		}
	}
}

// hits appends the documents touched, each with its sum divided by max,
// only those at or above the k-th largest when there are more than k > 0
// (appendTop), and clears the sums.
func (x *Index) hits(k int, max float64, dst []Hit) []Hit {
	if k > 0 && len(x.seen) > k {
		dst = x.appendTop(k, max, dst)
	} else {
		for _, h := range x.seen {
			dst = append(dst, Hit{Doc: h, Relevance: x.acc[h] / max})
			x.acc[h] = 0
		}
	}
	x.seen = x.seen[:0]
	return dst
}

// appendTop appends the documents of x.seen whose relevance is at least
// the k-th largest (k < len(x.seen)), and clears the accumulators, in
// one pass over them: a min-heap keeps the k largest sums seen so far,
// its top a, and a document goes to dst, with its sum, when its sum is
// not below a (which only rises); the few there are then divided and
// filtered by the final a.
//
// Dividing by max > 0 is monotone but not strictly (two sums may round
// to one relevance), so the k-th largest relevance, t, is that of the
// k-th largest sum, and a document is in when its own quotient is at
// least t: a sum a little below a may divide to it. A sum under
// a·(1 − 1e-9) cannot (sums are normal numbers: their quotients then
// differ by far more than rounding), so only those are passed over.
func (x *Index) appendTop(k int, max float64, dst []Hit) []Hit {
	acc, seen := x.acc, x.seen
	h := x.top[:0] // its top the least
	at := len(dst)
	for _, d := range seen[:k] {
		h = append(h, acc[d])
		dst = append(dst, Hit{Doc: d, Relevance: acc[d]}) // a sum, until divided
		acc[d] = 0
	}
	for i := k/2 - 1; i >= 0; i-- {
		siftDown(h, i)
	}
	lo := h[0] * (1 - 1e-9)
	for _, d := range seen[k:] {
		v := acc[d]
		acc[d] = 0
		if v < lo {
			continue
		}
		if v > h[0] {
			h[0] = v
			siftDown(h, 0)
			lo = h[0] * (1 - 1e-9)
		}
		dst = append(dst, Hit{Doc: d, Relevance: v})
	}
	t := h[0] / max
	out := dst[:at]
	for _, c := range dst[at:] {
		if r := c.Relevance / max; r >= t {
			out = append(out, Hit{Doc: c.Doc, Relevance: r})
		}
	}
	x.top = h[:0]
	return out
}

// siftDown restores the min-heap h below i.
func siftDown(h []float64, i int) {
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		m := l
		if r := l + 1; r < len(h) && h[r] < h[l] {
			m = r
		}
		if h[m] >= h[i] {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}

// Relevance returns the relevance of d, a document not in x, under x's
// statistics: what Score gives a document of x with d's terms and length,
// were x's statistics the same with it (a summary is scored so: it
// repeats its turns' words, and counted too it would count them twice).
// To score many documents against one query, a Scorer weighs the query
// once.
func (x *Index) Relevance(q *Query, d *Doc) float64 {
	if x.docs == 0 || len(q.keys) == 0 {
		return 0
	}
	var s Scorer
	s.w, s.max = x.terms(q)
	s.qs = x.qs // x's own terms: one document, no copy
	return s.Relevance(d)
}

// A Scorer scores documents not in an Index against one query, as the
// Index's Relevance does: the query's terms and weights are computed once,
// by Reset, not for every document. It is for as long as the Index does
// not change. Its zero value scores every document 0.
type Scorer struct {
	w   weights
	max float64
	qs  []qterm
}

// Reset makes s score against q under x's statistics, reusing s's memory.
func (s *Scorer) Reset(x *Index, q *Query) {
	s.qs, s.max = s.qs[:0], 0
	if x.docs == 0 || len(q.keys) == 0 {
		return
	}
	s.w, s.max = x.terms(q)
	s.qs = append(s.qs, x.qs...)
}

// Relevance returns d's relevance to the query of the last Reset.
func (s *Scorer) Relevance(d *Doc) float64 {
	if s.max == 0 {
		return 0
	}
	sum := 0.0
	for _, qt := range s.qs {
		if tf := d.tf(qt.key); tf > 0 {
			sum += s.w.term(qt.idf, tf, d.length)
		}
	}
	return sum / s.max
}

// terms makes x.qs the scored terms of q, in q's order, and returns the
// weights under x's statistics and the most a document could score.
func (x *Index) terms(q *Query) (weights, float64) {
	w := newWeights(q.Params, x.docs, x.length)
	x.qs = x.qs[:0]
	max := 0.0
	for _, k := range q.keys {
		li, ok := x.lists[k]
		if !ok || !scored(x.docs, x.plists[li].df) {
			continue
		}
		v := idf(x.docs, x.plists[li].df)
		max += w.bound(v)
		x.qs = append(x.qs, qterm{key: k, list: li, idf: v})
	}
	return w, max
}

// qterm is a term of the query being scored: its key, its list and its
// idf.
type qterm struct {
	key  uint64
	list int32
	idf  float64
}
