package grouped

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

type key struct {
	group, n int
}

func byGroup(k key) (int, bool) { return k.group, k.group >= 0 }

// The index follows the cache through adds, evictions, removals and
// group removals: RemoveGroup removes exactly the group's entries, and a
// group leaves the index with its last entry; Group lists its values.
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
		if k.group >= 0 && step%7 == 0 {
			// Group gives the values of exactly the group's entries.
			var want []string
			for _, have := range c.Keys() {
				if have.group == k.group {
					v, _ := c.Peek(have)
					want = append(want, v)
				}
			}
			got := c.Group(k.group)
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Fatalf("step %d: group %d has %v, the cache %v", step, k.group, got, want)
			}
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
