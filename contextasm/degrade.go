package contextasm

import (
	"slices"

	"github.com/contextasm/contextasm/contextasm/internal/assemble"
	"github.com/contextasm/contextasm/declare"
)

// checkLinks refuses declarations that close a cycle of supersedes or of
// replaces, through each other and the blocks of snap: a block cannot,
// through others, replace itself. When no block of snap may name one of
// them (refs), a cycle cannot pass through snap's blocks (the block
// before a declaration on it would name it), and what they link to in
// snap is not walked: a summary of a chain of summaries costs its own
// links, not the chain's.
func checkLinks(snap *snapshot, refs *linkRefs, decls []declare.Declaration) error {
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
	if !slices.ContainsFunc(decls, func(d declare.Declaration) bool { return refs.has(d.RequestID) }) {
		held = nil
	}
	if probs := declare.CheckLinks(decls, held); len(probs) > 0 {
		return &declare.ValidationError{Problems: probs}
	}
	return nil
}

// linkRefs holds every id a block of the store names in supersedes or
// replaces, and more: the ids the blocks declared since it was last made
// from the store name, which may have gone since. It is made again from
// the store when it has doubled, so it costs what the store names.
type linkRefs struct {
	ids  map[string]struct{}
	made int // how many ids it held when made from the store
}

// has reports whether a block of the store may name id.
func (r *linkRefs) has(id string) bool {
	_, ok := r.ids[id]
	return ok
}

// add notes the ids decls name, the store being set once they are
// declared.
func (r *linkRefs) add(set blockSet, decls []declare.Declaration) {
	for i := range decls {
		for _, ids := range [2][]string{decls[i].Supersedes, decls[i].Replaces} {
			for _, id := range ids {
				if r.ids == nil {
					r.ids = make(map[string]struct{})
				}
				r.ids[id] = struct{}{}
			}
		}
	}
	if len(r.ids) <= 2*r.made+1024 {
		return
	}
	clear(r.ids)
	set.ascend("", func(b *assemble.Block) bool {
		for _, ids := range [2][]string{b.Supersedes(), b.Replaces()} {
			for _, id := range ids {
				r.ids[id] = struct{}{}
			}
		}
		return true
	})
	r.made = len(r.ids)
}
