package bpe

import (
	"testing"

	"github.com/pkoukk/tiktoken-go"
	loader "github.com/pkoukk/tiktoken-go-loader"
)

// An independent implementation to test against on every run:
// github.com/pkoukk/tiktoken-go, a port of tiktoken on the regexp2 engine.
// It differs from tiktoken where this package had to depart from it (see
// split.go): regexp2 does not fold ſ into s, and its classes are Go's.
// So it is compared only on text without ſ and with characters Go's
// tables know; the reference itself is compared in reference_test.go.

// The encodings' patterns as tiktoken defines them.
const (
	o200kPattern = `[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?` +
		`|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?` +
		`|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	cl100kPattern = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
)

type oracle struct {
	enc *tiktoken.Tiktoken
}

var oracles = map[string]*oracle{}

func loadOracle(t testing.TB, encoding string) *oracle {
	t.Helper()
	if o, ok := oracles[encoding]; ok {
		return o
	}
	tiktoken.SetBpeLoader(loader.NewOfflineLoader())
	enc, err := tiktoken.GetEncoding(encoding)
	if err != nil {
		t.Fatal(err)
	}
	o := &oracle{enc: enc}
	oracles[encoding] = o
	return o
}

// tokenLens returns the byte lengths of text's tokens.
func (o *oracle) tokenLens(text string) []int {
	var out []int
	for _, id := range o.enc.EncodeOrdinary(text) {
		out = append(out, len(o.enc.Decode([]int{id})))
	}
	return out
}
