package assemble

import (
	"cmp"
	"math"
	"slices"
	"strings"

	"github.com/contextasm/contextasm/declare"
)

// rankKey is a compact sort key for blocks given in request_id order:
// required first, then score descending (the bits of a non-negative float64
// order as the float does; inverted for descending), then index. Sorting
// 16-byte keys with integer comparisons is several times faster than
// sorting Ranked values.
type rankKey struct {
	score uint64 // ^Float64bits(score); required blocks get 0 via req
	index uint32
	req   uint32 // 0 for required, 1 otherwise
}

func compareRankKey(a, b rankKey) int {
	switch {
	case a.req != b.req:
		return int(a.req) - int(b.req)
	case a.score != b.score:
		if a.score < b.score {
			return -1
		}
		return 1
	}
	return int(a.index) - int(b.index)
}

// descending maps a score to a key whose ascending order is the scores'
// descending order, for every float (negative ones come from a Scoring with
// negative weights): flip all bits of negatives and the sign bit of the
// rest, which orders them as integers, then invert. -0 is taken as +0.
func descending(f float64) uint64 {
	if f == 0 {
		f = 0 // -0 → +0
	}
	b := math.Float64bits(f)
	if b>>63 == 1 {
		b = ^b
	} else {
		b |= 1 << 63
	}
	return ^b
}

// rankKeyOf is the rank key of the i-th block, of score and required.
func rankKeyOf(score float64, required bool, i int) rankKey {
	k := rankKey{score: descending(score), index: uint32(i), req: 1}
	if required {
		k.req = 0
	}
	return k
}

// sortKeyTies sorts by cmp each run of keys equal in req and score, which
// sortRankKeys leaves in index order: the orders that sort by a key first
// break its ties so.
func sortKeyTies(keys []rankKey, cmp func(a, b rankKey) int) {
	for i := 0; i < len(keys); {
		j := i + 1
		for j < len(keys) && keys[j].score == keys[i].score && keys[j].req == keys[i].req {
			j++
		}
		if j-i > 1 {
			slices.SortFunc(keys[i:j], cmp)
		}
		i = j
	}
}

// rankByIndex orders section si's ranked blocks (given in request_id
// order) into its candidates, as compareRankedByIndex would.
func (a *Assembler) rankByIndex(si int) {
	ranked := a.secs[si].ranked
	keys := a.keys[:0]
	for i, r := range ranked {
		keys = append(keys, rankKeyOf(r.Score, r.Required, i))
	}
	keys = a.sortRankKeys(keys)
	a.secs[si].cands = slices.Grow(a.secs[si].cands, len(keys)) // once: not grown, and copied, block by block
	for _, k := range keys {
		a.secs[si].cands = append(a.secs[si].cands, candidate{Ranked: ranked[k.index]})
	}
	a.keys = keys
}

// radixMin is the size from which sortRankKeys uses a radix sort rather
// than a comparison sort.
const radixMin = 256

// sortRankKeys sorts keys by compareRankKey. Keys come in index order, so
// a stable sort on (req, score) gives the index tie-break for free; large
// sections get an LSD radix sort on the score key (eight byte passes, each
// skipped when every key shares that byte, as scores in [0, 1] share their
// exponent) and a stable pass that puts required blocks first: linear, where
// a comparison sort of 20,000 keys costs several times more. It returns the
// sorted slice, which may be a.keysTmp's array; the other array becomes
// the scratch for next time.
func (a *Assembler) sortRankKeys(keys []rankKey) []rankKey { return sortRankKeys(keys, &a.keysTmp) }

// sortRankKeys is Assembler.sortRankKeys with its scratch given.
func sortRankKeys(keys []rankKey, scratch *[]rankKey) []rankKey {
	if len(keys) < radixMin {
		slices.SortFunc(keys, compareRankKey)
		return keys
	}
	tmp := slices.Grow((*scratch)[:0], len(keys))[:len(keys)]
	src, dst := keys, tmp
	var count [256]int
	for shift := uint(0); shift < 64; shift += 8 {
		clear(count[:])
		for _, k := range src {
			count[byte(k.score>>shift)]++
		}
		if count[byte(src[0].score>>shift)] == len(src) {
			continue // every key has this byte: the pass would change nothing
		}
		pos := 0
		for i, c := range count {
			count[i] = pos
			pos += c
		}
		for _, k := range src {
			b := byte(k.score >> shift)
			dst[count[b]] = k
			count[b]++
		}
		src, dst = dst, src
	}
	// Required blocks first, stably.
	n := 0
	for _, k := range src {
		if k.req == 0 {
			dst[n] = k
			n++
		}
	}
	if n > 0 && n < len(src) {
		for _, k := range src {
			if k.req != 0 {
				dst[n] = k
				n++
			}
		}
		src, dst = dst, src
	}
	*scratch = dst[:0]
	return src
}

// rank is the ranking pass for section si: its candidates in the order
// the fill takes them. Blocks rank by Rank's order (breakTies for history);
// a section that follows its previous decision then takes its incumbents
// out of rank order by the margin (prepareSticky). The units and
// replacements learn where their members stand. An incremental assembly
// instead starts the walk that pulls candidates from its Index in the same
// order (startWalk).
func (a *Assembler) rank(r *run, si int) {
	if r.x != nil {
		a.startWalk(r, si)
		return
	}
	blocks := r.blocks
	if r.byID {
		a.rankByIndex(si)
	} else {
		Rank(a.secs[si].ranked)
		for _, e := range a.secs[si].ranked {
			a.secs[si].cands = append(a.secs[si].cands, candidate{Ranked: e})
		}
	}
	breakTies(a.secs[si].cands, blocks)
	for i := range a.secs[si].cands {
		a.secs[si].cands[i].rank = int32(i)
	}
	if a.chat.on() {
		for i := range a.secs[si].cands {
			a.secs[si].cands[i].msg = blocks[a.secs[si].cands[i].Index].Type == declare.History
		}
	}
	if r.follow {
		a.prepareSticky(r, si)
	}
	a.bindUnits(si) // after the sticky order: units know their members' places
	a.bindRepls(si, blocks, r.out)
}

// Ranked is one block's place in a section's ranking: a flat value so that
// sorting moves no pointers and allocates nothing.
type Ranked struct {
	Index    int32   // into the blocks the assembly ranks (given, or pulled from an Index)
	Required bool    // Block.Required: ranks before every block that is not
	Score    float64 // the block's score at the request's Now
	ID       string  // Block.ID: the last tie-break, ascending (history ties: compareTie)
	// Relevance is the block's relevance to the request's query, in
	// [0, 1] (0 without one); Score includes it.
	Relevance float64
	// Base is the score without relevance (Score itself without a query):
	// among blocks of equal Score the higher Base ranks first, so that the
	// order of blocks a query does not touch is their order without it.
	Base float64
}

// Rank sorts r best first: required blocks, then higher score, then
// request_id ascending. It does not allocate.
func Rank(r []Ranked) { slices.SortFunc(r, compareRanked) }

func compareRanked(a, b Ranked) int {
	if a.Required != b.Required {
		if a.Required {
			return -1
		}
		return 1
	}
	if a.Score != b.Score {
		if a.Score > b.Score {
			return -1
		}
		return 1
	}
	if a.Base != b.Base {
		if a.Base > b.Base {
			return -1
		}
		return 1
	}
	return strings.Compare(a.ID, b.ID)
}

// compareTie orders two blocks of equal rank (required and score): history
// blocks first, newer last_modified first, then later declared; then, and
// for every other block, request_id ascending. A total order, so the
// result of a sort does not depend on the sort.
func compareTie(a, b *Block) int {
	ha, hb := a.Type == declare.History, b.Type == declare.History
	switch {
	case ha != hb:
		if ha {
			return -1
		}
		return 1
	case ha:
		if c := b.LastModified.Compare(a.LastModified); c != 0 {
			return c
		}
		if c := cmp.Compare(b.Seq, a.Seq); c != 0 {
			return c
		}
	}
	return strings.Compare(a.ID, b.ID)
}

// breakTies reorders each run of candidates of equal rank (required and
// score) that holds a history block, or blocks of different base scores,
// by base score, then compareTie (runs of neither are already in
// request_id order). Ties are rare once history has recency, so this is
// one pass.
func breakTies(cands []candidate, blocks []*Block) {
	for i := 0; i < len(cands); {
		j, mixed := i+1, blocks[cands[i].Index].Type == declare.History
		for j < len(cands) && cands[j].Required == cands[i].Required && cands[j].Score == cands[i].Score {
			mixed = mixed || blocks[cands[j].Index].Type == declare.History || cands[j].Base != cands[i].Base
			j++
		}
		if j-i > 1 && mixed {
			slices.SortFunc(cands[i:j], func(x, y candidate) int {
				if x.Base != y.Base {
					if x.Base > y.Base {
						return -1
					}
					return 1
				}
				return compareTie(blocks[x.Index], blocks[y.Index])
			})
		}
		i = j
	}
}
