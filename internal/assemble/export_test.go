package assemble

// Descending exposes descending to the external tests.
var Descending = descending

// RankSection runs the Assembler's ranking of one section's blocks given in
// request_id order (the engine's path) into its candidates, and returns
// their order as indexes into ranked.
func (a *Assembler) RankSection(ranked []Ranked) []int32 {
	a.reset(1)
	a.ranked[0] = append(a.ranked[0], ranked...)
	a.rankByIndex(0)
	out := make([]int32, len(a.cands[0]))
	for i, cd := range a.cands[0] {
		out[i] = cd.Index
	}
	return out
}

// RankSectionNoResult is RankSection without building the result, for
// allocation tests.
func (a *Assembler) RankSectionNoResult(ranked []Ranked) {
	a.reset(1)
	a.ranked[0] = append(a.ranked[0], ranked...)
	a.rankByIndex(0)
}
