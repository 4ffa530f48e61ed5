package contextasm_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/contextasm/contextasm/contextasm"
	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/internal/bpe"
	"github.com/contextasm/contextasm/template"
)

// The demo's request (copied from cmd/contextasm/demo into testdata): a loan
// agent in session sess-4711 with user u-ana, at a fixed instant.
var demoNow = time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)

func demoRequest(tpl *template.Template) contextasm.Request {
	return contextasm.Request{
		Template:  tpl,
		Now:       demoNow,
		SessionID: "sess-4711",
		UserID:    "u-ana",
		Roles:     []string{"loan-agent"},
	}
}

// loadDemo reads the demo template and declarations from testdata.
func loadDemo(t testing.TB) (*template.Template, []declare.Declaration) {
	t.Helper()
	tpl, err := template.LoadFile("testdata/template.json")
	if err != nil {
		t.Fatal(err)
	}
	decls, err := declare.LoadFile("testdata/memories.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	return tpl, decls
}

func parseTemplate(t testing.TB, src string) *template.Template {
	t.Helper()
	tpl, err := template.Parse([]byte(src), t.Name()+".json")
	if err != nil {
		t.Fatal(err)
	}
	return tpl
}

// newEngine returns an Engine holding decls. Every chat body it assembles
// is held to its API's rules (Config.CheckBodies): a test that makes an
// invalid one fails with the rule.
func newEngine(t testing.TB, cfg contextasm.Config, decls ...declare.Declaration) *contextasm.Engine {
	t.Helper()
	cfg.CheckBodies = true
	eng, err := contextasm.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	if len(decls) > 0 {
		if err := eng.Declare(decls...); err != nil {
			t.Fatal(err)
		}
	}
	return eng
}

func assemble(t testing.TB, eng *contextasm.Engine, req contextasm.Request) *contextasm.Result {
	t.Helper()
	res, err := eng.Assemble(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// dumpJSON is the result's JSON dump, the byte-level view hosts store.
func dumpJSON(t testing.TB, res *contextasm.Result) string {
	t.Helper()
	b, err := json.Marshal(res.Dump())
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// dumpWithoutPrefix is dumpJSON without the prefix, which compares the
// result with the previous one of its conversation.
func dumpWithoutPrefix(t testing.TB, res *contextasm.Result) string {
	t.Helper()
	d := res.Dump()
	d.Prefix = nil
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// global returns a global declaration with defaults.
func global(id string, mt declare.MemoryType, content string) declare.Declaration {
	return declare.Declaration{RequestID: id, MemoryType: mt, Scope: declare.ScopeGlobal, Content: content}
}

func ptr[T any](v T) *T { return &v }

func o200k(t testing.TB) *bpe.Tokenizer {
	t.Helper()
	tok, err := bpe.Load(bpe.O200kBase)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// countingCounter wraps the real tokenizer and records every call, so tests
// can see what the engine's cache lets through.
type countingCounter struct {
	tok *bpe.Tokenizer

	mu     sync.Mutex
	counts []string // texts passed to Count, in call order
	cuts   int
}

func newCountingCounter(t testing.TB) *countingCounter {
	return &countingCounter{tok: o200k(t)}
}

func (c *countingCounter) Count(text string) int {
	c.mu.Lock()
	c.counts = append(c.counts, text)
	c.mu.Unlock()
	return c.tok.Count(text)
}

func (c *countingCounter) Cut(text string, maxTokens int) string {
	c.mu.Lock()
	c.cuts++
	c.mu.Unlock()
	return c.tok.Cut(text, maxTokens)
}

// LineAdditive forwards the real tokenizer's promise, so the engine may
// skip counting final texts as it does with the built-in tokenizer.
func (c *countingCounter) LineAdditive() bool { return c.tok.LineAdditive() }

// take returns the texts counted and the number of cuts since the last
// take, and resets both.
func (c *countingCounter) take() (counted []string, cuts int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	counted, cuts = c.counts, c.cuts
	c.counts, c.cuts = nil, 0
	return counted, cuts
}

// countedContaining reports the counted texts that contain s.
func countedContaining(counted []string, s string) []string {
	var out []string
	for _, text := range counted {
		if strings.Contains(text, s) {
			out = append(out, text)
		}
	}
	return out
}
