package lexical

import (
	"math"
	"math/bits"
	"slices"
	"unsafe"
)

// Pruning. ScoreTop with k > 0 reads a long list in runs, each of the
// postings of one class: a range of term frequencies and one of document
// lengths. A term adds at most as much as its class's highest frequency
// in its shortest document would (term is non-decreasing in tf and
// non-increasing in length), so a run has a bound. The runs of all the
// query's terms are read from the highest bound down; once the terms'
// next bounds add up to less than the k-th largest sum so far, no
// document not yet touched can be among the k most relevant, and the rest
// of the postings are not read. The documents touched that still might
// be (their sums so far, with the next bounds of the terms not read for
// them: each keeps a mask of the terms read) are then scored again from
// their own terms, in the query's term order, so that each relevance has
// Score's bits.

// What pruning pays for (variables, for the tests to take every path):
//   - pruneMin is how many postings a list holds before ScoreTop reads it
//     in runs; a shorter one is one run, bounded by the most its term
//     adds;
//   - pruneTotal is how many postings a query's lists hold, all together,
//     before ScoreTop prunes at all: below it, reading them costs less
//     than the runs' bookkeeping;
//   - a pruned read that has read more than a pruneGiveUp-th of the
//     postings without stopping is given up for the plain one (which
//     reads them all in the terms' order): at worst, a query costs a
//     little more than the plain read (1: never given up);
//   - rescoreCost is what scoring a document again costs, in postings
//     read, for a query of m terms: rescoreCost(m) (a pass over its
//     terms, out of cache; measured by BenchmarkIndexScore): stopping
//     pays when the documents to score again cost less than the postings
//     left.
var (
	pruneMin    = 1024
	pruneTotal  = 65536
	pruneGiveUp = 4
	rescoreCost = func(m int) int { return 24 + 8*m }
)

// The classes: 16 of term frequency (1, 2–3, 4–7, …) by 65 of length (0,
// then two a power of two: [2^i, 1.5·2^i) and [1.5·2^i, 2^(i+1))).
const (
	lenClasses = 65
	numClasses = 16 * lenClasses
)

// classOf is the class of a posting of frequency tf in a document of
// length n.
func classOf(tf uint16, n uint32) uint16 {
	lc := uint16(0)
	if n > 0 {
		l := bits.Len32(n)
		half := uint16(0)
		if l >= 2 {
			half = uint16(n>>(l-2)) & 1
		}
		lc = uint16(2*(l-1)) + half + 1
	}
	return uint16(bits.Len16(tf)-1)*lenClasses + lc
}

// classBounds returns the highest frequency and the least length of
// class c's postings.
func classBounds(c uint16) (tf uint16, n uint32) {
	tc, lc := c/lenClasses, c%lenClasses
	tf = uint16(min(1<<(tc+1)-1, 1<<16-1))
	if lc > 0 {
		l := (lc-1)/2 + 1
		n = 1 << (l - 1)
		if (lc-1)%2 == 1 {
			n |= 1 << (l - 2)
		}
	}
	return tf, n
}

// boundSlack covers rounding: a bound, a partial sum and a sum in
// another order each differ from the exact value by a few ulps, far
// below it.
const boundSlack = 1e-9

// grouping is a long list's postings put in runs: p[:n] is in runs of
// one class each, in class order; the postings after came since.
type grouping struct {
	n    int32
	runs []prun
}

// prun is a run of a grouping: its class, and where it ends.
type prun struct {
	class uint16
	end   int32
}

// group returns list li's grouping, made again when more than a 32nd of
// its postings came after it or it was dropped (ungroup).
func (x *Index) group(li int32) *grouping {
	pl := &x.plists[li]
	g := x.groups[li]
	if g != nil && len(pl.p)-int(g.n) <= len(pl.p)/32 {
		return g
	}
	if g == nil {
		if x.groups == nil {
			x.groups = make(map[int32]*grouping)
		}
		g = new(grouping)
		x.groups[li] = g
	}
	// A counting sort by class. A stale posting takes its slot's length:
	// it is passed over when read, whatever its run.
	if x.classN == nil {
		x.classN = make([]int32, numClasses)
	}
	counts := x.classN
	clear(counts)
	cls := slices.Grow(x.pcls[:0], len(pl.p))
	for _, p := range pl.p {
		c := classOf(p.tf, x.slots[p.doc].length)
		cls = append(cls, c)
		counts[c]++
	}
	g.runs = g.runs[:0]
	at := int32(0)
	for c := range counts {
		if n := counts[c]; n > 0 {
			counts[c] = at
			at += n
			g.runs = append(g.runs, prun{class: uint16(c), end: at})
		}
	}
	tmp := slices.Grow(x.ptmp[:0], len(pl.p))[:len(pl.p)]
	for i, p := range pl.p {
		tmp[counts[cls[i]]] = p
		counts[cls[i]]++
	}
	copy(pl.p, tmp)
	g.n = int32(len(pl.p))
	x.pcls, x.ptmp = cls[:0], tmp[:0]
	return g
}

// ungroup drops list li's runs, when its postings moved or it was let
// go: a stale posting alone stays where it was, passed over when read.
func (x *Index) ungroup(li int32) {
	if g := x.groups[li]; g != nil {
		g.n = 0
	}
}

// qrun is a run of postings [lo, hi) of the query's term j, with the
// most one of them adds.
type qrun struct {
	lo, hi int32
	j      int32
	bound  float64
}

// scoreTopPruned is ScoreTop for k > 0 over the terms x.qs (weights w,
// most max), when a list is long enough to read in runs; false when none
// is (ScoreTop then accumulates every posting).
func (x *Index) scoreTopPruned(k int, w *weights, max float64, dst []Hit) ([]Hit, bool) {
	x.read = 0
	long, total := false, 0
	for _, qt := range x.qs {
		n := len(x.plists[qt.list].p)
		long = long || n >= pruneMin
		total += n
	}
	if !long || total < pruneTotal || len(x.qs) > 64 {
		return dst, false
	}
	// Each term's runs, highest bound first; next[j] is term j's next.
	runs := x.qruns[:0]
	starts := x.qstart[:0]
	for j, qt := range x.qs {
		starts = append(starts, int32(len(runs)))
		pl := &x.plists[qt.list]
		top := w.bound(qt.idf) * (1 + boundSlack)
		if len(pl.p) < pruneMin {
			runs = append(runs, qrun{hi: int32(len(pl.p)), j: int32(j), bound: top})
			continue
		}
		g := x.group(qt.list)
		if int(g.n) < len(pl.p) {
			runs = append(runs, qrun{lo: g.n, hi: int32(len(pl.p)), j: int32(j), bound: top}) // unclassed: read first
		}
		lo := int32(0)
		for _, r := range g.runs {
			tf, n := classBounds(r.class)
			runs = append(runs, qrun{lo: lo, hi: r.end, j: int32(j), bound: min(top, w.term(qt.idf, tf, n)*(1+boundSlack))})
			lo = r.end
		}
		seg := runs[starts[j]:]
		slices.SortFunc(seg, func(a, b qrun) int { return cmpDesc(a.bound, b.bound) })
	}
	starts = append(starts, int32(len(runs)))
	next := x.qnext[:0]
	for j := range x.qs {
		next = append(next, starts[j])
	}
	x.qruns, x.qstart, x.qnext = runs, starts, next
	nextBound := func(j int) float64 {
		if next[j] < starts[j+1] {
			return runs[next[j]].bound
		}
		return 0
	}

	acc := x.acc
	if n := len(x.slots) - len(x.mask); n > 0 {
		x.mask = append(x.mask, make([]uint64, n)...)
	}
	wit := x.wit[:0]
	witSeen := 0
	theta, rest, counted := 0.0, 0.0, math.Inf(1)
	for {
		j, best := -1, 0.0
		rest = 0
		for jj := range x.qs {
			b := nextBound(jj)
			rest += b
			if b > best {
				j, best = jj, b
			}
		}
		if j < 0 {
			break // every run read
		}
		if x.read > total/pruneGiveUp {
			x.wit = wit[:0]
			x.unscore()
			return dst, false
		}
		if len(x.seen) >= k {
			if len(wit) == 0 || len(x.seen) >= 2*witSeen {
				wit, witSeen = x.witnesses(k, wit), len(x.seen)
			}
			theta = acc[wit[0]]
			for _, d := range wit[1:] {
				theta = min(theta, acc[d])
			}
			// No document untouched can reach the k-th largest: stop
			// when scoring again those touched that might costs less
			// than the postings left (counted again only once the
			// bounds fell by a tenth: a count reads every one touched).
			if rest < theta*(1-2*boundSlack) && rest <= 0.9*counted {
				counted = rest
				if x.mightReach(theta*(1-2*boundSlack), nextBound)*rescoreCost(len(x.qs)) <= total-x.read {
					x.stopped++
					break
				}
			}
		}
		r := runs[next[j]]
		next[j]++
		x.read += int(r.hi - r.lo)
		qt := x.qs[r.j]
		x.accumulate(x.plists[qt.list].p[r.lo:r.hi], w, qt.idf, 1<<r.j)
	}
	if len(x.seen) >= k {
		// Theta as high as the sums so far make it: the fewer to score
		// again.
		wit = x.witnesses(k, wit)
		theta = acc[wit[0]]
	}
	x.wit = wit[:0]
	// The documents that might still be among the k most relevant (their
	// sum so far and the next bounds of the terms not read for them reach
	// theta; theta is 0 unless k were touched), scored again exactly; the
	// others dropped.
	cut := theta * (1 - 2*boundSlack)
	if rest == 0 && x.mightReach(cut, nextBound)*rescoreCost(len(x.qs)) > total {
		// Read whole: the plain read costs less than scoring them again.
		x.unscore()
		return dst, false
	}
	open, bounds := x.openTerms(nextBound)
	kept := x.seen[:0]
	for _, d := range x.seen {
		if acc[d]+unread(x.mask[d], open, bounds) < cut {
			acc[d], x.mask[d] = 0, 0
			continue
		}
		acc[d], x.mask[d] = x.exact(d, w), 0
		kept = append(kept, d)
	}
	x.seen = kept
	return x.hits(k, max, dst), true
}

// openTerms returns the terms of x.qs with runs left to read, as a mask,
// and each one's next bound (in x.bounds).
func (x *Index) openTerms(nextBound func(int) float64) (open uint64, bounds []float64) {
	bounds = x.bounds[:0]
	for j := range x.qs {
		b := nextBound(j)
		if b > 0 {
			open |= 1 << j
		}
		bounds = append(bounds, b)
	}
	x.bounds = bounds
	return open, bounds
}

// unread is the most the terms open and not in read (a document's terms
// read) may still add to a document's sum: each one's next bound.
func unread(read, open uint64, bounds []float64) float64 {
	sum := 0.0
	for m := open &^ read; m != 0; m &= m - 1 {
		sum += bounds[bits.TrailingZeros64(m)]
	}
	return sum
}

// mightReach counts the documents touched that might still reach cut:
// their sums with what the terms not read for them may add.
func (x *Index) mightReach(cut float64, nextBound func(int) float64) int {
	open, bounds := x.openTerms(nextBound)
	n := 0
	for _, d := range x.seen {
		if x.acc[d]+unread(x.mask[d], open, bounds) >= cut {
			n++
		}
	}
	return n
}

// unscore clears the sums and masks of the documents touched.
func (x *Index) unscore() {
	for _, d := range x.seen {
		x.acc[d], x.mask[d] = 0, 0
	}
	x.seen = x.seen[:0]
}

// cmpDesc orders floats descending.
func cmpDesc(a, b float64) int {
	switch {
	case a > b:
		return -1
	case a < b:
		return 1
	}
	return 0
}

// witnesses returns k documents of x.seen with the largest sums so far
// (in wit's array): the least of their sums, which only grow, is at most
// the k-th largest sum however far the scoring goes.
func (x *Index) witnesses(k int, wit []Handle) []Handle {
	acc := x.acc
	h := wit[:0]
	for _, d := range x.seen {
		switch {
		case len(h) < k:
			h = append(h, d)
			if len(h) == k {
				for i := k/2 - 1; i >= 0; i-- {
					siftDownBy(h, acc, i)
				}
			}
		case acc[d] > acc[h[0]]:
			h[0] = d
			siftDownBy(h, acc, 0)
		}
	}
	return h
}

// siftDownBy restores the min-heap h of documents by their sums below i.
func siftDownBy(h []Handle, acc []float64, i int) {
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		m := l
		if r := l + 1; r < len(h) && acc[h[r]] < acc[h[l]] {
			m = r
		}
		if acc[h[m]] >= acc[h[i]] {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}

// exact is document d's sum over the terms x.qs, added in their order:
// what Score accumulates for it, bit for bit.
func (x *Index) exact(d Handle, w *weights) float64 {
	// Both in ascending key order: one pass over the document's terms,
	// which reads them in the order memory holds them.
	terms, n := x.byDoc[d].terms, x.slots[d].length
	sum, i := 0.0, 0
	for _, qt := range x.qs {
		for i < len(terms) && terms[i]>>16 < qt.key {
			i++
		}
		if i == len(terms) {
			break
		}
		if terms[i]>>16 == qt.key {
			sum += w.term(qt.idf, uint16(terms[i]), n)
		}
	}
	return sum
}

// groupBytes is what the groupings and the pruning's scratch hold.
func (x *Index) groupBytes() int {
	n := mapBytes(len(x.groups), 4+8) + cap(x.classN)*4 + cap(x.pcls)*2 + cap(x.ptmp)*int(unsafe.Sizeof(posting{})) +
		cap(x.qruns)*int(unsafe.Sizeof(qrun{})) + (cap(x.qstart)+cap(x.qnext)+cap(x.wit))*4 + (cap(x.mask)+cap(x.bounds))*8
	for _, g := range x.groups {
		n += int(unsafe.Sizeof(*g)) + cap(g.runs)*int(unsafe.Sizeof(prun{}))
	}
	return n
}

// ReadInRuns makes every ScoreTop with k > 0 read each list in runs and
// stop as soon as it may, whatever that costs, until restore is called:
// for the tests of packages that score with an Index, whose indexes are
// too small to prune. Not safe while anything scores.
func ReadInRuns() (restore func()) {
	m, n, g, r := pruneMin, pruneTotal, pruneGiveUp, rescoreCost
	pruneMin, pruneTotal, pruneGiveUp, rescoreCost = 1, 0, 1, func(int) int { return 0 }
	return func() { pruneMin, pruneTotal, pruneGiveUp, rescoreCost = m, n, g, r }
}
