package assemble

import (
	"slices"
	"strings"
	"time"

	"github.com/contextasm/contextasm/truncate"
)

// Score returns b's score at now under s, each zero field of s taking its
// default (see [truncate.Scoring]).
func Score(s truncate.Scoring, b *Block, now time.Time) float64 {
	frac, stale := b.staleness(now)
	return score(s.WithDefaults(), b, frac, stale)
}

// score is Score for a Scoring already defaulted and a staleness already
// known: the Assembler has both at hand for every block.
func score(s truncate.Scoring, b *Block, frac float64, stale bool) float64 {
	p := s.DefaultPriority
	if b.HasPriority {
		p = b.Priority
	}
	sum := s.Priority + s.SemanticWeight + s.Trust
	if sum <= 0 {
		return 0
	}
	score := (s.Priority*p + s.SemanticWeight*b.Weight + s.Trust*b.Trust) / sum
	if stale {
		score *= 1 - s.StalePenalty*(1+frac)/2
	}
	return score
}

// Ranked is one block's place in a section's ranking: a flat value so that
// sorting moves no pointers and allocates nothing.
type Ranked struct {
	Index    int32 // into the blocks given to the Assembler
	Required bool
	Score    float64
	ID       string
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
