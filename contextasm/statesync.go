package contextasm

import (
	"context"
	"slices"

	"github.com/contextasm/contextasm/contextasm/internal/assemble"
	"github.com/contextasm/contextasm/contextasm/internal/replica"
	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/learned"
	"github.com/contextasm/contextasm/outcome"
)

// The learned state lives in a replica.Replica, which owns its lock, its
// queue and the goroutines that keep it in step with Config.State. The
// Engine calls it, and it calls back (replica.Hooks) for what only the
// Engine holds: the heat counters, the blocks whose trust moved, and the
// global blocks other Engines announced.

// newReplica returns the Engine's replica of its learned state, not
// started.
func (e *Engine) newReplica(o StateOptions) *replica.Replica {
	e.heat.track = e.cfg.State != nil // takes read the cells moved, not all
	ro := replica.Options{
		Store: e.cfg.State, Poll: o.Poll, Timeout: o.Timeout, HeatEvery: o.HeatEvery,
		MaxQueued: o.MaxQueued, MaxBatchDeltas: o.MaxBatchDeltas,
		Hooks: replica.Hooks{SettleHeat: e.settleFor, TakeHeat: e.heat.take, TrustChanged: e.refreshTrust, ApplyGlobal: e.applyGlobal},
	}
	if a, ok := e.cfg.State.(learned.GlobalAnnouncer); ok && !o.LocalGlobal {
		ro.Announcer = a
	}
	return replica.New(ro)
}

// globals returns the global-scoped declarations of decls.
func globals(decls []declare.Declaration) []declare.Declaration {
	var out []declare.Declaration
	for _, d := range decls {
		if d.Scope == declare.ScopeGlobal {
			out = append(out, d)
		}
	}
	return out
}

// stateEvents appends the state_unavailable event when the store could
// not be reached lately.
func (e *Engine) stateEvents(events []Event) []Event {
	if !e.rep.Unavailable() {
		return events
	}
	return append(slices.Clip(events), Event{Kind: outcome.KindSource, RequestID: StateEventID, Reason: outcome.ReasonStateUnavailable})
}

// refreshTrust publishes a new snapshot whose blocks carry the trust the
// learned state holds for ids, and the state's version.
func (e *Engine) refreshTrust(ids []string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	old := e.current()
	ids = slices.Clone(ids)
	slices.Sort(ids)
	ids = slices.Compact(ids)
	trust := e.rep.TrustOf(ids)
	var next []*assemble.Block
	for _, id := range ids {
		was, ok := old.set.get(id)
		if !ok {
			continue
		}
		t, has := trust[id]
		declared, saved := e.declTrust[id]
		switch {
		case has && !saved:
			e.declTrust[id] = was.Trust // what it was declared with
		case !has && saved:
			t = declared // the store lost what it had learned
			delete(e.declTrust, id)
		case !has:
			continue
		}
		if t == was.Trust {
			continue
		}
		// A new block: readers of the old snapshot keep theirs.
		b := *was
		b.Trust = t
		next = append(next, &b)
	}
	if next == nil && old.state == e.rep.StoreVersion() {
		return
	}
	set, changes := old.set.put(next)
	e.publish(set, changes)
}

// applyGlobal applies the global blocks another Engine announced: only
// blocks of scope global are taken, and only global blocks are forgotten.
// It runs on the store's goroutine, before the next assembly starts, and
// returns how many declarations it refused.
func (e *Engine) applyGlobal(declared []declare.Declaration, forgotten []string) int {
	refused := 0
	var ok []declare.Declaration
	for _, d := range declared {
		if d.Scope != declare.ScopeGlobal {
			refused++
			continue
		}
		ok = append(ok, d)
	}
	if len(ok) > 0 && e.declare(ok, false) != nil {
		for _, d := range ok { // take the valid ones
			if e.declare([]declare.Declaration{d}, false) != nil {
				refused++
			}
		}
	}
	if len(forgotten) > 0 {
		e.forget(forgotten, false, true)
	}
	return refused
}

// Flush sends the heat counted so far and waits until the store has
// acknowledged every delta and announcement queued before the call, or
// ctx is done. It is a no-op without Config.State. Its error wraps the
// store's last error (learned.ErrUnavailable when it did not answer).
func (e *Engine) Flush(ctx context.Context) error { return e.rep.Flush(ctx) }

// Close flushes (waiting at most StateOptions.Timeout) and stops the
// Engine's state goroutines. It returns Flush's error: the deltas it
// could not store are lost. Close is a no-op without Config.State; after
// Close the Engine still assembles and learns, in memory only.
func (e *Engine) Close() error { return e.rep.Close() }

// StateStatus returns what the Engine knows of its store. Without
// Config.State only Version (zero) and Queued (zero) are meaningful.
func (e *Engine) StateStatus() StateStatus { return StateStatus(e.rep.Status()) }
