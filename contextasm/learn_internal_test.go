package contextasm

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/contextasm/contextasm/bench"
	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/feedback"
	"github.com/contextasm/contextasm/template"
)

// feedbackWorkload is an Engine on the bench workload whose constraints
// all break on "forbidden-N", the template and the request of its
// conversation.
func feedbackWorkload(t *testing.T, n int, fullOnly bool) (*Engine, Request) {
	t.Helper()
	e, tpl := benchEngine(t, Config{})
	e.fullOnly = fullOnly
	decls := bench.Generate(n, 1)
	for i := range decls {
		if decls[i].MemoryType == declare.Constraint {
			decls[i].BreakOnViolation = true
			decls[i].ViolationPatterns = []string{fmt.Sprintf("forbidden-%d", i%7)}
		}
	}
	if err := e.Declare(decls...); err != nil {
		t.Fatal(err)
	}
	return e, Request{Template: tpl, Now: bench.Epoch, SessionID: bench.Session, UserID: bench.User}
}

// benchEngine returns an Engine configured by cfg, and the bench
// template.
func benchEngine(t *testing.T, cfg Config) (*Engine, *template.Template) {
	t.Helper()
	tpl, err := template.Parse(bench.TemplateJSON(8192), "bench.json")
	if err != nil {
		t.Fatal(err)
	}
	e, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return e, tpl
}

// benchPair returns benchEngine's Engine and one that assembles from
// scratch (fullOnly), the reference the incremental one is held to.
func benchPair(t *testing.T) (fast, full *Engine, tpl *template.Template) {
	t.Helper()
	fast, tpl = benchEngine(t, Config{})
	full, _ = benchEngine(t, Config{})
	full.fullOnly = true
	return fast, full, tpl
}

// citingResponse cites up to three blocks of text (every other one it
// finds, in reverse), one made-up id, and breaks some constraints.
func citingResponse(rng *rand.Rand, text string) string {
	var ids []string
	for rest := text; ; {
		i := strings.Index(rest, `id="`)
		if i < 0 {
			break
		}
		rest = rest[i+4:]
		ids = append(ids, rest[:strings.IndexByte(rest, '"')])
	}
	var b strings.Builder
	for k := 0; k < 3 && len(ids) > 0; k++ {
		id := ids[rng.IntN(len(ids))]
		fmt.Fprintf(&b, "Point %d <memory_ref id=%q/> forbidden-%d. ", k, id, rng.IntN(9))
	}
	b.WriteString(`and <memory_ref id="made-up"/>`)
	return b.String()
}

// Feedback reads the blocks the assembly kept from the assembly itself:
// an incremental assembly is never made again from scratch for it, and
// what it learns (trust, heat, the result) is what reading the full
// assembly's sections learned, turn after turn, as trust moves.
func TestFeedbackDoesNotAssembleAgain(t *testing.T) {
	inc, req := feedbackWorkload(t, 2000, false)
	full, _ := feedbackWorkload(t, 2000, true)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(7, 8))
	for turn := 1; turn <= 40; turn++ {
		r := req
		if turn%10 == 0 {
			r.SessionID = "" // a request outside the conversation
		}
		var res [2]*Result
		for i, e := range []*Engine{inc, full} {
			if err := e.Declare(bench.Turn(turn)); err != nil {
				t.Fatal(err)
			}
			var err error
			if res[i], err = e.Assemble(ctx, r); err != nil {
				t.Fatal(err)
			}
		}
		if res[0].Text != res[1].Text {
			t.Fatalf("turn %d: the engines assembled different texts", turn)
		}
		if res[0].told.asm.why == nil {
			t.Fatalf("turn %d: not assembled incrementally", turn)
		}
		// The inputs feedback evaluates: from the fill's record, and (the
		// path before) from the full assembly's sections.
		lookup := inc.lookupBlocks()
		got, err := feedbackBlocks(nil, res[0].told.asm.shown(true), lookup)
		if err != nil {
			t.Fatal(err)
		}
		response := citingResponse(rng, res[0].Text)
		var fb [2]*feedback.Result
		for i, e := range []*Engine{inc, full} {
			var err error
			fb[i], err = e.Feedback(ctx, res[i], response)
			if err != nil && !errors.Is(err, feedback.ErrConstraintViolation) {
				t.Fatal(err)
			}
		}
		if res[0].told.asm.why.full != nil {
			t.Fatalf("turn %d: Feedback assembled again from scratch", turn)
		}
		want, err := feedbackBlocks(nil, shownOf(res[0].Sections()), lookup)
		if err != nil {
			t.Fatal(err)
		}
		if a, b := feedbackKey(got), feedbackKey(want); !slices.Equal(a, b) {
			t.Fatalf("turn %d: feedback reads\n%v\nthe full assembly's sections\n%v", turn, a, b)
		}
		// The result: references and trust in citation order, violations
		// in the text's order (by section, then the fill's, not rank
		// order), so compared as a set.
		for i := range fb {
			slices.SortFunc(fb[i].Violations, func(a, b feedback.Violation) int {
				return cmp.Or(cmp.Compare(a.RequestID, b.RequestID), cmp.Compare(a.Pattern, b.Pattern))
			})
		}
		if !reflect.DeepEqual(fb[0], fb[1]) {
			t.Fatalf("turn %d: feedback\n%+v\nagainst the full assembly's\n%+v", turn, fb[0], fb[1])
		}
	}
	if a, b := inc.State(), full.State(); !reflect.DeepEqual(a.Trust, b.Trust) || !reflect.DeepEqual(a.Heat, b.Heat) {
		t.Errorf("the engines learned differently:\n%v\n%v", a.Trust, b.Trust)
	}
	if len(inc.State().Trust) == 0 {
		t.Error("nothing was learned: the test cites nothing")
	}
}

// feedbackKey lists what feedback reads of each block, sorted.
func feedbackKey(in []feedback.Block) []string {
	out := make([]string, len(in))
	for i, b := range in {
		out[i] = fmt.Sprintf("%s %.9f %v", b.RequestID, b.Trust, b.Patterns)
	}
	slices.Sort(out)
	return out
}

// Conversations assembling in turn keep their indexes: no turn builds
// one again, 64 of them with the defaults (with Config.MaxIndexes 4, or
// Config.IndexBytes for three indexes, every turn of eight would); the
// indexes never hold more than Config.IndexBytes together, but for the
// one just used; and ending a session drops its index.
func TestInterleavedConversationsStayIndexed(t *testing.T) {
	const perIndex = 40 << 10 // about what one holds of this store (checked below)
	for _, tt := range []struct {
		max, bytes, convs int
		kept              bool
	}{{0, 0, 64, true}, {8, 0, 8, true}, {4, 0, 8, false}, {0, 3 * perIndex, 8, false}, {0, 10 * perIndex, 8, true}} {
		t.Run(fmt.Sprintf("max=%d,bytes=%d,convs=%d", tt.max, tt.bytes, tt.convs), func(t *testing.T) {
			e, tpl := benchEngine(t, Config{MaxIndexes: tt.max, IndexBytes: tt.bytes})
			if err := e.Declare(bench.Generate(300, 1)...); err != nil {
				t.Fatal(err)
			}
			indexes := func() []*shapeIndex {
				e.ixs.mu.Lock()
				defer e.ixs.mu.Unlock()
				l := slices.Clone(e.ixs.list)
				slices.SortFunc(l, func(a, b *shapeIndex) int { return strings.Compare(a.key.session, b.key.session) })
				return l
			}
			var first []*shapeIndex
			for round := range 3 {
				for s := range tt.convs {
					d := bench.Turn(round*tt.convs + s)
					d.SessionID = fmt.Sprint("conv-", s)
					if err := e.Declare(d); err != nil {
						t.Fatal(err)
					}
					before := e.indexed.Load()
					if _, err := e.Assemble(context.Background(), Request{Template: tpl, Now: bench.Epoch, SessionID: d.SessionID, UserID: bench.User}); err != nil {
						t.Fatal(err)
					}
					if e.indexed.Load() != before+1 {
						t.Fatalf("round %d, session %d: not assembled from an index", round, s)
					}
					e.ixs.mu.Lock()
					held, n, sum := e.ixs.bytes, len(e.ixs.list), 0
					for _, si := range e.ixs.list {
						sum += si.bytes
						if si.bytes < perIndex/2 || si.bytes > 2*perIndex {
							t.Errorf("an index holds %d bytes, not about %d", si.bytes, perIndex)
						}
					}
					e.ixs.mu.Unlock()
					if held != sum {
						t.Fatalf("the indexes hold %d bytes, counted as %d", sum, held)
					}
					if limit := e.cfg.IndexBytes; held > limit && n > 1 {
						t.Fatalf("round %d, session %d: %d indexes hold %d bytes, more than %d", round, s, n, held, limit)
					}
				}
				if round == 0 {
					first = indexes()
				}
			}
			if got := indexes(); slices.Equal(got, first) != tt.kept {
				t.Errorf("indexes kept: %v, want %v (%d of them)", !tt.kept, tt.kept, len(got))
			}
			if _, err := e.EndSession("conv-3"); err != nil {
				t.Fatal(err)
			}
			for _, si := range indexes() {
				if si.key.session == "conv-3" {
					t.Error("the ended session's index is kept")
				}
			}
		})
	}
}

// An ended session leaves nothing of its own in the Engine: its blocks'
// heat cells and learned heat, their entries in the render memos, its
// decisions, its shapes' indexes.
func TestEndSessionLeavesNothing(t *testing.T) {
	e, tpl := benchEngine(t, Config{})
	if err := e.Declare(bench.Generate(300, 1)...); err != nil {
		t.Fatal(err)
	}
	type held struct{ cells, heat, memo, renders, sessions, indexes, convs, calls int }
	count := func() held {
		e.heat.mu.Lock()
		cells := len(e.heat.m)
		e.heat.mu.Unlock()
		st := e.State()
		e.ixs.mu.Lock()
		indexes := len(e.ixs.list)
		e.ixs.mu.Unlock()
		e.convs.mu.Lock()
		convs := len(e.convs.m)
		e.convs.mu.Unlock()
		e.mu.Lock()
		calls := e.calls.Len()
		e.mu.Unlock()
		return held{cells, len(st.Heat), e.memo.cache.Groups(), e.renders.cache.Groups(), len(st.Sessions), indexes, convs, calls}
	}
	session := func(i int) {
		s := fmt.Sprint("churn-", i)
		var decls []declare.Declaration
		for k := range 3 {
			d := bench.Turn(i*3 + k)
			d.RequestID, d.SessionID = fmt.Sprintf("%s-%d", s, k), s
			decls = append(decls, d)
		}
		call := fmt.Sprint("call_", i) // a tool exchange too
		decls = append(decls,
			declare.Declaration{RequestID: s + "-a", MemoryType: declare.History, Scope: declare.ScopeSession, SessionID: s,
				Role: declare.RoleAssistant, ToolCalls: []declare.ToolCall{{ID: call, Name: "get_fees", Arguments: `{}`}}},
			declare.Declaration{RequestID: s + "-r", MemoryType: declare.History, Scope: declare.ScopeSession, SessionID: s,
				Role: declare.RoleTool, ToolCallID: call, Content: "2.5"})
		if err := e.Declare(decls...); err != nil {
			t.Fatal(err)
		}
		if _, err := e.Assemble(context.Background(), Request{Template: tpl, Now: bench.Epoch, SessionID: s, UserID: bench.User}); err != nil {
			t.Fatal(err)
		}
		if got := count(); got.cells == 0 || got.sessions == 0 || got.indexes == 0 || got.calls == 0 {
			t.Fatalf("fixture: the session holds nothing: %+v", got)
		}
		if _, err := e.EndSession(s); err != nil {
			t.Fatal(err)
		}
	}
	session(-1)
	start := count()
	for i := range 200 {
		session(i)
	}
	if end := count(); end != start {
		t.Errorf("after 200 sessions started and ended the Engine holds %+v, after the first %+v", end, start)
	}
}

// Feedback reads a block shown as the store holds it when Feedback runs:
// from the assembly while nothing was declared since (the snapshot it
// read is current), looked up when a declaration came between.
func TestFeedbackReadsBlocksDeclaredSince(t *testing.T) {
	e, req := feedbackWorkload(t, 2000, false)
	ctx := context.Background()
	res, err := e.Assemble(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	var rule string
	var was string
	for _, b := range res.told.asm.shown(true) {
		if len(b.Patterns) > 0 {
			if b.block == nil {
				t.Fatal("an incremental assembly's shown blocks, with its snapshot current, carry no block")
			}
			if cur, _ := e.lookupBlocks()(b.RequestID); cur != b.block {
				t.Fatalf("%s: shown as %p, the store holds %p", b.RequestID, b.block, cur)
			}
			rule, was = b.RequestID, b.Patterns[0].String()
			break
		}
	}
	if rule == "" {
		t.Fatal("no constraint with a pattern was shown")
	}
	violates := func(response string) bool {
		_, err := e.Feedback(ctx, res, response)
		var ve *feedback.ViolationError
		if errors.As(err, &ve) {
			for _, v := range ve.Violations {
				if v.RequestID == rule {
					return true
				}
			}
		}
		return false
	}
	if !violates("it says " + was) {
		t.Fatalf("%s's pattern %q, shown, did not break", rule, was)
	}
	for _, d := range bench.Generate(2000, 1) {
		if d.RequestID == rule {
			d.BreakOnViolation = true
			d.ViolationPatterns = []string{"since-declared"}
			if err := e.Declare(d); err != nil {
				t.Fatal(err)
			}
		}
	}
	if violates("it says " + was) {
		t.Errorf("%s declared again without %q: Feedback read the block as assembled", rule, was)
	}
	if !violates("it says since-declared") {
		t.Errorf("%s declared again with a pattern: Feedback did not read it", rule)
	}
}
