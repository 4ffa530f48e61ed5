package contextasm_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/contextasm/contextasm/contextasm"
	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/internal/bpe"
	"github.com/contextasm/contextasm/outcome"
)

// roomyTemplate has room for everything its tests declare.
const roomyTemplate = `{"budget": 2000, "sections": [
  {"name": "RULES", "priority": 1, "memory_types": ["constraint"], "max_tokens": 500, "render": "<rule id=\"{request_id}\">{content}</rule>"},
  {"name": "HISTORY", "priority": 2, "memory_types": ["history"], "max_tokens": 1000, "render": "{content}", "order": "time"}
]}`

func roomyDecls() []declare.Declaration {
	turn := func(id string, ago time.Duration, content string) declare.Declaration {
		d := declare.Declaration{RequestID: id, MemoryType: declare.History, Scope: declare.ScopeSession, SessionID: "s1", Content: content}
		d.LastModified = ptr(demoNow.Add(-ago))
		return d
	}
	return []declare.Declaration{
		global("rule-1", declare.Constraint, "Answer in English."),
		global("rule-2", declare.Constraint, "Never reveal account numbers. 永远不要透露账号。"),
		turn("turn-1", 10*time.Minute, "USER: What is my balance?"),
		turn("turn-2", 9*time.Minute, "AGENT: Let me check that for you."),
		turn("turn-3", 8*time.Minute, "USER: Obrigado, sem pressa — 谢谢，慢慢来。"),
	}
}

func TestCacheWarmAssembleCallsNoTokenizer(t *testing.T) {
	tpl, decls := loadDemo(t)
	cc := newCountingCounter(t)
	eng := newEngine(t, contextasm.Config{Counter: cc}, decls...)

	cold := assemble(t, eng, demoRequest(tpl))
	counted, cuts := cc.take()
	if len(counted) == 0 || cuts == 0 {
		t.Fatalf("cold assembly: %d counts and %d cuts; the fixture should count and cut (a partial block)", len(counted), cuts)
	}
	t.Logf("cold assembly of the demo: %d Count calls, %d Cut calls", len(counted), cuts)

	for i := range 3 {
		warm := assemble(t, eng, demoRequest(tpl))
		counted, cuts := cc.take()
		if len(counted) != 0 || cuts != 0 {
			t.Errorf("warm assembly %d: %d Count calls %q and %d Cut calls, want none", i, len(counted), counted, cuts)
		}
		if dumpWithoutPrefix(t, warm) != dumpWithoutPrefix(t, cold) {
			t.Errorf("warm assembly %d differs from the cold one", i)
		}
		if p := warm.Prefix; p == nil || p.Reason != "unchanged" || p.StableBytes != len(warm.Text) {
			t.Errorf("warm assembly %d: prefix %+v, want all of the text unchanged", i, p)
		}
	}
}

func TestCacheCountsOnlyNewTexts(t *testing.T) {
	newTurn := declare.Declaration{
		RequestID: "turn-new", MemoryType: declare.History, Scope: declare.ScopeSession,
		SessionID: "sess-4711", SemanticWeight: ptr(0.95), LastModified: &demoNow,
		Content: "AGENT: Paying part of the card down would lower your ratio.",
	}
	demoTpl, demoDecls := loadDemo(t)
	tests := []struct {
		name   string
		decls  []declare.Declaration
		req    contextasm.Request
		change declare.Declaration // enters the context; rendered as its content
	}{
		{"new block, roomy budget", roomyDecls(),
			contextasm.Request{Template: parseTemplate(t, roomyTemplate), Now: demoNow, SessionID: "s1"},
			func() declare.Declaration { d := newTurn; d.SessionID = "s1"; return d }()},
		{"changed block, roomy budget", roomyDecls(),
			contextasm.Request{Template: parseTemplate(t, roomyTemplate), Now: demoNow, SessionID: "s1"},
			func() declare.Declaration { d := roomyDecls()[3]; d.Content = "AGENT: Your balance is fine."; return d }()},
		{"new block, demo (the budget drops blocks)", demoDecls, demoRequest(demoTpl), newTurn},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cc := newCountingCounter(t)
			eng := newEngine(t, contextasm.Config{Counter: cc}, tt.decls...)
			before := assemble(t, eng, tt.req)
			cc.take()

			if err := eng.Declare(tt.change); err != nil {
				t.Fatal(err)
			}
			res := assemble(t, eng, tt.req)
			counted, cuts := cc.take()
			t.Logf("after one declaration: %d Count calls, %d Cut calls", len(counted), cuts)

			if !strings.Contains(res.Text, tt.change.Content) {
				t.Fatalf("the declared block did not enter the context:\n%s", res.Text)
			}
			if res.Text == before.Text {
				t.Fatal("the text did not change")
			}
			// Exactly one text is new: the new block's line (its rendering
			// and the newline that ends it). The final text is not counted:
			// for a line-additive counter its count is the sum of its
			// lines, all known (truncate.LineAdditive).
			if want := []string{tt.change.Content + "\n"}; !slices.Equal(counted, want) || cuts != 0 {
				t.Errorf("counted %q and %d cuts, want exactly %q", counted, cuts, want)
			}
			if n := o200k(t).Count(res.Text); n != res.TotalTokens {
				t.Errorf("TotalTokens %d, but the text counts %d", res.TotalTokens, n)
			}
		})
	}
}

func TestCacheSizeBoundsTheCache(t *testing.T) {
	tpl, decls := loadDemo(t)
	warmCalls := func(size int) (int, string) {
		cc := newCountingCounter(t)
		eng := newEngine(t, contextasm.Config{Counter: cc, CacheSize: size}, decls...)
		assemble(t, eng, demoRequest(tpl))
		// Declaring a block of another session changes the store (so the
		// last output is not simply reused) but nothing this request sees.
		other := declare.Declaration{RequestID: "zz-other", MemoryType: declare.History, Scope: declare.ScopeSession, SessionID: "other", Content: "not yours"}
		if err := eng.Declare(other); err != nil {
			t.Fatal(err)
		}
		cc.take()
		res := assemble(t, eng, demoRequest(tpl))
		counted, cuts := cc.take()
		return len(counted) + cuts, dumpJSON(t, res)
	}
	unbounded, want := warmCalls(0)
	if unbounded != 0 {
		t.Fatalf("default cache: %d tokenizer calls on a warm assembly, want 0", unbounded)
	}
	tiny, got := warmCalls(2)
	t.Logf("warm assembly with CacheSize 2: %d tokenizer calls", tiny)
	if tiny < 10 {
		t.Errorf("CacheSize 2: %d tokenizer calls on a warm assembly; a cache that small cannot hold the demo's counts", tiny)
	}
	if got != want {
		t.Errorf("a tiny cache changed the result:\ngot  %s\nwant %s", got, want)
	}
}

// TestFillStopCountsNothingAfterMisfit: under fill "stop" the blocks after a
// section's first misfit cannot enter, so a cold assembly never counts them,
// nor any block that is not eligible.
func TestFillStopCountsNothingAfterMisfit(t *testing.T) {
	weighted := func(id, content string, w float64) declare.Declaration {
		d := global(id, declare.Constraint, content)
		d.SemanticWeight = ptr(w)
		return d
	}
	decls := []declare.Declaration{
		weighted("a-fits", "Short rule A.", 0.9),
		weighted("b-misfit", strings.Repeat("Long rule B goes on and on. ", 20), 0.8),
		weighted("c-after", "MARKER-C short rule.", 0.7),
		weighted("d-after", "MARKER-D short rule.", 0.6),
		{RequestID: "e-elsewhere", MemoryType: declare.Constraint, Scope: declare.ScopeSession, SessionID: "other", Content: "MARKER-E other session."},
	}
	for _, fill := range []string{"stop", "skip"} {
		t.Run(fill, func(t *testing.T) {
			tpl := parseTemplate(t, `{"budget": 1000, "sections": [
			  {"name": "RULES", "priority": 1, "memory_types": ["constraint"], "max_tokens": 40, "render": "{content}", "fill": "`+fill+`"}]}`)
			cc := newCountingCounter(t)
			eng := newEngine(t, contextasm.Config{Counter: cc}, decls...)
			res := assemble(t, eng, contextasm.Request{Template: tpl, Now: demoNow, SessionID: "s1"})
			counted, _ := cc.take()

			if got := countedContaining(counted, "MARKER-E"); len(got) != 0 {
				t.Errorf("counted an out-of-scope block: %q", got)
			}
			if got := countedContaining(counted, "Long rule B"); len(got) == 0 {
				t.Error("the first misfit was not counted; the fixture is wrong")
			}
			blocks := map[string]contextasm.BlockResult{}
			for _, b := range res.Sections()[0].Blocks {
				blocks[b.RequestID] = b
			}
			if b := blocks["b-misfit"]; b.Status != outcome.StatusDropped || b.Reason != outcome.ReasonSectionCap || b.Tokens == 0 {
				t.Errorf("b-misfit: %+v, want dropped for section_cap with its count", b)
			}
			for _, id := range []string{"c-after", "d-after"} {
				marker := "MARKER-" + strings.ToUpper(id[:1])
				switch fill {
				case "stop":
					if got := countedContaining(counted, marker); len(got) != 0 {
						t.Errorf("fill stop counted %s after the first misfit: %q", id, got)
					}
					if b := blocks[id]; b.Status != outcome.StatusDropped || b.Reason != outcome.ReasonSectionCap || b.Tokens != 0 {
						t.Errorf("%s: %+v, want dropped for section_cap, uncounted (0 tokens)", id, b)
					}
					if strings.Contains(res.Text, marker) {
						t.Errorf("fill stop rendered %s after the first misfit", id)
					}
				case "skip": // the control: the same blocks are counted and kept
					if b := blocks[id]; b.Status != outcome.StatusKept || b.Tokens == 0 {
						t.Errorf("fill skip: %s: %+v, want kept", id, b)
					}
				}
			}
		})
	}
}

// TestCacheKeepsEncodingsApart: the engine caches counts of two encodings
// in one cache; a block counted in one must not lend its count to the other.
func TestCacheKeepsEncodingsApart(t *testing.T) {
	const sections = `"sections": [
	  {"name": "RULES", "priority": 1, "memory_types": ["constraint"], "max_tokens": 500, "render": "{content}"},
	  {"name": "HISTORY", "priority": 2, "memory_types": ["history"], "max_tokens": 1000, "render": "{content}", "order": "time"}]`
	eng := newEngine(t, contextasm.Config{}, roomyDecls()...)
	totals := map[string]int{}
	for _, enc := range []string{bpe.O200kBase, bpe.CL100kBase, bpe.O200kBase} {
		tpl := parseTemplate(t, `{"budget": 2000, "encoding": "`+enc+`", `+sections+`}`)
		tok, err := bpe.Load(enc)
		if err != nil {
			t.Fatal(err)
		}
		res := assemble(t, eng, contextasm.Request{Template: tpl, Now: demoNow, SessionID: "s1"})
		if want := tok.Count(res.Text); res.TotalTokens != want {
			t.Errorf("%s: TotalTokens = %d, want %d", enc, res.TotalTokens, want)
		}
		totals[enc] = res.TotalTokens
		for _, sec := range res.Sections() {
			for _, b := range sec.Blocks {
				if want := tok.Count(res.Text[b.Offset : b.Offset+b.Length]); b.Tokens != want {
					t.Errorf("%s: block %s counted %d tokens, want %d", enc, b.RequestID, b.Tokens, want)
				}
			}
		}
	}
	// Guard the fixture: were the counts equal, a mixed-up cache would pass.
	if totals[bpe.O200kBase] == totals[bpe.CL100kBase] {
		t.Errorf("fixture: both encodings count %d tokens; use text they count differently", totals[bpe.O200kBase])
	}
}
