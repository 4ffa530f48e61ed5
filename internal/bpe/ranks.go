package bpe

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"strconv"

	"github.com/dlclark/regexp2"
	"github.com/pkoukk/tiktoken-go"
)

// ParseRanks reads a tiktoken-format rank file (Llama 3's tokenizer.model,
// an OpenAI .tiktoken file): one token a line, its bytes in base64, a
// space, its rank. name is used in errors, which give the line.
func ParseRanks(data []byte, name string) (map[string]int, error) {
	ranks := make(map[string]int, bytes.Count(data, []byte{'\n'})+1)
	for n := 1; len(data) > 0; n++ {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		line = bytes.TrimRight(line, "\r")
		if len(line) == 0 {
			continue
		}
		tok, rank, ok := bytes.Cut(line, []byte{' '})
		if !ok {
			return nil, fmt.Errorf("bpe: %s:%d: want \"<base64 token> <rank>\"", name, n)
		}
		b, err := base64.StdEncoding.DecodeString(string(tok))
		if err != nil {
			return nil, fmt.Errorf("bpe: %s:%d: token: %v", name, n, err)
		}
		r, err := strconv.Atoi(string(rank))
		if err != nil || r < 0 {
			return nil, fmt.Errorf("bpe: %s:%d: rank %q is not a rank", name, n, rank)
		}
		if _, dup := ranks[string(b)]; dup {
			return nil, fmt.Errorf("bpe: %s:%d: token %q listed twice", name, n, b)
		}
		ranks[string(b)] = r
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
	for b := range 256 {
		// Byte-level BPE starts from one token per byte.
		if _, ok := ranks[string([]byte{byte(b)})]; !ok {
			return nil, fmt.Errorf("bpe: %s: byte 0x%02x has no token; a byte-level vocabulary needs all 256", name, b)
		}
	}
	pat := o200kPattern
	if pattern == CL100kBase {
		pat = cl100kPattern
	}
	core, err := tiktoken.NewCoreBPE(ranks, map[string]int{}, pat)
	if err != nil {
		return nil, fmt.Errorf("bpe: %s: %w", name, err)
	}
	enc := tiktoken.NewTiktoken(core, &tiktoken.Encoding{Name: name, PatStr: pat, MergeableRanks: ranks, SpecialTokens: map[string]int{}}, map[string]any{})
	pre, err := regexp2.Compile(pat, regexp2.None)
	if err != nil {
		return nil, fmt.Errorf("bpe: %s: %w", name, err)
	}
	return &Tokenizer{name: name, enc: enc, pre: pre}, nil
}
