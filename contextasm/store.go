package contextasm

import (
	"errors"
	"time"

	"github.com/contextasm/contextasm/learned"
)

// ErrStateQueueFull means the deltas of a Feedback or a Declare could not
// be queued for the store: StateOptions.MaxQueued deltas are waiting
// already. Nothing of that call was applied.
var ErrStateQueueFull = errors.New("contextasm: learned-state queue full")

// StateEventID is the request_id of the event an assembly carries when
// its Engine could not reach its Config.State lately (reason
// outcome.ReasonStateUnavailable): the assembly ranked with the Engine's
// last snapshot of the learned state.
const StateEventID = "learned-state"

// Defaults of StateOptions.
const (
	DefaultStatePoll      = 100 * time.Millisecond
	DefaultStateTimeout   = time.Second
	DefaultHeatEvery      = time.Second
	DefaultMaxQueued      = 1 << 16
	DefaultMaxBatchDeltas = 1024
)

// StateOptions tunes how an Engine shares its learned state through
// Config.State. Each zero field means its default.
//
// Assembly never calls the store: it reads the Engine's local snapshot.
// Feedback, heat and global announcements go to the store from a
// background goroutine, in order, retried until the store acknowledges
// them; other writers' changes reach the snapshot within Poll plus one
// store round trip after they were applied (sooner with a store that
// notifies, see learned.Watcher). The Engine's goroutines stop on Close.
type StateOptions struct {
	// Poll is how often the Engine asks the store for other writers'
	// changes (DefaultStatePoll). Asking costs one small read when
	// nothing changed.
	Poll time.Duration
	// Timeout bounds each store call, and the first load in New
	// (DefaultStateTimeout). A call that fails makes assemblies carry a
	// state_unavailable event until one succeeds again.
	Timeout time.Duration
	// HeatEvery is how often the heat counted by assemblies is sent to
	// the store (DefaultHeatEvery); Flush sends it at once.
	HeatEvery time.Duration
	// MaxQueued bounds the deltas the Engine holds for the store — not
	// yet acknowledged, or acknowledged and not yet seen in the store's
	// changes — counting each trust, heat or session delta and each
	// announced block as one (DefaultMaxQueued, 65,536: a few MB). A
	// Feedback or Declare that would pass it fails with ErrStateQueueFull
	// and changes nothing; heat waits in its counters instead.
	MaxQueued int
	// MaxBatchDeltas bounds the deltas sent in one batch
	// (DefaultMaxBatchDeltas).
	MaxBatchDeltas int
	// LocalGlobal keeps global-scoped blocks to this Engine even when the
	// store can share them (learned.GlobalAnnouncer): nothing is announced and
	// nothing announced by others is applied.
	LocalGlobal bool
}

func (o StateOptions) normal() (StateOptions, error) {
	for _, f := range []struct {
		name string
		v    int64
	}{{"Poll", int64(o.Poll)}, {"Timeout", int64(o.Timeout)}, {"HeatEvery", int64(o.HeatEvery)},
		{"MaxQueued", int64(o.MaxQueued)}, {"MaxBatchDeltas", int64(o.MaxBatchDeltas)}} {
		if f.v < 0 {
			return o, errors.New("contextasm: Config.StateOptions." + f.name + " is negative")
		}
	}
	if o.Poll == 0 {
		o.Poll = DefaultStatePoll
	}
	if o.Timeout == 0 {
		o.Timeout = DefaultStateTimeout
	}
	if o.HeatEvery == 0 {
		o.HeatEvery = DefaultHeatEvery
	}
	if o.MaxQueued == 0 {
		o.MaxQueued = DefaultMaxQueued
	}
	if o.MaxBatchDeltas == 0 {
		o.MaxBatchDeltas = DefaultMaxBatchDeltas
	}
	return o, nil
}

// StateStatus is what an Engine knows about its learned-state store.
type StateStatus struct {
	// Version is the store's version the Engine's snapshot is at.
	Version learned.Version
	// Queued counts the deltas (and announced blocks) not yet
	// acknowledged by the store: zero after a successful Flush.
	Queued int
	// Rejected counts the deltas refused because the queue was full.
	Rejected uint64
	// Err is the last store call's error; nil after a success.
	Err error
	// LastSync is when a store call last succeeded (the wall clock: this
	// is about the store, not about assembly).
	LastSync time.Time
	// GlobalApplied counts the announcements of other Engines applied.
	GlobalApplied uint64
	// GlobalRefused counts announced declarations refused as invalid.
	GlobalRefused uint64
}
