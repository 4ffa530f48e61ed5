package assemble

import (
	"time"

	"github.com/contextasm/contextasm/declare"

	"github.com/contextasm/contextasm/truncate"
)

// scoring is the scoring pass: each eligible block's score at the
// request's now.
func (a *Assembler) scoring(r *run) {
	sc := a.Scoring.WithDefaults()
	now := r.req.Now
	for si := range a.secs {
		for i := range a.secs[si].ranked {
			e := &a.secs[si].ranked[i]
			b := r.blocks[e.Index]
			frac, stale := b.staleness(now)
			e.Score = score(sc, b, now, frac, stale)
		}
	}
}

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
