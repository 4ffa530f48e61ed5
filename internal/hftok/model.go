package hftok

import (
	"encoding/json"
	"fmt"
	"hash/maphash"
	"sync"
	"unicode/utf8"
)

// bpeModel is the BPE model of a tokenizer.json.
type bpeModel struct {
	vocab map[string]int32 // token text as in the file
	// byteLevel models look pieces up by their raw bytes: raw holds the
	// vocabulary with each byte-level character mapped back to its byte,
	// and byteID the token of each single byte (-1: none).
	byteLevel bool
	raw       map[string]int32
	byteID    [256]int32
	// merges maps a pair of tokens (left<<32 | right) to the merge's rank
	// (its index in the file) and the merged token (rank<<32 | id).
	merges       map[uint64]uint64
	fallback     [256]int32 // <0xXX> tokens for byte_fallback (-1: none)
	byteFallback bool
	unk          int32 // -1: none
	fuseUnk      bool
	ignoreMerges bool
	scratch      sync.Pool // *word
	cache        pieceCache
}

type modelJSON struct {
	Type                    string          `json:"type"`
	Dropout                 *float64        `json:"dropout"`
	UnkToken                *string         `json:"unk_token"`
	ContinuingSubwordPrefix *string         `json:"continuing_subword_prefix"`
	EndOfWordSuffix         *string         `json:"end_of_word_suffix"`
	FuseUnk                 bool            `json:"fuse_unk"`
	ByteFallback            bool            `json:"byte_fallback"`
	IgnoreMerges            bool            `json:"ignore_merges"`
	Vocab                   map[string]int  `json:"vocab"`
	Merges                  json.RawMessage `json:"merges"`
}

func (p *parser) model(f *scanned, byteLevel bool) (*bpeModel, error) {
	raw := f.model
	var c component
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, p.invalid("model", "%v", err)
	}
	if c.Type != "BPE" && c.Type != "" {
		return nil, p.unsupported("model.type", "model %q is not supported (supported: BPE)", c.Type)
	}
	var mj modelJSON
	if err := json.Unmarshal(raw, &mj); err != nil {
		return nil, p.invalid("model", "%v", err)
	}
	switch {
	case mj.Type == "" && f.vocab == nil:
		return nil, p.invalid("model", "no type and no vocab")
	case mj.Dropout != nil && *mj.Dropout > 0:
		return nil, p.unsupported("model.dropout", "BPE dropout %v is not supported: it makes counts random", *mj.Dropout)
	case mj.ContinuingSubwordPrefix != nil && *mj.ContinuingSubwordPrefix != "":
		return nil, p.unsupported("model.continuing_subword_prefix", "%q is not supported", *mj.ContinuingSubwordPrefix)
	case mj.EndOfWordSuffix != nil && *mj.EndOfWordSuffix != "":
		return nil, p.unsupported("model.end_of_word_suffix", "%q is not supported", *mj.EndOfWordSuffix)
	}
	if f.vocab == nil {
		f.vocab = map[string]int32{}
	}
	m := &bpeModel{
		vocab:        f.vocab,
		byteLevel:    byteLevel,
		byteFallback: mj.ByteFallback,
		fuseUnk:      mj.FuseUnk,
		ignoreMerges: mj.IgnoreMerges,
		unk:          -1,
	}
	m.cache.seed = maphash.MakeSeed()
	if mj.UnkToken != nil {
		id, ok := m.vocab[*mj.UnkToken]
		if !ok {
			return nil, p.invalid("model.unk_token", "%q is not in the vocabulary", *mj.UnkToken)
		}
		m.unk = id
	}
	for b := range 256 {
		m.fallback[b] = -1
		if id, ok := m.vocab[fmt.Sprintf("<0x%02X>", b)]; ok && mj.ByteFallback {
			m.fallback[b] = id
		}
	}
	if byteLevel {
		m.raw = make(map[string]int32, len(m.vocab))
		for tok, id := range m.vocab {
			if b, ok := fromByteLevel(tok); ok {
				m.raw[b] = id
			}
		}
		for b := range 256 {
			m.byteID[b] = -1
			if id, ok := m.raw[string([]byte{byte(b)})]; ok {
				m.byteID[b] = id
			}
		}
	}
	pairs := f.merges
	m.merges = make(map[uint64]uint64, len(pairs))
	var buf []byte
	for i, pr := range pairs {
		a, okA := m.vocab[pr[0]]
		b, okB := m.vocab[pr[1]]
		buf = append(append(buf[:0], pr[0]...), pr[1]...)
		c, okC := m.vocab[string(buf)]
		if !okA || !okB || !okC {
			return nil, p.invalid(fmt.Sprintf("model.merges[%d]", i), "merge %q + %q: a token is not in the vocabulary", pr[0], pr[1])
		}
		// A later duplicate replaces an earlier one, as in the library.
		m.merges[uint64(a)<<32|uint64(uint32(b))] = uint64(i)<<32 | uint64(uint32(c))
	}
	return m, nil
}

// charToByte maps each character of ByteLevel's alphabet to the byte it
// stands for (GPT-2's table: printable bytes stand for themselves, the
// others are shifted to U+0100 and up).
var charToByte = byteLevelTable()

func byteLevelTable() map[rune]byte {
	var chars [256]rune
	inv := make(map[rune]byte, 256)
	n := 0
	for b := range 256 {
		if ('!' <= b && b <= '~') || (0xA1 <= b && b <= 0xAC) || (0xAE <= b && b <= 0xFF) {
			chars[b] = rune(b)
		} else {
			chars[b] = rune(256 + n)
			n++
		}
		inv[chars[b]] = byte(b)
	}
	return inv
}

// fromByteLevel maps a byte-level token back to its bytes; false when the
// token holds a character outside the byte-level alphabet.
func fromByteLevel(tok string) (string, bool) {
	out := make([]byte, 0, len(tok))
	for _, r := range tok {
		b, ok := charToByte[r]
		if !ok {
			return "", false
		}
		out = append(out, b)
	}
	return string(out), true
}

// symbol is one token of a word being merged, in a doubly linked list.
type symbol struct {
	id         int32
	prev, next int32
	len        int32 // bytes; 0 once merged into its left neighbour
}

// merge is a candidate merge of the symbol at pos with its right neighbour.
type merge struct {
	rank  uint32
	pos   int32
	newID int32
}

// word is the scratch of one tokenization.
type word struct {
	syms []symbol
	heap []merge
}

func (w *word) add(id int32, n int) {
	i := int32(len(w.syms))
	w.syms = append(w.syms, symbol{id: id, prev: i - 1, next: i + 1, len: int32(n)})
}

// tokenize appends the tokens of one pre-tokenized piece to fn, each with
// its length in bytes of piece, and returns how many there were. A nil fn
// only counts.
func (m *bpeModel) tokenize(piece string, fn func(id int32, n int)) int {
	if piece == "" {
		return 0
	}
	if m.ignoreMerges {
		vocab := m.vocab
		if m.byteLevel {
			vocab = m.raw
		}
		if id, ok := vocab[piece]; ok {
			if fn != nil {
				fn(id, len(piece))
			}
			return 1
		}
	}
	if m.byteLevel && len(piece) == 1 && m.byteID[piece[0]] >= 0 {
		if fn != nil {
			fn(m.byteID[piece[0]], 1)
		}
		return 1
	}
	if e := m.cache.get(piece); e != nil {
		if fn != nil {
			for i, id := range e.ids {
				fn(id, int(e.lens[i]))
			}
		}
		return len(e.ids)
	}
	w, _ := m.scratch.Get().(*word)
	if w == nil {
		w = new(word)
	}
	w.syms = w.syms[:0]
	m.symbols(w, piece)
	m.mergeAll(w)
	n := 0
	for i := 0; i < len(w.syms); i = int(w.syms[i].next) {
		n++
		if fn != nil {
			fn(w.syms[i].id, int(w.syms[i].len))
		}
	}
	if len(piece) <= cacheMaxPiece {
		ids, lens := make([]int32, 0, n), make([]int32, 0, n)
		for i := 0; i < len(w.syms); i = int(w.syms[i].next) {
			ids = append(ids, w.syms[i].id)
			lens = append(lens, w.syms[i].len)
		}
		m.cache.put(piece, ids, lens)
	}
	if cap(w.syms) <= 1<<16 {
		m.scratch.Put(w)
	}
	return n
}

// symbols splits piece into its initial symbols, as the library's
// merge_word does: one per byte for byte-level models, else one per
// character, with byte_fallback tokens or the unknown token (fused when
// fuse_unk) for characters outside the vocabulary. A character with
// neither is dropped, as the library drops it.
func (m *bpeModel) symbols(w *word, piece string) {
	unkLen := 0
	flushUnk := func() {
		if unkLen > 0 {
			w.add(m.unk, unkLen)
			unkLen = 0
		}
	}
	for i := 0; i < len(piece); {
		var id int32 = -1
		size := 1
		if m.byteLevel {
			id = m.byteID[piece[i]]
		} else {
			_, size = utf8.DecodeRuneInString(piece[i:])
			if v, ok := m.vocab[piece[i:i+size]]; ok {
				id = v
			}
		}
		if id >= 0 {
			flushUnk()
			w.add(id, size)
			i += size
			continue
		}
		if m.byteFallback && m.allFallback(piece[i:i+size]) {
			// Only whole characters fall back; an unknown one leaves the
			// pending unknown token where it is, as the library does.
			for j := i; j < i+size; j++ {
				w.add(m.fallback[piece[j]], 1)
			}
			i += size
			continue
		}
		if m.unk >= 0 {
			if unkLen > 0 && !m.fuseUnk {
				flushUnk()
			}
			unkLen += size
		}
		i += size
	}
	flushUnk()
}

func (m *bpeModel) allFallback(s string) bool {
	for i := 0; i < len(s); i++ {
		if m.fallback[s[i]] < 0 {
			return false
		}
	}
	return true
}

// mergeAll applies the merges, lowest rank first and leftmost first among
// equal ranks, with a priority queue: O(n log n) for n symbols. It is the
// library's Word::merge_all.
func (m *bpeModel) mergeAll(w *word) {
	if len(w.syms) <= smallWord {
		m.mergeSmall(w)
		return
	}
	syms := w.syms
	h := w.heap[:0]
	for i := 0; i+1 < len(syms); i++ {
		if r, ok := m.merges[uint64(syms[i].id)<<32|uint64(uint32(syms[i+1].id))]; ok {
			h = append(h, merge{rank: uint32(r >> 32), pos: int32(i), newID: int32(uint32(r))})
		}
	}
	heapInit(h)
	for len(h) > 0 {
		top := h[0]
		h = heapPop(h)
		s := &syms[top.pos]
		if s.len == 0 || int(s.next) >= len(syms) {
			continue
		}
		right := syms[s.next]
		if r, ok := m.merges[uint64(s.id)<<32|uint64(uint32(right.id))]; !ok || int32(uint32(r)) != top.newID {
			continue // stale: a neighbour has merged since
		}
		s.id = top.newID
		s.len += right.len
		syms[s.next].len = 0
		s.next = right.next
		if int(right.next) < len(syms) {
			syms[right.next].prev = top.pos
		}
		if s.prev >= 0 {
			p := syms[s.prev]
			if r, ok := m.merges[uint64(p.id)<<32|uint64(uint32(s.id))]; ok {
				h = heapPush(h, merge{rank: uint32(r >> 32), pos: s.prev, newID: int32(uint32(r))})
			}
		}
		if int(s.next) < len(syms) {
			if r, ok := m.merges[uint64(s.id)<<32|uint64(uint32(syms[s.next].id))]; ok {
				h = heapPush(h, merge{rank: uint32(r >> 32), pos: top.pos, newID: int32(uint32(r))})
			}
		}
	}
	w.heap = h
}

// smallWord is the most symbols mergeSmall takes: below it, scanning
// every pair for the best merge beats keeping a heap.
const smallWord = 16

// mergeSmall is mergeAll by scanning: each round merges the adjacent pair
// of lowest rank, leftmost among equals, which is the pair the heap would
// pop next.
func (m *bpeModel) mergeSmall(w *word) {
	syms := w.syms
	for len(syms) > 1 {
		best, bestRank, bestID := -1, uint32(0), int32(0)
		for i := 0; i+1 < len(syms); i++ {
			r, ok := m.merges[uint64(syms[i].id)<<32|uint64(uint32(syms[i+1].id))]
			if ok && (best < 0 || uint32(r>>32) < bestRank) {
				best, bestRank, bestID = i, uint32(r>>32), int32(uint32(r))
			}
		}
		if best < 0 {
			break
		}
		syms[best].id = bestID
		syms[best].len += syms[best+1].len
		syms = append(syms[:best+1], syms[best+2:]...)
	}
	for i := range syms {
		syms[i].next = int32(i + 1)
		syms[i].prev = int32(i - 1)
	}
	w.syms = syms
}

func less(a, b merge) bool {
	if a.rank != b.rank {
		return a.rank < b.rank
	}
	return a.pos < b.pos
}

func heapInit(h []merge) {
	for i := len(h)/2 - 1; i >= 0; i-- {
		heapDown(h, i)
	}
}

func heapDown(h []merge, i int) {
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		j := l
		if r := l + 1; r < len(h) && less(h[r], h[l]) {
			j = r
		}
		if !less(h[j], h[i]) {
			return
		}
		h[i], h[j] = h[j], h[i]
		i = j
	}
}

func heapPush(h []merge, x merge) []merge {
	h = append(h, x)
	i := len(h) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !less(h[i], h[p]) {
			break
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
	return h
}

func heapPop(h []merge) []merge {
	n := len(h) - 1
	h[0] = h[n]
	h = h[:n]
	if n > 0 {
		heapDown(h, 0)
	}
	return h
}
