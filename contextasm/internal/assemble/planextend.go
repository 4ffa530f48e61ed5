package assemble

import (
	"slices"
	"strings"
)

// Extending a plan of summaries (replPlan) with summaries declared since
// it was made, as a host declares them: each names a run of turns the
// assembly offered (Output.SummarizeCandidates), and, as such a run holds
// the summaries dropped in it, the summaries standing for the runs before.
// Made again, a plan costs what every summary of the section reaches, so
// a conversation summarised as it goes would pay at each call for all it
// summarised before; extended, it costs what the new summaries reach.
//
// The extension is the plan makePlan would make, not an approximation:
// it applies only where resolveClaims' choices among the old claims
// cannot move, and the plan is made again otherwise. An old claim stands
// when no claim taken before it that stands shares a block with it
// (names it, or stands for a block it stands for). So when
//
//   - every block a new summary reaches that an old summary reaches or
//     names is the summary of a replacement that stands (a root), and
//     what it stands for is the root's (the walk does not go past a root),
//   - every root so reached is named by a new claim that stands, which
//     takes the root's blocks in (the root cannot stand: its namer is
//     taken first),
//   - every new claim that stands is named by no other and is taken
//     before every old claim (it is newer), and every new claim another
//     names cannot stand,
//
// the new claims are resolved among themselves (no old claim shares a
// block with them but the roots, which they take in), an old claim that
// a root kept out is kept out by the claim that took the root in (which
// stands for all the root did, and is taken first), and every other old
// claim shares nothing with a new one and stays as it was.

// extendPlan extends p, section si's plan, with the summaries added since
// it was made (p.added), and reports whether it could; p is left as it
// was when it could not (its caller makes the plan again).
func (a *Assembler) extendPlan(r *run, si int, p *replPlan) bool {
	added := slices.SortedFunc(slices.Values(p.added), func(x, y *Block) int { return strings.Compare(x.ID, y.ID) })
	p.added = nil
	claims, ok := a.newClaims(r, si, p, added)
	if !ok || !resolveNew(p, claims) {
		return false
	}
	p.apply(si, claims, added)
	a.inc.extended++
	return true
}

// checkPlan, set by the tests, checks a plan an assembly kept from the
// one before or extended (planOf) against one made again.
var checkPlan func(a *Assembler, r *run, si int, p *replPlan)

// checkLane, set by the tests, checks every replacement an entry of a
// replacements' lane holds (ixEntry.ri), and every entry the walk finds
// none for there, against the plans, and pullHistory's skip against the
// turns the plan's summaries name.
var checkLane bool

// newClaim is what a summary added to a plan stands for beyond the plan:
// claimOf's claim, with the roots it reaches in place of what they stand
// for.
type newClaim struct {
	b     *Block
	names []string // every id it reaches that the plan does not name (not its own)
	set   []*Block // of those, the blocks here, by request_id
	roots []int32  // the replacements that stand whose summaries it reaches, in p.all
	ids   int      // how many turns of names it stands for, here or not
	order int      // its place among the new claims in take order
	// As claim's, and rootReq: a root's summary is required (declared so).
	complete, unusable, named, gone, rootReq bool
}

// newClaims returns the claims of the summaries added (by request_id)
// that are candidates, or false when one reaches a block of the plan
// other than a root.
func (a *Assembler) newClaims(r *run, si int, p *replPlan, added []*Block) ([]newClaim, bool) {
	x := r.x
	uw := &a.inc.units
	here := func(id string) (*Block, *ixEntry, bool) {
		b, ok := r.lookup(id)
		if !ok {
			return nil, nil, false
		}
		if bs, reason := eligibility(b, x.tpl, &x.shape); reason != "" || bs != si {
			return nil, nil, false
		}
		p.reachLinks(b) // as makePlan's reach notes them
		e := x.entryOfBlock(si, b)
		return b, e, e != nil && e.mark&markGone == 0
	}
	var claims []newClaim
	seen := make(map[string]bool)
	var queue []string
	for _, b := range added {
		if _, old := p.named[b.ID]; old {
			return nil, false // named by a summary of the plan
		}
		if e := x.entryOfBlock(si, b); e == nil || e.mark&markGone != 0 {
			continue // not a candidate: no claim (makePlan's reach leaves it out)
		}
		c := newClaim{b: b, complete: true}
		clear(seen)
		seen[b.ID] = true
		queue = append(queue[:0], b.Replaces()...)
		for _, id := range b.Replaces() {
			if _, _, ok := here(id); !ok {
				c.complete = false
			}
		}
		for len(queue) > 0 {
			id := queue[0]
			queue = queue[1:]
			if seen[id] {
				continue
			}
			seen[id] = true
			qb, qe, ok := here(id)
			if _, old := p.named[id]; old {
				i, standing := int32(0), false
				if ok {
					i, standing = p.of[qb]
				}
				if !standing || p.all[i].in != i || p.all[i].summary != qb {
					return nil, false // a turn or summary of the plan that is not a root
				}
				c.roots = append(c.roots, i)
				c.rootReq = c.rootReq || qe.req
				continue
			}
			c.names = append(c.names, id)
			if !ok {
				c.ids++ // not here: the summary is all there is of it
				continue
			}
			if isSummary(qb) {
				queue = append(queue, qb.Replaces()...)
			} else {
				c.ids++
			}
			c.set = append(c.set, qb)
			c.unusable = c.unusable || qe.req
			if u, ok := a.unitOf(si, qe); ok {
				for _, m := range uw.members[u] {
					queue = append(queue, m.b.ID)
				}
			}
		}
		slices.SortFunc(c.set, func(x, y *Block) int { return strings.Compare(x.ID, y.ID) })
		claims = append(claims, c)
	}
	return claims, true
}

// resolveNew resolves the new claims among themselves as resolveClaims
// does (a claim another names is taken after, then the newest first; one
// sharing a block with one taken before that stands cannot stand), and
// reports whether the result is the plan's with them (see the head of
// the file).
func resolveNew(p *replPlan, claims []newClaim) bool {
	namedBy := make(map[string]bool)
	for k := range claims {
		for _, id := range claims[k].names {
			namedBy[id] = true
		}
	}
	order := make([]int, len(claims))
	for k := range claims {
		claims[k].named = namedBy[claims[k].b.ID]
		order[k] = k
	}
	slices.SortFunc(order, func(x, y int) int {
		return compareTake(claims[x].named, claims[x].b, claims[y].named, claims[y].b)
	})
	taken := make(map[string]bool)
	takenRoot := make(map[int32]bool)
	for n, k := range order {
		c := &claims[k]
		c.order = n
		c.gone = taken[c.b.ID] || slices.ContainsFunc(c.names, func(id string) bool { return taken[id] }) ||
			slices.ContainsFunc(c.roots, func(i int32) bool { return takenRoot[i] })
		if c.gone {
			continue
		}
		if c.named || p.first != nil && compareTake(false, c.b, p.firstNamed, p.first) >= 0 {
			return false // taken after an old claim, or named by a new one
		}
		taken[c.b.ID] = true
		for _, id := range c.names {
			taken[id] = true
		}
		for _, i := range c.roots {
			takenRoot[i] = true
		}
	}
	for k := range claims {
		for _, i := range claims[k].roots {
			if !takenRoot[i] {
				return false // a root only claims that cannot stand reach: it may stand still, elsewhere in the order
			}
		}
	}
	return true
}

// apply joins the resolved new claims of the summaries added to p.
func (p *replPlan) apply(si int, claims []newClaim, added []*Block) {
	for _, b := range added {
		p.named[b.ID] = struct{}{}
		p.summarise(b)
	}
	if len(claims) == 0 {
		return
	}
	p.sums = true
	byOrder := make([]*newClaim, len(claims))
	goneNew := make(map[*Block]bool)
	for k := range claims {
		c := &claims[k]
		byOrder[c.order] = c
		for _, id := range c.names {
			p.named[id] = struct{}{}
		}
		if c.gone {
			goneNew[c.b] = true
		}
	}
	if first := byOrder[0]; p.first == nil || compareTake(first.named, first.b, p.firstNamed, p.first) < 0 {
		p.first, p.firstNamed = first.b, first.named
	}
	var order []int32
	var gone []*Block
	var goneNamed []bool
	var goneAt []int32
	for _, c := range byOrder {
		if c.gone {
			gone, goneNamed, goneAt = append(gone, c.b), append(goneNamed, c.named), append(goneAt, -1)
			continue
		}
		i := int32(len(p.all))
		pr := planRepl{summary: c.b, in: i, sAt: -1}
		pr.rp = repl{si: si, summary: -1, ids: c.ids, complete: c.complete, unusable: c.unusable || c.rootReq, at: c.b.LastModified, seq: c.b.Seq}
		newest := func(b *Block, first bool) {
			if first || b.LastModified.After(pr.rp.at) || (b.LastModified.Equal(pr.rp.at) && b.Seq > pr.rp.seq) {
				pr.rp.at, pr.rp.seq = b.LastModified, b.Seq
			}
		}
		for n, m := range c.set {
			newest(m, n == 0)
			if !goneNew[m] {
				pr.members, pr.at = append(pr.members, m), append(pr.at, -1)
				p.of[m] = i
			}
		}
		for n, ri := range c.roots {
			root := &p.all[ri]
			// The root is one of its turns, and so is each of the root's
			// (the newest of them is the root's at, or the root's own).
			newest(root.summary, n == 0 && len(c.set) == 0)
			if root.rp.at.After(pr.rp.at) || root.rp.at.Equal(pr.rp.at) && root.rp.seq > pr.rp.seq {
				pr.rp.at, pr.rp.seq = root.rp.at, root.rp.seq
			}
			pr.rp.ids += root.rp.ids
			pr.rp.unusable = pr.rp.unusable || root.rp.unusable
			pr.members, pr.at = mergeByID(pr.members, pr.at, root.members, root.at)
			delete(p.of, root.summary)
			gone, goneNamed, goneAt = append(gone, root.summary), append(goneNamed, true), append(goneAt, root.sAt)
			// Its replacement, and those it took in, are now the new one.
			root.in = i
			for _, k := range root.took {
				p.all[k].in = i
			}
			pr.took = append(append(pr.took, ri), root.took...)
			root.took, root.members, root.at = nil, nil, nil
		}
		p.of[c.b] = i
		p.all = append(p.all, pr)
		order = append(order, i)
	}
	// The new claims that stand are taken first (resolveNew); the roots
	// they took in leave the order.
	for _, i := range p.order {
		if p.all[i].in == i {
			order = append(order, i)
		}
	}
	p.order = order
	p.pos = slices.Grow(p.pos[:0], len(p.all))[:len(p.all)]
	for k, i := range p.order {
		p.pos[i] = int32(k)
	}
	p.mergeGone(gone, goneNamed, goneAt)
}

// mergeByID returns the blocks of x and y, each by request_id, in one
// list by request_id, with their positions (xa, ya: planRepl.at) in
// another.
// list by request_id.
func mergeByID(x []*Block, xa []int32, y []*Block, ya []int32) ([]*Block, []int32) {
	if len(y) == 0 {
		return x, xa
	}
	out, at := make([]*Block, 0, len(x)+len(y)), make([]int32, 0, len(x)+len(y))
	for len(x) > 0 && len(y) > 0 {
		if strings.Compare(x[0].ID, y[0].ID) <= 0 {
			out, at, x, xa = append(out, x[0]), append(at, xa[0]), x[1:], xa[1:]
		} else {
			out, at, y, ya = append(out, y[0]), append(at, ya[0]), y[1:], ya[1:]
		}
	}
	return append(append(out, x...), y...), append(append(at, xa...), ya...)
}

// mergeGone adds summaries that cannot stand (with whether another names
// each, and where each was found: replPlan.goneAt) to p.gone, in take
// order.
func (p *replPlan) mergeGone(gone []*Block, named []bool, at []int32) {
	if len(gone) == 0 {
		return
	}
	idx := make([]int, len(gone))
	for k := range idx {
		idx[k] = k
	}
	slices.SortFunc(idx, func(x, y int) int { return compareTake(named[x], gone[x], named[y], gone[y]) })
	n := len(p.gone) + len(gone)
	outB, outN, outA := make([]*Block, 0, n), make([]bool, 0, n), make([]int32, 0, n)
	i := 0
	for _, k := range idx {
		for i < len(p.gone) && compareTake(p.goneNamed[i], p.gone[i], named[k], gone[k]) < 0 {
			outB, outN, outA = append(outB, p.gone[i]), append(outN, p.goneNamed[i]), append(outA, p.goneAt[i])
			i++
		}
		outB, outN, outA = append(outB, gone[k]), append(outN, named[k]), append(outA, at[k])
	}
	p.gone, p.goneNamed, p.goneAt = append(outB, p.gone[i:]...), append(outN, p.goneNamed[i:]...), append(outA, p.goneAt[i:]...)
}
