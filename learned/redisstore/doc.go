// Package redisstore keeps an Engine's learned state in Redis, so that
// many agent hosts learn together: it implements learned.Store (batches
// of deltas, each applied once, every key atomically, by a script that
// runs on the server), learned.Watcher (a pub/sub message wakes other
// hosts when the state changed) and learned.GlobalAnnouncer
// (a host that declares, replaces or forgets a global-scoped block tells
// the others, who apply it before their next assembly).
//
//	store, err := redisstore.Open("redis://user:pass@10.0.0.5:6379/0?prefix=agents")
//	eng, err := contextasm.New(contextasm.Config{State: store})
//	defer eng.Close()
//	defer store.Close()
//
// # Keys
//
// Every key starts with the prefix (Config.Prefix, "contextasm" by
// default) and a colon: PREFIX:v (the version), PREFIX:epoch,
// PREFIX:trust (a hash of trust in billionths), PREFIX:heat:included and
// its four siblings (hashes of counters), PREFIX:sess (a hash of sessions'
// values), PREFIX:w:WRITER (each writer's last batch, expiring after
// Config.DedupWindow), PREFIX:log (a stream of the changes, the last
// Config.LogLength or more of them), PREFIX:global and PREFIX:globalv (the
// announced global blocks and their count); channels PREFIX:changed and
// PREFIX:global.
//
// # Requirements
//
// Redis 7.0 or later (or a server compatible with it): the scripts declare
// themselves with "#!lua", so that the server refuses one at once when it
// is out of memory rather than stopping it half-way. A script is atomic,
// not transactional: this is what keeps a batch whole.
//
// The client's options carry TLS (rediss://, or Options.TLSConfig) and
// AUTH or an ACL user (user:pass@ in the URL, or Options.Username and
// Password); Open sets ContextTimeoutEnabled, so each call's context bounds
// it. A host passing its own client to New should set that option too.
//
// # Why go-redis
//
// See docs/fleet.md: the engine never reads a key while assembling; it
// keeps a replica of the whole learned state and replays an ordered,
// versioned stream of changes, which client-side caching (per-key
// invalidations, unordered, lost on reconnect) cannot give. The widely used
// client with scripts, pub/sub that resubscribes on its own, TLS, ACL users
// and Sentinel or Cluster behind one interface (UniversalClient) is the one
// to take.
package redisstore
