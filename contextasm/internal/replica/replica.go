package replica

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/learned"
)

// Options configure a Replica. The durations and bounds are the Engine's
// StateOptions with their defaults filled in.
type Options struct {
	// Store holds the shared state; nil keeps it in memory only.
	Store learned.Store
	// Announcer shares global blocks; nil when the store does not, or the
	// Engine keeps them local.
	Announcer                learned.GlobalAnnouncer
	Poll, Timeout, HeatEvery time.Duration
	MaxQueued                int
	MaxBatchDeltas           int
	Hooks                    Hooks
}

// Hooks are what a Replica asks of its Engine. It calls none of them
// while the Engine may be waiting for it, except TakeHeat.
type Hooks struct {
	// SettleHeat brings the heat counted lazily into the counters
	// TakeHeat reads, when force says so (Flush) or the Engine finds it
	// due; it is called without the Replica's lock.
	SettleHeat func(force bool)
	// TakeHeat returns the heat counted since its last call, sorted by
	// ID, and zeroes the counters. It is called with the Replica's lock
	// held, so that Copy never sees heat twice or not at all: it must
	// not call the Replica.
	TakeHeat func() []learned.HeatDelta
	// TrustChanged is called from the Replica's goroutine after another
	// writer's changes came in, with the ids whose trust moved (maybe
	// none: the store's version moved).
	TrustChanged func(ids []string)
	// ApplyGlobal applies the global blocks another Engine announced and
	// returns how many declarations it refused.
	ApplyGlobal func(declared []declare.Declaration, forgotten []string) (refused int)
}

// Status is what a Replica knows of its store: contextasm.StateStatus,
// which converts it, field for field.
type Status struct {
	Version       learned.Version
	Queued        int
	Rejected      uint64
	Err           error
	LastSync      time.Time
	GlobalApplied uint64
	GlobalRefused uint64
}

// Replica is an Engine's learned state, safe for concurrent use: a local
// copy of the store's state with the Engine's own deltas on top, the
// queue of deltas and announcements not yet stored, and, with a store,
// the goroutines that send the queue in order and take in other writers'
// changes. Assemblies read flags it sets and never wait for the store.
type Replica struct {
	opts Options

	mu        sync.Mutex // guards the fields down to progress
	local     *local
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
	nowCh     chan struct{} // a round now, not coalesced: a Flush waits, or the store changed
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

// New returns a Replica with an empty state. With a store, Start loads
// the state and starts the goroutines.
func New(opts Options) *Replica {
	r := &Replica{opts: opts, progress: make(chan struct{}), wakeCh: make(chan struct{}, 1), nowCh: make(chan struct{}, 1)}
	if opts.Store == nil {
		r.local = newLocal("local", false)
	} else {
		r.local = newLocal(newWriter(), true)
	}
	return r
}

// newWriter returns a random writer name: each Engine is its own writer.
func newWriter() string {
	var b [8]byte
	rand.Read(b[:])
	return "w-" + hex.EncodeToString(b[:])
}

// Start loads the learned state from the store and starts the goroutines
// that keep it in step. A store that cannot be reached leaves the Replica
// on an empty state, trying again in the background; any other error is
// returned. Without a store it does nothing.
func (r *Replica) Start() error {
	store := r.opts.Store
	if store == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), r.opts.Timeout)
	u, err := store.Changes(ctx, learned.Version{}, r.local.Writer())
	cancel()
	r.mu.Lock()
	switch {
	case err == nil:
		r.local.Update(u)
		r.version.Store(r.local.Version().N)
		r.lastSync = time.Now()
	case errors.Is(err, learned.ErrUnavailable):
		r.err, r.errSerial = err, 1
		r.unavailable.Store(true)
	}
	r.mu.Unlock()
	if err != nil && !errors.Is(err, learned.ErrUnavailable) {
		return fmt.Errorf("contextasm: loading learned state: %w", err)
	}
	ctx, r.cancel = context.WithCancel(context.Background())
	r.wg.Add(1)
	go r.run(ctx)
	if w, ok := store.(learned.Watcher); ok {
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			r.retry(ctx, func() error { return w.WatchState(ctx, r.wakeNow) })
		}()
	}
	if r.opts.Announcer != nil {
		r.watchGlobal(ctx)
	}
	return nil
}

// watchGlobal applies the announcements of global blocks as they come,
// and waits for the first (the blocks announced so far, there before the
// first assembly) unless the store does not answer in time.
func (r *Replica) watchGlobal(ctx context.Context) {
	first := make(chan struct{})
	var once sync.Once
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		r.retry(ctx, func() error {
			return r.opts.Announcer.WatchGlobal(ctx, func(declared []declare.Declaration, forgotten []string) {
				r.globalRefused.Add(uint64(r.opts.Hooks.ApplyGlobal(declared, forgotten)))
				r.globalApplied.Add(1)
				once.Do(func() { close(first) })
			})
		})
	}()
	select {
	case <-first:
	case <-time.After(r.opts.Timeout):
	}
}

// retry runs fn until ctx is done, pausing after each return.
func (r *Replica) retry(ctx context.Context, fn func() error) {
	for ctx.Err() == nil {
		fn()
		select {
		case <-ctx.Done():
		case <-time.After(r.opts.Poll):
		}
	}
}

// wake asks the goroutine for a round now; it never blocks.
func (r *Replica) wake() {
	select {
	case r.wakeCh <- struct{}{}:
	default:
	}
}

// wakeNow asks the goroutine for a round at once, not waiting out the
// gap between rounds (see sendGap); it never blocks.
func (r *Replica) wakeNow() {
	select {
	case r.nowCh <- struct{}{}:
	default:
	}
}

// maxBackoff bounds the pause between rounds while the store fails.
const maxBackoff = 2 * time.Second

// sendGap is the least time between two rounds woken by new deltas one
// after the other (a quarter of Poll when that is less): the deltas of
// calls in quick succession go to the store as one batch, one append and
// one fsync for a file store, rather than one each, while a call after a
// pause is sent at once. A Flush does not wait for it, nor
// a store's notice that it changed (another writer's deltas come in at
// once).
const sendGap = 10 * time.Millisecond

// coalesce waits out what is left of the gap since the round that ended
// at last, unless a round is asked for now (wakeNow) or ctx is done.
func (r *Replica) coalesce(ctx context.Context, last time.Time) {
	d := min(sendGap, r.opts.Poll/4) - time.Since(last)
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-r.nowCh:
	case <-t.C:
	}
}

func (r *Replica) run(ctx context.Context) {
	defer r.wg.Done()
	timer := time.NewTimer(r.opts.Poll)
	defer timer.Stop()
	nextHeat := time.Now().Add(r.opts.HeatEvery)
	fails := 0
	woken := false // the last round was woken by new deltas
	for {
		if now := time.Now(); !now.Before(nextHeat) {
			r.queueHeat(false)
			nextHeat = now.Add(r.opts.HeatEvery)
		}
		if r.round(ctx) {
			fails = 0
		} else {
			fails++
		}
		last := time.Now()
		wait := r.opts.Poll
		if fails > 0 {
			wait = max(wait, min(r.opts.Poll<<min(fails, 8), maxBackoff))
		}
		timer.Reset(wait)
		select {
		case <-ctx.Done():
			return
		case <-r.wakeCh:
			if !timer.Stop() {
				<-timer.C
			}
			if woken {
				r.coalesce(ctx, last) // a stream of calls: batch them
			}
			woken = true
			continue
		case <-r.nowCh:
			if !timer.Stop() {
				<-timer.C
			}
		case <-timer.C:
		}
		woken = false
	}
}

// call runs fn bounded by the store call timeout.
func (r *Replica) call(ctx context.Context, fn func(ctx context.Context) error) error {
	cctx, cancel := context.WithTimeout(ctx, r.opts.Timeout)
	defer cancel()
	return fn(cctx)
}

// round sends what waits and takes in the store's changes; it reports
// whether every store call succeeded.
func (r *Replica) round(ctx context.Context) bool {
	if err := r.sendAnnouncements(ctx); err != nil {
		return r.fail(ctx, err)
	}
	if err := r.sendBatches(ctx); err != nil {
		return r.fail(ctx, err)
	}
	r.mu.Lock()
	since := r.local.Version()
	r.mu.Unlock()
	var u *learned.Update
	err := r.call(ctx, func(ctx context.Context) error {
		var err error
		u, err = r.opts.Store.Changes(ctx, since, r.local.Writer())
		return err
	})
	if err != nil {
		return r.fail(ctx, err)
	}
	if u.Full != nil || len(u.Changes) > 0 || u.Version != since {
		r.mu.Lock()
		ids := r.local.Update(u)
		r.mu.Unlock()
		r.version.Store(u.Version.N)
		r.opts.Hooks.TrustChanged(ids)
	}
	r.mu.Lock()
	r.err, r.lastSync = nil, time.Now()
	r.signal()
	r.mu.Unlock()
	r.unavailable.Store(false)
	return true
}

// sendAnnouncements sends the queued announcements, oldest first.
func (r *Replica) sendAnnouncements(ctx context.Context) error {
	for a := r.nextAnnouncement(); a != nil; a = r.nextAnnouncement() {
		if err := r.call(ctx, func(ctx context.Context) error { return r.opts.Announcer.AnnounceGlobal(ctx, a.declared, a.forgotten) }); err != nil {
			return err
		}
		r.mu.Lock()
		r.announce = r.announce[1:]
		r.annDone = a.serial
		r.signal()
		r.mu.Unlock()
	}
	return nil
}

// sendBatches sends the queued deltas in batches, in order, numbering them
// again after a gap.
func (r *Replica) sendBatches(ctx context.Context) error {
	for range 1000 { // a bound, not a limit met in practice: the queue drains in batches
		r.mu.Lock()
		b := r.local.Next(r.opts.MaxBatchDeltas)
		r.mu.Unlock()
		if b == nil {
			return nil
		}
		err := r.call(ctx, func(ctx context.Context) error { _, err := r.opts.Store.Apply(ctx, b); return err })
		var gap *learned.GapError
		if errors.As(err, &gap) {
			r.mu.Lock()
			r.local.Renumber(gap.Last)
			r.mu.Unlock()
			continue
		}
		if err != nil {
			return err
		}
		r.mu.Lock()
		r.local.Acked(b.Seq)
		r.signal()
		r.mu.Unlock()
	}
	return nil
}

// fail records a failed store call.
func (r *Replica) fail(ctx context.Context, err error) bool {
	if ctx.Err() != nil {
		return false // closing: not the store's fault
	}
	r.mu.Lock()
	r.err = err
	r.errSerial++
	r.signal()
	r.mu.Unlock()
	r.unavailable.Store(true)
	return false
}

// signal wakes every Flush waiting; the caller holds r.mu.
func (r *Replica) signal() {
	close(r.progress)
	r.progress = make(chan struct{})
}

func (r *Replica) nextAnnouncement() *announcement {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.announce) == 0 {
		return nil
	}
	return r.announce[0]
}

// held returns the deltas and announced blocks the Replica holds for the
// store: waiting, or acknowledged but not yet seen in its changes; heat
// apart, which has a bound of its own (see queueHeat). The caller holds
// r.mu.
func (r *Replica) held() int {
	n := r.local.Pending() - r.local.heatN
	for _, a := range r.announce {
		n += len(a.declared) + len(a.forgotten)
	}
	return n
}

// room reports whether n more deltas fit the queue, counting a refusal
// when they do not. The caller holds r.mu.
func (r *Replica) room(n int) bool {
	if r.opts.Store == nil || r.held()+n <= r.opts.MaxQueued {
		return true
	}
	r.rejected += uint64(n)
	return false
}

// Room reports whether n more deltas fit the queue now, counting a
// refusal when they do not.
func (r *Replica) Room(n int) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.room(n)
}

// Add plays b (Writer and Seq unset) onto the state at once and queues it
// for the store, unless the queue has no room for it (ok false: nothing
// changed, and the refusal is counted). It returns the trust ids it moved.
func (r *Replica) Add(b learned.Batch) (ids []string, ok bool) {
	r.mu.Lock()
	if !r.room(len(b.Trust) + len(b.Sessions)) { // heat has a bound of its own
		r.mu.Unlock()
		return nil, false
	}
	ids = r.local.Add(b)
	r.mu.Unlock()
	if r.opts.Store != nil {
		r.wake()
	}
	return ids, true
}

// Announces reports whether the Replica shares global blocks.
func (r *Replica) Announces() bool { return r.opts.Announcer != nil }

// Announce queues global blocks declared or forgotten here; nothing
// without an Announcer.
func (r *Replica) Announce(declared []declare.Declaration, forgotten []string) {
	if r.opts.Announcer == nil || len(declared)+len(forgotten) == 0 {
		return
	}
	r.mu.Lock()
	r.annSerial++
	r.announce = append(r.announce, &announcement{declared: declared, forgotten: forgotten, serial: r.annSerial})
	r.mu.Unlock()
	r.wake()
}

// queueHeat moves the heat counted since the last call into the queue;
// force sends it even when no assembly counted any since (Flush). With
// the queue full the heat waits in its counters.
func (r *Replica) queueHeat(force bool) {
	if !r.heatDirty.Swap(false) && !force {
		return
	}
	r.opts.Hooks.SettleHeat(force)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.local.heatN >= r.opts.MaxQueued {
		// Heat's own bound, apart from the feedback's: a store of many
		// blocks never fills the queue with heat, and heat waits in its
		// counters, adding up, until the queue drains.
		r.heatDirty.Store(true)
		return
	}
	heat := r.opts.Hooks.TakeHeat()
	for len(heat) > 0 {
		n := min(len(heat), r.opts.MaxBatchDeltas)
		r.local.Add(learned.Batch{Heat: heat[:n]})
		heat = heat[n:]
	}
	r.wake()
}

// ForgetHeat deletes the heat of ids (forgotten blocks, an ended
// session's) from the state and, with a store, queues the deletion.
// Deletions are heat: they never fill the queue the feedback waits in.
func (r *Replica) ForgetHeat(ids []string) {
	if len(ids) == 0 {
		return
	}
	b := learned.Batch{Heat: make([]learned.HeatDelta, len(ids))}
	for i, id := range ids {
		b.Heat[i] = learned.HeatDelta{ID: id, Delete: true}
	}
	r.mu.Lock()
	for len(b.Heat) > 0 {
		n := max(min(len(b.Heat), r.opts.MaxBatchDeltas), 1)
		r.local.Add(learned.Batch{Heat: b.Heat[:n]})
		b.Heat = b.Heat[n:]
	}
	r.mu.Unlock()
	if r.opts.Store != nil {
		r.wake()
	}
}

// MarkHeat notes that an assembly counted heat.
func (r *Replica) MarkHeat() {
	if r.opts.Store != nil && !r.heatDirty.Load() {
		r.heatDirty.Store(true)
	}
}

// Unavailable reports whether the store could not be reached lately.
func (r *Replica) Unavailable() bool { return r.unavailable.Load() }

// StoreVersion is the store's version the state is at (0 without a store).
func (r *Replica) StoreVersion() uint64 { return r.version.Load() }

// TrustOf returns the learned trust of those of ids that have one; nil
// when none has.
func (r *Replica) TrustOf(ids []string) map[string]float64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out map[string]float64
	for _, id := range ids {
		if t, ok := r.local.View().Trust[id]; ok {
			if out == nil {
				out = make(map[string]float64)
			}
			out[id] = t
		}
	}
	return out
}

// Session returns the state of session key, nil if there is none. The
// value is shared: read it, never change it.
func (r *Replica) Session(key string) *learned.SessionState {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.local.View().Sessions[key]
}

// SessionKeys returns the keys (learned.SessionKey) of session's
// conversations, and the latest time one of them was updated.
func (r *Replica) SessionKeys(session string) (keys []string, last time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	view := r.local.View()
	for k := range r.local.SessionKeys(session) {
		keys = append(keys, k)
		if ss := view.Sessions[k]; ss.Updated.After(last) {
			last = ss.Updated
		}
	}
	return keys, last
}

// sessionOfKey returns the session of a learned.SessionKey: its first
// length-prefixed part.
func sessionOfKey(key string) (string, bool) {
	for i := 0; i < len(key) && i < 20; i++ {
		if key[i] != ':' {
			continue
		}
		n, err := strconv.Atoi(key[:i])
		if err != nil || n < 0 || i+1+n > len(key) {
			return "", false
		}
		return key[i+1 : i+1+n], true
	}
	return "", false
}

// Copy returns a copy of the state, with add (when set) applied to it
// under the same lock as the copy: the heat counted and not yet queued.
func (r *Replica) Copy(add func(*learned.State)) *learned.State {
	r.mu.Lock()
	defer r.mu.Unlock()
	st := r.local.View().Clone()
	if add != nil {
		add(st)
	}
	return st
}

// Flush queues the heat counted so far and waits until the store has
// acknowledged every delta and announcement queued before the call, or
// ctx is done. It is a no-op without a store. Its error wraps the store's
// last error (learned.ErrUnavailable when it did not answer).
func (r *Replica) Flush(ctx context.Context) error {
	if r.opts.Store == nil {
		return nil
	}
	r.queueHeat(true)
	r.mu.Lock()
	target, annTarget, errs := r.local.Serial(), r.annSerial, r.errSerial
	r.mu.Unlock()
	r.wakeNow()
	for {
		r.mu.Lock()
		done := r.local.Stored(target) && r.annDone >= annTarget
		ch, err, failed, n := r.progress, r.err, r.errSerial != errs, r.queued()
		r.mu.Unlock()
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

// queued returns the deltas and announced blocks the store has not
// acknowledged; the caller holds r.mu.
func (r *Replica) queued() int {
	n := r.local.Unacked()
	for _, a := range r.announce {
		n += len(a.declared) + len(a.forgotten)
	}
	return n
}

// Close flushes (waiting at most the store call timeout) and stops the
// goroutines. It returns Flush's error: the deltas it could not store are
// lost. After Close the Replica still learns, in memory only.
func (r *Replica) Close() error {
	if r.opts.Store == nil {
		return nil
	}
	r.closeOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), r.opts.Timeout)
		r.closeErr = r.Flush(ctx)
		cancel()
		r.cancel()
		r.wg.Wait()
	})
	return r.closeErr
}

// Status returns what the Replica knows of its store; the zero Status
// without one.
func (r *Replica) Status() Status {
	if r.opts.Store == nil {
		return Status{}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return Status{
		Version: r.local.Version(), Queued: r.queued(), Rejected: r.rejected, Err: r.err, LastSync: r.lastSync,
		GlobalApplied: r.globalApplied.Load(), GlobalRefused: r.globalRefused.Load(),
	}
}
