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
	// pairs holds the rank of every two-byte string (noRank if it is not a
	// token), indexed by the bytes: the first round of every merge looks
	// up each adjacent pair, the bulk of all lookups.
	pairs []int32
}

// noRank is the rank of a byte string that is not a token.
const noRank = int32(1<<31 - 1)

// loadVocab reads an encoding's vocabulary from the BPE file embedded in
// github.com/pkoukk/tiktoken-go-loader.
func loadVocab(encoding string) (*vocab, error) {
	data, err := assets.Assets.ReadFile(encoding + ".tiktoken")
	if err != nil {
		return nil, err
	}
	return parseVocab(data, encoding+".tiktoken")
}

// parseVocab reads a tiktoken-format rank file: one token a line, its
// bytes in base64, a space, its rank. name is used in errors, which give
// the line.
func parseVocab(data []byte, name string) (*vocab, error) {
	lines := bytes.Count(data, []byte{'\n'}) + 1
	// All tokens' bytes live in one string; the map's keys are slices of it.
	arena := make([]byte, 0, len(data)*3/4)
	type entry struct{ from, to, rank, line int32 }
	entries := make([]entry, 0, lines)
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
			return nil, &RanksError{File: name, Line: n, Message: `want "<base64 token> <rank>"`}
		}
		from := len(arena)
		var err error
		if arena, err = base64.StdEncoding.AppendDecode(arena, tok); err != nil {
			return nil, &RanksError{File: name, Line: n, Message: "token: " + err.Error()}
		}
		r, err := strconv.ParseInt(string(rank), 10, 32)
		if err != nil || r < 0 || r >= int64(noRank) {
			return nil, &RanksError{File: name, Line: n, Message: fmt.Sprintf("rank %q is not a rank", rank)}
		}
		entries = append(entries, entry{int32(from), int32(len(arena)), int32(r), int32(n)})
	}
	all := string(arena)
	v := &vocab{ranks: make(map[string]int32, len(entries))}
	for _, e := range entries {
		tok := all[e.from:e.to]
		if _, dup := v.ranks[tok]; dup {
			return nil, &RanksError{File: name, Line: int(e.line), Message: fmt.Sprintf("token %q listed twice", tok)}
		}
		v.ranks[tok] = e.rank
		v.maxLen = max(v.maxLen, len(tok))
	}
	v.indexPairs()
	return v, nil
}

// byteLevel reports an error unless every byte is a token: byte-level BPE
// starts from one token per byte.
func (v *vocab) byteLevel() error {
	for b := range 256 {
		if _, ok := v.ranks[string([]byte{byte(b)})]; !ok {
			return fmt.Errorf("byte 0x%02x has no token; a byte-level vocabulary needs all 256", b)
		}
	}
	return nil
}

// indexPairs fills pairs from ranks.
func (v *vocab) indexPairs() {
	v.pairs = make([]int32, 1<<16)
	for i := range v.pairs {
		v.pairs[i] = noRank
	}
	for tok, r := range v.ranks {
		if len(tok) == 2 {
			v.pairs[int(tok[0])<<8|int(tok[1])] = r
		}
	}
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
