// Package learned owns what an Engine learns and keeps between calls:
// trust and heat per block and each conversation's previous decisions
// ([State]), the deltas that change them ([Batch] of [TrustDelta],
// [HeatDelta] and [SessionDelta]), the protocol by which writers share
// one state through a store, the interfaces such a store implements
// ([Store]; [Watcher] for one that notifies, [GlobalAnnouncer] for one
// that shares global blocks too), and the embedded store,
// [FileStore]: one file, locked across processes and replaced atomically,
// so that a crash never leaves a torn or lost state file. Package
// learned/redisstore shares the state through Redis. It also holds the
// usage approximate encodings learn their margins from ([UsageLog]), a
// value the host keeps itself.
//
// What a response teaches (citations, trust gains, violations) is read by
// package feedback; package contextasm turns it into deltas and keeps an
// Engine's replica of the state in step with its store.
//
// # The protocol
//
// A store never receives a whole state to save: two writers saving whole
// states would overwrite each other. It receives batches of deltas and
// applies each key atomically; [State.Apply] is the reference every store
// matches. A batch is named by its writer and a sequence number 1, 2, …;
// a writer sends batch n+1 only after the store acknowledged batch n and
// resends a batch unchanged when it saw no acknowledgement. The store
// remembers each writer's last number for [DedupWindow], acknowledges a
// repeat without applying it again, and refuses a batch that skips a
// number with a [*GapError]. A reader asks for the changes since the
// [Version] it has and gets either the batches applied since, each with
// the values its keys hold after it ([Change]), or the whole state
// ([Update]). docs/fleet.md is the design.
//
// # Heat
//
// A block is "hot and truncated" ([Heat.HotTruncated]) when the model cites
// it at least twice, in at least half of the renders that included it, and
// the block was cut or dropped in at least a quarter of the renders that
// considered it: a candidate for a larger section cap.
package learned
