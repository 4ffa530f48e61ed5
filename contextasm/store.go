package contextasm

import (
	"context"
	"errors"
	"time"

	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/learned"
)

// StateStore holds learned state (trust, heat, sessions' decisions) that
// many Engines may share. It applies batches of commutative deltas, each
// key atomically, so that two writers never overwrite each other, and it
// tells a reader what changed since the version it has. learned.FileStore
// is the embedded default; package learned/redisstore shares state
// through Redis.
//
// An Engine calls a store only from its own goroutines, never from
// Assemble: see [StateOptions].
type StateStore interface {
	// Apply applies b atomically and returns the store's version after
	// it. A batch applied before (same Writer and Seq) is acknowledged
	// without being applied again; one that skips a Seq is refused with a
	// *learned.GapError; an invalid one is refused whole. Errors that
	// mean the store could not be reached wrap learned.ErrUnavailable.
	Apply(ctx context.Context, b *learned.Batch) (learned.Version, error)
	// Changes returns what changed after version since: the batches
	// applied since, in order, or the whole state (always when since is
	// the zero Version and the store holds anything), with Acked the
	// highest Seq of writer's batches it includes. Nothing changed is an
	// Update with neither.
	Changes(ctx context.Context, since learned.Version, writer string) (*learned.Update, error)
}

// StateWatcher is implemented by stores that can tell an Engine that the
// state may have changed sooner than its next poll.
type StateWatcher interface {
	// WatchState calls changed, which does not block, whenever another
	// writer may have changed the state, until ctx is done. Missed calls
	// are harmless: the Engine polls as well.
	WatchState(ctx context.Context, changed func()) error
}

// GlobalAnnouncer is implemented by stores that share global-scoped blocks
// between Engines: when one Engine declares, replaces or forgets a global
// block, the others apply the change to their own blocks.
type GlobalAnnouncer interface {
	// AnnounceGlobal publishes declared (all of scope global) and forgotten
	// global blocks to every Engine watching, this one included.
	AnnounceGlobal(ctx context.Context, declared []declare.Declaration, forgotten []string) error
	// WatchGlobal calls apply with the announced global blocks, first with
	// all of them (and forgotten ones the watcher had but the store no
	// longer has), then with each announcement in the order the store
	// took them, until ctx is done. apply is called from one goroutine.
	WatchGlobal(ctx context.Context, apply func(declared []declare.Declaration, forgotten []string)) error
}

// ErrStateQueueFull means the deltas of a Feedback or a Declare could not
// be queued for the store: StateOptions.MaxQueued deltas are waiting
// already. Nothing of that call was applied.
var ErrStateQueueFull = errors.New("contextasm: learned-state queue full")

// StateEventID is the request_id of the event an assembly carries when
// its Engine could not reach its StateStore lately (reason
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
// notifies, see StateWatcher). The Engine's goroutines stop on Close.
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
	// MaxQueued bounds the deltas waiting for the store, counting each
	// trust, heat or session delta and each announced block as one
	// (DefaultMaxQueued, 65,536: a few MB). A Feedback or Declare that
	// would pass it fails with ErrStateQueueFull and changes nothing;
	// heat waits in its counters instead.
	MaxQueued int
	// MaxBatchDeltas bounds the deltas sent in one batch
	// (DefaultMaxBatchDeltas).
	MaxBatchDeltas int
	// LocalGlobal keeps global-scoped blocks to this Engine even when the
	// store can share them (GlobalAnnouncer): nothing is announced and
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
	// acknowledged by the store.
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
