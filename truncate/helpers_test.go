package truncate_test

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/internal/bpe"
	"github.com/contextasm/contextasm/template"
	"github.com/contextasm/contextasm/truncate"
)

// now is the instant every assembly in these tests is judged at.
var now = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

// realTokenizer returns the o200k_base tokenizer the engine uses.
func realTokenizer(t testing.TB) *bpe.Tokenizer {
	t.Helper()
	tok, err := bpe.Load(bpe.O200kBase)
	if err != nil {
		t.Fatalf("bpe.Load: %v", err)
	}
	return tok
}

// mustParse compiles a template from a JSON literal.
func mustParse(t testing.TB, js string) *template.Template {
	t.Helper()
	tpl, err := template.Parse([]byte(js), t.Name()+".json")
	if err != nil {
		t.Fatalf("template.Parse: %v\n%s", err, js)
	}
	return tpl
}

// block returns an eligible, global, assistant-facing block.
func block(id string, typ declare.MemoryType, content string) truncate.Block {
	return truncate.Block{ID: id, Type: typ, Content: content, Scope: declare.ScopeGlobal, ForAssistant: true, Weight: 0.5, Trust: 0.5}
}

// weighted returns block with a given semantic weight, which sets its rank
// among blocks that differ in nothing else.
func weighted(id string, typ declare.MemoryType, content string, w float64) truncate.Block {
	b := block(id, typ, content)
	b.Weight = w
	return b
}

// sectionIndex returns the file-order index of the section named name.
func sectionIndex(t testing.TB, tpl *template.Template, name string) int {
	t.Helper()
	for i := range tpl.NumSections() {
		if tpl.Section(i).Name() == name {
			return i
		}
	}
	t.Fatalf("no section %q", name)
	return -1
}

// render renders b as section name of tpl would, independently of the
// Assembler.
func render(t testing.TB, tpl *template.Template, name string, b truncate.Block) string {
	t.Helper()
	return renderContent(tpl.Section(sectionIndex(t, tpl, name)), b, b.Content)
}

func renderContent(sec *template.Section, b truncate.Block, content string) string {
	out, _ := sec.AppendRender(nil, template.Fields{Content: content, RequestID: b.ID, MemoryType: string(b.Type), SourceID: b.SourceID})
	return string(out)
}

// assemble runs a fresh Assembler with the real tokenizer and fails the
// test on error.
func assemble(t testing.TB, tpl *template.Template, blocks []truncate.Block, req truncate.Request) *truncate.Output {
	t.Helper()
	if req.Now.IsZero() {
		req.Now = now
	}
	var a truncate.Assembler
	out, err := a.Assemble(tpl, blocks, req, realTokenizer(t))
	if err != nil {
		t.Fatalf("Assemble: %v", err)
	}
	return out
}

// result returns the BlockResult of id, or false when id is in no section.
func result(out *truncate.Output, id string) (truncate.SectionResult, truncate.BlockResult, bool) {
	for _, s := range out.Sections {
		for _, b := range s.Blocks {
			if b.RequestID == id {
				return s, b, true
			}
		}
	}
	return truncate.SectionResult{}, truncate.BlockResult{}, false
}

// eventsOf returns the events about id, in order.
func eventsOf(out *truncate.Output, id string) []truncate.Event {
	var evs []truncate.Event
	for _, e := range out.Events {
		if e.RequestID == id {
			evs = append(evs, e)
		}
	}
	return evs
}

// statuses maps each block in out's sections to its status name.
func statuses(out *truncate.Output) map[string]string {
	m := map[string]string{}
	for _, s := range out.Sections {
		for _, b := range s.Blocks {
			m[b.RequestID] = b.Status.String()
		}
	}
	return m
}

// countingCounter wraps a Counter and records every text it is asked to
// count or cut. It is safe for concurrent use.
type countingCounter struct {
	truncate.Counter
	mu      sync.Mutex
	counted []string
	cut     []string
}

func (c *countingCounter) Count(text string) int {
	c.mu.Lock()
	c.counted = append(c.counted, text)
	c.mu.Unlock()
	return c.Counter.Count(text)
}

func (c *countingCounter) Cut(text string, maxTokens int) string {
	c.mu.Lock()
	c.cut = append(c.cut, text)
	c.mu.Unlock()
	return c.Counter.Cut(text, maxTokens)
}

// saw reports whether any text counted or cut contains sub.
func (c *countingCounter) saw(sub string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, s := range c.counted {
		if strings.Contains(s, sub) {
			return true
		}
	}
	for _, s := range c.cut {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// joinTax is a fault-injecting Counter: every occurrence of marker (the
// join between two rendered blocks) costs extra tokens on top of what the
// real tokenizer says. Blocks, separators and the header counted alone
// are unaffected, so the sum of parts underestimates the final text, which
// is what the Assembler's final-text check exists for.
type joinTax struct {
	truncate.Counter
	marker string
	extra  int
}

func (j joinTax) Count(text string) int {
	return j.Counter.Count(text) + j.extra*strings.Count(text, j.marker)
}

// memoCounter caches a Counter's counts; the tokenizer is a pure function,
// so the answers are the real ones, only faster (the engine caches too).
type memoCounter struct {
	truncate.Counter
	counts map[string]int
}

func (m *memoCounter) Count(text string) int {
	if n, ok := m.counts[text]; ok {
		return n
	}
	n := m.Counter.Count(text)
	m.counts[text] = n
	return n
}
