package main

// The questions of a conversation asked one after another in one session,
// each call following the previous one's decision as the engine's sticky
// decisions do (docs/conversations.md), simulated: a turn the previous
// call kept (an incumbent) keeps its place unless another outscores it by
// more than the margin; a turn whose score rose by more than the margin
// since the previous call is news and competes on equal terms, as a new
// turn does; every other turn ranks as if it scored margin less. The
// question is news. Batch shedding (the slack) and the section's floor
// are left out: with them the engine holds incumbents harder, so this
// is an upper bound of what stickiness lets relevance do.

// stickyEvaluate returns f's recall at budget over every question of
// convs, asked in order, one a minute, each call following the last.
func stickyEvaluate(f Formula, convs []*Conversation, budget int, margin float64) float64 {
	var s scorer
	hits, total := 0, 0
	for _, c := range convs {
		kept := make([]bool, len(c.Turns))
		prev := make([]float64, len(c.Turns))
		first := true
		for j := range c.Questions {
			if f.Relevance > 0 {
				s.relevance(c, j, f.Params)
			}
			score := s.scores(f, c, c.askedAt(j))
			if first {
				kept = s.fill(f, c, j, score, budget, kept)
				first = false
			} else {
				kept = s.stickyFill(c, j, score, prev, kept, budget, margin)
			}
			copy(prev, score)
			if answerable(&c.Questions[j], kept) {
				hits++
			}
			total++
		}
	}
	return float64(hits) / float64(max(total, 1))
}

// stickyFill is fill following the previous decision (kept, at scores
// prev); it returns the new decision in kept.
func (s *scorer) stickyFill(c *Conversation, j int, score, prev []float64, kept []bool, budget int, margin float64) []bool {
	rank := make([]float64, len(c.Turns))
	for i := range c.Turns {
		rank[i] = score[i]
		if !kept[i] && score[i]-prev[i] <= margin {
			rank[i] -= margin // held out unless it beats an incumbent by the margin
		}
	}
	return s.take(c, j, rank, 0, budget, kept)
}
