package contextasm_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/contextasm/contextasm/contextasm"
	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/template"
)

// determinismInputs is the demo plus blocks that tie on score and on
// last_modified. The demo template writes its sections in order rank and
// time, never "declared", so declaration order must not show (docs/assembly.md, Determinism).
func determinismInputs(t *testing.T) (*template.Template, []declare.Declaration) {
	t.Helper()
	tpl, decls := loadDemo(t)
	ties, err := declare.LoadFile("testdata/ties.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	for i := range tpl.NumSections() {
		if o := tpl.Section(i).Order(); o == template.OrderDeclared {
			t.Fatalf("section %s writes in order %q, which depends on declaration order by design", tpl.Section(i).Name(), o)
		}
	}
	// A little more room than the demo's 800 tokens, for the tie blocks;
	// the budget still drops blocks (checked below).
	tpl, err = tpl.WithBudget(830)
	if err != nil {
		t.Fatal(err)
	}
	return tpl, append(decls, ties...)
}

// observed is what must not vary between equivalent assemblies. The
// prefix is apart: it compares a text with the previous one of the same
// conversation, so a repeated call has one (the first has none), and it
// must say the text did not change.
type observed struct {
	text   string
	dump   string
	events []contextasm.Event
	audit  contextasm.Audit
	prefix *contextasm.Prefix
}

func outcomeOf(t testing.TB, res *contextasm.Result) observed {
	return observed{text: res.Text, dump: dumpWithoutPrefix(t, res), events: res.Events(), audit: res.Audit(), prefix: res.Prefix}
}

func compareOutcomes(t testing.TB, what string, got, want observed) {
	t.Helper()
	if got.text != want.text {
		t.Errorf("%s: Text differs:\ngot\n%s\nwant\n%s", what, got.text, want.text)
		return
	}
	if got.dump != want.dump {
		t.Errorf("%s: Dump JSON differs:\ngot  %s\nwant %s", what, got.dump, want.dump)
	}
	if !reflect.DeepEqual(got.events, want.events) {
		t.Errorf("%s: Events differ:\ngot  %+v\nwant %+v", what, got.events, want.events)
	}
	if !reflect.DeepEqual(got.audit, want.audit) {
		t.Errorf("%s: Audit differs:\ngot  %+v\nwant %+v", what, got.audit, want.audit)
	}
	if p := got.prefix; p != nil && (p.Reason != "unchanged" || p.StableBytes != len(got.text)) {
		t.Errorf("%s: the same text again has prefix %+v", what, *p)
	}
}

func TestDeterministicAcrossDeclarationOrder(t *testing.T) {
	tpl, decls := determinismInputs(t)
	req := demoRequest(tpl)
	req.ListHidden = true // so that the order of hidden exclusions is exercised too
	// Without relevance, so that the ties below are what ranks; the same
	// shuffles then run with the session's newest turn as the query.
	req.NoQuery = true
	base := outcomeOf(t, assemble(t, newEngine(t, contextasm.Config{}, decls...), req))
	queried := req
	queried.NoQuery = false
	baseQueried := outcomeOf(t, assemble(t, newEngine(t, contextasm.Config{}, decls...), queried))
	if baseQueried.text == base.text {
		t.Fatal("fixture: the query changes nothing, so its determinism is not exercised")
	}

	// The fixture must exercise what could vary: ties on score and time
	// that were kept, and events of several kinds.
	for _, s := range []string{"AGENT: One moment.", "USER: Thanks.", "SYSTEM: undated note.", "Branch hours", "Phone support"} {
		if !strings.Contains(base.text, s) {
			t.Fatalf("fixture: %q is not in the rendering, so its tie is not exercised:\n%s", s, base.text)
		}
	}
	reasons := map[string]bool{}
	for _, ev := range base.events {
		reasons[string(ev.Reason)] = true
	}
	for _, r := range []string{"budget", "section_cap", "cut", "expired", "stale", "out_of_scope", "access_denied", "audience", "escaped"} {
		if !reasons[r] {
			t.Errorf("fixture: no %s event, so its order is not exercised (events %+v)", r, base.events)
		}
	}

	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 0x5eed))
		shuffled := slices.Clone(decls)
		rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		// The one order that shows: history blocks of the same instant
		// rank later-declared first (the newer turn), so tie-turn-y stays
		// declared before tie-turn-x. TestHistoryTieFollowsDeclaration
		// checks the other way round.
		y := slices.IndexFunc(shuffled, func(d declare.Declaration) bool { return d.RequestID == "tie-turn-y" })
		x := slices.IndexFunc(shuffled, func(d declare.Declaration) bool { return d.RequestID == "tie-turn-x" })
		if x < y {
			shuffled[x], shuffled[y] = shuffled[y], shuffled[x]
		}

		// Declare in a few calls of random size, into fresh Engines (one
		// for each request: a second request of the session would follow
		// the first one's decision).
		eng, engQueried := newEngine(t, contextasm.Config{}), newEngine(t, contextasm.Config{})
		for rest := shuffled; len(rest) > 0; {
			n := 1 + rng.IntN(len(rest))
			if err := eng.Declare(rest[:n]...); err != nil {
				t.Fatal(err)
			}
			if err := engQueried.Declare(rest[:n]...); err != nil {
				t.Fatal(err)
			}
			rest = rest[n:]
		}
		got := outcomeOf(t, assemble(t, eng, req))
		compareOutcomes(t, fmt.Sprintf("seed %d", seed), got, base)
		got = outcomeOf(t, assemble(t, engQueried, queried))
		compareOutcomes(t, fmt.Sprintf("seed %d, with the query", seed), got, baseQueried)
	}
}

// TestHistoryTieFollowsDeclaration: two history blocks of the same
// instant and weight rank later-declared first, whatever their ids.
func TestHistoryTieFollowsDeclaration(t *testing.T) {
	tpl, decls := determinismInputs(t)
	req := demoRequest(tpl)
	ranks := func(decls []declare.Declaration) (x, y int) {
		res := assemble(t, newEngine(t, contextasm.Config{}, decls...), req)
		for _, s := range res.Sections() {
			for i, b := range s.Blocks {
				switch b.RequestID {
				case "tie-turn-x":
					x = i
				case "tie-turn-y":
					y = i
				}
			}
		}
		return x, y
	}
	x, y := ranks(decls) // the file declares y, then x
	if x >= y {
		t.Errorf("x declared after y ranks #%d, y #%d; want x first", x+1, y+1)
	}
	flipped := slices.Clone(decls)
	i := slices.IndexFunc(flipped, func(d declare.Declaration) bool { return d.RequestID == "tie-turn-y" })
	flipped[i], flipped[i+1] = flipped[i+1], flipped[i]
	if x, y := ranks(flipped); y >= x {
		t.Errorf("y declared after x ranks #%d, x #%d; want y first", y+1, x+1)
	}
}

func TestDeterministicAcrossGOMAXPROCS(t *testing.T) {
	tpl, decls := determinismInputs(t)
	req := demoRequest(tpl)

	run := func(procs int) []observed {
		old := runtime.GOMAXPROCS(procs)
		defer runtime.GOMAXPROCS(old)
		eng := newEngine(t, contextasm.Config{}, decls...)
		outs := make([]observed, 4)
		var wg sync.WaitGroup
		for i := range outs {
			wg.Go(func() {
				res, err := eng.Assemble(context.Background(), req)
				if err != nil {
					t.Error(err)
					return
				}
				outs[i] = outcomeOf(t, res)
			})
		}
		wg.Wait()
		return outs
	}

	before := runtime.GOMAXPROCS(0)
	one, eight := run(1), run(8)
	if after := runtime.GOMAXPROCS(0); after != before {
		t.Errorf("GOMAXPROCS is %d after the test, want %d restored", after, before)
	}
	if t.Failed() {
		return
	}
	for i := range one {
		compareOutcomes(t, fmt.Sprintf("GOMAXPROCS(1) run %d", i), one[i], one[0])
		compareOutcomes(t, fmt.Sprintf("GOMAXPROCS(8) run %d vs GOMAXPROCS(1)", i), eight[i], one[0])
	}
}

// TestConcurrentAssemble runs many assemblies on one Engine while another
// goroutine keeps re-declaring blocks of another session. Those blocks are
// out of scope for the request (an out_of_scope event carries only their
// id), so every result must equal the sequential baseline byte for byte.
func TestConcurrentAssemble(t *testing.T) {
	tpl, decls := determinismInputs(t)
	req := demoRequest(tpl)

	other := func(i, version int) declare.Declaration {
		return declare.Declaration{
			RequestID:  fmt.Sprintf("other-session-%02d", i),
			MemoryType: declare.MemoryTypes()[i%declare.NumMemoryTypes],
			Scope:      declare.ScopeSession,
			SessionID:  "sess-9999",
			Content:    fmt.Sprintf("Another session's note %d, version %d.", i, version),
		}
	}
	const nOther = 8
	all := slices.Clone(decls)
	for i := range nOther {
		all = append(all, other(i, 0))
	}

	base := outcomeOf(t, assemble(t, newEngine(t, contextasm.Config{}, all...), req))

	eng := newEngine(t, contextasm.Config{}, all...) // cold cache: goroutines race to fill it
	const goroutines, rounds = 16, 5
	results := make([][]observed, goroutines)
	stop := make(chan struct{})
	var writer sync.WaitGroup
	writerErr := make(chan error, 1)
	writes := 0
	writer.Go(func() {
		for version := 1; ; version++ {
			batch := make([]declare.Declaration, nOther)
			for i := range batch {
				batch[i] = other(i, version)
			}
			if err := eng.Declare(batch...); err != nil {
				writerErr <- err
				return
			}
			writes++
			select {
			case <-stop:
				return
			default:
				runtime.Gosched()
			}
		}
	})

	var readers sync.WaitGroup
	for g := range goroutines {
		readers.Go(func() {
			for range rounds {
				res, err := eng.Assemble(context.Background(), req)
				if err != nil {
					t.Error(err)
					return
				}
				results[g] = append(results[g], outcomeOf(t, res))
			}
		})
	}
	readers.Wait()
	close(stop)
	writer.Wait()
	select {
	case err := <-writerErr:
		t.Fatal(err)
	default:
	}

	for g, outs := range results {
		if len(outs) != rounds {
			t.Errorf("goroutine %d finished %d of %d assemblies", g, len(outs), rounds)
		}
		for r, o := range outs {
			compareOutcomes(t, fmt.Sprintf("goroutine %d round %d", g, r), o, base)
		}
	}
	t.Logf("%d assemblies alongside %d Declare calls", goroutines*rounds, writes)
	if eng.Len() != len(all) {
		t.Errorf("Len = %d after concurrent re-declaring, want %d", eng.Len(), len(all))
	}
}
