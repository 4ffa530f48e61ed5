package hftok

import (
	"hash/maphash"
	"sync/atomic"
)

// pieceCache remembers the tokens of recent pieces, as the library's BPE
// cache does: text repeats its words, and a hit skips the merges. It is a
// direct-mapped table of immutable entries swapped atomically, so readers
// never lock and a race only costs a miss.
type pieceCache struct {
	seed  maphash.Seed
	slots [cacheSlots]atomic.Pointer[cacheEntry]
}

const (
	cacheSlots    = 1 << 13
	cacheMaxPiece = 64 // longer pieces are rare and not worth the memory
)

type cacheEntry struct {
	piece string
	ids   []int32
	lens  []int32
}

func (c *pieceCache) slot(piece string) *atomic.Pointer[cacheEntry] {
	return &c.slots[maphash.String(c.seed, piece)&(cacheSlots-1)]
}

func (c *pieceCache) get(piece string) *cacheEntry {
	if len(piece) > cacheMaxPiece {
		return nil
	}
	if e := c.slot(piece).Load(); e != nil && e.piece == piece {
		return e
	}
	return nil
}

func (c *pieceCache) put(piece string, ids, lens []int32) {
	if len(piece) > cacheMaxPiece {
		return
	}
	c.slot(piece).Store(&cacheEntry{piece: piece, ids: ids, lens: lens})
}
