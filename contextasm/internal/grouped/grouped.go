package grouped

import (
	"errors"
	"sync"
	"sync/atomic"
)

// Cache is a bounded cache of K to V whose entries are indexed by the
// group Group gives their key (ok false: the entry is in no group). It is
// safe for concurrent use. The index follows the cache: an entry evicted
// or removed leaves its group.
//
// Eviction is CLOCK (second chance): a Get marks its entry used, and
// eviction's hand passes over a used entry once, clearing the mark, before
// it evicts one that was not used since the hand last passed. A Get
// therefore reads under a shared lock and writes at most one word of the
// entry it finds: it does not move entries in a list, whose neighbours a
// least-recently-used order would touch on every hit (each a cache miss
// in a large cache). What the caches hold are counts and renderings that
// depend only on their keys, so which entries are kept decides only how
// much is counted again, never what an assembly writes.
type Cache[K comparable, G comparable, V any] struct {
	group func(K) (G, bool)
	size  int

	mu    sync.RWMutex
	pos   map[K]int32 // each entry's slot
	slots []slot[K, V]
	used  []atomic.Bool // of each slot: read by Get since the hand passed
	free  []int32       // slots of removed entries
	hand  int           // the slot eviction looks at next
	index map[G]map[K]struct{}
}

type slot[K comparable, V any] struct {
	k    K
	v    V
	live bool
}

// New returns a Cache of size entries; group names an entry's group.
func New[K comparable, G comparable, V any](size int, group func(K) (G, bool)) (*Cache[K, G, V], error) {
	if size <= 0 {
		return nil, errors.New("grouped: the size must be positive")
	}
	return &Cache[K, G, V]{group: group, size: size, pos: make(map[K]int32), index: make(map[G]map[K]struct{})}, nil
}

// Get returns the value of k and marks it used.
func (c *Cache[K, G, V]) Get(k K) (V, bool) {
	c.mu.RLock()
	i, ok := c.pos[k]
	var v V
	if ok {
		v = c.slots[i].v
		if u := &c.used[i]; !u.Load() { // a hot entry's word is not written again
			u.Store(true)
		}
	}
	c.mu.RUnlock()
	return v, ok
}

// Peek returns the value of k without marking it used.
func (c *Cache[K, G, V]) Peek(k K) (V, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if i, ok := c.pos[k]; ok {
		return c.slots[i].v, true
	}
	var zero V
	return zero, false
}

// Add sets the value of k (marking it used when it was there), evicting
// an entry when the cache is full.
func (c *Cache[K, G, V]) Add(k K, v V) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if i, ok := c.pos[k]; ok {
		c.slots[i].v = v
		c.used[i].Store(true)
		return
	}
	var i int32
	switch {
	case len(c.free) > 0:
		i = c.free[len(c.free)-1]
		c.free = c.free[:len(c.free)-1]
	case len(c.slots) < c.size:
		i = int32(len(c.slots))
		c.slots = append(c.slots, slot[K, V]{})
		if len(c.slots) > cap(c.used) {
			// The marks are copied while no Get reads them: Add holds
			// the lock exclusively.
			used := make([]atomic.Bool, len(c.slots), cap(c.slots))
			for j := range c.used {
				used[j].Store(c.used[j].Load())
			}
			c.used = used
		} else {
			c.used = c.used[:len(c.slots)]
		}
	default:
		i = c.victim()
		c.drop(i)
		c.free = c.free[:len(c.free)-1] // drop freed it; it is taken now
	}
	c.slots[i] = slot[K, V]{k: k, v: v, live: true}
	c.used[i].Store(false)
	c.pos[k] = i
	if g, ok := c.group(k); ok {
		set := c.index[g]
		if set == nil {
			set = make(map[K]struct{}, 1)
			c.index[g] = set
		}
		set[k] = struct{}{}
	}
}

// victim moves the hand to the first entry not used since it last
// passed, clearing the marks it passes, and returns its slot. The cache
// is full, so every slot holds an entry and two turns find one.
func (c *Cache[K, G, V]) victim() int32 {
	for {
		i := c.hand
		c.hand = (c.hand + 1) % len(c.slots)
		if c.used[i].Load() {
			c.used[i].Store(false)
			continue
		}
		return int32(i)
	}
}

// drop removes slot i's entry, from its group too, and frees the slot.
// The lock is held.
func (c *Cache[K, G, V]) drop(i int32) {
	s := &c.slots[i]
	delete(c.pos, s.k)
	if g, ok := c.group(s.k); ok {
		if set := c.index[g]; set != nil {
			delete(set, s.k)
			if len(set) == 0 {
				delete(c.index, g)
			}
		}
	}
	*s = slot[K, V]{} // the value is not kept alive by a free slot
	c.used[i].Store(false)
	c.free = append(c.free, i)
}

// Remove removes k.
func (c *Cache[K, G, V]) Remove(k K) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if i, ok := c.pos[k]; ok {
		c.drop(i)
	}
}

// Len returns the number of entries.
func (c *Cache[K, G, V]) Len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.pos)
}

// Keys returns the keys, in no order that means anything.
func (c *Cache[K, G, V]) Keys() []K {
	c.mu.RLock()
	defer c.mu.RUnlock()
	keys := make([]K, 0, len(c.pos))
	for i := range c.slots {
		if c.slots[i].live {
			keys = append(keys, c.slots[i].k)
		}
	}
	return keys
}

// Groups returns the number of groups indexed (for tests: it follows the
// entries).
func (c *Cache[K, G, V]) Groups() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.index)
}

// Group returns the values of group g's entries, without marking them
// used.
func (c *Cache[K, G, V]) Group(g G) []V {
	c.mu.RLock()
	defer c.mu.RUnlock()
	var vs []V
	for k := range c.index[g] {
		vs = append(vs, c.slots[c.pos[k]].v)
	}
	return vs
}

// RemoveGroup removes every entry of group g.
func (c *Cache[K, G, V]) RemoveGroup(g G) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k := range c.index[g] { // drop deletes from the set being ranged: allowed
		c.drop(c.pos[k])
	}
}
