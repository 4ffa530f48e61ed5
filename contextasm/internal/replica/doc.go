// Package replica is an Engine's learned state: a local copy of the state
// its store shares with other writers (the store's state as of a version,
// the base, with this writer's batches the store has not yet included
// played on top of it, the view), the queue of deltas and global-block
// announcements not yet stored, and the goroutines that send the queue in
// order and take in other writers' changes. Assemblies read the view and
// never wait for the store; the batches go to the store in order, each
// under its own sequence number, and leave the queue once the store's
// changes show them (docs/fleet.md).
//
// The view of a key with no pending delta is the base's value; the view of
// a key with pending deltas is its base value with those deltas replayed
// by learned.State.Apply, so the view is always what the store will hold
// once it has applied them, given the changes the replica has seen.
//
// A [Replica] owns its lock: the Engine calls its methods and never locks
// for it. It calls back into the Engine only through its [Hooks], never
// while holding its lock except for TakeHeat.
package replica
