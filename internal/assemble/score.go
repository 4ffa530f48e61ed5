package assemble

import (
	"cmp"
	"github.com/contextasm/contextasm/declare"
	"slices"
	"strings"
	"time"

	"github.com/contextasm/contextasm/truncate"
)

// Score returns b's score at now under s, each zero field of s taking its
// default (see [truncate.Scoring]).
func Score(s truncate.Scoring, b *Block, now time.Time) float64 {
	frac, stale := b.staleness(now)
	return score(s.WithDefaults(), b, now, frac, stale)
}

// score is Score for a Scoring already defaulted and a staleness already
// known: the Assembler has both at hand for every block.
func score(s truncate.Scoring, b *Block, now time.Time, frac float64, stale bool) float64 {
	p := s.DefaultPriority
	if b.HasPriority {
		p = b.Priority
	}
	sum := s.Priority + s.SemanticWeight + s.Trust
	num := s.Priority*p + s.SemanticWeight*b.Weight + s.Trust*b.Trust
	if b.Type == declare.History {
		sum += s.Recency
		num += s.Recency * recency(b.LastModified, now, s.RecencyHalfAge)
	}
	if sum <= 0 {
		return 0
	}
	score := num / sum
	if stale {
		score *= 1 - s.StalePenalty*(1+frac)/2
	}
	return score
}

// recency is H / (H + age): 1 now (or in the future), ½ at age H, and 0
// for a block of unknown age.
func recency(lastModified, now time.Time, h time.Duration) float64 {
	if lastModified.IsZero() {
		return 0
	}
	age := now.Sub(lastModified)
	if age <= 0 {
		return 1
	}
	return float64(h) / (float64(h) + float64(age))
}

// compareTie orders two blocks of equal rank (required and score): history
// blocks first, newer last_modified first, then later declared; then, and
// for every other block, request_id ascending. A total order, so the
// result of a sort does not depend on the sort.
func compareTie(a, b *Block) int {
	ha, hb := a.Type == declare.History, b.Type == declare.History
	switch {
	case ha != hb:
		if ha {
			return -1
		}
		return 1
	case ha:
		if c := b.LastModified.Compare(a.LastModified); c != 0 {
			return c
		}
		if c := cmp.Compare(b.Seq, a.Seq); c != 0 {
			return c
		}
	}
	return strings.Compare(a.ID, b.ID)
}

// breakTies reorders each run of candidates of equal rank that holds a
// history block by compareTie (runs without one are already in request_id
// order). Ties are rare once history has recency, so this is one pass.
func breakTies(cands []candidate, blocks []*Block) {
	for i := 0; i < len(cands); {
		j, history := i+1, blocks[cands[i].Index].Type == declare.History
		for j < len(cands) && cands[j].Required == cands[i].Required && cands[j].Score == cands[i].Score {
			history = history || blocks[cands[j].Index].Type == declare.History
			j++
		}
		if j-i > 1 && history {
			slices.SortFunc(cands[i:j], func(x, y candidate) int { return compareTie(blocks[x.Index], blocks[y.Index]) })
		}
		i = j
	}
}

// Ranked is one block's place in a section's ranking: a flat value so that
// sorting moves no pointers and allocates nothing.
type Ranked struct {
	Index    int32   // into the blocks the assembly ranks (given, or pulled from an Index)
	Required bool    // Block.Required: ranks before every block that is not
	Score    float64 // the block's score at the request's Now
	ID       string  // Block.ID: the last tie-break, ascending (history ties: compareTie)
}

// Rank sorts r best first: required blocks, then higher score, then
// request_id ascending. It does not allocate.
func Rank(r []Ranked) { slices.SortFunc(r, compareRanked) }

func compareRanked(a, b Ranked) int {
	if a.Required != b.Required {
		if a.Required {
			return -1
		}
		return 1
	}
	if a.Score != b.Score {
		if a.Score > b.Score {
			return -1
		}
		return 1
	}
	return strings.Compare(a.ID, b.ID)
}
