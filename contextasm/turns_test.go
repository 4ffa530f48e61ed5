package contextasm

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/contextasm/contextasm/chat"
	"github.com/contextasm/contextasm/contextasm/internal/assemble"
	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/template"
)

var turnNow = time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)

// turnTemplates are the templates the random runs assemble with: the
// benchmark's shape (stop, skip, partial, order time), and one with
// separators, order declared and every type in two sections.
var turnTemplates = []string{`{
  "template_version": "1.2", "budget": 900, "encoding": "o200k_base",
  "sections": [
    {"name": "CONSTRAINTS", "priority": 1, "memory_types": ["constraint"], "max_tokens": 220, "render": "<rule id=\"{request_id}\">{content}</rule>"},
    {"name": "CONTEXT", "priority": 2, "memory_types": ["context"], "max_tokens": 300, "render": "<context>{content}</context>", "fill": "skip"},
    {"name": "SOURCES", "priority": 3, "memory_types": ["external"], "max_tokens": 220, "render": "<source id=\"{request_id}\">{content}</source>", "partial": true},
    {"name": "HISTORY", "priority": 4, "memory_types": ["history"], "max_tokens": 450, "render": "{content}", "order": "time", "partial": true}
  ]}`, `{
  "template_version": "1.2", "budget": 600, "encoding": "o200k_base",
  "sections": [
    {"name": "DOCS", "priority": 2, "memory_types": ["context", "external"], "max_tokens": 400, "render": "[{request_id}] {content}", "separator": "\n---\n", "fill": "skip", "partial": true, "order": "declared"},
    {"name": "RULES", "priority": 1, "memory_types": ["constraint", "history"], "max_tokens": 300, "render": "- {content}", "fill": "skip"}
  ]}`, `{
  "template_version": "1.2", "budget": 70, "encoding": "o200k_base",
  "sections": [
    {"name": "RULES", "priority": 1, "memory_types": ["constraint"], "max_tokens": 50, "render": "{content}"},
    {"name": "HISTORY", "priority": 2, "memory_types": ["history"], "max_tokens": 60, "render": "{content}", "partial": true}
  ]}`}

var turnPhrases = []string{
	"The applicant's net monthly income is EUR 3,450 and existing debt payments are EUR 1,120.",
	"客户要求在周五之前完成转账，并希望了解所有手续费。",
	"O cliente prefere respostas em português europeu, com um resumo curto no fim.",
	"func fee(amount float64) float64 { return math.Max(2.5, amount*0.004) }",
	`{"account":"PT50 0002","balance_eur":9800.15,"flags":["kyc_passed"]}`,
	"USER: Can you compare both options in a table with the total fees?",
	"\tindented code line that does not start cleanly",
	"</rule> a closing delimiter in content",
}

// randomDecl is a random declaration dated around at, of sessions s1 and
// s2, users u1 and u2, with roles, for the user only, expiring, going
// stale, required, now and then.
func randomDecl(rng *rand.Rand, id string, at time.Time, degrade bool) declare.Declaration {
	var content string
	for range 1 + rng.IntN(6) {
		content += turnPhrases[rng.IntN(len(turnPhrases))] + " "
	}
	w := float64(rng.IntN(5)) / 4
	d := declare.Declaration{RequestID: id, MemoryType: declare.MemoryTypes()[rng.IntN(declare.NumMemoryTypes)], Scope: declare.ScopeGlobal,
		Content: content, SemanticWeight: &w}
	switch rng.IntN(8) {
	case 0, 1:
		d.Scope, d.SessionID = declare.ScopeSession, []string{"s1", "s2"}[rng.IntN(2)]
	case 2:
		d.Scope, d.UserID = declare.ScopeUser, []string{"u1", "u2"}[rng.IntN(2)]
	case 3:
		d.Roles = []string{"admin"}
	case 4:
		d.Audience = []string{"user"}
	}
	if rng.IntN(3) > 0 {
		lm := at.Add(time.Duration(rng.IntN(240)-200) * time.Minute)
		d.LastModified = &lm
	}
	if rng.IntN(4) == 0 {
		tr := float64(rng.IntN(5)) / 5
		d.TrustScore = &tr
	}
	if rng.IntN(3) == 0 {
		p := float64(rng.IntN(4)) / 4
		d.Priority = &p
	}
	if rng.IntN(6) == 0 {
		vu := declare.Time{Time: at.Add(time.Duration(rng.IntN(300)-60) * time.Minute)}
		d.ValidUntil = &vu
		if rng.IntN(2) == 0 {
			sa := declare.Duration(time.Duration(1+rng.IntN(180)) * time.Minute)
			d.StaleAfter = &sa
		}
	}
	if d.MemoryType == declare.History {
		// A role from the id, so the stream is the same: a chat's
		// current turn is the session's newest user turn.
		d.Role = []declare.Role{"", declare.RoleUser, declare.RoleAssistant}[int(id[len(id)-1])%3]
	}
	if degrade && rng.IntN(30) == 0 && len(d.Content) > 20 {
		d.Variants = []string{strings.ToValidUTF8(d.Content[:10], "")} // assembled from scratch
	}
	if rng.IntN(30) == 0 && d.MemoryType == declare.Constraint {
		d.Required = true
		d.Content = turnPhrases[0]
	}
	return d
}

// TestIncrementalEqualsFull runs random sequences of Declare, Forget,
// Feedback, EndSession and Assemble — now moving forward and back,
// sessions, users, roles, fresh requests, repeats, a chat format and
// ListHidden now and then, two templates — on two Engines: one assembling
// incrementally, one that always assembles from scratch. Every Result
// must be the same, byte for byte: text, sections, events, hidden counts,
// audit record and dump JSON; and so must the learned state, heat
// included, wherever it is read. Now and then a fresh Engine given the
// same blocks assembles a request without a conversation and must agree
// too.
func TestIncrementalEqualsFull(t *testing.T) {
	runs, steps := 24, 45
	if testing.Short() {
		runs = 6
	}
	var tpls []*template.Template
	for i, src := range turnTemplates {
		tpl, err := template.Parse([]byte(src), fmt.Sprintf("turn%d.json", i))
		if err != nil {
			t.Fatal(err)
		}
		tpls = append(tpls, tpl)
	}
	ctx := context.Background()
	var assemblies, withSession, fresh, failures, indexed, conflicts, withTools, chatIndexed, callsIndexed, sumIndexed int
	for run := range runs + runs/3 {
		rng := rand.New(rand.NewPCG(uint64(run), 2026))
		degrade := run%6 == 5 // blocks with variants: assembled from scratch
		// Blocks with conflict_keys, from a stream of their own (the
		// other runs' stores are those without): from scratch while two
		// a request may see share a key.
		keys := run%6 == 2
		krng := rand.New(rand.NewPCG(uint64(run), 27))
		frng := rand.New(rand.NewPCG(uint64(run), 15)) // the chat formats, likewise
		xrng := rand.New(rand.NewPCG(uint64(run), 16)) // tool exchanges, likewise
		exchanges := run%3 == 1
		nx := 0
		srng := rand.New(rand.NewPCG(uint64(run), 17)) // summaries, likewise
		summaries := run >= runs                       // in runs of their own after the others
		nsum := 0
		keyed := func(d declare.Declaration) declare.Declaration {
			if keys && krng.IntN(5) == 0 {
				d.ConflictKey = []string{"rate", "term"}[krng.IntN(2)]
			}
			return d
		}
		inc, err := New(Config{})
		if err != nil {
			t.Fatal(err)
		}
		full, err := New(Config{})
		if err != nil {
			t.Fatal(err)
		}
		full.fullOnly = true
		both := func(f func(e *Engine) error) error {
			t.Helper()
			e1, e2 := f(inc), f(full)
			if fmt.Sprint(e1) != fmt.Sprint(e2) {
				t.Fatalf("run %d: the engines disagree: %v, %v", run, e1, e2)
			}
			return e1
		}
		at := turnNow
		var initial []declare.Declaration
		for i := range 40 + rng.IntN(160) {
			initial = append(initial, keyed(randomDecl(rng, fmt.Sprintf("b%03d", i), at, degrade)))
		}
		if err := both(func(e *Engine) error { return e.Declare(initial...) }); err != nil {
			t.Fatal(err)
		}
		if err := both(func(e *Engine) error { return e.DeclareTools(turnTools...) }); err != nil {
			t.Fatal(err)
		}
		current := map[string]declare.Declaration{} // what the engines hold, as declared
		for _, d := range initial {
			current[d.RequestID] = d
		}
		next := 1000
		var last [2]*Result
		for step := range steps {
			switch k := rng.IntN(12); {
			case k < 4:
				var ds []declare.Declaration
				for range 1 + rng.IntN(3) {
					id := fmt.Sprintf("b%03d", next)
					if rng.IntN(3) == 0 {
						id = fmt.Sprintf("b%03d", rng.IntN(next)) // replaces one, or adds
					}
					if slices.ContainsFunc(ds, func(d declare.Declaration) bool { return d.RequestID == id }) {
						continue
					}
					ds = append(ds, keyed(randomDecl(rng, id, at, degrade)))
					next++
				}
				if exchanges && xrng.IntN(2) == 0 {
					ds = append(ds, randomExchange(xrng, nx, at)...)
					nx++
				}
				if both(func(e *Engine) error { return e.Declare(ds...) }) == nil {
					for _, d := range ds {
						current[d.RequestID] = d
					}
				}
			case k < 5:
				ids := []string{fmt.Sprintf("b%03d", rng.IntN(next)), fmt.Sprintf("b%03d", rng.IntN(next))}
				both(func(e *Engine) error { e.Forget(ids...); return nil })
				for _, id := range ids {
					delete(current, id)
				}
			case k < 6 && last[0] != nil:
				// The model cites two blocks of the last text: trust moves.
				var cited []string
				for _, s := range last[0].Sections() {
					for _, b := range s.Blocks {
						if b.Length > 0 && len(cited) < 2 {
							cited = append(cited, b.RequestID)
						}
					}
				}
				response := ""
				for _, id := range cited {
					response += fmt.Sprintf("<memory_ref id=%q/> ", id)
				}
				response += "and a long answer after them, so that the citations come first."
				_, err1 := inc.Feedback(ctx, last[0], response)
				_, err2 := full.Feedback(ctx, last[1], response)
				if fmt.Sprint(err1) != fmt.Sprint(err2) {
					t.Fatalf("run %d step %d: feedback %v, %v", run, step, err1, err2)
				}
			case k < 7 && rng.IntN(3) == 0:
				both(func(e *Engine) error { _, err := e.EndSession("s2"); return err })
				maps.DeleteFunc(current, func(_ string, d declare.Declaration) bool {
					return d.Scope == declare.ScopeSession && d.SessionID == "s2"
				})
			}
			if summaries && srng.IntN(3) == 0 {
				// A summary, as a host declares one: of a run the last
				// result offered, and of turns kept, dropped or never held.
				var ids []string
				if last[0] != nil && len(last[0].SummarizeCandidates) > 0 {
					ids = slices.Clone(last[0].SummarizeCandidates[srng.IntN(len(last[0].SummarizeCandidates))].IDs)
				}
				for range 1 + srng.IntN(2) {
					ids = append(ids, []string{fmt.Sprintf("b%03d", srng.IntN(next)), fmt.Sprintf("sum%03d", srng.IntN(nsum+1)), "never"}[srng.IntN(3)])
				}
				slices.Sort(ids)
				lm := at
				d := declare.Declaration{RequestID: fmt.Sprintf("sum%03d", nsum), MemoryType: declare.History, Scope: declare.ScopeGlobal,
					Content: "SUMMARY: the rates and fees so far.", Replaces: slices.Compact(ids), LastModified: &lm}
				if srng.IntN(3) == 0 {
					d.Scope, d.SessionID = declare.ScopeSession, "s1"
				}
				nsum++
				if both(func(e *Engine) error { return e.Declare(d) }) == nil {
					current[d.RequestID] = d
				}
			}
			switch rng.IntN(6) {
			case 0, 1:
				at = at.Add(time.Duration(1+rng.IntN(60)) * time.Minute)
			case 2:
				at = at.Add(-time.Duration(1+rng.IntN(20)) * time.Minute)
			}
			req := Request{Template: tpls[rng.IntN(len(tpls))], Now: at}
			switch rng.IntN(5) {
			case 0:
			case 1:
				req.SessionID, req.UserID = "s2", "u2"
			default:
				req.SessionID, req.UserID = "s1", "u1"
			}
			if rng.IntN(3) == 0 {
				req.Roles = []string{"admin"}
			}
			req.Fresh = rng.IntN(8) == 0
			if rng.IntN(15) == 0 || frng.IntN(2) == 0 {
				req.Format = chat.Format(1 + frng.IntN(3)) // any of the three
			}
			req.ListHidden = rng.IntN(15) == 0
			var ok bool
			describe := fmt.Sprintf("run %d step %d (%s at %s, session %q, roles %v)", run, step, req.Template.Fingerprint(), at.Format(time.TimeOnly), req.SessionID, req.Roles)
			for repeat := range 1 + rng.IntN(2) {
				before := inc.indexed.Load()
				r1, err1 := inc.Assemble(ctx, req)
				if summaries && nsum > 0 && inc.indexed.Load() > before {
					sumIndexed++
				}
				if req.Format != 0 && inc.indexed.Load() > before {
					chatIndexed++
					if nx > 0 {
						callsIndexed++
					}
				}
				r2, err2 := full.Assemble(ctx, req)
				if fmt.Sprint(err1) != fmt.Sprint(err2) {
					t.Fatalf("%s: errors %v, %v", describe, err1, err2)
				}
				if err1 != nil {
					failures++
					break
				}
				assemblies++
				if req.SessionID != "" {
					withSession++
				}
				if r1.Tools != nil && len(r1.Tools.Kept) > 0 {
					withTools++
				}
				sameResult(t, fmt.Sprintf("%s repeat %d", describe, repeat), r1, r2)
				if len(r1.Conflicts()) > 0 {
					conflicts++
				}
				last, ok = [2]*Result{r1, r2}, true
			}
			if rng.IntN(4) == 0 {
				sameState(t, describe, inc, full)
			}
			if ok && req.SessionID == "" && req.Format == 0 && rng.IntN(3) == 0 {
				fresh++
				checkFresh(t, describe, inc, req, last[0], current)
			}
		}
		sameState(t, fmt.Sprintf("run %d, at the end", run), inc, full)
		indexed += int(inc.indexed.Load())
		if full.indexed.Load() != 0 {
			t.Fatal("the engine that assembles from scratch assembled from an index")
		}
		inc.Close()
		full.Close()
	}
	t.Logf("%d assemblies (%d with a session, %d incremental, %d of them in a chat format, %d with tools), %d failed alike, %d compared with a fresh engine",
		assemblies, withSession, indexed, chatIndexed, withTools, failures, fresh)
	t.Logf("%d incremental chat assemblies with tool exchanges in the store, %d incremental with summaries", callsIndexed, sumIndexed)
	if sumIndexed == 0 {
		t.Errorf("the runs do not cover incremental summaries")
	}
	if callsIndexed < chatIndexed/8 {
		t.Errorf("the runs do not cover incremental tool exchanges: %d of %d", callsIndexed, chatIndexed)
	}
	if chatIndexed < indexed/4 {
		t.Errorf("the runs do not cover incremental chat assemblies: %d of %d", chatIndexed, indexed)
	}
	if conflicts == 0 {
		t.Errorf("no assembly had a conflict")
	}
	if assemblies < runs*steps/2 || withSession == 0 || fresh == 0 || failures == 0 || indexed < assemblies/3 || withTools == 0 {
		t.Errorf("the runs do not cover enough: %d assemblies, %d with a session, %d incremental, %d failed, %d fresh", assemblies, withSession, indexed, failures, fresh)
	}
}

// sameResult fails unless two Results are the same, byte for byte.
func sameResult(t *testing.T, describe string, r1, r2 *Result) {
	t.Helper()
	d1, err := json.Marshal(r1.Dump())
	if err != nil {
		t.Fatal(err)
	}
	d2, err := json.Marshal(r2.Dump())
	if err != nil {
		t.Fatal(err)
	}
	switch {
	case r1.Text != r2.Text:
		t.Fatalf("%s: texts differ:\n%q\n%q", describe, r1.Text, r2.Text)
	case string(d1) != string(d2):
		i := 0
		for i < len(d1) && i < len(d2) && d1[i] == d2[i] {
			i++
		}
		from := max(0, i-300)
		t.Fatalf("%s: dumps differ at byte %d:\n…%s\n…%s", describe, i, d1[from:min(len(d1), i+200)], d2[from:min(len(d2), i+200)])
	case !reflect.DeepEqual(r1.Sections(), r2.Sections()) || !reflect.DeepEqual(r1.Events(), r2.Events()):
		t.Fatalf("%s: sections or events differ", describe)
	case !reflect.DeepEqual(r1.Audit(), r2.Audit()):
		t.Fatalf("%s: audit records differ:\n%+v\n%+v", describe, r1.Audit(), r2.Audit())
	case !maps.Equal(r1.ExcludedCounts, r2.ExcludedCounts) || r1.RenderHash != r2.RenderHash || r1.TotalTokens != r2.TotalTokens:
		t.Fatalf("%s: counts or hashes differ", describe)
	}
}

// sameState fails unless the two Engines' learned states, heat included,
// are the same.
func sameState(t *testing.T, describe string, e1, e2 *Engine) {
	t.Helper()
	s1, s2 := e1.State(), e2.State()
	if !reflect.DeepEqual(s1.Heat, s2.Heat) {
		for id, h := range s2.Heat {
			if s1.Heat[id] != h {
				t.Errorf("%s: heat of %s is %+v, from scratch %+v", describe, id, s1.Heat[id], h)
			}
		}
		t.Fatalf("%s: heat differs", describe)
	}
	if !reflect.DeepEqual(s1.Trust, s2.Trust) || !reflect.DeepEqual(s1.Sessions, s2.Sessions) {
		t.Fatalf("%s: learned states differ", describe)
	}
}

// checkFresh assembles req, which has no conversation, on a fresh Engine
// given e's blocks (declared as current has them, in e's declaration
// order, with the trust e's blocks carry) and compares the two.
func checkFresh(t *testing.T, describe string, e *Engine, req Request, r1 *Result, current map[string]declare.Declaration) {
	t.Helper()
	blocks := slices.Clone(e.blocks())
	slices.SortFunc(blocks, func(a, b *assemble.Block) int { return cmp.Compare(a.Seq, b.Seq) })
	f, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var decls []declare.Declaration
	for _, b := range blocks {
		d, ok := current[b.ID]
		if !ok {
			t.Fatalf("%s: the engine holds %s, which the test does not", describe, b.ID)
		}
		trust := b.Trust
		d.TrustScore = &trust
		decls = append(decls, d)
	}
	if len(decls) != len(current) {
		t.Fatalf("%s: the engine holds %d blocks, the test %d", describe, len(decls), len(current))
	}
	if err := f.Declare(decls...); err != nil {
		t.Fatalf("%s: declaring the blocks again: %v", describe, err)
	}
	r2, err := f.Assemble(context.Background(), req)
	if err != nil {
		t.Fatalf("%s: fresh engine: %v", describe, err)
	}
	sameResult(t, describe+" (fresh engine)", r1, r2)
}

// TestIncrementalConcurrent assembles from six goroutines at once, each a
// conversation of its own session (more request shapes than the Engine
// keeps indexes for, by count or by memory, so indexes are evicted, and
// as the goroutines interleave, while others use them), and
// checks every Result, and the heat in the end, against an Engine that
// assembles the same conversations one after the other from scratch. Now
// moves on every call: a call at the same now as the one before may be
// served by the output memo (a repeat), and whether it is depends on
// what the other goroutines assembled in between.
func TestIncrementalConcurrent(t *testing.T) {
	tpl, err := template.Parse([]byte(turnTemplates[0]), "turn.json")
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(5, 5))
	var decls []declare.Declaration
	for i := range 300 {
		d := randomDecl(rng, fmt.Sprintf("b%03d", i), turnNow, false)
		if d.Scope == declare.ScopeSession {
			d.SessionID = fmt.Sprintf("s%d", i%6)
		}
		d.Roles, d.Audience, d.Required = nil, nil, false
		decls = append(decls, d)
	}
	for _, cfg := range []Config{{MaxIndexes: 4}, {IndexBytes: 1}} { // IndexBytes 1: each call evicts every other index
		t.Run(fmt.Sprintf("max=%d,bytes=%d", cfg.MaxIndexes, cfg.IndexBytes), func(t *testing.T) {
			incrementalConcurrent(t, tpl, decls, cfg)
		})
	}
}

func incrementalConcurrent(t *testing.T, tpl *template.Template, decls []declare.Declaration, cfg Config) {
	inc := newTestEngine(t, cfg, decls)
	full := newTestEngine(t, Config{}, decls)
	full.fullOnly = true
	const goroutines, calls = 6, 15
	results := make([][]*Result, goroutines)
	done := make(chan int)
	for g := range goroutines {
		go func() {
			defer func() { done <- g }()
			for c := range calls {
				res, err := inc.Assemble(context.Background(), Request{Template: tpl, Now: turnNow.Add(time.Duration(c) * time.Minute), SessionID: fmt.Sprintf("s%d", g)})
				if err != nil {
					t.Error(err)
					return
				}
				results[g] = append(results[g], res)
			}
		}()
	}
	for range goroutines {
		<-done
	}
	if t.Failed() {
		return
	}
	for g := range goroutines {
		for c := range calls {
			want, err := full.Assemble(context.Background(), Request{Template: tpl, Now: turnNow.Add(time.Duration(c) * time.Minute), SessionID: fmt.Sprintf("s%d", g)})
			if err != nil {
				t.Fatal(err)
			}
			sameResult(t, fmt.Sprintf("goroutine %d call %d", g, c), results[g][c], want)
		}
	}
	sameState(t, "after the concurrent conversations", inc, full)
	inc.ixs.mu.Lock()
	evicted := inc.ixs.evicted
	inc.ixs.mu.Unlock()
	if inc.indexed.Load() == 0 || evicted == 0 {
		t.Errorf("%d calls served incrementally, %d indexes evicted: the bound is not met", inc.indexed.Load(), evicted)
	}
}

func newTestEngine(t *testing.T, cfg Config, decls []declare.Declaration) *Engine {
	t.Helper()
	e, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	if err := e.Declare(decls...); err != nil {
		t.Fatal(err)
	}
	return e
}

// randomExchange declares the n-th tool exchange of a conversation around
// at: an assistant turn of session s1 or s2 making one or two calls, now
// and then with reasoning, and the tool results that answer them (one
// now and then missing: the call is an orphan).
func randomExchange(rng *rand.Rand, n int, at time.Time) []declare.Declaration {
	session := []string{"s1", "s1", "s2"}[rng.IntN(3)]
	lm := at.Add(time.Duration(rng.IntN(180)-150) * time.Minute)
	turn := func(id string, role declare.Role, content string) declare.Declaration {
		w := float64(rng.IntN(5)) / 4
		t := lm
		lm = lm.Add(time.Second)
		return declare.Declaration{RequestID: id, MemoryType: declare.History, Scope: declare.ScopeSession, SessionID: session,
			Role: role, Content: content, SemanticWeight: &w, LastModified: &t}
	}
	asst := turn(fmt.Sprintf("x%03d-a", n), declare.RoleAssistant, turnPhrases[rng.IntN(len(turnPhrases))])
	for c := range 1 + rng.IntN(2) {
		asst.ToolCalls = append(asst.ToolCalls, declare.ToolCall{ID: fmt.Sprintf("call_%d_%d", n, c), Name: "lookup_rate", Arguments: `{"q":"rate"}`})
	}
	if rng.IntN(3) == 0 {
		var r declare.Reasoning
		if err := json.Unmarshal([]byte(`{"type":"thinking","thinking":"check the rate","signature":"c2ln"}`), &r); err != nil {
			panic(err)
		}
		asst.Reasoning = []declare.Reasoning{r}
	}
	out := []declare.Declaration{asst}
	for c, call := range asst.ToolCalls {
		if rng.IntN(8) == 0 {
			continue
		}
		var content string
		for range 1 + rng.IntN(8) {
			content += turnPhrases[rng.IntN(len(turnPhrases))] + " "
		}
		res := turn(fmt.Sprintf("x%03d-r%d", n, c), declare.RoleTool, content)
		res.ToolCallID = call.ID
		out = append(out, res)
	}
	return out
}
