// Package replica keeps an Engine's local copy of a learned state that a
// store shares with other writers: the store's state as of a version (the
// base), with this writer's batches the store has not yet included played
// on top of it (the view). Assemblies read the view and never wait for the
// store; the batches go to the store in order, each under its own sequence
// number, and leave the replica once the store's changes show them.
//
// The view of a key with no pending delta is the base's value; the view of
// a key with pending deltas is its base value with those deltas replayed
// by learned.State.Apply, so the view is always what the store will hold
// once it has applied them, given the changes the replica has seen.
//
// A Replica is not safe for concurrent use; its owner locks around it.
package replica
