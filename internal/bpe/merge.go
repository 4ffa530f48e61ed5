package bpe

// Byte-pair merging of one pre-tokenizer piece, as tiktoken does it: start
// from single bytes and, while any two adjacent parts join into a token,
// join the pair whose token has the lowest rank (the leftmost on a tie).

// smallPiece is the longest piece merged by the plain quadratic scan, on
// the stack; longer pieces use a heap (O(n log n)) and allocate.
const smallPiece = 256

type part struct{ start, rank int32 }

// count returns the number of tokens of piece, which is at most
// MaxPieceBytes long.
func (v *vocab) count(piece string) int {
	switch {
	case len(piece) <= 1:
		return len(piece)
	case len(piece) <= v.maxLen:
		if _, ok := v.ranks[piece]; ok {
			return 1
		}
	}
	if len(piece) <= smallPiece {
		var buf [smallPiece + 1]part
		return len(v.mergeSmall(piece, buf[:])) - 1
	}
	return v.countLarge(piece)
}

// appendEnds appends to dst the end offsets, within piece, of piece's
// tokens.
func (v *vocab) appendEnds(dst []int32, piece string) []int32 {
	switch {
	case len(piece) == 0:
		return dst
	case len(piece) == 1:
		return append(dst, 1)
	case len(piece) <= v.maxLen:
		if _, ok := v.ranks[piece]; ok {
			return append(dst, int32(len(piece)))
		}
	}
	if len(piece) <= smallPiece {
		var buf [smallPiece + 1]part
		parts := v.mergeSmall(piece, buf[:])
		for _, p := range parts[1:] {
			dst = append(dst, p.start)
		}
		return dst
	}
	next := v.mergeLarge(piece)
	for i := next[0]; ; i = next[i] {
		dst = append(dst, i)
		if int(i) == len(piece) {
			return dst
		}
	}
}

// mergeSmall merges piece (2 to smallPiece bytes) in parts, which has room
// for len(piece)+1 entries, and returns the parts left: each token's start,
// then len(piece).
func (v *vocab) mergeSmall(piece string, parts []part) []part {
	n := len(piece)
	parts = parts[:n+1]
	for i := range parts {
		parts[i] = part{int32(i), noRank}
	}
	for i := 0; i+2 <= n; i++ {
		parts[i].rank = v.pairs[int(piece[i])<<8|int(piece[i+1])]
	}
	for {
		lowest, at := noRank, -1
		for i := 0; i < len(parts)-1; i++ {
			if parts[i].rank < lowest {
				lowest, at = parts[i].rank, i
			}
		}
		if at < 0 {
			return parts
		}
		// Join parts at and at+1; then the joins either side of the new part
		// change.
		if at+3 < len(parts) {
			parts[at].rank = v.rank(piece[parts[at].start:parts[at+3].start])
		} else {
			parts[at].rank = noRank
		}
		if at > 0 {
			parts[at-1].rank = v.rank(piece[parts[at-1].start:parts[at+2].start])
		}
		copy(parts[at+1:], parts[at+2:])
		parts = parts[:len(parts)-1]
	}
}

// mergeLarge merges piece with a heap of candidate joins keyed by rank,
// then start: the same order as the scan in mergeSmall. It returns next,
// where next[s] is the end of the token starting at s: walking from 0
// lists every token's end.
func (v *vocab) mergeLarge(piece string) []int32 {
	n := int32(len(piece))
	next := make([]int32, n+1)
	prev := make([]int32, n)
	rank := make([]int32, n)
	h := make(joinHeap, 0, n)
	for i := range n {
		next[i], prev[i], rank[i] = i+1, i-1, noRank
		if i+2 <= n {
			rank[i] = v.pairs[int(piece[i])<<8|int(piece[i+1])]
			if rank[i] != noRank {
				h.push(rank[i], i)
			}
		}
	}
	next[n] = n
	for len(h) > 0 {
		r, i := h.pop()
		if rank[i] != r {
			continue // a join since superseded, or of a part since joined
		}
		j := next[i]
		k := next[j]
		next[i] = k
		if k < n {
			prev[k] = i
		}
		rank[j] = -1 // gone
		rank[i] = noRank
		if k < n {
			if rank[i] = v.rank(piece[i:next[k]]); rank[i] != noRank {
				h.push(rank[i], i)
			}
		}
		if p := prev[i]; p >= 0 {
			if rank[p] = v.rank(piece[p:k]); rank[p] != noRank {
				h.push(rank[p], p)
			}
		}
	}
	return next
}

// countLarge is count for pieces longer than smallPiece.
func (v *vocab) countLarge(piece string) int {
	next := v.mergeLarge(piece)
	n := 0
	for i := int32(0); int(i) < len(piece); i = next[i] {
		n++
	}
	return n
}

// joinHeap is a binary min-heap of candidate joins, rank in the high half
// of each entry and the left part's start in the low one.
type joinHeap []uint64

func (h *joinHeap) push(rank, start int32) {
	e := uint64(rank)<<32 | uint64(uint32(start))
	s := append(*h, e)
	i := len(s) - 1
	for i > 0 {
		p := (i - 1) / 2
		if s[p] <= e {
			break
		}
		s[i] = s[p]
		i = p
	}
	s[i] = e
	*h = s
}

func (h *joinHeap) pop() (rank, start int32) {
	s := *h
	top := s[0]
	last := s[len(s)-1]
	s = s[:len(s)-1]
	i := 0
	for {
		c := 2*i + 1
		if c >= len(s) {
			break
		}
		if c+1 < len(s) && s[c+1] < s[c] {
			c++
		}
		if last <= s[c] {
			break
		}
		s[i] = s[c]
		i = c
	}
	if len(s) > 0 {
		s[i] = last
	}
	*h = s
	return int32(top >> 32), int32(uint32(top))
}
