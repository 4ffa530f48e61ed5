package bpe

import (
	"errors"
	"fmt"
	"sync"
	"unicode/utf8"

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
	t := &Tokenizer{name: encoding, enc: enc}
	shared.encs[encoding] = t
	return t, nil
}

// Encoding returns the name of the tokenizer's encoding.
func (t *Tokenizer) Encoding() string { return t.name }

// Count returns the number of tokens of text. Special-token text such as
// "<|endoftext|>" is counted as ordinary text, as the model would receive it.
func (t *Tokenizer) Count(text string) int {
	if text == "" {
		return 0
	}
	return len(t.enc.EncodeOrdinary(text))
}

// Cut returns the longest prefix of text that ends on a token boundary,
// never inside a UTF-8 character, and counts at most maxTokens tokens.
func (t *Tokenizer) Cut(text string, maxTokens int) string {
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
