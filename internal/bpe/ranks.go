package bpe

import (
	"errors"
	"fmt"
	"strconv"
)

// ErrInvalidRanks is wrapped by the errors about a malformed rank file.
var ErrInvalidRanks = errors.New("bpe: invalid rank file")

// RanksError is a problem of a rank file: its name, the line (1-based) and
// what is wrong. It wraps ErrInvalidRanks.
type RanksError struct {
	File    string
	Line    int
	Message string
}

// Error returns "bpe: FILE:LINE: message".
func (e *RanksError) Error() string {
	return "bpe: " + e.File + ":" + strconv.Itoa(e.Line) + ": " + e.Message
}

// Unwrap returns ErrInvalidRanks.
func (e *RanksError) Unwrap() error { return ErrInvalidRanks }

// ParseRanks reads a tiktoken-format rank file (Llama 3's tokenizer.model,
// an OpenAI .tiktoken file): one token a line, its bytes in base64, a
// space, its rank. name is used in errors, which give the line.
func ParseRanks(data []byte, name string) (map[string]int, error) {
	v, err := parseVocab(data, name)
	if err != nil {
		return nil, err
	}
	ranks := make(map[string]int, len(v.ranks))
	for tok, r := range v.ranks {
		ranks[tok] = int(r)
	}
	return ranks, nil
}

// FromRanks returns a tokenizer of a tiktoken-format vocabulary (ranks, as
// ParseRanks reads it) pre-tokenized with the pattern of a built-in
// encoding, O200kBase or CL100kBase (Llama 3's pattern is cl100k_base's).
// Unlike Load's, the tokenizer is not shared: the caller keeps it. name is
// what Encoding returns.
func FromRanks(name string, ranks map[string]int, pattern string) (*Tokenizer, error) {
	if pattern != O200kBase && pattern != CL100kBase {
		return nil, fmt.Errorf("%w: pattern %q (want %s or %s)", ErrUnknownEncoding, pattern, O200kBase, CL100kBase)
	}
	v := &vocab{ranks: make(map[string]int32, len(ranks))}
	for tok, r := range ranks {
		if r < 0 || r >= int(noRank) {
			return nil, fmt.Errorf("bpe: %s: token %q has rank %d, out of range", name, tok, r)
		}
		v.ranks[tok] = int32(r)
		v.maxLen = max(v.maxLen, len(tok))
	}
	if err := v.byteLevel(); err != nil {
		return nil, fmt.Errorf("bpe: %s: %w", name, err)
	}
	v.indexPairs()
	return &Tokenizer{name: name, voc: v, sp: splitter{cls: classes(), o200k: pattern == O200kBase}}, nil
}
