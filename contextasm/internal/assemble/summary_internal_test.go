package assemble

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/contextasm/contextasm/declare"
)

// markNamedQuadratic is markNamed as it was: every summary's whole claim,
// then each summary looked up in every other's names.
func markNamedQuadratic(cl *claimer, sums []int) []bool {
	claims := make([]claim, len(sums))
	for k, p := range sums {
		claims[k] = cl.claimOf(p)
	}
	named := make([]bool, len(sums))
	for k := range claims {
		id := cl.blocks[cl.ranked[claims[k].summaryAt].Index].ID
		for j := range claims {
			if j != k && slices.Contains(claims[j].names, id) {
				named[k] = true
			}
		}
	}
	return named
}

// markNamed's walk from every summary at once marks the same summaries
// as the quadratic look-up did, on random sections of turns, groups (as
// units), summaries of turns and of summaries, chains, cycles, and ids
// not in the section.
func TestMarkNamedEqualsQuadratic(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for run := range 3000 {
		n := 2 + rng.IntN(30)
		blocks := make([]*Block, n)
		ranked := make([]Ranked, n)
		var sums []int
		for i := range blocks {
			blocks[i] = &Block{ID: fmt.Sprintf("b%02d", i), Type: declare.History}
			ranked[i] = Ranked{Index: int32(i), ID: blocks[i].ID}
		}
		for i := range blocks {
			if rng.IntN(3) != 0 {
				continue
			}
			var rep []string
			for range 1 + rng.IntN(4) {
				rep = append(rep, fmt.Sprintf("b%02d", rng.IntN(n+3))) // some not here
			}
			blocks[i].EditRare().Replaces = rep
			sums = append(sums, i)
		}
		unitOf := map[int32]int32{}
		for i := range blocks {
			if rng.IntN(5) == 0 {
				unitOf[int32(i)] = int32(rng.IntN(3))
			}
		}
		cl := claimer{ranked: ranked, blocks: blocks, pos: map[string]int{}, unitOf: unitOf, unitMembers: map[int32][]int{}}
		for p, r := range ranked {
			cl.pos[blocks[r.Index].ID] = p
			if u, ok := unitOf[r.Index]; ok {
				cl.unitMembers[u] = append(cl.unitMembers[u], p)
			}
		}
		want := markNamedQuadratic(&cl, sums)
		claims := make([]claim, len(sums))
		for k, p := range sums {
			claims[k].summaryAt = p
		}
		cl.markNamed(claims)
		for k := range claims {
			if claims[k].named != want[k] {
				var reps [][]string
				for _, b := range blocks {
					reps = append(reps, b.Replaces())
				}
				t.Fatalf("run %d: summary %s named %v, want %v (replaces %v, units %v)", run, blocks[sums[k]].ID, claims[k].named, want[k], reps, unitOf)
			}
		}
	}
}
