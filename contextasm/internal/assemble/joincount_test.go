package assemble_test

import (
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/contextasm/contextasm/contextasm/internal/assemble"
	"github.com/contextasm/contextasm/internal/bpe"
	"github.com/contextasm/contextasm/truncate"
)

// noJoinDelta is the real tokenizer with every promise but JoinDelta.
type noJoinDelta struct{ t *bpe.Tokenizer }

func (c noJoinDelta) Count(text string) int         { return c.t.Count(text) }
func (c noJoinDelta) Cut(text string, n int) string { return c.t.Cut(text, n) }
func (c noJoinDelta) LineAdditive() bool            { return c.t.LineAdditive() }
func (c noJoinDelta) LowerBounded() bool            { return c.t.LowerBounded() }

// The final count from the parts' counts corrected at the joins (a
// JoinCounter, as the built-in tokenizers are) is the count of the whole
// text: random workloads assembled with the tokenizer itself and with
// JoinDelta hidden, which counts the whole text, give the same output,
// byte for byte and token for token.
func TestJoinDeltaFinalCount(t *testing.T) {
	tok := realTokenizer(t)
	if _, ok := any(tok).(truncate.JoinCounter); !ok {
		t.Fatal("fixture: the real tokenizer is not a JoinCounter")
	}
	rng := rand.New(rand.NewPCG(20261130, 16))
	joined := 0
	for range 200 {
		w := randomWorkload(t, rng)
		var a, b assemble.Assembler
		out, err := a.Assemble(w.tpl, w.blocks, propertyRequest, tok)
		want, werr := b.Assemble(w.tpl, w.blocks, propertyRequest, noJoinDelta{tok})
		if (err == nil) != (werr == nil) {
			t.Fatalf("errors differ: %v, %v", err, werr)
		}
		if err != nil {
			continue
		}
		if out.Text != want.Text || out.TotalTokens != want.TotalTokens || !reflect.DeepEqual(out.Sections, want.Sections) {
			t.Fatalf("with JoinDelta: %d tokens, counting the text: %d\ntext:\n%s\nwant:\n%s", out.TotalTokens, want.TotalTokens, out.Text, want.Text)
		}
		if n := tok.Count(out.Text); n != out.TotalTokens {
			t.Fatalf("TotalTokens %d, the text counts %d", out.TotalTokens, n)
		}
		for _, s := range out.Sections {
			for _, br := range s.Blocks {
				if br.Length > 0 && !truncate.StartsLineCleanly(out.Text[br.Offset:br.Offset+br.Length]) {
					joined++
				}
			}
		}
	}
	if joined < 50 {
		t.Errorf("only %d blocks that do not start their line cleanly: the workloads do not test the joins", joined)
	}
}
