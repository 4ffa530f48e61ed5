package grouped

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	lru "github.com/hashicorp/golang-lru/v2"
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

// An entry read between adds survives a scan of entries read never: the
// hand passes over a used entry once before it can evict it. Without the
// mark a Get sets, the scan evicts the hot entries as they age.
func TestUsedEntriesSurviveAScan(t *testing.T) {
	const size, hot = 64, 16
	c, err := New[key, int, int](size, byGroup)
	if err != nil {
		t.Fatal(err)
	}
	for n := range hot {
		c.Add(key{1, n}, n)
	}
	for n := range 10 * size {
		c.Add(key{2, n}, n)
		if n%8 == 0 {
			for h := range hot {
				if v, ok := c.Get(key{1, h}); !ok || v != h {
					t.Fatalf("after %d cold adds: hot entry %d is %v, %v", n+1, h, v, ok)
				}
			}
		}
		if c.Len() > size {
			t.Fatalf("%d entries, bound %d", c.Len(), size)
		}
	}
	// What is never read goes: the oldest cold entries are gone.
	if _, ok := c.Peek(key{2, 0}); ok {
		t.Error("the first cold entry is still held after ten turns")
	}
	if c.Len() != size {
		t.Errorf("%d entries, want the cache full (%d)", c.Len(), size)
	}
}

// Concurrent reads, adds and removals keep the cache within its bound and
// its index consistent (run with -race).
func TestConcurrentUse(t *testing.T) {
	c, err := New[key, int, int](128, byGroup)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 3))
			for range 20000 {
				k := key{rng.IntN(30), rng.IntN(20)}
				switch rng.IntN(20) {
				case 0:
					c.RemoveGroup(k.group)
				case 1:
					c.Remove(k)
				case 2, 3, 4:
					c.Add(k, k.n)
				default:
					if v, ok := c.Get(k); ok && v != k.n {
						t.Errorf("%v holds %d", k, v)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	if c.Len() > 128 || len(c.Keys()) != c.Len() {
		t.Fatalf("%d entries, %d keys, bound 128", c.Len(), len(c.Keys()))
	}
	groups := map[int]bool{}
	for _, k := range c.Keys() {
		groups[k.group] = true
	}
	if c.Groups() != len(groups) {
		t.Fatalf("%d groups indexed, the cache holds %d", c.Groups(), len(groups))
	}
}

// BenchmarkGet reads a full cache of 65,536 entries (the memo's default
// size) at random, against hashicorp/golang-lru, which this cache
// replaced, on the same keys in the same run.
func BenchmarkGet(b *testing.B) {
	const size = 65536
	keys := make([]key, size)
	for i := range keys {
		keys[i] = key{i / 8, i}
	}
	order := rand.New(rand.NewPCG(5, 6)).Perm(size)
	clock, _ := New[key, int, int](size, byGroup)
	least, _ := lru.New[key, int](size)
	for _, c := range []struct {
		name string
		c    interface {
			Add(key, int)
			Get(key) (int, bool)
		}
	}{{"clock", clock}, {"golang-lru", lruAdder{least}}} {
		b.Run(c.name, func(b *testing.B) {
			for i, k := range keys {
				c.c.Add(k, i)
			}
			i := 0
			for b.Loop() {
				if _, ok := c.c.Get(keys[order[i%size]]); !ok {
					b.Fatal("missing")
				}
				i++
			}
		})
	}
}

// lruAdder drops golang-lru's eviction report from Add.
type lruAdder struct{ *lru.Cache[key, int] }

func (l lruAdder) Add(k key, v int) { l.Cache.Add(k, v) }
