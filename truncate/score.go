package truncate

import (
	"slices"
	"strings"
	"time"
)

// Scoring sets the weights of the score that ranks blocks inside a section:
//
//	base  = (P·priority + S·semantic_weight + T·trust) / (P + S + T)
//	score = base · (1 − StalePenalty · (1 + s) / 2)   for a stale block
//	score = base                                      otherwise
//
// where priority is the block's MCP priority (DefaultPriority when it has
// none) and s ∈ [0, 1] is how far the block is through its stale window
// (0 when it just became stale, 1 at valid_until). A stale block thus loses
// between half of StalePenalty and all of it. The score lies in [0, 1].
//
// The zero Scoring means [DefaultScoring]. A non-zero Scoring is used as
// given, so set every field you care about.
type Scoring struct {
	Priority        float64 // P
	SemanticWeight  float64 // S
	Trust           float64 // T
	DefaultPriority float64 // priority of a block that declares none
	StalePenalty    float64 // in [0, 1]
}

// DefaultScoring weighs MCP priority most, then the declared semantic
// weight, then learned trust; a block without a priority counts as 0.5, and
// staleness costs a quarter to a half of the score.
var DefaultScoring = Scoring{
	Priority:        0.4,
	SemanticWeight:  0.35,
	Trust:           0.25,
	DefaultPriority: 0.5,
	StalePenalty:    0.5,
}

func (s Scoring) orDefault() Scoring {
	if s == (Scoring{}) {
		return DefaultScoring
	}
	return s
}

// Score returns b's score at now.
func (s Scoring) Score(b *Block, now time.Time) float64 {
	frac, stale := b.staleness(now)
	return s.orDefault().score(b, frac, stale)
}

// score is Score for a Scoring already defaulted and a staleness already
// known: the Assembler has both at hand for every block.
func (s Scoring) score(b *Block, frac float64, stale bool) float64 {
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
