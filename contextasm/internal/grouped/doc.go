// Package grouped owns a bounded cache (CLOCK eviction) whose keys are
// also indexed by a group (the block or text an entry was made for), so
// that an Engine forgets a group's entries at the cost of their number,
// not of the cache's: ending a session touches what the session held.
package grouped
