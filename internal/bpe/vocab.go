package bpe

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"strconv"

	"github.com/pkoukk/tiktoken-go-loader/assets"
)

// vocab is an encoding's vocabulary: each token's bytes and merge rank.
type vocab struct {
	ranks  map[string]int32
	maxLen int // bytes of the longest token
}

// noRank is the rank of a byte string that is not a token.
const noRank = int32(1<<31 - 1)

// loadVocab reads an encoding's vocabulary from the BPE file embedded in
// github.com/pkoukk/tiktoken-go-loader: one token a line, its bytes in
// base64, a space, its rank.
func loadVocab(encoding string) (*vocab, error) {
	data, err := assets.Assets.ReadFile(encoding + ".tiktoken")
	if err != nil {
		return nil, err
	}
	lines := bytes.Count(data, []byte{'\n'})
	v := &vocab{ranks: make(map[string]int32, lines)}
	// All tokens' bytes live in one string; the map's keys are slices of it.
	arena := make([]byte, 0, len(data)*3/4)
	type entry struct{ from, to, rank int32 }
	entries := make([]entry, 0, lines)
	for n := 1; len(data) > 0; n++ {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		if len(line) == 0 {
			continue
		}
		sp := bytes.IndexByte(line, ' ')
		if sp < 0 {
			return nil, fmt.Errorf("%s.tiktoken line %d: no rank", encoding, n)
		}
		from := len(arena)
		arena, err = base64.StdEncoding.AppendDecode(arena, line[:sp])
		if err != nil {
			return nil, fmt.Errorf("%s.tiktoken line %d: %w", encoding, n, err)
		}
		rank, err := strconv.ParseInt(string(line[sp+1:]), 10, 32)
		if err != nil || rank < 0 || rank == int64(noRank) {
			return nil, fmt.Errorf("%s.tiktoken line %d: bad rank %q", encoding, n, line[sp+1:])
		}
		entries = append(entries, entry{int32(from), int32(len(arena)), int32(rank)})
	}
	all := string(arena)
	for _, e := range entries {
		tok := all[e.from:e.to]
		v.ranks[tok] = e.rank
		v.maxLen = max(v.maxLen, len(tok))
	}
	// Byte-level BPE starts from single bytes: each must be a token.
	for b := range 256 {
		if _, ok := v.ranks[string([]byte{byte(b)})]; !ok {
			return nil, fmt.Errorf("%s.tiktoken: no token for byte %#x", encoding, b)
		}
	}
	return v, nil
}

// rank returns the rank of s, noRank when s is not a token.
func (v *vocab) rank(s string) int32 {
	if len(s) > v.maxLen {
		return noRank
	}
	if r, ok := v.ranks[s]; ok {
		return r
	}
	return noRank
}
