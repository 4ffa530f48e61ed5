package main

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/contextasm/contextasm/internal/lexical"
)

// A Formula is a way the engine could rank a conversation's turns for a
// question: the engine's score of a history block with a relevance term,
//
//	score = (0.5 + R·recency + L·relevance′) / (1 + R + L)
//	recency = H / (H + age)
//	relevance′ = max(relevance, γ·relevance of the turn before or after, same session)
//
// where 0.5 is what priority, semantic weight and trust give a turn that
// declares none (their weights sum to 1), relevance is the lexical
// package's BM25 relevance of the turn to the question among every block
// the request sees (the turns and the question), and age is the time from
// the turn to the question. Turns rank by score, then newest first; the
// question itself is the current turn and always goes first.
type Formula struct {
	Name      string
	Relevance float64       // L
	Recency   float64       // R
	HalfAge   time.Duration // H; 0 means 1 hour, the engine's default
	// Neighbour is γ: a turn takes γ times the relevance of the turn next
	// to it in its session when that is more than its own (evidence is
	// often a question and its answer, only one of which has the words).
	Neighbour float64
	// Newest keeps the newest k turns ahead of every score.
	Newest int
	// Params are BM25's constants; zero means lexical.DefaultParams.
	Params lexical.Params
}

func (f Formula) halfAge() time.Duration {
	if f.HalfAge == 0 {
		return time.Hour
	}
	return f.HalfAge
}

// String describes f in a table's first column.
func (f Formula) String() string {
	if f.Name != "" {
		return f.Name
	}
	var parts []string
	if f.Relevance > 0 {
		parts = append(parts, fmt.Sprintf("L=%g", f.Relevance))
	}
	if f.Recency > 0 {
		parts = append(parts, fmt.Sprintf("R=%g H=%s", f.Recency, shortDuration(f.halfAge())))
	}
	if f.Neighbour > 0 {
		parts = append(parts, fmt.Sprintf("γ=%g", f.Neighbour))
	}
	if f.Newest > 0 {
		parts = append(parts, fmt.Sprintf("newest %d", f.Newest))
	}
	if f.Params != (lexical.Params{}) {
		parts = append(parts, fmt.Sprintf("k1=%g b=%g", f.Params.K1, f.Params.B))
	}
	return strings.Join(parts, " ")
}

func shortDuration(d time.Duration) string {
	switch {
	case d%(24*time.Hour) == 0:
		return fmt.Sprintf("%dd", d/(24*time.Hour))
	case d%time.Hour == 0:
		return fmt.Sprintf("%dh", d/time.Hour)
	}
	return d.String()
}

// scorer computes formulas' scores for one question, reusing its buffers.
type scorer struct {
	q    lexical.Query
	scan lexical.Scan
	rel  []float64
	out  []float64
	ord  []int
}

// relevance fills s.rel with every turn's relevance to question j, the
// statistics over the turns and the question (the blocks the request
// sees).
func (s *scorer) relevance(c *Conversation, j int, p lexical.Params) {
	q := &c.Questions[j]
	s.q.Params = p
	s.q.Set(q.Text)
	s.scan.Reset(&s.q)
	for i := range c.Turns {
		s.scan.Count(&c.Turns[i].doc)
	}
	s.scan.Count(&q.doc)
	s.rel = s.rel[:0]
	for i := range c.Turns {
		s.rel = append(s.rel, s.scan.Relevance(&c.Turns[i].doc))
	}
}

// scores returns each turn's score under f for question j asked at now;
// s.rel must hold the question's relevance (when f uses it).
func (s *scorer) scores(f Formula, c *Conversation, now time.Time) []float64 {
	s.out = s.out[:0]
	h := float64(f.halfAge())
	for i, t := range c.Turns {
		rec := 1.0
		if age := now.Sub(t.Time); age > 0 {
			rec = h / (h + float64(age))
		}
		rel := 0.0
		if f.Relevance > 0 {
			rel = s.rel[i]
			if f.Neighbour > 0 {
				for _, k := range [2]int{i - 1, i + 1} {
					if k >= 0 && k < len(c.Turns) && c.Turns[k].Session == t.Session {
						rel = max(rel, f.Neighbour*s.rel[k])
					}
				}
			}
		}
		s.out = append(s.out, (0.5+f.Recency*rec+f.Relevance*rel)/(1+f.Recency+f.Relevance))
	}
	return s.out
}

// fill returns the turns a one-section history context of budget tokens
// keeps for question j: the question first, then the turns in order
// (the newest f.Newest, then by score, newest first among equals) while
// they fit, stopping at the first that does not (a section's default,
// fill "stop"). keep is reused.
func (s *scorer) fill(f Formula, c *Conversation, j int, score []float64, budget int, keep []bool) []bool {
	return s.take(c, j, score, f.Newest, budget, keep)
}

// take keeps the turns in the order of rank (the newest first among
// equals, and the newest n ahead of all) while they fit the budget left
// by the header and question j, stopping at the first that does not.
func (s *scorer) take(c *Conversation, j int, rank []float64, newest, budget int, keep []bool) []bool {
	keep = append(keep[:0], make([]bool, len(c.Turns))...)
	s.ord = s.ord[:0]
	for i := range c.Turns {
		s.ord = append(s.ord, i)
	}
	n := len(c.Turns)
	slices.SortFunc(s.ord, func(a, b int) int {
		na, nb := a >= n-newest, b >= n-newest
		switch {
		case na != nb:
			if na {
				return -1
			}
			return 1
		case rank[a] != rank[b]:
			return cmp.Compare(rank[b], rank[a])
		}
		return cmp.Compare(b, a) // turns are in time order: later is newer
	})
	room := budget - headerTokens - c.Questions[j].tokens
	for _, i := range s.ord {
		if c.Turns[i].tokens > room {
			break
		}
		room -= c.Turns[i].tokens
		keep[i] = true
	}
	return keep
}

// answerable reports whether every evidence turn of q is kept.
func answerable(q *Question, keep []bool) bool {
	for _, e := range q.Evidence {
		if !keep[e] {
			return false
		}
	}
	return true
}

// recall is the share of questions answerable at each budget.
type recall []float64

// newestKept is how many of a conversation's newest turns the newest-turn
// check looks at: a context that drops them for relevance has lost the
// thread of the conversation, whatever it recalls.
const newestKept = 4

// evaluate returns f's recall at each budget over every question of
// convs, each asked on its own (a fresh decision), and the share of the
// newest turns kept.
func evaluate(f Formula, convs []*Conversation, budgets []int) (r, newest recall) {
	var s scorer
	var keep []bool
	hits := make([]int, len(budgets))
	kept := make([]int, len(budgets))
	total, looked := 0, 0
	for _, c := range convs {
		for j := range c.Questions {
			if f.Relevance > 0 {
				s.relevance(c, j, f.Params)
			}
			score := s.scores(f, c, c.askedAt(0))
			for b, budget := range budgets {
				keep = s.fill(f, c, j, score, budget, keep)
				if answerable(&c.Questions[j], keep) {
					hits[b]++
				}
				for _, k := range keep[max(len(keep)-newestKept, 0):] {
					if k {
						kept[b]++
					}
				}
			}
			total++
			looked += min(newestKept, len(c.Turns))
		}
	}
	r, newest = make(recall, len(budgets)), make(recall, len(budgets))
	for b := range budgets {
		r[b] = float64(hits[b]) / float64(max(total, 1))
		newest[b] = float64(kept[b]) / float64(max(looked, 1))
	}
	return r, newest
}
