package outcome

import (
	"iter"
	"math"
)

// LostOnRelevance yields, for the rows of one section in rank order (as
// SectionResult.Blocks holds them), each row that lost on relevance
// (docs/relevance.md#lost-on-relevance) with the row it lost to. A block
// dropped for room (section_cap, budget, group, sticky or slack) lost on
// relevance when a block ranked above it, in the text and not required,
// scores lower than it once each row's relevance_points are taken off
// its score: that block outranked it by its relevance to the query
// alone, and without the query the dropped block would have come first.
// The rival yielded is the lowest of them without relevance, the one
// relevance lifted furthest past it.
//
// The figures are compared as the rows show them, in units of 1e-4, so
// that anyone reading a dump can check a mark by subtracting two numbers.
func LostOnRelevance(rows []BlockResult) iter.Seq2[int, int] {
	return func(yield func(lost, rival int) bool) {
		const none = math.MaxInt64
		lowest, rival := int64(none), -1 // the rows above in the text, not required: the lowest score without relevance, and its row
		for i := range rows {
			r := &rows[i]
			base := tenThousandths(r.Score) - tenThousandths(r.RelevancePoints)
			switch {
			case r.Status != StatusDropped:
				if !r.Required && base < lowest {
					lowest, rival = base, i
				}
			case droppedForRoom(r.Reason) && rival >= 0 && base > lowest:
				if !yield(i, rival) {
					return
				}
			}
		}
	}
}

// MarkLostOnRelevance sets LostOnRelevance on the rows of one section that
// [LostOnRelevance] yields, and clears it on the others, so that marking
// twice gives the same rows.
func MarkLostOnRelevance(rows []BlockResult) {
	for i := range rows {
		rows[i].LostOnRelevance = false
	}
	for i := range LostOnRelevance(rows) {
		rows[i].LostOnRelevance = true
	}
}

// droppedForRoom reports whether a block dropped for r lost its place in
// the ranking's competition for room, rather than for its place in a
// conversation (first_message) or to a summary (summarized, turns_kept).
func droppedForRoom(r Reason) bool {
	switch r {
	case ReasonSectionCap, ReasonBudget, ReasonGroup, ReasonSticky, ReasonSlack:
		return true
	}
	return false
}

// tenThousandths is v in units of 1e-4, as a row rounds it.
func tenThousandths(v float64) int64 { return int64(math.Round(v * 1e4)) }
