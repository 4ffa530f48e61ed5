package assemble

import (
	"fmt"
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
	return nil
}

// Looked returns how many index entries the last AssembleIndexed looked at.
func (a *Assembler) Looked() int { return a.inc.looked }
