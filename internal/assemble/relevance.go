package assemble

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"

	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/internal/lexical"
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
			if b := r.blocks[e.Index]; len(b.Replaces()) == 0 || b.Type != declare.History {
				rs.scan.Count(rs.docs[i])
			}
			i++
		}
	}
	i = 0
	for si := range a.secs {
		for j := range a.secs[si].ranked {
			a.secs[si].ranked[j].Relevance = rs.scan.Relevance(rs.docs[i])
			i++
		}
		a.neighbours(si, r.blocks, r.out.QueryTurn)
	}
	clear(rs.docs)
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
