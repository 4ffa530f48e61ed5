package assemble_test

import (
	"crypto/sha256"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/contextasm/contextasm/contextasm/internal/assemble"
	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/internal/bpe"
	"github.com/contextasm/contextasm/outcome"
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
func block(id string, typ declare.MemoryType, content string) assemble.Block {
	return assemble.Block{ID: id, Type: typ, Content: content, Scope: declare.ScopeGlobal, ForAssistant: true, Weight: 0.5, Trust: 0.5}
}

// weighted returns block with a given semantic weight, which sets its rank
// among blocks that differ in nothing else.
func weighted(id string, typ declare.MemoryType, content string, w float64) assemble.Block {
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
func render(t testing.TB, tpl *template.Template, name string, b assemble.Block) string {
	t.Helper()
	return renderContent(tpl.Section(sectionIndex(t, tpl, name)), b, b.Content)
}

func renderContent(sec *template.Section, b assemble.Block, content string) string {
	out, _ := sec.AppendRender(nil, template.Fields{Content: content, RequestID: b.ID, MemoryType: string(b.Type), SourceID: b.SourceID})
	return string(out)
}

// mustAssemble runs a fresh Assembler with the real tokenizer and fails the
// test on error.
func mustAssemble(t testing.TB, tpl *template.Template, blocks []assemble.Block, req assemble.Request) *assemble.Output {
	t.Helper()
	if req.Now.IsZero() {
		req.Now = now
	}
	var a assemble.Assembler
	out, err := a.Assemble(tpl, blocks, req, realTokenizer(t))
	if err != nil {
		t.Fatalf("Assemble: %v", err)
	}
	return out
}

// result returns the BlockResult of id, or false when id is in no section.
func result(out *assemble.Output, id string) (outcome.SectionResult, outcome.BlockResult, bool) {
	for _, s := range out.Sections {
		for _, b := range s.Blocks {
			if b.RequestID == id {
				return s, b, true
			}
		}
	}
	return outcome.SectionResult{}, outcome.BlockResult{}, false
}

// eventsOf returns the events about id, in order.
func eventsOf(out *assemble.Output, id string) []outcome.Event {
	var evs []outcome.Event
	for _, e := range out.Events {
		if e.RequestID == id {
			evs = append(evs, e)
		}
	}
	return evs
}

// statuses maps each block in out's sections to its status name.
func statuses(out *assemble.Output) map[string]string {
	m := map[string]string{}
	for _, s := range out.Sections {
		for _, b := range s.Blocks {
			m[b.RequestID] = b.Status.String()
		}
	}
	return m
}

// additiveTokenizer returns the real tokenizer as a line-additive Counter:
// itself when it says it is one (internal/bpe's Tokenizer does), else
// wrapped in lineAdditive.
func additiveTokenizer(t testing.TB) truncate.Counter {
	t.Helper()
	tok := realTokenizer(t)
	if isAdditive(tok) {
		return tok
	}
	return lineAdditive{tok}
}

// isAdditive reports whether the Assembler takes c for a line-additive
// counter.
func isAdditive(c truncate.Counter) bool {
	la, ok := c.(truncate.LineAdditive)
	return ok && la.LineAdditive()
}

// lineAdditive declares the Counter it wraps line-additive, whatever it is.
type lineAdditive struct{ truncate.Counter }

func (lineAdditive) LineAdditive() bool { return true }

// plainCounter hides whether the Counter it wraps is line-additive: it has
// no LineAdditive method, so the Assembler counts the final text.
type plainCounter struct{ truncate.Counter }

// notAdditive has a LineAdditive method that says no.
type notAdditive struct{ truncate.Counter }

func (notAdditive) LineAdditive() bool { return false }

// lineMode reports whether the Assembler counts sec's blocks as lines: with
// the default separator "\n".
func lineMode(sec *template.Section) bool { return sec.Separator() == "\n" }

// blockTokens is what the Assembler counts for text, a block rendered by
// sec: in line mode the text with the newline that ends its line, else the
// text alone.
func blockTokens(c truncate.Counter, sec *template.Section, text string) int {
	if lineMode(sec) {
		return c.Count(text + "\n")
	}
	return c.Count(text)
}

// keyed returns b with a memo key made of everything its rendering reads,
// as package contextasm makes it.
func keyed(b assemble.Block) assemble.Block {
	h := sha256.New()
	for _, f := range []string{b.ID, string(b.Type), b.SourceID, b.Content} {
		h.Write([]byte(f))
		h.Write([]byte{0})
	}
	copy(b.Key[:], h.Sum(nil))
	return b
}

// mapMemo is a Memo backed by a map, which records what it is asked. It is
// safe for concurrent use.
type mapMemo struct {
	mu               sync.Mutex
	m                map[assemble.MemoKey]int
	gets, hits, adds int
	keys             []assemble.MemoKey // every key asked for or added
}

func newMapMemo() *mapMemo { return &mapMemo{m: map[assemble.MemoKey]int{}} }

func (m *mapMemo) Get(k assemble.MemoKey) (int, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.gets++
	m.keys = append(m.keys, k)
	n, ok := m.m[k]
	if ok {
		m.hits++
	}
	return n, ok
}

func (m *mapMemo) Add(k assemble.MemoKey, tokens int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.adds++
	m.keys = append(m.keys, k)
	m.m[k] = tokens
}

// countingCounter wraps a Counter and records every text it is asked to
// count or cut. It is as line-additive as the Counter it wraps. It is safe
// for concurrent use.
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

// LineAdditive forwards the wrapped Counter's answer: counting calls does
// not change the path the Assembler takes.
func (c *countingCounter) LineAdditive() bool { return isAdditive(c.Counter) }

// countedExactly reports whether text itself was counted.
func (c *countingCounter) countedExactly(text string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, s := range c.counted {
		if s == text {
			return true
		}
	}
	return false
}

// reset returns the texts counted so far, and forgets them and the cuts.
func (c *countingCounter) reset() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	counted := c.counted
	c.counted, c.cut = nil, nil
	return counted
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
// is what the Assembler's final-text check exists for. It is not
// line-additive (it has no LineAdditive method): a line-additive counter's
// final text is not counted at all when its lines add up.
type joinTax struct {
	truncate.Counter
	marker string
	extra  int
}

func (j joinTax) Count(text string) int {
	return j.Counter.Count(text) + j.extra*strings.Count(text, j.marker)
}

// memoCounter caches a Counter's counts and cuts; the tokenizer is a pure
// function, so the answers are the real ones, only faster (the engine
// caches too). It is as line-additive as the Counter it wraps. It is not
// safe for concurrent use.
type memoCounter struct {
	truncate.Counter
	counts map[string]int
	cuts   map[cutKey]string // made on first use
}

type cutKey struct {
	text      string
	maxTokens int
}

func (m *memoCounter) Cut(text string, maxTokens int) string {
	if m.cuts == nil {
		m.cuts = map[cutKey]string{}
	}
	k := cutKey{text, maxTokens}
	if part, ok := m.cuts[k]; ok {
		return part
	}
	part := m.Counter.Cut(text, maxTokens)
	m.cuts[k] = part
	return part
}

func (m *memoCounter) LineAdditive() bool { return isAdditive(m.Counter) }

func (m *memoCounter) Count(text string) int {
	if n, ok := m.counts[text]; ok {
		return n
	}
	n := m.Counter.Count(text)
	m.counts[text] = n
	return n
}
