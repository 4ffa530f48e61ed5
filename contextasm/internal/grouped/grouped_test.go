package grouped

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

type key struct {
	group, n int
}

func byGroup(k key) (int, bool) { return k.group, k.group >= 0 }

// The index follows the cache through adds, evictions, removals and
// group removals: RemoveGroup removes exactly the group's entries, and a
// group leaves the index with its last entry.
func TestIndexFollowsCache(t *testing.T) {
	c, err := New[key, int, string](64, byGroup)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for step := range 20000 {
		k := key{rng.IntN(40) - 2, rng.IntN(10)}
		switch rng.IntN(10) {
		case 0:
			c.Remove(k)
		case 1:
			if k.group < 0 {
				continue // in no group
			}
			c.RemoveGroup(k.group)
			for _, have := range c.Keys() {
				if have.group == k.group {
					t.Fatalf("step %d: %v left after its group was removed", step, have)
				}
			}
		default:
			c.Add(k, fmt.Sprint(k))
		}
		groups := map[int]bool{}
		for _, have := range c.Keys() {
			if have.group >= 0 {
				groups[have.group] = true
			}
		}
		if c.Groups() != len(groups) {
			t.Fatalf("step %d: %d groups indexed, the cache holds %d", step, c.Groups(), len(groups))
		}
	}
	if c.Len() > 64 {
		t.Fatalf("%d entries, bound 64", c.Len())
	}
}
