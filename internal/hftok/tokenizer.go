package hftok

import (
	"sync"
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
}

// encode runs the pipeline on text and calls fn with each token: its id and
// the original byte offset where it ends, or -1 when that offset falls
// inside text a normalizer rewrote (and track is false: then always -1).
// It returns the number of tokens.
func (t *Tokenizer) encode(text string, track bool, fn func(id int32, end int32)) int {
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
		if t.norm != nil {
			sp = t.norm.normalize(sp, track)
		}
		t.added.normalized.split(sp.s, func(a, b int, id int32) {
			if id >= 0 {
				n++
				if fn != nil {
					fn(id, endOf(sp, b, track))
				}
				return
			}
			n += t.pieces(sp.sub(a, b), track, fn)
		})
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
func (t *Tokenizer) pieces(sp span, track bool, fn func(id int32, end int32)) int {
	sc, _ := t.spans.Get().(*scratch)
	if sc == nil {
		sc = new(scratch)
	}
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
	if cap(cur)+cap(next) <= 1<<16 { // keep no huge buffers
		clear(cur[:cap(cur)])
		clear(next[:cap(next)]) // drop the text they point into
		sc.cur, sc.next = cur[:0], next[:0]
		t.spans.Put(sc)
	}
	return n
}

// Count returns the number of tokens of text, as the library's
// encode(text, add_special_tokens=False) makes them: added tokens in the
// text count as one token each.
func (t *Tokenizer) Count(text string) int {
	if text == "" {
		return 0
	}
	return t.encode(text, false, nil)
}

// AppendIDs appends the token ids of text to dst.
func (t *Tokenizer) AppendIDs(dst []int, text string) []int {
	t.encode(text, false, func(id int32, _ int32) { dst = append(dst, int(id)) })
	return dst
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
	total := t.encode(text, true, func(_ int32, end int32) {
		if len(ends) <= maxTokens {
			ends = append(ends, end)
		}
	})
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
