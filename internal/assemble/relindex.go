package assemble

import (
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

// lexRemoveSection removes the documents of section si's live entries.
func (x *Index) lexRemoveSection(si int) {
	s := &x.secs[si]
	for i := range s.base {
		if !s.base[i].dead {
			x.lexRemove(&s.base[i])
		}
	}
	for i := range s.extra {
		x.lexRemove(&s.extra[i])
	}
}

// lexAdd adds b's document, of section si, and returns its handle.
func (x *Index) lexAdd(b *Block, si int) lexical.Handle {
	var h lexical.Handle
	if b.Doc != nil {
		h = x.lex.Add(*b.Doc)
	} else {
		h = x.lex.Add(lexical.Analyze(b.Content))
	}
	for int(h) >= len(x.lexOf) {
		x.lexOf = append(x.lexOf, lexRef{})
	}
	x.lexOf[h] = lexRef{b: b, si: int32(si)}
	return h
}

// lexRemove removes e's document, when the index keeps documents.
func (x *Index) lexRemove(e *ixEntry) {
	if x.lexOn {
		x.lex.Remove(e.lex)
		x.lexOf[e.lex] = lexRef{}
	}
}

// findHits finds the entries req's query touches, with their relevance:
// the host's (Request.Relevance), or the lexical index's.
func (a *Assembler) findHits(x *Index, req *Request, lookup func(string) (*Block, bool)) {
	if a.inc.relOf == nil {
		a.inc.relOf = make(map[*ixEntry]float64)
	}
	add := func(b *Block, si int, rel float64) {
		if rel <= 0 {
			return
		}
		if e := x.secs[si].entryOf(x.entry(b, si)); e != nil {
			a.inc.relOf[e] = rel
			a.inc.hits = append(a.inc.hits, relHit{e: e, si: int32(si)})
		}
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
	a.inc.lex = x.lex.Score(req.Query, a.inc.lex[:0])
	for _, h := range a.inc.lex {
		ref := x.lexOf[h.Doc]
		add(ref.b, int(ref.si), h.Relevance)
	}
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
		rel := a.inc.relOf[h.e]
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
	return withRelevance(e.score, w.share, a.inc.relOf[e])
}

// newestTurn returns the newest user turn of req's session among the
// index's entries (see Request.NewestTurnQuery), or nil: from each
// section's history newest first, and its extra entries.
func (x *Index) newestTurn(req *Request) *Block {
	var best *Block
	for si := range x.secs {
		s := &x.secs[si]
		for _, i := range s.history {
			if e := &s.base[i]; !e.dead && queryTurn(e.b, req) {
				if best == nil || compareNewest(e.b, best) < 0 {
					best = e.b
				}
				break // newest first: the first is the section's newest
			}
		}
		for i := range s.extra {
			if b := s.extra[i].b; queryTurn(b, req) && (best == nil || compareNewest(b, best) < 0) {
				best = b
			}
		}
	}
	return best
}
