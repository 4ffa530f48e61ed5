package contextasm

import "github.com/contextasm/contextasm/outcome"

// ErrConflict means required blocks the request may see share a
// conflict_key: the host said each must be in the context, and they
// exclude each other. The error is an *outcome.ConflictError naming them,
// per key (docs/assembly.md#conflicts).
var ErrConflict = outcome.ErrConflict

// Conflict is one conflict_key shared by blocks eligible for an assembly:
// the block that entered and those it excluded, with their trusts.
type Conflict = outcome.Conflict

// Conflicts returns the conflict_keys shared by the blocks eligible for
// the assembly, in key order, each with its winner and losers (ids and
// trusts, never content); nil without any. Blocks hidden from the request
// take no part and are never named. The slice is shared: do not modify
// it.
func (r *Result) Conflicts() []Conflict {
	if r.told == nil {
		return nil
	}
	return r.told.asm.explained().Conflicts
}
