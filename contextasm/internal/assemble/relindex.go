package assemble

import (
	"math"
	"slices"

	"github.com/contextasm/contextasm/internal/lexical"
)

// Relevance in an incremental assembly. An Index keeps, from the first
// query it serves on, the documents of its entries in a lexical.Index:
// exactly the shape's eligible blocks, as the relevance pass of a full
// assembly counts them, so the two give the same relevance. A query then
// costs its terms' postings (findHits); the entries it touches come in a
// lane of their own, ranked with their relevance, and every other entry's
// score is scaled alike, so the base and extra lanes keep their order.

// relHit is an entry a query touches, and its section.
type relHit struct {
	e  *ixEntry
	si int32
}

// ensureLex starts keeping the entries' documents.
func (x *Index) ensureLex() {
	if x.lexOn {
		return
	}
	x.lexOn = true
	for si := range x.secs {
		x.lexAddSection(si)
	}
}

// lexAddSection adds the documents of section si's live entries.
func (x *Index) lexAddSection(si int) {
	s := &x.secs[si]
	for i := range s.base {
		if !s.base[i].dead {
			s.base[i].lex = x.lexAdd(s.base[i].b, si)
		}
	}
	for i := range s.extra {
		s.extra[i].lex = x.lexAdd(s.extra[i].b, si)
	}
}

// noDoc is the handle of an entry whose block has no document in the
// index's lexical index: a summary, which repeats the words of the turns
// it stands for and so counts in no statistics (the relevance pass's
// rule); it is scored apart (scoreSummaries).
const noDoc = lexical.Handle(math.MaxUint32)

// lexAdd adds b's document, of section si, and returns its handle (noDoc
// for a summary).
func (x *Index) lexAdd(b *Block, si int) lexical.Handle {
	if isSummary(b) {
		return noDoc
	}
	var h lexical.Handle
	if b.Doc != nil {
		h = x.lex.Add(*b.Doc)
	} else {
		h = x.lex.Add(lexical.Analyze(b.Content))
	}
	for int(h) >= len(x.lexOf) {
		x.lexOf = append(x.lexOf, lexRef{})
	}
	x.lexOf[h] = lexRef{b: b, si: int32(si), at: -1}
	if x.lexBy == nil {
		x.lexBy = make(map[*Block]lexical.Handle)
	}
	x.lexBy[b] = h
	return h
}

// lexRemove removes e's document, when the index keeps documents.
func (x *Index) lexRemove(e *ixEntry) {
	if x.lexOn && e.lex != noDoc {
		x.lex.Remove(e.lex)
		if h, ok := x.lexBy[e.b]; ok && h == e.lex {
			delete(x.lexBy, e.b)
		}
		x.lexOf[e.lex] = lexRef{}
	}
}

// findHits finds the entries req's query touches, with their relevance:
// the host's (Request.Relevance), or the lexical index's.
func (a *Assembler) findHits(x *Index, req *Request, lookup func(string) (*Block, bool), queryTurn *Block) {
	hit := func(e *ixEntry, si int, rel float64) {
		if e != nil && rel > 0 {
			e.rel = rel
			a.inc.hits = append(a.inc.hits, relHit{e: e, si: int32(si)})
		}
	}
	add := func(b *Block, si int, rel float64) {
		if rel > 0 {
			hit(x.entryOfBlock(si, b), si, rel)
		}
	}
	doc := func(h lexical.Handle, rel float64) { // a document's entry, where it was last
		ref := &x.lexOf[h]
		hit(x.secs[ref.si].entryNear(x, int(ref.si), ref.b, &ref.at), int(ref.si), rel)
	}
	if req.Relevance != nil {
		for id, rel := range req.Relevance {
			b, ok := lookup(id)
			if !ok {
				continue
			}
			if si, reason := eligibility(b, x.tpl, &x.shape); reason == "" {
				add(b, si, clampUnit(rel))
			}
		}
		return
	}
	x.ensureLex()
	// Only the k = maxHits most relevant lexical hits are asked for, and
	// the cut-off keeps what it would of all of them (Score's): were the
	// k-th largest lexical relevance u, ScoreTop returns every hit at u
	// or above (all hits when k or fewer), and a cut t, the k-th largest
	// of lexical and summaries' relevances, is then at least u. So the
	// relevances at t or above are the same either way (the same t, ties
	// and tied blocks), and a hit left out, below u, would be cut. Were
	// there no cut with ScoreTop's hits but one with Score's, ScoreTop
	// returned exactly the k hits at u or above and no summary scored:
	// the cut would keep them all (only their order in a.inc.hits
	// differs, and nothing depends on it: a hit is a mark on its entry,
	// and the lane sorts them).
	if req.Query != a.inc.lexQ || req.QueryKey != a.inc.lexKey {
		a.inc.lex = x.lex.ScoreTop(req.Query, maxHits(x.tpl), a.inc.lex[:0])
		a.inc.lexQ, a.inc.lexKey = req.Query, req.QueryKey
		a.inc.queries++
	}
	a.scoreSummaries(x, req.Query)
	// The hits the relevance pass keeps (its cut-off), in the same way.
	rs := &a.rel
	rels := rs.rels[:0]
	for _, h := range a.inc.lex {
		if h.Relevance > 0 {
			rels = append(rels, h.Relevance)
		}
	}
	for _, s := range a.inc.sumRel {
		rels = append(rels, s.rel)
	}
	t, ties, cut := rs.cutoff(rels, maxHits(x.tpl))
	rs.rels = rels[:0]
	tied := rs.tied[:0]
	for _, h := range a.inc.lex {
		switch {
		case h.Relevance <= 0 || cut && h.Relevance < t:
		case cut && h.Relevance == t:
			ref := x.lexOf[h.Doc]
			tied = append(tied, relCand{id: ref.b.ID, si: ref.si, j: int32(h.Doc)})
		default:
			doc(h.Doc, h.Relevance)
		}
	}
	for k, s := range a.inc.sumRel { // j: -1 - its place in sumRel
		switch {
		case cut && s.rel < t:
		case cut && s.rel == t:
			tied = append(tied, relCand{id: s.b.ID, si: s.si, j: int32(-1 - k)})
		default:
			add(s.b, int(s.si), s.rel)
		}
	}
	if cut {
		kept, _ := splitTied(tied, ties)
		for _, c := range kept {
			if c.j < 0 {
				add(a.inc.sumRel[-1-c.j].b, int(c.si), t)
			} else {
				doc(lexical.Handle(c.j), t)
			}
		}
	}
	clear(a.inc.sumRel)
	a.inc.sumRel = a.inc.sumRel[:0]
	clear(tied)
	rs.tied = tied[:0]
	a.neighbourHits(x, queryTurn)
}

// sumRelevance is a summary's relevance to the query (scoreSummaries).
type sumRelevance struct {
	b   *Block
	si  int32
	rel float64
}

// scoreSummaries scores the sections' summaries against q under the
// lexical index's statistics, which leave them out (noDoc), into
// a.inc.sumRel, those of positive relevance in section then request_id
// order: the relevance pass scores a summary without counting it. An
// assembly without summaries (degrade.go's plain one) has none to score.
func (a *Assembler) scoreSummaries(x *Index, q *lexical.Query) {
	if a.deg.plain {
		return
	}
	sc, ready := &a.inc.scorer, false
	for si := range x.secs {
		if len(x.secs[si].sums) == 0 {
			continue
		}
		if !ready { // the query weighed once, for all the summaries
			sc.Reset(&x.lex, q)
			ready = true
		}
		sums, _ := x.secs[si].summaries()
		for _, b := range sums {
			d := b.Doc
			if d == nil {
				own := lexical.Analyze(b.Content)
				d = &own
			}
			if rel := sc.Relevance(d); rel > 0 {
				a.inc.sumRel = append(a.inc.sumRel, sumRelevance{b: b, si: int32(si), rel: rel})
			}
		}
	}
}

// neighbourHits raises the relevance of the time neighbours of the history
// hits to NeighbourShare of theirs, as the relevance pass's neighbours
// does, making hits of those the query does not touch. The query turn
// raises none: its words are the query's.
func (a *Assembler) neighbourHits(x *Index, queryTurn *Block) {
	// The extra history entries of every section, by section then newest
	// first, so that a hit finds its neighbours among them by search.
	xh := a.inc.xhist[:0]
	for si := range x.secs {
		for i := range x.secs[si].extra {
			if e := &x.secs[si].extra[i]; neighbourly(e.b) {
				xh = append(xh, extraRef{si: int32(si), e: e})
			}
		}
	}
	slices.SortFunc(xh, compareExtraRefs)
	// Each section's run of xh, found once: a hit's search is then over
	// its section's extras alone.
	runs := slices.Grow(a.inc.xruns[:0], len(x.secs)+1)[:len(x.secs)+1]
	for si, k := 0, 0; si <= len(x.secs); si++ {
		for k < len(xh) && int(xh[k].si) < si {
			k++
		}
		runs[si] = int32(k)
	}
	raises := a.inc.raises[:0]
	for k := range len(a.inc.hits) {
		h := a.inc.hits[k]
		if !neighbourly(h.e.b) || h.e.b == queryTurn {
			continue
		}
		v := NeighbourShare * h.e.rel
		for _, nb := range x.secs[h.si].timeNeighbours(h.e, xh[runs[h.si]:runs[h.si+1]]) {
			if nb != nil {
				raises = append(raises, relRaise{nb, h.si, v})
			}
		}
	}
	for _, r := range raises {
		if r.e.rel == 0 { // not a hit yet (a hit's relevance is positive)
			a.inc.hits = append(a.inc.hits, relHit{e: r.e, si: r.si})
		}
		r.e.rel = max(r.e.rel, r.v)
	}
	a.inc.raises, a.inc.xhist, a.inc.xruns = raises, xh, runs
}

// relRaise is a neighbour's raised relevance, applied after every hit's
// neighbours are found so that raises do not chain.
type relRaise struct {
	e  *ixEntry
	si int32
	v  float64
}

// extraRef is an extra history entry of section si.
type extraRef struct {
	si int32
	e  *ixEntry
}

func compareExtraRefs(p, q extraRef) int {
	if p.si != q.si {
		return int(p.si - q.si)
	}
	return compareNewest(p.e.b, q.e.b)
}

// timeNeighbours returns the live history turns (neighbourly) just newer
// and just older than e's block in the section's time order
// (compareNewest), among its base and its extra history entries (newest
// first), nil where there is none. A base entry's place in the history is
// its own (ixEntry.hist); an extra entry's is searched for.
func (s *ixSection) timeNeighbours(e *ixEntry, extra []extraRef) [2]*ixEntry {
	b := e.b
	var out [2]*ixEntry // newer, older
	better := func(side int, e *ixEntry) {
		// the one nearest b: the newer side wants the oldest of the newer,
		// the older side the newest of the older
		if cur := out[side]; cur == nil || (side == 0) == (compareNewest(e.b, cur.b) > 0) {
			out[side] = e
		}
	}
	var k int
	if h := int(e.hist) - 1; h >= 0 && h < len(s.history) && &s.base[s.history[h]] == e {
		k = h
	} else {
		k, _ = slices.BinarySearchFunc(s.history, b, func(pos int32, b *Block) int { return compareNewest(s.base[pos].b, b) })
	}
	for j := k - 1; j >= 0; j-- {
		if e := s.entryAt(s.history[j]); !e.dead && e.b != b && neighbourly(e.b) {
			better(0, e)
			break
		}
	}
	for j := k; j < len(s.history); j++ {
		if e := s.entryAt(s.history[j]); !e.dead && e.b != b && neighbourly(e.b) {
			better(1, e)
			break
		}
	}
	k, _ = slices.BinarySearchFunc(extra, b, func(r extraRef, b *Block) int { return compareNewest(r.e.b, b) })
	if k > 0 {
		better(0, extra[k-1].e)
	}
	if k < len(extra) && extra[k].e.b == b {
		k++
	}
	if k < len(extra) {
		better(1, extra[k].e)
	}
	return out
}

// relevanceLane makes section si's lane of the entries the query touches
// that are not prior items already, in rank order with their relevance,
// and marks them, so the base and extra lanes pass over them. In a
// section that follows its previous decision under another query, an
// entry whose relevance adds more than the margin is recalled
// (relevanceNews).
func (a *Assembler) relevanceLane(r *run, si int) {
	w := &a.inc.w
	recalling := r.follow && r.req.QueryKey != r.prev.Query
	for _, h := range a.inc.hits {
		if h.si != int32(si) || h.e.mark != 0 {
			continue
		}
		h.e.mark |= markRel
		a.inc.priorAll = append(a.inc.priorAll, h.e) // unmarked by endWalk
		rel := h.e.rel
		w.rel = append(w.rel, relItem{e: h.e, eff: withRelevance(h.e.score, w.share, rel), recall: recalling && w.share*rel > r.stick.Margin && h.e.b != r.out.QueryTurn,
			tier: w.tierOf(h.e)})
	}
	slices.SortFunc(w.rel, func(p, q relItem) int { return compareHeads(p.e, p.eff, false, p.tier, q.e, q.eff, false, q.tier) })
}

// effOf returns the score entry e ranks with in the walk's section: with
// its relevance when the query touches it.
func (a *Assembler) effOf(e *ixEntry) float64 {
	w := &a.inc.w
	if !w.queried {
		return e.score
	}
	return withRelevance(e.score, w.share, e.rel)
}

// newestTurn returns the newest user turn of req's session among the
// index's entries (see Request.NewestTurnQuery), or nil.
func (x *Index) newestTurn(req *Request) *Block {
	if e, _ := x.newestUser(req, queryTurn); e != nil {
		return e.b
	}
	return nil
}

// newestUser returns the newest entry whose block is matches' of req, and
// its section, or nil: from each section's history newest first, and its
// extra entries. matches must hold only for history blocks.
func (x *Index) newestUser(req *Request, matches func(*Block, *Request) bool) (*ixEntry, int) {
	return x.newestAfter(req, matches, nil)
}

// newestAfter is newestUser among the entries newer than after's block
// (compareNewest), when after is not nil: a scan of what came since, not
// of a history that never had a match (a conversation's assistant turns
// are looked for among the turns after its newest user turn).
func (x *Index) newestAfter(req *Request, matches func(*Block, *Request) bool, after *ixEntry) (*ixEntry, int) {
	var best *ixEntry
	bestSec := -1
	take := func(e *ixEntry, si int) {
		if best == nil || compareNewest(e.b, best.b) < 0 {
			best, bestSec = e, si
		}
	}
	newer := func(e *ixEntry) bool { return after == nil || compareNewest(e.b, after.b) < 0 }
	for si := range x.secs {
		s := &x.secs[si]
		for _, i := range s.history {
			e := s.entryAt(i)
			if !newer(e) {
				break // older from here on
			}
			if !e.dead && matches(e.b, req) {
				take(e, si)
				break // newest first: the first is the section's newest
			}
		}
		for i := range s.extra {
			if e := &s.extra[i]; newer(e) && matches(e.b, req) {
				take(e, si)
			}
		}
	}
	return best, bestSec
}
