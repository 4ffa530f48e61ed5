package main

import (
	"time"

	"github.com/contextasm/contextasm/internal/lexical"
)

// Recommended is the formula this evaluation recommends to the engine:
// relevance weighs twice recency (R = 1, the engine's default, with its
// default half-age of an hour), and a turn takes half its neighbour's
// relevance. L = 2 is the largest weight under which the synthetic set's
// newest four turns survive at every budget (at 2.5 one in a thousand is
// dropped at 1,000 tokens); fresh recall hardly moves with L from 1 to 4
// on either set, while the sticky one grows with it. γ = 0.5 is a priori
// (a neighbour counts half); the sets barely tell it from 0.7.
var Recommended = Formula{Name: "recommended: L=2 R=1 H=1h γ=0.5", Relevance: 2, Recency: 1, Neighbour: 0.5}

// arms are the rows of the main table.
func arms() []Formula {
	return []Formula{
		{Name: "sliding window (newest turns that fit)", Recency: 1},
		{Name: "plain BM25 retriever", Relevance: 1},
		{Name: "BM25 retriever, γ=0.5", Relevance: 1, Neighbour: 0.5},
		{Name: "newest 10 turns, then BM25", Relevance: 1, Newest: 10},
		{Relevance: 1, Recency: 1},
		{Relevance: 2, Recency: 1},
		Recommended,
		{Relevance: 2, Recency: 1, Neighbour: 0.5, HalfAge: 24 * time.Hour},
		{Relevance: 4, Recency: 1, Neighbour: 0.5},
		{Relevance: 10, Recency: 1, Neighbour: 0.5},
	}
}

// stickyArms are the formulas simulated with stickiness.
func stickyArms() []Formula {
	return []Formula{
		{Name: "plain BM25 retriever", Relevance: 1},
		{Relevance: 1, Recency: 1},
		{Relevance: 1, Recency: 1, Neighbour: 0.5},
		Recommended,
		{Relevance: 2, Recency: 1},
		{Relevance: 4, Recency: 1, Neighbour: 0.5},
	}
}

// gridArms are every combination of the formula's constants the
// evaluation looked at, and BM25's constants around their defaults.
func gridArms() []Formula {
	var out []Formula
	for _, l := range []float64{0.5, 1, 2, 3, 4, 6, 10} {
		for _, h := range []time.Duration{time.Hour, 6 * time.Hour, 24 * time.Hour} {
			for _, g := range []float64{0, 0.3, 0.5, 0.7, 0.9} {
				out = append(out, Formula{Relevance: l, Recency: 1, HalfAge: h, Neighbour: g})
			}
		}
	}
	for _, p := range []lexical.Params{{K1: 0.9, B: 0.4}, {K1: 1.2, B: 0.3}, {K1: 1.2, B: 0.5}, {K1: 1.5, B: 0.75}, {K1: 2, B: 0.75}} {
		out = append(out, Formula{Relevance: 1, Params: p}, Formula{Relevance: 2, Recency: 1, Neighbour: 0.5, Params: p})
	}
	return out
}
