package hftok

import (
	"sync"
	"time"
	"unicode/utf8"
)

// Tokenizer counts and cuts text in the tokens of one tokenizer.json. It is
// immutable once loaded and safe for concurrent use.
type Tokenizer struct {
	added     addedVocab
	norm      normalizer // nil: none
	pre       []preStep
	byteLevel bool
	model     *bpeModel
	spans     sync.Pool // *scratch
	// lineAdditive: see LineAdditive.
	lineAdditive bool
	// uncertain holds the flags of the characters the library may see
	// otherwise than this pipeline (unknown.go); 0 for none.
	uncertain uint8
	// syncable: sync points bound the stretches around them.
	syncable bool
	// factor: see Factor.
	factor int
	// timed: some step runs regexp2, under a time budget (regex.go).
	timed bool
}

// Factor is the most tokens one byte of text can become in this pipeline:
// the bound a stretch is counted at when the library may tokenize it
// otherwise (a character newer than Go's Unicode tables, see unknown.go) or
// when a regex ran out of time.
func (t *Tokenizer) Factor() int { return t.factor }

// encode runs the pipeline on text and calls fn with each token: its id and
// the original byte offset where it ends, or -1 when that offset falls
// inside text a normalizer rewrote (and track is false: then always -1).
// It returns the number of tokens. With bound, a stretch holding a
// character the library may see otherwise counts as the bound, its tokens
// given to fn with id -1; without, as Go's tables tokenize it.
func (t *Tokenizer) encode(text string, track, bound bool, fn func(id int32, end int32)) int {
	sc, _ := t.spans.Get().(*scratch)
	if sc == nil {
		sc = new(scratch)
	}
	sc.started, sc.budget = time.Time{}, matchBudget(len(text))
	n := 0
	t.added.raw.split(text, func(start, end int, id int32) {
		if id >= 0 {
			n++
			if fn != nil {
				fn(id, int32(end))
			}
			return
		}
		sp := span{s: text[start:end], base: int32(start)}
		if bound && hasUncertain(sp.s, t.uncertain) {
			n += t.boundedStretch(sp, track, fn, sc)
			return
		}
		n += t.exact(sp, track, fn, sc)
	})
	if cap(sc.cur)+cap(sc.next) <= 1<<16 { // keep no huge buffers
		clear(sc.cur[:cap(sc.cur)])
		clear(sc.next[:cap(sc.next)]) // drop the text they point into
		sc.cur, sc.next = sc.cur[:0], sc.next[:0]
		t.spans.Put(sc)
	}
	return n
}

// exact tokenizes a stretch between raw added tokens: it normalizes it,
// splits out the normalized added tokens and runs the pre-tokenizer and
// the model on the rest.
func (t *Tokenizer) exact(sp span, track bool, fn func(id int32, end int32), sc *scratch) int {
	if sp.s == "" {
		return 0
	}
	if t.norm != nil {
		sp = t.norm.normalize(sp, track, sc)
	}
	n := 0
	t.added.normalized.split(sp.s, func(a, b int, id int32) {
		if id >= 0 {
			n++
			if fn != nil {
				fn(id, endOf(sp, b, track))
			}
			return
		}
		n += t.pieces(sp.sub(a, b), track, fn, sc)
	})
	return n
}

func endOf(sp span, i int, track bool) int32 {
	if !track {
		return -1
	}
	return sp.orig(i)
}

// pieces pre-tokenizes sp and runs the model on each piece.
func (t *Tokenizer) pieces(sp span, track bool, fn func(id int32, end int32), sc *scratch) int {
	cur := append(sc.cur[:0], sp)
	next := sc.next[:0]
	for _, st := range t.pre {
		next = next[:0]
		for _, s := range cur {
			next = st.split(s, track, next, sc)
		}
		cur, next = next, cur
	}
	n := 0
	for _, p := range cur {
		if fn == nil {
			n += t.model.tokenize(p.s, nil)
			continue
		}
		at := 0
		n += t.model.tokenize(p.s, func(id int32, size int) {
			at += size
			fn(id, endOf(p, at, track))
		})
	}
	sc.cur, sc.next = cur[:0], next[:0]
	return n
}

// Count returns the number of tokens of text, as the library's
// encode(text, add_special_tokens=False) makes them: added tokens in the
// text count as one token each.
//
// It is never below the library's count, and equal to it but where the
// library may tokenize otherwise than Go's tables tell: around a character
// newer than them, or (for a normalizer) one whose normalization Unicode
// set after the library's tables; there a stretch counts Factor tokens a
// byte (see unknown.go). So it is when a regex ran out of time (regex.go).
func (t *Tokenizer) Count(text string) int {
	if text == "" {
		return 0
	}
	n, ok := t.guarded(text, false, true, nil)
	if !ok {
		return t.factor * len(text)
	}
	return n
}

// AppendIDs appends the token ids of text to dst, as Go's tables tokenize
// it (where Count gives a bound, the ids are one guess of the library's),
// and reports false, with dst unchanged, when a regex ran out of time.
func (t *Tokenizer) AppendIDs(dst []int, text string) ([]int, bool) {
	out := dst
	_, ok := t.guarded(text, false, false, func(id int32, _ int32) { out = append(out, int(id)) })
	if !ok {
		return dst, false
	}
	return out, true
}

// Cut returns a prefix of text that ends on a token boundary, never inside
// a UTF-8 character, and counts at most maxTokens tokens: the longest such
// prefix in all but rare cases (where a token boundary falls inside text a
// normalizer rewrote, or re-tokenizing the prefix changes its tail, it backs
// off to an earlier boundary). The whole text when it fits.
func (t *Tokenizer) Cut(text string, maxTokens int) string {
	if maxTokens <= 0 || text == "" {
		return ""
	}
	// The original offset where each of the first maxTokens+1 tokens ends.
	ends := make([]int32, 0, min(maxTokens+1, len(text)+1))
	total, ok := t.guarded(text, true, true, func(_ int32, end int32) {
		if len(ends) <= maxTokens {
			ends = append(ends, end)
		}
	})
	if !ok {
		return t.cutBytewise(text, maxTokens)
	}
	if total <= maxTokens {
		return text
	}
	// Try the boundary after token maxTokens, then earlier ones, backing
	// off faster after each miss; a prefix must re-count within budget.
	step := 1
	for k := maxTokens; k > 0; {
		end := int(ends[k-1])
		if end <= 0 || end >= len(text) || !utf8.RuneStart(text[end]) {
			k-- // unaligned: try the boundary before
			continue
		}
		if t.Count(text[:end]) <= maxTokens {
			return text[:end]
		}
		k -= step
		step *= 2
	}
	return ""
}

// cutBytewise cuts text as counted at the bound, Factor tokens a byte:
// whole characters while they fit.
func (t *Tokenizer) cutBytewise(text string, maxTokens int) string {
	end := min(len(text), maxTokens/t.factor)
	for end > 0 && end < len(text) && !utf8.RuneStart(text[end]) {
		end--
	}
	return text[:end]
}
