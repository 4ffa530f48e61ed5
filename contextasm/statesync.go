package contextasm

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/internal/assemble"
	"github.com/contextasm/contextasm/internal/replica"
	"github.com/contextasm/contextasm/learned"
	"github.com/contextasm/contextasm/outcome"
)

// stateSync moves an Engine's learned state to and from its StateStore:
// one goroutine sends the queued batches and announcements in order and
// polls for other writers' changes; assemblies only read flags it sets.
type stateSync struct {
	e     *Engine
	store StateStore
	ann   GlobalAnnouncer // nil unless the store shares global blocks
	opts  StateOptions

	// Guarded by e.learnMu (with e.rep):
	announce  []*announcement // waiting, oldest first
	annSerial uint64          // serial of the last announcement queued
	annDone   uint64          // serial of the last announcement stored
	rejected  uint64
	err       error
	errSerial uint64 // counts failures
	lastSync  time.Time
	progress  chan struct{} // closed and replaced on every store call's end

	unavailable   atomic.Bool
	version       atomic.Uint64
	heatDirty     atomic.Bool
	globalApplied atomic.Uint64
	globalRefused atomic.Uint64

	wakeCh    chan struct{}
	cancel    context.CancelFunc
	wg        sync.WaitGroup
	closeOnce sync.Once
	closeErr  error
}

type announcement struct {
	declared  []declare.Declaration
	forgotten []string
	serial    uint64
}

// newWriter returns a random writer name: each Engine is its own writer.
func newWriter() string {
	var b [8]byte
	rand.Read(b[:])
	return "w-" + hex.EncodeToString(b[:])
}

// startState loads the learned state from cfg.State and starts the
// goroutines that keep it in step. A store that cannot be reached leaves
// the Engine on an empty state, trying again in the background; any other
// error fails New.
func (e *Engine) startState(opts StateOptions) error {
	s := &stateSync{e: e, store: e.cfg.State, opts: opts, progress: make(chan struct{}), wakeCh: make(chan struct{}, 1)}
	if a, ok := e.cfg.State.(GlobalAnnouncer); ok && !opts.LocalGlobal {
		s.ann = a
	}
	e.rep = replica.New(newWriter(), true)
	e.learned = e.rep.View()
	ctx, cancel := context.WithTimeout(context.Background(), opts.Timeout)
	u, err := s.store.Changes(ctx, learned.Version{}, e.rep.Writer())
	cancel()
	switch {
	case err == nil:
		e.rep.Update(u)
		s.version.Store(e.rep.Version().N)
		s.lastSync = time.Now()
	case errors.Is(err, learned.ErrUnavailable):
		s.err, s.errSerial = err, 1
		s.unavailable.Store(true)
	default:
		return fmt.Errorf("contextasm: loading learned state: %w", err)
	}
	e.sync = s
	ctx, s.cancel = context.WithCancel(context.Background())
	s.wg.Add(1)
	go s.run(ctx)
	if w, ok := s.store.(StateWatcher); ok {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.retry(ctx, func() error { return w.WatchState(ctx, s.wake) })
		}()
	}
	if s.ann != nil {
		first := make(chan struct{})
		var once sync.Once
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.retry(ctx, func() error {
				return s.ann.WatchGlobal(ctx, func(declared []declare.Declaration, forgotten []string) {
					e.applyGlobal(declared, forgotten)
					once.Do(func() { close(first) })
				})
			})
		}()
		// The blocks announced so far are there before the first assembly,
		// unless the store does not answer in time.
		select {
		case <-first:
		case <-time.After(opts.Timeout):
		}
	}
	return nil
}

// retry runs fn until ctx is done, pausing after each return.
func (s *stateSync) retry(ctx context.Context, fn func() error) {
	for ctx.Err() == nil {
		fn()
		select {
		case <-ctx.Done():
		case <-time.After(s.opts.Poll):
		}
	}
}

// wake asks the goroutine for a round now; it never blocks.
func (s *stateSync) wake() {
	select {
	case s.wakeCh <- struct{}{}:
	default:
	}
}

// maxBackoff bounds the pause between rounds while the store fails.
const maxBackoff = 2 * time.Second

func (s *stateSync) run(ctx context.Context) {
	defer s.wg.Done()
	timer := time.NewTimer(s.opts.Poll)
	defer timer.Stop()
	nextHeat := time.Now().Add(s.opts.HeatEvery)
	fails := 0
	for {
		if now := time.Now(); !now.Before(nextHeat) {
			s.e.queueHeat(false)
			nextHeat = now.Add(s.opts.HeatEvery)
		}
		if s.round(ctx) {
			fails = 0
		} else {
			fails++
		}
		wait := s.opts.Poll
		if fails > 0 {
			wait = max(wait, min(s.opts.Poll<<min(fails, 8), maxBackoff))
		}
		timer.Reset(wait)
		select {
		case <-ctx.Done():
			return
		case <-s.wakeCh:
			if !timer.Stop() {
				<-timer.C
			}
		case <-timer.C:
		}
	}
}

// round sends what waits and takes in the store's changes; it reports
// whether every store call succeeded.
func (s *stateSync) round(ctx context.Context) bool {
	call := func(fn func(ctx context.Context) error) error {
		cctx, cancel := context.WithTimeout(ctx, s.opts.Timeout)
		defer cancel()
		return fn(cctx)
	}
	for a := s.nextAnnouncement(); a != nil; a = s.nextAnnouncement() {
		if err := call(func(ctx context.Context) error { return s.ann.AnnounceGlobal(ctx, a.declared, a.forgotten) }); err != nil {
			return s.fail(ctx, err)
		}
		s.announced(a)
	}
	rep := s.e.rep
	for range 1000 { // a bound, not a limit met in practice: the queue drains in batches
		s.e.learnMu.Lock()
		b := rep.Next(s.opts.MaxBatchDeltas)
		s.e.learnMu.Unlock()
		if b == nil {
			break
		}
		err := call(func(ctx context.Context) error { _, err := s.store.Apply(ctx, b); return err })
		var gap *learned.GapError
		if errors.As(err, &gap) {
			s.e.learnMu.Lock()
			rep.Renumber(gap.Last)
			s.e.learnMu.Unlock()
			continue
		}
		if err != nil {
			return s.fail(ctx, err)
		}
		s.e.learnMu.Lock()
		rep.Acked(b.Seq)
		s.signal()
		s.e.learnMu.Unlock()
	}
	s.e.learnMu.Lock()
	since := rep.Version()
	s.e.learnMu.Unlock()
	var u *learned.Update
	err := call(func(ctx context.Context) error {
		var err error
		u, err = s.store.Changes(ctx, since, rep.Writer())
		return err
	})
	if err != nil {
		return s.fail(ctx, err)
	}
	if u.Full != nil || len(u.Changes) > 0 || u.Version != since {
		s.e.learnMu.Lock()
		ids := rep.Update(u)
		s.e.learnMu.Unlock()
		s.version.Store(u.Version.N)
		s.e.refreshTrust(ids)
	}
	s.e.learnMu.Lock()
	s.err, s.lastSync = nil, time.Now()
	s.signal()
	s.e.learnMu.Unlock()
	s.unavailable.Store(false)
	return true
}

// fail records a failed store call. The caller holds no lock.
func (s *stateSync) fail(ctx context.Context, err error) bool {
	if ctx.Err() != nil {
		return false // closing: not the store's fault
	}
	s.e.learnMu.Lock()
	s.err = err
	s.errSerial++
	s.signal()
	s.e.learnMu.Unlock()
	s.unavailable.Store(true)
	return false
}

// signal wakes every Flush waiting; the caller holds e.learnMu.
func (s *stateSync) signal() {
	close(s.progress)
	s.progress = make(chan struct{})
}

func (s *stateSync) nextAnnouncement() *announcement {
	s.e.learnMu.Lock()
	defer s.e.learnMu.Unlock()
	if len(s.announce) == 0 {
		return nil
	}
	return s.announce[0]
}

func (s *stateSync) announced(a *announcement) {
	s.e.learnMu.Lock()
	defer s.e.learnMu.Unlock()
	s.announce = s.announce[1:]
	s.annDone = a.serial
	s.signal()
}

// queued returns the deltas and announced blocks waiting; the caller
// holds e.learnMu.
func (s *stateSync) queued() int {
	n := s.e.rep.Pending()
	for _, a := range s.announce {
		n += len(a.declared) + len(a.forgotten)
	}
	return n
}

// room reports whether n more deltas fit the queue, counting a refusal
// when they do not; the caller holds e.learnMu.
func (s *stateSync) room(n int) bool {
	if s.queued()+n <= s.opts.MaxQueued {
		return true
	}
	s.rejected += uint64(n)
	return false
}

// queueAnnouncement queues global blocks declared or forgotten here; the
// caller holds e.learnMu.
func (s *stateSync) queueAnnouncement(declared []declare.Declaration, forgotten []string) {
	if s.ann == nil || len(declared)+len(forgotten) == 0 {
		return
	}
	s.annSerial++
	s.announce = append(s.announce, &announcement{declared: declared, forgotten: forgotten, serial: s.annSerial})
	s.wake()
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

// queueHeat moves the heat counted since the last call into the queue;
// force sends it even when no assembly ran since (Flush).
func (e *Engine) queueHeat(force bool) {
	s := e.sync
	if !s.heatDirty.Swap(false) && !force {
		return
	}
	e.settleHeat()
	e.mu.Lock()
	defer e.mu.Unlock()
	e.learnMu.Lock()
	defer e.learnMu.Unlock()
	if s.queued() >= s.opts.MaxQueued {
		s.heatDirty.Store(true) // it waits in the counters
		return
	}
	var heat []learned.HeatDelta
	for id, c := range e.cells {
		h := learned.Heat{Included: c.Included.Swap(0), Dropped: c.Dropped.Swap(0), Cut: c.Cut.Swap(0)}
		if h != (learned.Heat{}) {
			heat = append(heat, learned.HeatDelta{ID: id, Heat: h})
		}
	}
	slices.SortFunc(heat, func(a, b learned.HeatDelta) int { return cmp.Compare(a.ID, b.ID) })
	for len(heat) > 0 {
		n := min(len(heat), s.opts.MaxBatchDeltas)
		e.rep.Add(learned.Batch{Heat: heat[:n]})
		heat = heat[n:]
	}
	s.wake()
}

// markHeat notes that an assembly counted heat.
func (e *Engine) markHeat() {
	if s := e.sync; s != nil && !s.heatDirty.Load() {
		s.heatDirty.Store(true)
	}
}

// stateEvents appends the state_unavailable event when the store could
// not be reached lately.
func (e *Engine) stateEvents(events []Event) []Event {
	if s := e.sync; s == nil || !s.unavailable.Load() {
		return events
	}
	return append(slices.Clip(events), Event{Kind: outcome.KindSource, RequestID: StateEventID, Reason: outcome.ReasonStateUnavailable})
}

// stateVersion is the store's version the learned state is at (0
// without a store).
func (e *Engine) stateVersion() uint64 {
	if e.sync == nil {
		return 0
	}
	return e.sync.version.Load()
}

// refreshTrust publishes a new snapshot whose blocks carry the trust the
// learned state holds for ids, and the state's version.
func (e *Engine) refreshTrust(ids []string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	old := e.current()
	var next []*assemble.Block
	e.learnMu.Lock()
	ids = slices.Clone(ids)
	slices.Sort(ids)
	for _, id := range slices.Compact(ids) {
		was, ok := old.set.get(id)
		if !ok {
			continue
		}
		t, learned := e.learned.Trust[id]
		declared, saved := e.declTrust[id]
		switch {
		case learned && !saved:
			e.declTrust[id] = was.Trust // what it was declared with
		case !learned && saved:
			t = declared // the store lost what it had learned
			delete(e.declTrust, id)
		case !learned:
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
	e.learnMu.Unlock()
	if next == nil && old.state == e.stateVersion() {
		return
	}
	set, changes := old.set.put(next)
	e.publish(set, changes)
}

// applyGlobal applies the global blocks another Engine announced: only
// blocks of scope global are taken, and only global blocks are forgotten.
// It runs on the store's goroutine, before the next assembly starts.
func (e *Engine) applyGlobal(declared []declare.Declaration, forgotten []string) {
	s := e.sync
	var ok []declare.Declaration
	for _, d := range declared {
		if d.Scope != declare.ScopeGlobal {
			s.globalRefused.Add(1)
			continue
		}
		ok = append(ok, d)
	}
	if len(ok) > 0 && e.declare(ok, false) != nil {
		for _, d := range ok { // take the valid ones
			if e.declare([]declare.Declaration{d}, false) != nil {
				s.globalRefused.Add(1)
			}
		}
	}
	if len(forgotten) > 0 {
		e.forget(forgotten, false, true)
	}
	s.globalApplied.Add(1)
}

// Flush sends the heat counted so far and waits until the store has
// acknowledged every delta and announcement queued before the call, or
// ctx is done. It is a no-op without Config.State. Its error wraps the
// store's last error (learned.ErrUnavailable when it did not answer).
func (e *Engine) Flush(ctx context.Context) error {
	s := e.sync
	if s == nil {
		return nil
	}
	e.queueHeat(true)
	e.learnMu.Lock()
	target, annTarget, errs := e.rep.Serial(), s.annSerial, s.errSerial
	e.learnMu.Unlock()
	s.wake()
	for {
		e.learnMu.Lock()
		done := e.rep.Stored(target) && s.annDone >= annTarget
		ch, err, failed, n := s.progress, s.err, s.errSerial != errs, s.queued()
		e.learnMu.Unlock()
		if done {
			return nil
		}
		if failed && err != nil && !errors.Is(err, learned.ErrUnavailable) {
			return fmt.Errorf("contextasm: %d learned-state deltas not stored: %w", n, err)
		}
		select {
		case <-ctx.Done():
			if err == nil {
				err = learned.ErrUnavailable // no answer in time
			}
			return fmt.Errorf("contextasm: %d learned-state deltas not stored: %w (%w)", n, err, ctx.Err())
		case <-ch:
		}
	}
}

// Close flushes (waiting at most StateOptions.Timeout) and stops the
// Engine's state goroutines. It returns Flush's error: the deltas it
// could not store are lost. Close is a no-op without Config.State; after
// Close the Engine still assembles and learns, in memory only.
func (e *Engine) Close() error {
	s := e.sync
	if s == nil {
		return nil
	}
	s.closeOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), s.opts.Timeout)
		s.closeErr = e.Flush(ctx)
		cancel()
		s.cancel()
		s.wg.Wait()
	})
	return s.closeErr
}

// StateStatus returns what the Engine knows of its store. Without
// Config.State only Version (zero) and Queued (zero) are meaningful.
func (e *Engine) StateStatus() StateStatus {
	s := e.sync
	if s == nil {
		return StateStatus{}
	}
	e.learnMu.Lock()
	defer e.learnMu.Unlock()
	return StateStatus{
		Version: e.rep.Version(), Queued: s.queued(), Rejected: s.rejected, Err: s.err, LastSync: s.lastSync,
		GlobalApplied: s.globalApplied.Load(), GlobalRefused: s.globalRefused.Load(),
	}
}
