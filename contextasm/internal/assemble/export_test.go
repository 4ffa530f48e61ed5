package assemble

import (
	"fmt"
	"maps"
	"slices"
)

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
		merged := append(slices.Clone(x.secs[si].base), x.secs[si].extra...)
		merged = slices.DeleteFunc(merged, func(e ixEntry) bool { return e.dead })
		slices.SortStableFunc(merged, compareEntries)
		live(merged, &got)
		live(y.secs[si].base, &want)
		if !slices.Equal(got, want) {
			return fmt.Errorf("section %d: entries\n%v\nbuilt\n%v", si, got, want)
		}
	}
	return x.verifyLex()
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
