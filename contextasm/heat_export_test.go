package contextasm

import "github.com/contextasm/contextasm/learned"

// HeatTake runs one take of the heat sent to the store every HeatEvery,
// as the replica's goroutine does (settling first only when due, and
// queueing what it took), and returns the deltas it took and how many
// cells it looked at.
func HeatTake(e *Engine) (deltas, visited int) {
	e.settleFor(false)
	e.heat.mu.Lock()
	before := e.heat.visited
	e.heat.mu.Unlock()
	heat := e.heat.take()
	e.rep.Add(learned.Batch{Heat: heat})
	e.heat.mu.Lock()
	defer e.heat.mu.Unlock()
	return len(heat), int(e.heat.visited - before)
}
