package assemble

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// splitTied keeps the keep smallest request_ids, sorted, whatever their
// number and order (a heap when few of many are kept, a sort else), and
// leaves out every other one.
func TestSplitTiedKeepsTheSmallest(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 2))
	for trial := range 2000 {
		n := r.IntN(300)
		tied := make([]relCand, n)
		for i, k := range r.Perm(n) {
			tied[i] = relCand{id: fmt.Sprintf("b%0*d", 1+r.IntN(3), k), j: int32(k)} // ids of different lengths
		}
		keep := 0
		if n > 0 {
			keep = r.IntN(n + 1)
		}
		want := slices.Clone(tied)
		slices.SortFunc(want, func(a, b relCand) int { return strings.Compare(a.id, b.id) })
		kept, left := splitTied(tied, keep)
		if !slices.Equal(kept, want[:keep]) {
			t.Fatalf("trial %d (%d tied, keep %d): kept %v, want %v", trial, n, keep, kept, want[:keep])
		}
		left = slices.Clone(left)
		slices.SortFunc(left, func(a, b relCand) int { return strings.Compare(a.id, b.id) })
		if !slices.Equal(left, want[keep:]) {
			t.Fatalf("trial %d (%d tied, keep %d): left %v, want %v", trial, n, keep, left, want[keep:])
		}
	}
}
