package bpe

import (
	"errors"
	"fmt"
	"sync"
	"unicode/utf8"
)

// Encoding names.
const (
	O200kBase  = "o200k_base"
	CL100kBase = "cl100k_base"
)

// ErrUnknownEncoding is returned by [Load] for an encoding it does not know.
var ErrUnknownEncoding = errors.New("bpe: unknown encoding")

// Tokenizer counts and cuts text in one encoding. It is safe for concurrent
// use.
type Tokenizer struct {
	name    string
	voc     *vocab
	sp      splitter
	builtin bool // an encoding Load knows, not a rank file
}

// shared holds the tokenizers built so far. It is process-wide on purpose:
// a vocabulary is immutable once built and costs tens of milliseconds and
// about 20 MB, so building it once per Engine would multiply both.
var shared struct {
	mu   sync.Mutex
	encs map[string]*Tokenizer
}

// Load returns the tokenizer of the named encoding, building it on first use.
func Load(encoding string) (*Tokenizer, error) {
	if encoding != O200kBase && encoding != CL100kBase {
		return nil, fmt.Errorf("%w %q (want %s or %s)", ErrUnknownEncoding, encoding, O200kBase, CL100kBase)
	}
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if t, ok := shared.encs[encoding]; ok {
		return t, nil
	}
	voc, err := loadVocab(encoding)
	if err != nil {
		return nil, fmt.Errorf("bpe: loading %s: %w", encoding, err)
	}
	if err := voc.byteLevel(); err != nil {
		return nil, fmt.Errorf("bpe: %s: %w", encoding, err)
	}
	if shared.encs == nil {
		shared.encs = make(map[string]*Tokenizer, 2)
	}
	t := &Tokenizer{name: encoding, voc: voc, sp: splitter{cls: classes(), o200k: encoding == O200kBase}, builtin: true}
	shared.encs[encoding] = t
	return t, nil
}

// Encoding returns the name of the tokenizer's encoding.
func (t *Tokenizer) Encoding() string { return t.name }

// Count returns the number of tokens of text. Special-token text such as
// "<|endoftext|>" is counted as ordinary text, as the model would receive it.
//
// The count is never below what OpenAI's tokenizer (tiktoken) counts, and
// equal to it except in two cases, both over-estimates that keep counting
// fast and safe:
//
//   - a pre-tokenizer piece longer than MaxPieceBytes (a hostile run such
//     as 1 MiB of one character) counts one token per byte, so that
//     counting never stalls;
//   - a stretch holding a character that Go's Unicode tables (version 15.0)
//     do not know, and a newer Unicode may have made a letter or a digit,
//     counts one token per byte: the stretch from the last certain piece
//     boundary before the character to the first after it, in practice
//     the word or line around it (see countUnknown).
func (t *Tokenizer) Count(text string) int {
	if text == "" {
		return 0
	}
	switch t.sp.check(text) {
	case textInvalid:
		// tiktoken sees characters: an invalid byte is U+FFFD.
		return t.Count(string([]rune(text)))
	case textUnknown:
		n := 0
		t.units(text, func(u string, bytewise bool) bool {
			n += t.unitTokens(u, bytewise)
			return true
		})
		return n
	}
	n := 0
	for i := 0; i < len(text); {
		e := t.sp.next(text, i)
		n += t.pieceTokens(text[i:e])
		i = e
	}
	return n
}

// pieceTokens counts one piece, bytewise past MaxPieceBytes.
func (t *Tokenizer) pieceTokens(p string) int {
	if len(p) > MaxPieceBytes {
		return len(p)
	}
	return t.voc.count(p)
}

func (t *Tokenizer) unitTokens(u string, bytewise bool) int {
	if bytewise {
		return len(u)
	}
	return t.voc.count(u)
}

// Cut returns the longest prefix of text that ends on a token boundary,
// never inside a UTF-8 character, and counts at most maxTokens tokens.
//
// Inside a stretch that Count counts one token per byte (see Count) the
// cut falls on a character boundary, each byte counting as a token.
func (t *Tokenizer) Cut(text string, maxTokens int) string {
	if maxTokens <= 0 {
		return ""
	}
	switch t.sp.check(text) {
	case textInvalid:
		return cutRunes(text, t.Cut(string([]rune(text)), maxTokens))
	case textUnknown:
		return t.boundedCut(text, maxTokens)
	}
	if mayHaveLongPiece(text) {
		return t.boundedCut(text, maxTokens)
	}
	return t.cutSmall(text, maxTokens)
}

// cutRunes returns the prefix of text with as many characters (an invalid
// byte counting as one) as sanitized, a prefix of string([]rune(text)).
func cutRunes(text, sanitized string) string {
	n := utf8.RuneCountInString(sanitized)
	i := 0
	for ; n > 0 && i < len(text); n-- {
		_, size := utf8.DecodeRuneInString(text[i:])
		i += size
	}
	return text[:i]
}

// cutSmall is Cut for valid text whose characters Go's tables all know.
func (t *Tokenizer) cutSmall(text string, maxTokens int) string {
	if maxTokens <= 0 {
		return ""
	}
	var ends []int32
	for i := 0; i < len(text); {
		e := t.sp.next(text, i)
		if e-i > MaxPieceBytes {
			return t.boundedCut(text, maxTokens)
		}
		from := len(ends)
		ends = t.voc.appendEnds(ends, text[i:e])
		for k := from; k < len(ends); k++ {
			ends[k] += int32(i)
		}
		i = e
	}
	if len(ends) <= maxTokens {
		return text
	}
	for n := maxTokens; n > 0; n-- {
		end := int(ends[n-1])
		for end > 0 && !utf8.RuneStart(text[end]) {
			end-- // back off to the start of the character the boundary split
		}
		prefix := text[:end]
		// Re-tokenising a prefix can differ at its tail; make sure it fits.
		if t.Count(prefix) <= maxTokens {
			return prefix
		}
	}
	return ""
}

// LineAdditive reports true: a text made of lines, each counted with its
// newline, counts as the sum of its lines whenever every line after the
// first starts with a character that is neither white space nor '/'.
//
// Why: both encodings split text into pieces with a regular expression
// before BPE, and BPE never merges across pieces. No alternative of their
// patterns can start a piece with a newline and continue into a letter,
// digit or punctuation; a newline is only ever the end of a piece (a run of
// white space ending in newlines, or punctuation followed by newlines — and,
// in o200k_base, slashes, hence the '/' exception). So the piece boundaries
// after each such newline are the same in the whole text as in its lines.
// The over-estimates of Count keep this: such a boundary also ends the
// stretches they count bytewise. TestLineAdditive checks this on
// adversarial text.
func (t *Tokenizer) LineAdditive() bool { return true }
