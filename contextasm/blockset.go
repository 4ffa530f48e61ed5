package contextasm

import (
	"slices"
	"strings"

	"github.com/contextasm/contextasm/contextasm/internal/assemble"
)

// blockSet is the store's blocks sorted by request_id, held as a sorted
// list of chunks that are never modified once published: a change copies
// the chunks it touches and the list of chunks, not the store, so that a
// turn that declares one block into 200,000 copies a few thousand
// pointers, and readers of the set before keep theirs.
type blockSet struct {
	chunks [][]*assemble.Block // each sorted and non-empty, in request_id order
	n      int
}

// chunkSize is the size chunks are made at; one that grows past twice it
// splits.
const chunkSize = 512

// newBlockSet returns the set of sorted, distinct blocks.
func newBlockSet(sorted []*assemble.Block) blockSet {
	s := blockSet{n: len(sorted)}
	for len(sorted) > 0 {
		k := min(len(sorted), chunkSize)
		s.chunks = append(s.chunks, sorted[:k:k])
		sorted = sorted[k:]
	}
	return s
}

func (s blockSet) len() int { return s.n }

// chunkOf returns the chunk id would be in: the last whose first id is
// not after id (0 when there is none).
func (s blockSet) chunkOf(id string) int {
	i, found := slices.BinarySearchFunc(s.chunks, id, func(c []*assemble.Block, id string) int { return strings.Compare(c[0].ID, id) })
	if found || i == 0 {
		return i
	}
	return i - 1
}

// get returns the block of id.
func (s blockSet) get(id string) (*assemble.Block, bool) {
	if s.n == 0 {
		return nil, false
	}
	c := s.chunks[s.chunkOf(id)]
	j, found := slices.BinarySearchFunc(c, id, compareID)
	if !found {
		return nil, false
	}
	return c[j], true
}

func compareID(b *assemble.Block, id string) int { return strings.Compare(b.ID, id) }

// appendTo appends every block, in request_id order, to dst.
func (s blockSet) appendTo(dst []*assemble.Block) []*assemble.Block {
	dst = slices.Grow(dst, s.n)
	for _, c := range s.chunks {
		dst = append(dst, c...)
	}
	return dst
}

// ascend calls f with every block from the first whose id is not before
// from, in order, until f returns false.
func (s blockSet) ascend(from string, f func(*assemble.Block) bool) {
	if s.n == 0 {
		return
	}
	ci := s.chunkOf(from)
	j, _ := slices.BinarySearchFunc(s.chunks[ci], from, compareID)
	for ; ci < len(s.chunks); ci, j = ci+1, 0 {
		for _, b := range s.chunks[ci][j:] {
			if !f(b) {
				return
			}
		}
	}
}

// change is one block of the store changed by a publish: old nil for a
// block added, new nil for one removed.
type change struct{ old, new *assemble.Block }

// put returns the set with blocks (sorted, distinct ids) put in, each
// replacing the block of its id, and the changes.
func (s blockSet) put(blocks []*assemble.Block) (blockSet, []change) {
	changes := make([]change, len(blocks))
	for i, b := range blocks {
		old, _ := s.get(b.ID)
		changes[i] = change{old, b}
	}
	if len(blocks) > s.n/8+chunkSize {
		// Most of the store: merge whole.
		all := make([]*assemble.Block, 0, s.n+len(blocks))
		old := s.appendTo(nil)
		i := 0
		for _, b := range blocks {
			for i < len(old) && old[i].ID < b.ID {
				all = append(all, old[i])
				i++
			}
			if i < len(old) && old[i].ID == b.ID {
				i++
			}
			all = append(all, b)
		}
		return newBlockSet(append(all, old[i:]...)), changes
	}
	return s.edit(blocks, nil), changes
}

// remove returns the set without the blocks of ids (sorted, distinct;
// unknown ones are ignored), and the changes.
func (s blockSet) remove(ids []string) (blockSet, []change) {
	var changes []change
	var gone []string
	for _, id := range ids {
		if old, ok := s.get(id); ok {
			changes = append(changes, change{old: old})
			gone = append(gone, id)
		}
	}
	if len(gone) == 0 {
		return s, nil
	}
	return s.edit(nil, gone), changes
}

// edit returns the set with blocks put in and the blocks of gone taken
// out (both sorted by id), copying only the chunks they fall in.
func (s blockSet) edit(put []*assemble.Block, gone []string) blockSet {
	out := blockSet{chunks: make([][]*assemble.Block, 0, len(s.chunks)+len(put)/chunkSize+1)}
	ci := 0
	for len(put) > 0 || len(gone) > 0 || ci < len(s.chunks) {
		if ci == len(s.chunks) && len(s.chunks) > 0 {
			break
		}
		// The next chunk something falls in, and how far its ids go.
		var c []*assemble.Block
		last := ""
		lastChunk := ci >= len(s.chunks)-1
		if ci < len(s.chunks) {
			c = s.chunks[ci]
			if !lastChunk {
				last = s.chunks[ci+1][0].ID
			}
		}
		var p []*assemble.Block
		for len(put) > 0 && (lastChunk || put[0].ID < last) {
			p, put = append(p, put[0]), put[1:]
		}
		var g []string
		for len(gone) > 0 && (lastChunk || gone[0] < last) {
			g, gone = append(g, gone[0]), gone[1:]
		}
		ci++
		if len(p) == 0 && len(g) == 0 {
			out.chunks = append(out.chunks, c)
			out.n += len(c)
			continue
		}
		merged := make([]*assemble.Block, 0, len(c)+len(p))
		i := 0
		for _, b := range p {
			for i < len(c) && c[i].ID < b.ID {
				if len(g) > 0 && g[0] == c[i].ID {
					g = g[1:]
				} else {
					merged = append(merged, c[i])
				}
				i++
			}
			if i < len(c) && c[i].ID == b.ID {
				i++
			}
			merged = append(merged, b)
		}
		for ; i < len(c); i++ {
			if len(g) > 0 && g[0] == c[i].ID {
				g = g[1:]
				continue
			}
			merged = append(merged, c[i])
		}
		for len(merged) > 2*chunkSize {
			out.chunks = append(out.chunks, merged[:chunkSize:chunkSize])
			out.n += chunkSize
			merged = merged[chunkSize:]
		}
		if len(merged) > 0 {
			out.chunks = append(out.chunks, merged)
			out.n += len(merged)
		}
	}
	return out
}
