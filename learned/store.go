package learned

import (
	"context"

	"github.com/contextasm/contextasm/declare"
)

// Store holds a learned state that many Engines may share
// (contextasm.Config.State). It applies batches of commutative deltas,
// each key atomically, so that two writers never overwrite each other, and
// it tells a reader what changed since the version it has. [FileStore] is
// the embedded one; package learned/redisstore shares state through Redis.
// Every store passes the same conformance suite.
//
// An Engine calls a store only from its own goroutines, never from
// Assemble (see contextasm.StateOptions).
type Store interface {
	// Apply applies b atomically and returns the store's version after
	// it. A batch applied before (same Writer and Seq) is acknowledged
	// without being applied again; one that skips a Seq is refused with a
	// *GapError; an invalid one is refused whole. Errors that mean the
	// store could not be reached wrap ErrUnavailable.
	Apply(ctx context.Context, b *Batch) (Version, error)
	// Changes returns what changed after version since: the batches
	// applied since, in order, or the whole state (always when since is
	// the zero Version and the store holds anything), with Acked the
	// highest Seq of writer's batches it includes. Nothing changed is an
	// Update with neither.
	Changes(ctx context.Context, since Version, writer string) (*Update, error)
}

// Watcher is implemented by stores that can tell an Engine that the state
// may have changed sooner than its next poll.
type Watcher interface {
	// WatchState calls changed, which does not block, whenever another
	// writer may have changed the state, until ctx is done. Missed calls
	// are harmless: the Engine polls as well.
	WatchState(ctx context.Context, changed func()) error
}

// GlobalAnnouncer is implemented by stores that share global-scoped blocks
// between Engines: when one Engine declares, replaces or forgets a global
// block, the others apply the change to their own blocks. Blocks are not
// learned state; the interface stands beside Store and Watcher because the
// stores that share state are the ones that can share blocks too.
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
