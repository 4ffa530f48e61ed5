package assemble

import "github.com/contextasm/contextasm/internal/lexical"

// The relevance pass: each eligible block's relevance to the request's
// query, in [0, 1]. The host's (Request.Relevance) when it gives any;
// else the built-in lexical scorer's (package lexical), whose statistics
// are those of the request's eligible blocks and only those: another
// tenant's blocks never move them.
func (a *Assembler) relevance(r *run) {
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
	for _, d := range rs.docs {
		rs.scan.Count(d)
	}
	i := 0
	for si := range a.secs {
		for j := range a.secs[si].ranked {
			a.secs[si].ranked[j].Relevance = rs.scan.Relevance(rs.docs[i])
			i++
		}
	}
	clear(rs.docs)
}

// relevanceState is the relevance pass's scratch.
type relevanceState struct {
	scan lexical.Scan
	docs []*lexical.Doc // the eligible blocks' docs, in pass order
	own  []lexical.Doc  // the docs it analysed itself
}

// clampUnit returns v within [0, 1]; NaN is 0.
func clampUnit(v float64) float64 {
	if !(v > 0) {
		return 0
	}
	return min(v, 1)
}
