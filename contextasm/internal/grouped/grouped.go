package grouped

import (
	"sync"

	lru "github.com/hashicorp/golang-lru/v2"
)

// Cache is a bounded LRU of K to V whose entries are indexed by the group
// Group gives their key (ok false: the entry is in no group). It is safe
// for concurrent use. The index follows the cache: an entry evicted or
// removed leaves its group.
type Cache[K comparable, G comparable, V any] struct {
	lru   *lru.Cache[K, V]
	group func(K) (G, bool)

	mu    sync.Mutex
	index map[G]map[K]struct{}
}

// New returns a Cache of size entries; group names an entry's group.
func New[K comparable, G comparable, V any](size int, group func(K) (G, bool)) (*Cache[K, G, V], error) {
	c := &Cache[K, G, V]{group: group, index: make(map[G]map[K]struct{})}
	l, err := lru.NewWithEvict(size, c.unindex)
	if err != nil {
		return nil, err
	}
	c.lru = l
	return c, nil
}

// Get returns the value of k and marks it recently used.
func (c *Cache[K, G, V]) Get(k K) (V, bool) { return c.lru.Get(k) }

// Peek returns the value of k without marking it used.
func (c *Cache[K, G, V]) Peek(k K) (V, bool) { return c.lru.Peek(k) }

// Add sets the value of k, evicting the least recently used entry when
// the cache is full.
func (c *Cache[K, G, V]) Add(k K, v V) {
	if g, ok := c.group(k); ok {
		c.mu.Lock()
		set := c.index[g]
		if set == nil {
			set = make(map[K]struct{}, 1)
			c.index[g] = set
		}
		set[k] = struct{}{}
		c.mu.Unlock()
	}
	c.lru.Add(k, v)
}

// Remove removes k.
func (c *Cache[K, G, V]) Remove(k K) { c.lru.Remove(k) }

// Len returns the number of entries.
func (c *Cache[K, G, V]) Len() int { return c.lru.Len() }

// Keys returns the keys, oldest first.
func (c *Cache[K, G, V]) Keys() []K { return c.lru.Keys() }

// Groups returns the number of groups indexed (for tests: it follows the
// entries).
func (c *Cache[K, G, V]) Groups() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.index)
}

// Group returns the values of group g's entries, without marking them
// used.
func (c *Cache[K, G, V]) Group(g G) []V {
	c.mu.Lock()
	keys := make([]K, 0, len(c.index[g]))
	for k := range c.index[g] {
		keys = append(keys, k)
	}
	c.mu.Unlock()
	var vs []V
	for _, k := range keys {
		if v, ok := c.lru.Peek(k); ok {
			vs = append(vs, v)
		}
	}
	return vs
}

// RemoveGroup removes every entry of group g.
func (c *Cache[K, G, V]) RemoveGroup(g G) {
	c.mu.Lock()
	set := c.index[g]
	delete(c.index, g)
	keys := make([]K, 0, len(set))
	for k := range set {
		keys = append(keys, k)
	}
	c.mu.Unlock()
	for _, k := range keys {
		c.lru.Remove(k)
	}
}

// unindex takes an evicted or removed entry out of its group.
func (c *Cache[K, G, V]) unindex(k K, _ V) {
	g, ok := c.group(k)
	if !ok {
		return
	}
	c.mu.Lock()
	if set := c.index[g]; set != nil {
		delete(set, k)
		if len(set) == 0 {
			delete(c.index, g)
		}
	}
	c.mu.Unlock()
}
