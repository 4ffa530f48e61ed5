package lexical

import (
	"math"
	"slices"
)

// Params are BM25's two constants.
type Params struct {
	// K1 is how fast a term's repeats stop counting: with 1.2, a term
	// twice in a document counts 1.38 times as much as once, three times
	// 1.57. It is taken as at least 1e-6.
	K1 float64
	// B is how much a document's length discounts its terms, from 0 (not
	// at all) to 1 (in proportion): with 0.75, a turn twice the average
	// length needs its term about 1.5 times as often to score the same.
	// It is clamped to [0, 1].
	B float64
}

// DefaultParams returns k1 = 1.2 and b = 0.75: Robertson's values, the
// defaults of Lucene and most BM25 implementations, which hold up on
// collections of short documents and long ones. Choosing them on one
// benchmark would be tuning to it; docs/relevance.md reports how little
// the evaluation moves around them.
func DefaultParams() Params { return Params{K1: 1.2, B: 0.75} }

// weights are what scoring one document needs of a query and the
// statistics of the documents it is scored among.
type weights struct {
	k1p1   float64 // k1 + 1
	c0, c1 float64 // k1·(1 − b) and k1·b / avglen: k1·(1 − b + b·len/avglen) = c0 + c1·len
}

func newWeights(p Params, docs int, length uint64) weights {
	if p == (Params{}) {
		p = DefaultParams()
	}
	// Out of range, BM25 is not monotone in tf (or divides by zero).
	k1, b := max(p.K1, 1e-6), min(max(p.B, 0), 1)
	avg := 1.0
	if docs > 0 && length > 0 {
		avg = float64(length) / float64(docs)
	}
	return weights{k1p1: k1 + 1, c0: float64(k1 * (1 - b)), c1: float64(k1*b) / avg}
}

// idf is BM25's inverse document frequency, in Lucene's form, which is
// positive however common the term: a term in every document still counts
// a little.
// scored reports whether a term in df of docs documents counts: it
// occurs at all, and in at most half of them or in no more than
// commonFloor. A term more than half of many documents hold tells them
// apart by little (its idf is under ln 2) and costs a posting for most
// of them, so it is read as a stop word of this set of documents: it
// neither scores nor counts toward the most a document could score.
func scored(docs int, df int32) bool {
	return df > 0 && (2*int(df) <= docs || df <= commonFloor)
}

// commonFloor is the most documents a term may be in and count whatever
// their share: in a small set, every term tells.
const commonFloor = 64

func idf(docs int, df int32) float64 {
	return math.Log(1 + (float64(docs)-float64(df)+0.5)/(float64(df)+0.5))
}

// bound is the most a term of inverse frequency idf adds to a score.
func (w *weights) bound(idf float64) float64 { return float64(idf * w.k1p1) }

// term is what a term of inverse frequency idf, tf times in a document of
// length n, adds to its score. Every product is rounded on its own
// (float64 conversions forbid fused multiply-adds), so that Index and Scan,
// which call it from different places, get the same bits.
func (w *weights) term(idf float64, tf uint16, n uint32) float64 {
	t := float64(tf)
	return float64(idf*float64(t*w.k1p1)) / (t + float64(w.c0+float64(w.c1*float64(n))))
}

// A Query is a text's distinct terms, to score documents against. Its zero
// value is an empty query; Set reuses its buffers, so a Query kept from one
// request to the next analyses without allocating.
type Query struct {
	// Params are BM25's constants; the zero Params means DefaultParams.
	Params Params

	keys []uint64 // distinct, ascending
	a    analyzer
}

// NewQuery returns the query of text.
func NewQuery(text string) *Query {
	q := new(Query)
	q.Set(text)
	return q
}

// Set makes q the query of text (keeping its Params).
func (q *Query) Set(text string) {
	q.a.keys = q.a.keys[:0]
	q.a.run(text)
	keys := sortKeys(q.a.keys, &q.a.tmp)
	q.keys = slices.Compact(append(q.keys[:0], keys...))
}

// Terms returns the number of distinct terms in q.
func (q *Query) Terms() int { return len(q.keys) }

// Scan scores documents against a query from scratch: Count every
// document the request can see, then ask each one's Relevance. It gives the
// same numbers as an Index holding the same documents. Its zero value is
// ready for Reset.
type Scan struct {
	q      *Query
	docs   int
	length uint64
	df     []int32 // per term of q
	ready  bool
	w      weights
	idf    []float64
	max    float64
}

// Reset starts a scan for q, forgetting the documents counted.
func (s *Scan) Reset(q *Query) {
	s.q, s.docs, s.length, s.ready = q, 0, 0, false
	s.df = slices.Grow(s.df[:0], len(q.keys))[:len(q.keys)]
	clear(s.df)
}

// Count adds d to the documents the statistics are over.
func (s *Scan) Count(d *Doc) {
	s.docs++
	s.length += uint64(d.length)
	for i, k := range s.q.keys {
		if d.tf(k) > 0 {
			s.df[i]++
		}
	}
	s.ready = false
}

// Relevance returns d's relevance in [0, 1) among the documents counted
// (d is normally one of them).
func (s *Scan) Relevance(d *Doc) float64 {
	if !s.ready {
		s.w = newWeights(s.q.Params, s.docs, s.length)
		s.idf, s.max = s.idf[:0], 0
		for _, df := range s.df {
			v := 0.0
			if scored(s.docs, df) {
				v = idf(s.docs, df)
				s.max += s.w.bound(v)
			}
			s.idf = append(s.idf, v)
		}
		s.ready = true
	}
	if s.max == 0 {
		return 0
	}
	sum := 0.0
	for i, k := range s.q.keys {
		if tf := d.tf(k); tf > 0 && scored(s.docs, s.df[i]) {
			sum += s.w.term(s.idf[i], tf, d.length)
		}
	}
	return sum / s.max
}
