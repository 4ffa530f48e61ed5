// Package tokload loads a tokenizer file of any supported format — a Hugging
// Face tokenizer.json (package internal/hftok) or a tiktoken spec and its
// rank file (package internal/bpe's core) — into a counter.
//
// The counters it returns implement Count, Cut and LineAdditive (when the
// file's pipeline keeps pieces from running across line breaks: see
// hftok.Tokenizer.LineAdditive and, for rank files, bpe's splitter, and the
// tests that check each). The other fast paths of the built-in encodings
// (lower bounds, cut plans) are not claimed, so blocks are counted in full
// and the budget guarantee stays exact.
package tokload

import (
	"fmt"
	"sync"

	"github.com/contextasm/contextasm/internal/bpe"
	"github.com/contextasm/contextasm/internal/hftok"
	"github.com/contextasm/contextasm/internal/tokfile"
)

// Counter counts and cuts text in a file's tokens.
type Counter interface {
	Count(text string) int
	Cut(text string, maxTokens int) string
}

// Tokenizer is a loaded tokenizer file.
type Tokenizer struct {
	// ID is the file's identity, "sha256:" and hex (see package tokfile).
	ID string
	// Kind is the file's format.
	Kind tokfile.Kind
	c    Counter
}

// Count returns the number of tokens of text.
func (t *Tokenizer) Count(text string) int { return t.c.Count(text) }

// Cut returns the longest prefix of text that ends on a token boundary and
// counts at most maxTokens tokens (see the underlying tokenizers).
func (t *Tokenizer) Cut(text string, maxTokens int) string { return t.c.Cut(text, maxTokens) }

// LineAdditive reports whether lines that start cleanly count as their sum
// (see package contextasm/internal/assemble): the assembler then skips counting a
// final text whose lines it counted.
func (t *Tokenizer) LineAdditive() bool {
	la, ok := t.c.(interface{ LineAdditive() bool })
	return ok && la.LineAdditive()
}

// shared holds the tokenizers loaded so far, by identity: a vocabulary costs
// seconds and tens of megabytes to build, and is immutable once built.
var shared struct {
	mu   sync.Mutex
	toks map[string]*Tokenizer
}

// Load returns the tokenizer of the file at path, loading it on first use
// of its identity.
func Load(path string) (*Tokenizer, error) {
	id, err := tokfile.Identity(path)
	if err != nil {
		return nil, err
	}
	return LoadAs(path, id)
}

// LoadAs is Load for a file whose identity the caller computed (a template
// does, to fingerprint it). It fails if the file's identity changed since.
func LoadAs(path, id string) (*Tokenizer, error) {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if t, ok := shared.toks[id]; ok {
		return t, nil
	}
	now, err := tokfile.Identity(path)
	if err != nil {
		return nil, err
	}
	if now != id {
		return nil, fmt.Errorf("tokload: %s changed since its identity was taken (%s, now %s)", path, id, now)
	}
	kind, spec, err := tokfile.Sniff(path)
	if err != nil {
		return nil, err
	}
	t := &Tokenizer{ID: id, Kind: kind}
	switch kind {
	case tokfile.KindHF:
		hf, err := hftok.LoadFile(path)
		if err != nil {
			return nil, err
		}
		t.c = hf
	case tokfile.KindTiktoken:
		data, err := tokfile.ReadFile(spec.RanksPath)
		if err != nil {
			return nil, fmt.Errorf("tokload: %s: %w", path, err)
		}
		ranks, err := bpe.ParseRanks(data, spec.RanksPath)
		if err != nil {
			return nil, err
		}
		bt, err := bpe.FromRanks(id, ranks, spec.Pattern)
		if err != nil {
			return nil, err
		}
		t.c = rankCounter{bt}
	}
	if shared.toks == nil {
		shared.toks = make(map[string]*Tokenizer)
	}
	shared.toks[id] = t
	return t, nil
}

// rankCounter passes on Count, Cut and line additivity of a bpe.Tokenizer
// built from a rank file, and hides its lower bounds and cut plans: those
// are argued and tested for the built-in vocabularies only. Line additivity
// rests on the pre-tokenizer pattern alone (BPE never merges across
// pieces), which a spec shares with a built-in encoding;
// TestRankFileLineAdditive checks it on Llama 3's vocabulary.
type rankCounter struct{ t *bpe.Tokenizer }

func (r rankCounter) Count(text string) int                 { return r.t.Count(text) }
func (r rankCounter) Cut(text string, maxTokens int) string { return r.t.Cut(text, maxTokens) }
func (r rankCounter) LineAdditive() bool                    { return r.t.LineAdditive() }
