package contextasm

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/contextasm/contextasm/contextasm/internal/assemble"
	"github.com/contextasm/contextasm/declare"
)

// ReplacePrefix makes decls the blocks whose request_id starts with
// prefix: it declares them, and forgets every other block with the prefix.
// It is for hosts whose framework hands over a whole set on every call (a
// conversation's messages, a request's documents; see
// declare.Conversation): the set may shrink, and what left it must not
// linger in the store, nor hold its tool-call ids.
//
// Every declaration's request_id must start with prefix, and prefix must
// not be empty; otherwise, or when a declaration is invalid, nothing is
// applied. A problem only Declare finds (a tool result answering a call
// the store lacks) leaves the stale blocks forgotten and decls not
// declared.
func (e *Engine) ReplacePrefix(prefix string, decls ...declare.Declaration) error {
	if prefix == "" {
		return fmt.Errorf("%w: ReplacePrefix needs a prefix (an empty one would forget every block)", ErrInvalid)
	}
	keep := make(map[string]bool, len(decls))
	var problems []error
	for i := range decls {
		d := &decls[i]
		if !strings.HasPrefix(d.RequestID, prefix) {
			problems = append(problems, fmt.Errorf("%w: declarations[%d]: request_id %q does not start with %q", ErrInvalid, i, d.RequestID, prefix))
		}
		if err := e.limits.Validate(d); err != nil {
			problems = append(problems, err)
		}
		keep[d.RequestID] = true
	}
	if len(problems) > 0 {
		return errors.Join(problems...)
	}
	blocks := e.blocks()
	i, _ := slices.BinarySearchFunc(blocks, prefix, func(b *assemble.Block, p string) int { return strings.Compare(b.ID, p) })
	var stale []string
	for ; i < len(blocks) && strings.HasPrefix(blocks[i].ID, prefix); i++ {
		if !keep[blocks[i].ID] {
			stale = append(stale, blocks[i].ID)
		}
	}
	if len(stale) > 0 {
		e.Forget(stale...)
	}
	if len(decls) == 0 {
		return nil
	}
	return e.Declare(decls...)
}
