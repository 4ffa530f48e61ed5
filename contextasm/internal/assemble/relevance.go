package assemble

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"

	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/internal/lexical"
	"github.com/contextasm/contextasm/template"
)

// The relevance pass: each eligible block's relevance to the request's
// query, in [0, 1]. The host's (Request.Relevance) when it gives any;
// else the built-in lexical scorer's (package lexical), whose statistics
// are those of the request's eligible blocks (summaries aside) and only
// those: another tenant's blocks never move them.
func (a *Assembler) relevance(r *run) {
	if r.req.NewestTurnQuery && r.req.Query == nil && r.req.Relevance == nil {
		a.queryTurn(r, a.newestTurn(r))
	}
	if !r.req.queried() {
		return
	}
	if host := r.req.Relevance; host != nil {
		for si := range a.secs {
			for i := range a.secs[si].ranked {
				e := &a.secs[si].ranked[i]
				e.Relevance = clampUnit(host[e.ID])
			}
		}
		return
	}
	rs := &a.rel
	rs.docs, rs.own = rs.docs[:0], rs.own[:0]
	for si := range a.secs {
		for _, e := range a.secs[si].ranked {
			b := r.blocks[e.Index]
			if b.Doc == nil { // a Block built without one (the engine's have one)
				rs.own = append(rs.own, lexical.Analyze(b.Content))
			}
			rs.docs = append(rs.docs, b.Doc)
		}
	}
	k := 0
	for i, d := range rs.docs {
		if d == nil {
			rs.docs[i] = &rs.own[k]
			k++
		}
	}
	rs.scan.Reset(r.req.Query)
	i := 0
	for si := range a.secs {
		for _, e := range a.secs[si].ranked {
			// A summary repeats the words of the turns it stands for:
			// counted too, it would count them twice, and the assembly
			// without it (degrade.go) would rank them otherwise.
			if !isSummary(r.blocks[e.Index]) {
				rs.scan.Count(rs.docs[i])
			}
			i++
		}
	}
	i = 0
	rels := rs.rels[:0]
	for si := range a.secs {
		for j := range a.secs[si].ranked {
			e := &a.secs[si].ranked[j]
			if e.Relevance = rs.scan.Relevance(rs.docs[i]); e.Relevance > 0 {
				rels = append(rels, e.Relevance)
			}
			i++
		}
	}
	if t, ties, cut := rs.cutoff(rels, maxHits(r.tpl)); cut {
		tied := rs.tied[:0]
		for si := range a.secs {
			for j := range a.secs[si].ranked {
				switch e := &a.secs[si].ranked[j]; {
				case e.Relevance == t:
					tied = append(tied, relCand{id: e.ID, si: int32(si), j: int32(j)})
				case e.Relevance < t:
					e.Relevance = 0
				}
			}
		}
		_, left := splitTied(tied, ties)
		for _, c := range left {
			a.secs[c.si].ranked[c.j].Relevance = 0
		}
		clear(tied)
		rs.tied = tied[:0]
	}
	rs.rels = rels[:0]
	for si := range a.secs {
		a.neighbours(si, r.blocks, r.out.QueryTurn)
	}
	clear(rs.docs)
}

// minHits and hitsPerBudget bound the blocks that keep their lexical
// relevance: the max(minHits, budget/hitsPerBudget) most relevant (then
// request_id ascending), about as many as the budget could hold blocks of
// hitsPerBudget tokens; every other block scores 0 for the query, before
// neighbours are raised. A query whose common words touch half of a
// large store thus costs the blocks that could matter, not the store,
// and what is cut off is the tail of least relevance: the blocks a
// budget cannot hold anyway (docs/relevance.md).
// (Variables only so that the tests can make the cut-off bind.)
var (
	minHits       = 256
	hitsPerBudget = 32
)

// maxHits returns how many blocks keep their lexical relevance under tpl.
func maxHits(tpl *template.Template) int { return max(minHits, tpl.Budget()/hitsPerBudget) }

// relCand is a block whose relevance ties with the cut-off's, at j of
// section si (of the ranked blocks), or j the scorer's document.
type relCand struct {
	id    string
	si, j int32
}

// cutoff returns, when more than k of rels are positive (all of them
// are), the least relevance the k most relevant have (t) and how many of
// the blocks at exactly t are among them (ties: the ones with the
// smallest request_ids, splitTied). The rest score 0 for the query. A
// heap of the k largest whose top is the least, so each value costs one
// comparison but the few that enter it, and no input more than n·log k.
func (rs *relevanceState) cutoff(rels []float64, k int) (t float64, ties int, cut bool) {
	if len(rels) <= k {
		return 0, 0, false
	}
	h := append(rs.heap[:0], rels[:k]...)
	for i := k/2 - 1; i >= 0; i-- {
		siftDown(h, i)
	}
	for _, v := range rels[k:] {
		if v > h[0] {
			h[0] = v
			siftDown(h, 0)
		}
	}
	t, ties = h[0], 0
	for _, v := range h {
		if v == t {
			ties++
		}
	}
	rs.heap = h[:0]
	return t, ties, true
}

// splitTied splits tied after the keep with the smallest request_ids:
// the ones the cut-off keeps and those it leaves out, each in no order
// (a hit is a mark on its block, whatever the order). When few are kept
// of many (a conversation that says the same thing again and again ties
// all of it) they are selected by a heap, n·log keep, not by sorting all.
func splitTied(tied []relCand, keep int) (kept, left []relCand) {
	byID := func(a, b relCand) int { return strings.Compare(a.id, b.id) }
	if keep >= len(tied)/4 {
		slices.SortFunc(tied, byID)
		return tied[:keep], tied[keep:]
	}
	h := tied[:keep] // a max-heap by request_id: its top the largest kept
	for i := keep/2 - 1; i >= 0; i-- {
		siftTied(h, i)
	}
	for i := keep; i < len(tied); i++ {
		if keep > 0 && tied[i].id < h[0].id {
			tied[i], h[0] = h[0], tied[i]
			siftTied(h, 0)
		}
	}
	return h, tied[keep:]
}

// siftTied restores the max-heap by request_id below i.
func siftTied(h []relCand, i int) {
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		m := l
		if r := l + 1; r < len(h) && h[r].id > h[l].id {
			m = r
		}
		if h[m].id <= h[i].id {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}

// siftDown restores the min-heap below i.
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

// NeighbourShare is γ: a history block's relevance is at least γ times
// the relevance of the turn just before or after it in its section's
// time order. What a question needs is often said next to the turn that
// shares its words ("when was that?" answered by the turn after).
const NeighbourShare = 0.5

// neighbours raises the relevance of section si's history blocks to
// NeighbourShare times their time neighbours' (as computed before any is
// raised). The query turn raises none: its words are the query's, and
// the turn next to it is near by recency already.
func (a *Assembler) neighbours(si int, blocks []*Block, queryTurn *Block) {
	hist := a.rel.hist[:0]
	for i, e := range a.secs[si].ranked {
		if neighbourly(blocks[e.Index]) {
			hist = append(hist, int32(i))
		}
	}
	ranked := a.secs[si].ranked
	slices.SortFunc(hist, func(x, y int32) int { return compareNewest(blocks[ranked[x].Index], blocks[ranked[y].Index]) })
	own := slices.Grow(a.rel.own2[:0], len(hist))
	for _, i := range hist {
		v := ranked[i].Relevance
		if blocks[ranked[i].Index] == queryTurn {
			v = 0
		}
		own = append(own, v)
	}
	for k, i := range hist {
		if k > 0 {
			ranked[i].Relevance = max(ranked[i].Relevance, NeighbourShare*own[k-1])
		}
		if k+1 < len(hist) {
			ranked[i].Relevance = max(ranked[i].Relevance, NeighbourShare*own[k+1])
		}
	}
	a.rel.hist, a.rel.own2 = hist, own
}

// neighbourly reports whether b takes part in neighbour propagation: a
// history turn, not a summary, so that a turn's relevance is the same
// whether or not a summary of others was declared.
func neighbourly(b *Block) bool {
	return b.Type == declare.History && len(b.Replaces()) == 0
}

// relevanceState is the relevance pass's scratch.
type relevanceState struct {
	q    lexical.Query // the newest user turn's, reused
	scan lexical.Scan
	docs []*lexical.Doc // the eligible blocks' docs, in pass order
	own  []lexical.Doc  // the docs it analysed itself
	hist []int32        // scratch of neighbours
	own2 []float64
	// Scratch of the hits' cut-off (maxHits).
	rels, heap []float64
	tied       []relCand
}

// clampUnit returns v within [0, 1]; NaN is 0.
func clampUnit(v float64) float64 {
	if !(v > 0) {
		return 0
	}
	return min(v, 1)
}

// newestTurn returns the session's newest user turn among the eligible
// blocks (see Request.NewestTurnQuery), or nil.
func (a *Assembler) newestTurn(r *run) *Block {
	var best *Block
	for si := range a.secs {
		for _, e := range a.secs[si].ranked {
			if b := r.blocks[e.Index]; queryTurn(b, r.req) && (best == nil || compareNewest(b, best) < 0) {
				best = b
			}
		}
	}
	return best
}

// queryTurn reports whether b may be the query of a request that takes
// the newest user turn: a history block of the request's session, of the
// user's (a history block that names no role is), not a summary.
func queryTurn(b *Block, req *Request) bool {
	return b.Type == declare.History && req.SessionID != "" && b.SessionID == req.SessionID &&
		(b.Role == declare.RoleUser || b.Role == "") && len(b.Replaces()) == 0
}

// queryTurn makes b, when not nil, the request's query.
func (a *Assembler) queryTurn(r *run, b *Block) {
	if b == nil {
		return
	}
	a.rel.q.Set(b.Content)
	sum := sha256.Sum256([]byte(b.Content))
	r.req.Query, r.req.QueryKey = &a.rel.q, "sha256:"+hex.EncodeToString(sum[:])
	r.out.QueryTurn = b
}
