package assemble

import (
	"slices"
	"time"

	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/template"

	"github.com/contextasm/contextasm/truncate"
)

// scoring is the scoring pass: each eligible block's score at the
// request's now, under its section's weights (sectionScoring), with its
// relevance to the query when the request has one.
func (a *Assembler) scoring(r *run) {
	now := r.req.Now
	queried := r.req.queried()
	for si := range a.secs {
		sc, share := sectionScoring(a.Scoring, r.tpl.Section(si), r.req.hostRelevance())
		for i := range a.secs[si].ranked {
			e := &a.secs[si].ranked[i]
			b := r.blocks[e.Index]
			frac, stale := b.staleness(now)
			e.Score = score(sc, b, now, frac, stale)
			e.Base = e.Score
			if queried {
				e.Score = withRelevance(e.Score, share, e.Relevance)
			}
		}
	}
}

// sectionScoring returns the weights section sec ranks with: s, each zero
// field defaulted, with the section's recency weight and half-age when
// its template sets them, and its relevance share: the template's, else
// s.Relevance (s.HostRelevance when host, for the host's own relevance)
// for a section that takes history and 0 for one that does not (a query
// then moves only the history, and the sections before it keep the
// prompt cache's prefix; docs/relevance.md).
func sectionScoring(s truncate.Scoring, sec *template.Section, host bool) (truncate.Scoring, float64) {
	s = s.WithDefaults()
	if v, ok := sec.Recency(); ok {
		s.Recency = v
	}
	if v, ok := sec.RecencyHalfAge(); ok {
		s.RecencyHalfAge = v
	}
	if v, ok := sec.Relevance(); ok {
		return s, v
	}
	if !slices.Contains(sec.MemoryTypes(), declare.History) {
		return s, 0
	}
	if host {
		return s, min(max(s.HostRelevance, 0), 1)
	}
	return s, min(max(s.Relevance, 0), 1)
}

// withRelevance returns a score with relevance rel taking share of it.
func withRelevance(score, share, rel float64) float64 {
	return (1-share)*score + share*rel
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
	sum := s.Priority + s.SemanticWeight + s.Trust
	num := fixedPart(s, b)
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

// fixedPart is the part of b's score's numerator that does not move with
// now: its priority's, weight's and trust's.
func fixedPart(s truncate.Scoring, b *Block) float64 {
	p := s.DefaultPriority
	if b.HasPriority {
		p = b.Priority
	}
	return s.Priority*p + s.SemanticWeight*b.Weight + s.Trust*b.Trust
}

// recencyAt is score for a history block that is not stale, with fixed
// its fixedPart and lmN its last_modified, at nowN (both in Unix
// nanoseconds): score's operations in score's order, so the same bits.
func recencyAt(s truncate.Scoring, fixed float64, lmN, nowN int64) float64 {
	sum := s.Priority + s.SemanticWeight + s.Trust + s.Recency
	if sum <= 0 {
		return 0
	}
	return (fixed + s.Recency*ageRecency(time.Duration(nowN-lmN), s.RecencyHalfAge)) / sum
}

// recency is H / (H + age): 1 now (or in the future), ½ at age H, and 0
// for a block of unknown age.
func recency(lastModified, now time.Time, h time.Duration) float64 {
	if lastModified.IsZero() {
		return 0
	}
	return ageRecency(now.Sub(lastModified), h)
}

// ageRecency is H / (H + age), 1 for an age of 0 or less.
func ageRecency(age, h time.Duration) float64 {
	if age <= 0 {
		return 1
	}
	return float64(h) / (float64(h) + float64(age))
}
