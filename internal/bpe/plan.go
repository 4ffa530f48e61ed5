package bpe

import (
	"unicode"
	"unicode/utf8"
)

// CutPlan holds where a text's pre-tokenizer pieces end and how many tokens
// come before each end, so that the text can be cut to any number of
// tokens without tokenizing it again. A block that is cut partially is cut
// anew whenever the room left in its section moves (a new turn above it),
// so the engine keeps a plan per content rather than a cut per room.
type CutPlan struct {
	ends   []int32 // byte offsets where a cut may end (after a piece)
	tokens []int32 // tokens of the text up to each of those offsets
	total  int
}

// PlanCuts makes the cut plan of text. It reports false for text with a
// stretch Count counts bytewise (a piece longer than MaxPieceBytes, or a
// character Go's Unicode tables do not know) and for invalid UTF-8, which
// Cut handles.
func (t *Tokenizer) PlanCuts(text string) (CutPlan, bool) {
	var p CutPlan
	if mayHaveLongPiece(text) || t.sp.check(text) != textPlain {
		return p, false
	}
	end := 0
	ok := t.pieces(text, func(piece string, long bool) bool {
		if long {
			return false
		}
		end += len(piece)
		p.total += t.voc.count(piece)
		// Not after white space: a white-space piece is split by what
		// follows it (`\s+(?!\S)` looks ahead), so a prefix ending there
		// can count differently. After any other piece it counts exactly.
		if last, _ := utf8.DecodeLastRuneInString(piece); !unicode.IsSpace(last) {
			p.ends = append(p.ends, int32(end))
			p.tokens = append(p.tokens, int32(p.total))
		}
		return true
	})
	if !ok {
		return CutPlan{}, false
	}
	return p, true
}

// Tokens returns the text's token count.
func (p CutPlan) Tokens() int { return p.total }

// Cut returns the longest prefix of text that ends where a pre-tokenizer
// piece other than white space ends (after a word, a number group or a run
// of punctuation) and counts at most maxTokens tokens; the whole text when
// it fits. Since BPE never merges across pieces, the prefix counts exactly
// the tokens before its end. text must be the text the plan was made of.
func (p CutPlan) Cut(text string, maxTokens int) string {
	_, end := p.cut(maxTokens)
	if maxTokens >= p.total {
		return text
	}
	return text[:end]
}

// cut returns the index of the last cut point that fits maxTokens (-1 for
// none) and its byte offset.
func (p CutPlan) cut(maxTokens int) (int, int) {
	lo, hi := 0, len(p.tokens) // the first cut point with more tokens than maxTokens
	for lo < hi {
		mid := (lo + hi) / 2
		if int(p.tokens[mid]) <= maxTokens {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	if lo == 0 {
		return -1, 0
	}
	return lo - 1, int(p.ends[lo-1])
}

// CutPlanned is Cut for a planned text: whole pieces up to the last cut
// point that fits, from the plan, then as much of what follows (up to the
// next cut point) as fits, cut at a token boundary by tokenizing only that
// stretch. What follows a cut point tokenizes the same alone as in place
// (pieces never span a cut point, and the pre-tokenizer does not look
// behind), so the result counts the planned tokens plus the stretch's.
func (t *Tokenizer) CutPlanned(p CutPlan, text string, maxTokens int) string {
	if maxTokens <= 0 {
		return ""
	}
	if maxTokens >= p.total {
		return text
	}
	i, end := p.cut(maxTokens)
	used := 0
	if i >= 0 {
		used = int(p.tokens[i])
	}
	next := len(text)
	if i+1 < len(p.ends) {
		next = int(p.ends[i+1])
	}
	return text[:end] + t.cutSmall(text[end:next], maxTokens-used)
}
