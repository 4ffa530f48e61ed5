package assemble

import (
	"fmt"
	"maps"
	"reflect"
	"slices"

	"github.com/contextasm/contextasm/declare"
)

// SetEntriesPerLane sets how many recency entries a lane must hold on
// average for a section to be laid out in lanes (lanes.go): 1 lays out
// every section with two or more. It returns what restores the default.
func SetEntriesPerLane(n int) (restore func()) {
	was := entriesPerLane
	entriesPerLane = n
	return func() { entriesPerLane = was }
}

// Descending exposes descending to the external tests.
var Descending = descending

// RankSection runs the Assembler's ranking of one section's blocks given in
// request_id order (the engine's path) into its candidates, and returns
// their order as indexes into ranked.
func (a *Assembler) RankSection(ranked []Ranked) []int32 {
	a.reset(1)
	a.secs[0].ranked = append(a.secs[0].ranked, ranked...)
	a.rankByIndex(0)
	out := make([]int32, len(a.secs[0].cands))
	for i, cd := range a.secs[0].cands {
		out[i] = cd.Index
	}
	return out
}

// RankSectionNoResult is RankSection without building the result, for
// allocation tests.
func (a *Assembler) RankSectionNoResult(ranked []Ranked) {
	a.reset(1)
	a.secs[0].ranked = append(a.secs[0].ranked, ranked...)
	a.rankByIndex(0)
}

// Verify reports how x differs from an Index built from blocks at x's now:
// another live entry, in another order or with another score, another
// count of hidden blocks.
func (x *Index) Verify(blocks []*Block) error {
	y := NewIndex(x.tpl, x.shape, x.sc)
	y.Build(blocks, x.shape.Now)
	if x.hidden != y.hidden {
		return fmt.Errorf("hidden %v, built %v", x.hidden, y.hidden)
	}
	if x.clashes != y.clashes || !maps.Equal(x.keyed, y.keyed) {
		return fmt.Errorf("conflict keys %v (%d shared), built %v (%d)", x.keyed, x.clashes, y.keyed, y.clashes)
	}
	for si := range x.secs {
		var got, want []string
		live := func(list []ixEntry, out *[]string) {
			for _, e := range list {
				if !e.dead {
					*out = append(*out, fmt.Sprintf("%s@%p:%v", e.b.ID, e.b, e.score))
				}
			}
		}
		for i := range x.secs[si].base {
			x.secs[si].entryAt(int32(i)) // the recency lanes' scores, as read
		}
		merged := append(slices.Clone(x.secs[si].base), x.secs[si].extra...)
		merged = slices.DeleteFunc(merged, func(e ixEntry) bool { return e.dead })
		slices.SortStableFunc(merged, compareEntries)
		live(merged, &got)
		built := slices.Clone(y.secs[si].base)
		slices.SortStableFunc(built, compareEntries)
		live(built, &want)
		if err := x.secs[si].verifyTimes(); err != nil {
			return fmt.Errorf("section %d: %v", si, err)
		}
		if err := x.secs[si].verifyLanes(); err != nil {
			return fmt.Errorf("section %d: %v", si, err)
		}
		if !slices.Equal(got, want) {
			return fmt.Errorf("section %d: entries\n%v\nbuilt\n%v", si, got, want)
		}
	}
	return x.verifyLex()
}

// verifyTimes reports how s's time orders differ from its base's.
func (s *ixSection) verifyTimes() error {
	var all, hist []int32
	for i := range s.base {
		if !s.base[i].dead {
			all = append(all, int32(i))
			if s.base[i].b.Type == declare.History {
				hist = append(hist, int32(i))
			}
		}
	}
	byNewest := func(p, q int32) int { return compareNewest(s.base[p].b, s.base[q].b) }
	slices.SortFunc(all, byNewest)
	slices.SortFunc(hist, byNewest)
	live := func(pos []int32) []int32 {
		return slices.DeleteFunc(slices.Clone(pos), func(p int32) bool { return s.base[p].dead })
	}
	if got := live(s.byTime); !slices.Equal(got, all) {
		return fmt.Errorf("time order %v, base's %v", got, all)
	}
	if got := live(s.history); !slices.Equal(got, hist) {
		return fmt.Errorf("history order %v, base's %v", got, hist)
	}
	for h, pos := range s.history {
		if e := &s.base[pos]; !e.dead && e.hist != int32(h+1) {
			return fmt.Errorf("history entry %s at %d of the history says it is at %d", e.b.ID, h, e.hist-1)
		}
	}
	return nil
}

// verifyLanes reports how s's lanes break their rules (lanes.go): they
// cover the base in a row, lane 0 in rank order, each other of entries
// of its key, in its order, the keys ascending.
func (s *ixSection) verifyLanes() error {
	if len(s.lanes) == 0 || s.lanes[0].lo != 0 || s.lanes[len(s.lanes)-1].hi != int32(len(s.base)) {
		return fmt.Errorf("lanes %v do not cover a base of %d", s.lanes, len(s.base))
	}
	var movers []int32
	for i := s.lanes[0].lo; i < s.lanes[0].hi; i++ {
		if s.base[i].moves != stillScore {
			movers = append(movers, i)
		}
	}
	if !slices.Equal(s.movers, movers) {
		return fmt.Errorf("lane 0's movers %v, its entries' %v", s.movers, movers)
	}
	for li, l := range s.lanes {
		if li > 0 {
			p := s.lanes[li-1]
			if p.hi != l.lo || li > 1 && compareLaneKeys(p.key, l.key) >= 0 || l.key.kind == laneNone {
				return fmt.Errorf("lane %d %+v after %+v", li, l, p)
			}
		}
		var prev *ixEntry
		for i := l.lo; i < l.hi; i++ {
			e := s.entryAt(i)
			if k := laneKeyOf(e, &s.sc); li > 0 && k != l.key || li == 0 && len(s.lanes) > 1 && k.kind != laneNone {
				return fmt.Errorf("lane %d %+v holds %s (key %+v)", li, l, e.b.ID, k)
			}
			if e.dead {
				continue
			}
			if prev != nil && (l.key.newestFirst() && l.key.kind != laneNone && compareTie(prev.b, e.b) >= 0 || compareEntries(*prev, *e) > 0) {
				return fmt.Errorf("lane %d: %s before %s", li, prev.b.ID, e.b.ID)
			}
			prev = e
		}
	}
	return nil
}

// verifyLex reports how x's documents differ from its live entries': each
// entry's document is its block's, in its section, and no other is kept.
func (x *Index) verifyLex() error {
	if !x.lexOn {
		return nil
	}
	live := 0
	for si := range x.secs {
		for _, list := range [][]ixEntry{x.secs[si].base, x.secs[si].extra} {
			for i := range list {
				e := &list[i]
				if e.dead {
					continue
				}
				if isSummary(e.b) {
					if e.lex != noDoc {
						return fmt.Errorf("section %d: summary %s has document %d", si, e.b.ID, e.lex)
					}
					continue
				}
				live++
				if ref := x.lexOf[e.lex]; ref.b != e.b || ref.si != int32(si) {
					return fmt.Errorf("section %d: %s's document is %v's, of section %d", si, e.b.ID, ref.b, ref.si)
				}
				if h, ok := x.lexBy[e.b]; !ok || h != e.lex {
					return fmt.Errorf("section %d: %s's document by block %d (%v), by entry %d", si, e.b.ID, h, ok, e.lex)
				}
			}
		}
	}
	if x.lex.Len() != live || len(x.lexBy) != live {
		return fmt.Errorf("%d documents (%d by block) for %d live entries", x.lex.Len(), len(x.lexBy), live)
	}
	return nil
}

// Looked returns how many index entries the last AssembleIndexed looked at.
func (a *Assembler) Looked() int { return a.inc.looked }

// HistoryRead returns how many history entries the last assembly's
// pullHistory read, in both its walks when it has summaries.
func (a *Assembler) HistoryRead() int { return a.inc.histRead }

// Lexical reports whether x keeps its entries' documents.
func (x *Index) Lexical() bool { return x.lexOn }

// NearBlocks returns the blocks whose entries the index remembers the
// place of (Index.near).
func (x *Index) NearBlocks() []*Block {
	out := make([]*Block, 0, len(x.near))
	for b := range x.near {
		out = append(out, b)
	}
	return out
}

// UnitsMade returns how many units of tool exchanges and groups the last
// AssembleIndexed made (unitOf).
func (a *Assembler) UnitsMade() int { return len(a.plan.units) }

// PassedUnits returns how many units the last AssembleIndexed passed
// over whole.
func (a *Assembler) PassedUnits() int { return a.inc.passed }

// PassedHitUnits returns how many of those held a relevance hit.
func (a *Assembler) PassedHitUnits() int { return a.inc.passedHits }

// Remembered returns how many incumbents the last incremental assembly
// found as the assembly before wrote them, not by request_id.
func (a *Assembler) Remembered() int { return a.inc.remembered }

// SetHitCutoff makes maxHits max(least, budget/perBudget) until the
// function it returns is called.
func SetHitCutoff(least, perBudget int) (restore func()) {
	m, p := minHits, hitsPerBudget
	minHits, hitsPerBudget = least, perBudget
	return func() { minHits, hitsPerBudget = m, p }
}

// TopRelevant returns the ids of the k most relevant of rels (by id), as
// the relevance pass keeps them, in no order.
func TopRelevant(rels map[string]float64, k int) []string {
	var rs relevanceState
	var vals []float64
	for _, r := range rels {
		vals = append(vals, r)
	}
	t, ties, cut := rs.cutoff(vals, k)
	var ids []string
	var tied []relCand
	for id, r := range rels {
		switch {
		case !cut || r > t:
			ids = append(ids, id)
		case r == t:
			tied = append(tied, relCand{id: id})
		}
	}
	kept, _ := splitTied(tied, ties)
	for _, c := range kept {
		ids = append(ids, c.id)
	}
	return ids
}

// PlansExtended returns how many plans of summaries a's assemblies
// extended (extendPlan), in all.
func (a *Assembler) PlansExtended() int { return a.inc.extended }

// LexicalQueries returns how many queries of an index's lexical index
// a's assemblies made (findHits), in all.
func (a *Assembler) LexicalQueries() int { return a.inc.queries }

// PlanSought returns how many blocks of plans of summaries (their
// replacements' blocks, the summaries left out) a's assemblies sought
// that the plan had not found before (planEntry), in all.
func (a *Assembler) PlanSought() int { return a.inc.sought }

// CheckPlans has every plan an assembly keeps from the one
// before or extends (extendPlan) checked against one made again from the
// same summaries, until restore; a difference is reported to fail. The
// replacements the walk reads from its entries (ixEntry.ri), and the
// history pullHistory skips, are checked against the plans too, and a
// difference panics.
func CheckPlans(fail func(format string, args ...any)) (restore func()) {
	checkPlan = func(a *Assembler, r *run, si int, p *replPlan) {
		made := newPlan(p.sumList)
		a.makePlan(r, si, made)
		if err := samePlans(p, made); err != nil {
			fail("section %d: the plan kept or extended is not the one made: %v", si, err)
		}
	}
	checkLane = true
	return func() { checkPlan, checkLane = nil, false }
}

// PlansMade returns how many plans of summaries a's assemblies made
// again (planOf), in all.
func (a *Assembler) PlansMade() int { return a.inc.plansMade }

// samePlans returns what differs between an extended plan p and one
// made (q) of the same summaries, or nil.
func samePlans(p, q *replPlan) error {
	if len(p.order) != len(q.order) {
		return fmt.Errorf("%d replacements stand, %d", len(p.order), len(q.order))
	}
	for k := range p.order {
		x, y := &p.all[p.order[k]], &q.all[q.order[k]]
		if x.summary != y.summary || !slices.Equal(x.members, y.members) || x.named != y.named || !reflect.DeepEqual(x.rp, y.rp) {
			return fmt.Errorf("replacement %d: %s with %d members, %+v; %s with %d, %+v", k, x.summary.ID, len(x.members), x.rp, y.summary.ID, len(y.members), y.rp)
		}
	}
	if len(p.of) != len(q.of) {
		return fmt.Errorf("%d blocks in a replacement, %d", len(p.of), len(q.of))
	}
	for b, i := range q.of {
		j, ok := p.of[b]
		if !ok || p.at(j) != q.at(i) {
			return fmt.Errorf("%s: in replacement %d, not %d (%v)", b.ID, q.at(i), p.at(j), ok)
		}
	}
	switch {
	case !slices.Equal(p.gone, q.gone) || !slices.Equal(p.goneNamed, q.goneNamed):
		return fmt.Errorf("superseded %v %v, %v %v", blockIDs(p.gone), p.goneNamed, blockIDs(q.gone), q.goneNamed)
	case !maps.Equal(p.named, q.named) || !maps.Equal(p.summarised, q.summarised):
		return fmt.Errorf("%d ids named, %d; %d summarised, %d", len(p.named), len(q.named), len(p.summarised), len(q.summarised))
	case p.sums != q.sums || p.linked != q.linked || p.first != q.first || p.firstNamed != q.firstNamed:
		return fmt.Errorf("candidates %v, %v; linked %v, %v; first %v %v, %v %v", p.sums, q.sums, p.linked, q.linked, p.first, p.firstNamed, q.first, q.firstNamed)
	}
	return nil
}

func blockIDs(bs []*Block) []string {
	ids := make([]string, len(bs))
	for i, b := range bs {
		ids[i] = b.ID
	}
	return ids
}

// CandidatesMade returns how many candidates the last AssembleIndexed
// made, in both walks of one with summaries.
func (a *Assembler) CandidatesMade() int { return a.inc.made }
