package contextasm

import (
	"slices"

	"github.com/contextasm/contextasm/declare"
)

// checkLinks refuses declarations that close a cycle of supersedes or of
// replaces, through each other and the blocks of snap: a block cannot,
// through others, replace itself.
func checkLinks(snap *snapshot, decls []declare.Declaration) error {
	linked := slices.ContainsFunc(decls, func(d declare.Declaration) bool { return len(d.Supersedes) > 0 || len(d.Replaces) > 0 })
	if !linked {
		return nil
	}
	held := func(id string) (sup, rep []string, ok bool) {
		b, found := snap.set.get(id)
		if !found {
			return nil, nil, false
		}
		return b.Supersedes(), b.Replaces(), true
	}
	if probs := declare.CheckLinks(decls, held); len(probs) > 0 {
		return &declare.ValidationError{Problems: probs}
	}
	return nil
}
