package contextasm

import (
	"maps"
	"sync"

	"github.com/contextasm/contextasm/contextasm/internal/assemble"
	"github.com/contextasm/contextasm/declare"
)

// snapshot is one published state of the store. A published snapshot is
// never modified: writers make a new one, readers keep the one they
// loaded.
type snapshot struct {
	set     blockSet            // the blocks, by request_id
	version uint64              // counts publishes; the store log is by version
	state   uint64              // the learned state's version the blocks' trust is from
	idle    map[string]*idleSet // blocks with an idle TTL, by session; nil for none

	flatOnce sync.Once
	flat     []*assemble.Block
}

// empty is the snapshot of an Engine nothing was declared to.
var empty = &snapshot{}

// current returns the current snapshot.
func (e *Engine) current() *snapshot {
	if p := e.snap.Load(); p != nil {
		return p
	}
	return empty
}

// blocks returns the current snapshot's blocks, sorted by request_id.
func (e *Engine) blocks() []*assemble.Block { return e.current().blocks() }

// blocks returns the snapshot's blocks in one slice, sorted by request_id:
// made on first use, for the paths that read the whole store (a full
// assembly, Forget). The slice is shared: do not modify it.
func (s *snapshot) blocks() []*assemble.Block {
	s.flatOnce.Do(func() { s.flat = s.set.appendTo(nil) })
	return s.flat
}

// publish makes set the current snapshot; changes are how it differs from
// the current one. Every new block gets the heat cell of its id. The
// caller holds e.mu.
func (e *Engine) publish(set blockSet, changes []change) {
	old := e.current()
	for _, c := range changes {
		if c.new != nil && c.new.Heat == nil {
			c.new.Heat = e.heat.cellOf(c.new.ID)
		}
	}
	e.bySession.update(changes)
	indexCalls(&e.calls, changes)
	snap := &snapshot{set: set, version: old.version + 1, state: e.rep.StoreVersion(), idle: nextIdle(old, set, changes)}
	e.log.add(snap.version, changes, set.len())
	e.snap.Store(snap)
}

// storeLog keeps the changes of the last publishes, by version, so that an
// index of the store (see indexes) catches up with a newer snapshot by
// applying them rather than reading the store.
type storeLog struct {
	mu   sync.Mutex
	ring [64]logEntry
}

type logEntry struct {
	version uint64
	changes []change
	whole   bool // too many changes to apply one by one: read the store
}

// add records the changes that made version, in a store of n blocks.
func (l *storeLog) add(version uint64, changes []change, n int) {
	e := logEntry{version: version, changes: changes}
	if len(changes) > n/8+64 {
		e.changes, e.whole = nil, true
	}
	l.mu.Lock()
	l.ring[version%uint64(len(l.ring))] = e
	l.mu.Unlock()
}

// nextIdle returns the idle index of set, which differs from old's by
// changes: old's when no change touches a block with an idle TTL or a
// session that has one, else old's with those sessions updated (the
// whole store read when an update cannot tell).
func nextIdle(old *snapshot, set blockSet, changes []change) map[string]*idleSet {
	idx := old.idle
	var touched map[string]bool
	for _, c := range changes {
		for _, b := range [2]*assemble.Block{c.old, c.new} {
			if b != nil && b.Scope == declare.ScopeSession && (b.IdleTTL() > 0 || idx[b.SessionID] != nil) {
				if touched == nil {
					touched = make(map[string]bool)
				}
				touched[b.SessionID] = true
			}
		}
	}
	if touched == nil {
		return idx
	}
	next := make(map[string]*idleSet, len(idx)+len(touched))
	for s, is := range idx {
		if !touched[s] {
			next[s] = is
		}
	}
	for s := range touched {
		is, ok := idleUpdate(idx[s], s, changes)
		if !ok {
			return idleIndex(set.appendTo(nil))
		}
		if is != nil {
			next[s] = is
		}
	}
	if len(next) == 0 {
		return nil
	}
	return next
}

// idleUpdate returns session s's idle set after changes, from was (nil
// when it had none); ok is false when only the whole store can tell (the
// session's first block with an idle TTL, or its latest block replaced by
// an older one or removed).
func idleUpdate(was *idleSet, s string, changes []change) (*idleSet, bool) {
	if was == nil {
		return nil, false
	}
	next := &idleSet{ttl: maps.Clone(was.ttl), dated: was.dated}
	ours := func(b *assemble.Block) bool {
		return b != nil && b.Scope == declare.ScopeSession && b.SessionID == s
	}
	for _, c := range changes {
		if ours(c.old) {
			delete(next.ttl, c.old.ID)
			if !c.old.LastModified.Before(was.dated) && !(ours(c.new) && !c.new.LastModified.Before(c.old.LastModified)) {
				return nil, false
			}
		}
		if ours(c.new) {
			if c.new.IdleTTL() > 0 {
				next.ttl[c.new.ID] = c.new.IdleTTL()
			}
			if c.new.LastModified.After(next.dated) {
				next.dated = c.new.LastModified
			}
		}
	}
	if len(next.ttl) == 0 {
		return nil, true
	}
	for _, ttl := range next.ttl {
		next.longest = max(next.longest, ttl)
	}
	return next, true
}
