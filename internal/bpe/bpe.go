package bpe

import (
	"errors"
	"fmt"
	"sync"
	"unicode/utf8"

	"github.com/dlclark/regexp2"
	"github.com/pkoukk/tiktoken-go"
	loader "github.com/pkoukk/tiktoken-go-loader"
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
	name string
	enc  *tiktoken.Tiktoken
	pre  *regexp2.Regexp // the pre-tokenizer, for hostile text only
}

// shared holds the encoders built so far. It is process-wide on purpose: an
// encoder is immutable once built and costs 0.4 s and 24 MB, so building it
// once per Engine would multiply both. tiktoken-go's loader hook is itself a
// package variable, so loading must be serialised anyway.
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
	tiktoken.SetBpeLoader(loader.NewOfflineLoader())
	enc, err := tiktoken.GetEncoding(encoding)
	if err != nil {
		return nil, fmt.Errorf("bpe: loading %s: %w", encoding, err)
	}
	if shared.encs == nil {
		shared.encs = make(map[string]*Tokenizer, 2)
	}
	pre, err := compilePattern(encoding)
	if err != nil {
		return nil, fmt.Errorf("bpe: compiling %s's pre-tokenizer: %w", encoding, err)
	}
	t := &Tokenizer{name: encoding, enc: enc, pre: pre}
	shared.encs[encoding] = t
	return t, nil
}

// Encoding returns the name of the tokenizer's encoding.
func (t *Tokenizer) Encoding() string { return t.name }

// Count returns the number of tokens of text. Special-token text such as
// "<|endoftext|>" is counted as ordinary text, as the model would receive it.
//
// The count is exact unless text holds a pre-tokenizer piece longer than
// MaxPieceBytes (a hostile run such as 1 MiB of one character): such a
// piece counts one token per byte, an over-estimate, so that counting
// never stalls and never under-counts.
func (t *Tokenizer) Count(text string) int {
	if text == "" {
		return 0
	}
	if mayHaveLongPiece(text) {
		return t.boundedCount(text)
	}
	return len(t.enc.EncodeOrdinary(text))
}

// Cut returns the longest prefix of text that ends on a token boundary,
// never inside a UTF-8 character, and counts at most maxTokens tokens.
//
// Inside a piece longer than MaxPieceBytes (see Count) the cut falls on a
// character boundary, each byte counting as a token.
func (t *Tokenizer) Cut(text string, maxTokens int) string {
	if maxTokens <= 0 {
		return ""
	}
	if mayHaveLongPiece(text) {
		return t.boundedCut(text, maxTokens)
	}
	return t.cutSmall(text, maxTokens)
}

// cutSmall is Cut for text without long pieces.
func (t *Tokenizer) cutSmall(text string, maxTokens int) string {
	if maxTokens <= 0 {
		return ""
	}
	toks := t.enc.EncodeOrdinary(text)
	if len(toks) <= maxTokens {
		return text
	}
	for n := maxTokens; n > 0; n-- {
		// Byte-level BPE decodes a token prefix to a byte prefix of text.
		end := len(t.enc.Decode(toks[:n]))
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
// TestLineAdditive checks this on adversarial text.
func (t *Tokenizer) LineAdditive() bool { return true }
