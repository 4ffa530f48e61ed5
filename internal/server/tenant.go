package server

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/contextasm/contextasm/contextasm"
)

// tenant is one tenant's Engine and what the server keeps for it. Nothing
// of it is reachable with another tenant's key.
type tenant struct {
	name  string
	eng   *contextasm.Engine
	calls Instrumented // eng, or eng instrumented (Config.Instrument)
	store Store        // nil: learned state in memory
	asm   *retained
	// declMu serialises a tenant's declaration changes, so that a prefix
	// delete counts the blocks it removed.
	declMu sync.Mutex
}

// close flushes the tenant's learned state and closes its store.
func (t *tenant) close() error {
	var errs []error
	if err := t.eng.Close(); err != nil {
		errs = append(errs, fmt.Errorf("tenant %s: %w", t.name, err))
	}
	if t.store != nil {
		if err := t.store.Close(); err != nil {
			errs = append(errs, fmt.Errorf("tenant %s: closing the store: %w", t.name, err))
		}
	}
	return errors.Join(errs...)
}

// assembly is a retained assembly: its Result, for feedback and its dump.
type assembly struct {
	id      string
	res     *contextasm.Result
	session string
	created time.Time
	// fed is 0 until feedback starts, 1 while it runs, 2 once it learned:
	// an assembly learns from one response, once, so a retry after a lost
	// answer cannot count a citation twice.
	fed atomic.Int32
	// explained is set once the server read the assembly's events (for
	// the dropped-blocks metric, counted once).
	explained atomic.Bool
}

// retained keeps a tenant's recent assemblies: at most max, none older
// than ttl.
type retained struct {
	ttl   time.Duration
	cache *lru.Cache[string, *assembly]
}

func newRetained(max int, ttl time.Duration) (*retained, error) {
	c, err := lru.New[string, *assembly](max)
	if err != nil {
		return nil, err
	}
	return &retained{ttl: ttl, cache: c}, nil
}

// newAssemblyID draws an id no one can guess: 128 random bits.
func newAssemblyID() string {
	var b [16]byte
	rand.Read(b[:])
	return "asm_" + hex.EncodeToString(b[:])
}

func (r *retained) add(a *assembly) { r.cache.Add(a.id, a) }

// get returns a retained assembly not older than the retention.
func (r *retained) get(id string, now time.Time) (*assembly, bool) {
	a, ok := r.cache.Get(id)
	if !ok {
		return nil, false
	}
	if now.Sub(a.created) > r.ttl {
		r.cache.Remove(id)
		return nil, false
	}
	return a, true
}

// dropSession forgets a session's assemblies (its end releases them) and
// returns how many.
func (r *retained) dropSession(session string) int {
	n := 0
	for _, id := range r.cache.Keys() {
		if a, ok := r.cache.Peek(id); ok && a.session == session {
			r.cache.Remove(id)
			n++
		}
	}
	return n
}
