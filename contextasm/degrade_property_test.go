package contextasm_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/contextasm/contextasm/chat"
	"github.com/contextasm/contextasm/contextasm"
	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/internal/bpe"
	"github.com/contextasm/contextasm/internal/chatcheck"
	"github.com/contextasm/contextasm/outcome"
)

// degraded adds the degradation fields to a generated conversation (see
// session): variants on some turns and on the context block, max_tokens
// on some tool results, a superseded fact, and summaries of runs of
// consecutive turns — some naming a turn that is gone, some naming an
// earlier summary, some overlapping, some of tool exchanges.
func degraded(r *rand.Rand, decls []declare.Declaration) []declare.Declaration {
	shorter := func(content string) []string {
		w := strings.Fields(content)
		var vs []string
		for n := len(w) / 2; n > 0 && len(vs) < 3; n /= 2 {
			v := strings.Join(w[:n], " ")
			if len(v) < len(content) && (len(vs) == 0 || len(v) < len(vs[len(vs)-1])) {
				vs = append(vs, v)
			}
		}
		return vs
	}
	var turns []string // history, in time order (session declares it so)
	for i := range decls {
		d := &decls[i]
		switch {
		case d.MemoryType == declare.Context && r.IntN(2) == 0:
			d.Variants = shorter(d.Content)
		case d.MemoryType != declare.History:
		case d.ChatRole() == declare.RoleTool && r.IntN(3) == 0:
			d.MaxTokens = ptr(3 + r.IntN(30))
		case d.Content != "" && r.IntN(3) == 0:
			d.Variants = shorter(d.Content)
		}
		if d.MemoryType == declare.History {
			turns = append(turns, d.RequestID)
		}
	}
	decls = append(decls,
		declare.Declaration{RequestID: "fact-v1", MemoryType: declare.Context, Scope: declare.ScopeGlobal, Content: "The rate is 7.4%."},
		declare.Declaration{RequestID: "fact-v2", MemoryType: declare.Context, Scope: declare.ScopeGlobal, Content: "The rate is 6.9%.", Supersedes: []string{"fact-v1"}})
	var sums []string
	for k := range r.IntN(4) {
		if len(turns) == 0 {
			break
		}
		i := r.IntN(len(turns))
		n := min(1+r.IntN(6), len(turns)-i)
		d := declare.Declaration{RequestID: fmt.Sprintf("sum-%d", k), MemoryType: declare.History, Scope: declare.ScopeSession, SessionID: "s1",
			Replaces: slices.Clone(turns[i : i+n]), Content: "SUMMARY " + words(r, 2+r.IntN(12))}
		if r.IntN(6) == 0 {
			d.Replaces = append(d.Replaces, fmt.Sprintf("gone-%d", k)) // forgotten: the summary is all there is of it
		}
		if len(sums) > 0 && r.IntN(4) == 0 {
			d.Replaces = append(d.Replaces, sums[r.IntN(len(sums))])
		}
		if r.IntN(3) == 0 {
			d.Variants = shorter(d.Content)
		}
		// Written lately; distinct times (turns are whole seconds), since
		// a tie on time falls to declaration order.
		at := chatNow.Add(-time.Duration(r.IntN(30))*time.Minute - time.Duration(k+1)*time.Millisecond)
		d.LastModified = &at
		if r.IntN(2) == 0 {
			d.Role = declare.RoleAssistant
		}
		decls = append(decls, d)
		sums = append(sums, d.RequestID)
	}
	return decls
}

// plainOf returns decls as a host without these fields would declare
// them: no summaries, no variants.
func plainOf(decls []declare.Declaration) []declare.Declaration {
	var out []declare.Declaration
	for _, d := range decls {
		if len(d.Replaces) > 0 {
			continue
		}
		d.Variants = nil
		out = append(out, d)
	}
	return out
}

// represented returns the ids of the blocks res holds or stands for: each
// block in it but a summary, each turn a summary in it stood in for
// (summarized, by it), and each id a summary in it names, directly or
// through summaries it names, that no section holds (forgotten, expired,
// an orphan): the summary is all the context has of it.
func represented(res *contextasm.Result, decls []declare.Declaration) map[string]bool {
	by := map[string]*declare.Declaration{}
	for i := range decls {
		by[decls[i].RequestID] = &decls[i]
	}
	in, eligible := map[string]bool{}, map[string]bool{}
	for _, s := range res.Sections() {
		for _, b := range s.Blocks {
			eligible[b.RequestID] = true
			if b.Status != outcome.StatusDropped {
				in[b.RequestID] = true
			}
		}
	}
	rep := map[string]bool{}
	for id := range in {
		if d := by[id]; d == nil || len(d.Replaces) == 0 {
			rep[id] = true
			continue
		}
		queue, seen := slices.Clone(by[id].Replaces), map[string]bool{}
		for len(queue) > 0 {
			x := queue[0]
			queue = queue[1:]
			if seen[x] {
				continue
			}
			seen[x] = true
			switch d := by[x]; {
			case d != nil && len(d.Replaces) > 0:
				queue = append(queue, d.Replaces...)
			case !eligible[x]:
				rep[x] = true // the summary is all the context has of it
			}
		}
	}
	for _, e := range res.Events() {
		if e.Reason == outcome.ReasonSummarized && in[e.By] {
			rep[e.RequestID] = true
		}
	}
	return rep
}

// checkDegraded checks the guarantees of docs/degrade.md on one result.
func checkDegraded(t *testing.T, what string, tok *bpe.Tokenizer, decls []declare.Declaration, res *contextasm.Result) {
	t.Helper()
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("%s: %s\ntext:\n%s\nmessages: %+v\nevents: %+v", what, fmt.Sprintf(format, args...), res.Text, res.Messages().Messages, res.Events())
	}
	by := map[string]*declare.Declaration{}
	for i := range decls {
		by[decls[i].RequestID] = &decls[i]
	}
	if res.TotalTokens > res.Budget {
		fail("%d tokens over the budget %d", res.TotalTokens, res.Budget)
	}
	conv := res.Messages()
	if res.Format == 0 {
		if n := tok.Count(res.Text); n != res.TotalTokens {
			fail("the text counts %d, TotalTokens %d", n, res.TotalTokens)
		}
	} else {
		body, err := chat.Encode(res.Format, conv)
		if err != nil {
			fail("encode: %v", err)
		}
		check := chatcheck.OpenAI
		if res.Format == chat.FormatAnthropic {
			check = chatcheck.Anthropic
		}
		if err := check(body, chatcheck.Options{AllowNoMessages: true}); err != nil {
			fail("%v\n%s", err, body)
		}
	}
	status, variant := map[string]outcome.Status{}, map[string]int{}
	for _, s := range res.Sections() {
		if s.UsedTokens > s.MaxTokens {
			fail("section %s uses %d tokens, over its cap %d", s.Name, s.UsedTokens, s.MaxTokens)
		}
		for _, b := range s.Blocks {
			status[b.RequestID], variant[b.RequestID] = b.Status, b.Variant
			if b.Status != outcome.StatusDropped && b.Variant > 0 && b.Length > 0 {
				v := by[b.RequestID].Variants[b.Variant-1]
				if span := res.Text[b.Offset : b.Offset+b.Length]; !strings.Contains(span, v[:min(len(v), 12)]) {
					fail("%s is written as variant %d but its text is %q", b.RequestID, b.Variant, span)
				}
			}
		}
	}
	for _, m := range conv.Messages {
		d := by[m.BlockIDs[0]]
		form := d.Content
		if k := variant[d.RequestID]; k > 0 {
			form = d.Variants[k-1]
		}
		clipped := strings.Contains(m.Content, "[clipped: ") && (d.MaxTokens != nil || d.ToolCallID != "")
		cleared := d.ToolCallID != "" && strings.HasPrefix(m.Content, "[tool result cleared: ") && strings.Contains(m.Content, ", call "+d.ToolCallID+", ")
		if status[d.RequestID] == outcome.StatusKept && m.Content != form && !clipped && !cleared {
			fail("message of %s is %q, not its form %q", d.RequestID, m.Content, form)
		}
	}
	events := map[string][]outcome.Event{}
	for _, e := range res.Events() {
		events[e.RequestID] = append(events[e.RequestID], e)
	}
	in := func(id string) bool { st, ok := status[id]; return ok && st != outcome.StatusDropped }
	rep := represented(res, decls)
	for _, d := range decls {
		if in(d.RequestID) {
			continue
		}
		explained := slices.ContainsFunc(events[d.RequestID], func(e outcome.Event) bool { return e.Kind != outcome.KindNotice })
		if !explained {
			fail("%s left out without an event", d.RequestID)
		}
		if d.Required && d.ValidUntil == nil {
			fail("required %s left out", d.RequestID)
		}
		for _, e := range events[d.RequestID] {
			if e.Reason == outcome.ReasonSummarized && !in(e.By) && !rep[d.RequestID] {
				fail("%s summarized by %s, which is not in the text", d.RequestID, e.By)
			}
		}
	}
	// A summary stands in for all its turns or none: none of the turns it
	// stands for is in the text with it.
	for _, d := range decls {
		if len(d.Replaces) == 0 || !in(d.RequestID) {
			continue
		}
		for _, e := range res.Events() {
			if e.By == d.RequestID && e.Reason == outcome.ReasonSummarized && in(e.RequestID) {
				fail("%s is in the text with its summary %s", e.RequestID, d.RequestID)
			}
		}
		for _, id := range d.Replaces {
			if in(id) {
				fail("%s is in the text with its summary %s", id, d.RequestID)
			}
		}
	}
	// Never orphaned.
	answer := map[string]string{}
	for _, d := range decls {
		if d.ToolCallID != "" {
			answer[d.ToolCallID] = d.RequestID
		}
	}
	for _, d := range decls {
		for _, c := range d.ToolCalls {
			if in(d.RequestID) != in(answer[c.ID]) {
				fail("call %s of %s and its result %s part", c.ID, d.RequestID, answer[c.ID])
			}
		}
	}
}

// TestDegradeProperties assembles generated conversations with summaries
// and variants at random budgets and caps, in the text and both chat
// formats, and checks that the kept information is never less than
// dropping alone keeps: every turn is in the context whole, as a variant
// or inside a summary in it, or has an event, and the context stands for
// at least as many blocks as the same conversation without the fields.
func TestDegradeProperties(t *testing.T) {
	tok := o200k(t)
	r := rand.New(rand.NewPCG(11, 0xDE6A))
	conversations := 250
	if testing.Short() {
		conversations = 50
	}
	stats := map[string]int{}
	for i := range conversations {
		decls := degraded(r, session(r, 3+r.IntN(16)))
		tpl := chatTemplate(t, 80+r.IntN(700), 60+r.IntN(700), r.IntN(2) == 0)
		if i%5 == 0 {
			tpl = parseTemplate(t, strings.Replace(string(tpl.Canonical()), `"fill":"stop"`, `"fill":"skip"`, -1))
		}
		for _, f := range []chat.Format{0, chat.FormatOpenAI, chat.FormatAnthropic} {
			what := fmt.Sprintf("conversation %d, format %v", i, f)
			req := contextasm.Request{Template: tpl, Now: chatNow, SessionID: "s1", Format: f}
			res, err := newEngine(t, contextasm.Config{}, decls...).Assemble(context.Background(), req)
			if errors.Is(err, contextasm.ErrBudgetTooSmall) {
				stats["too small"]++
				continue
			}
			if err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			checkDegraded(t, what, tok, decls, res)
			for _, e := range res.Events() {
				stats[string(e.Reason)]++
			}
			stats["candidates"] += len(res.SummarizeCandidates)

			plainDecls := plainOf(decls)
			plain, err := newEngine(t, contextasm.Config{}, plainDecls...).Assemble(context.Background(), req)
			if err != nil {
				continue // the required blocks alone do not fit without degrading
			}
			got, want := len(represented(res, decls)), len(represented(plain, plainDecls))
			if got < want {
				dump := func(res *contextasm.Result) string {
					var b strings.Builder
					for _, s := range res.Sections() {
						for _, x := range s.Blocks {
							fmt.Fprintf(&b, "%s %s %s %d v%d %.4f\n", x.RequestID, x.Status, x.Reason, x.Tokens, x.Variant, x.Score)
						}
					}
					for _, e := range res.Events() {
						fmt.Fprintf(&b, "%+v\n", e)
					}
					return b.String()
				}
				for _, d := range decls {
					t.Logf("%s %q variants=%q replaces=%q lm=%v", d.RequestID, d.Content, d.Variants, d.Replaces, d.LastModified)
				}
				t.Fatalf("%s: %d blocks represented, %d without summaries and variants\n%s\nplain:\n%s\n%s", what, got, want, dump(res), dump(plain), tpl.Canonical())
			}
			if got > want {
				stats["more than plain"]++
			}

			// Determinism: another engine, another declaration order.
			shuffled := slices.Clone(decls)
			r.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
			again := assemble(t, newEngine(t, contextasm.Config{}, shuffled...), req)
			if again.RenderHash != res.RenderHash || !slices.Equal(again.Events(), res.Events()) {
				t.Fatalf("%s: another declaration order gives another result", what)
			}
		}
	}
	t.Logf("%v", stats)
	for _, k := range []string{"degraded", "summarized", "turns_kept", "superseded", "clipped", "budget", "section_cap", "candidates", "more than plain", "no_gain"} {
		if stats[k] == 0 {
			t.Errorf("no assembly had %q: the generator does not test it (%v)", k, stats)
		}
	}
}

// TestDegradeConversationLoop drives generated conversations call by call
// as a host would: before each call the next turns are declared, after it
// every summarize candidate is summarised and declared with replaces. The
// guarantees hold on every call, following the previous decision.
func TestDegradeConversationLoop(t *testing.T) {
	tok := o200k(t)
	r := rand.New(rand.NewPCG(12, 0x100B))
	conversations := 40
	if testing.Short() {
		conversations = 10
	}
	stats := map[string]int{}
	for i := range conversations {
		all := degraded(r, session(r, 10+r.IntN(20)))
		var turns []declare.Declaration
		for _, d := range all {
			if d.MemoryType == declare.History && len(d.Replaces) == 0 {
				turns = append(turns, d)
			}
		}
		tpl := chatTemplate(t, 150+r.IntN(400), 100+r.IntN(400), r.IntN(2) == 0)
		f := []chat.Format{0, chat.FormatOpenAI, chat.FormatAnthropic}[i%3]
		eng := newEngine(t, contextasm.Config{}, all[:2]...) // the rule and the context
		declared := slices.Clone(all[:2])
		summaries := 0
		for k := 0; k < len(turns); {
			// The next turns up to a user turn, with their calls and
			// results together.
			j := k + 1
			for j < len(turns) && (turns[j].ChatRole() == declare.RoleTool || turns[j-1].ChatRole() == declare.RoleTool || len(turns[j-1].ToolCalls) > 0) {
				j++
			}
			if err := eng.Declare(turns[k:j]...); err != nil {
				t.Fatalf("conversation %d: %v", i, err)
			}
			declared = append(declared, turns[k:j]...)
			k = j
			now := *turns[j-1].LastModified
			what := fmt.Sprintf("conversation %d, call at turn %d, format %v", i, k, f)
			res, err := eng.Assemble(context.Background(), contextasm.Request{Template: tpl, Now: now, SessionID: "s1", Format: f})
			if errors.Is(err, contextasm.ErrBudgetTooSmall) {
				stats["too small"]++
				continue
			}
			if err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			checkDegraded(t, what, tok, declared, res)
			for _, e := range res.Events() {
				stats[string(e.Reason)]++
			}
			for _, run := range res.SummarizeCandidates {
				if len(run.IDs) > declare.MaxReplaces {
					t.Fatalf("%s: a run of %d ids", what, len(run.IDs))
				}
				// A block a declared summary already stands for is never
				// offered again: that would cost the host a second
				// summarising call for the same turns.
				for _, d := range declared {
					for _, id := range run.IDs {
						if slices.Contains(d.Replaces, id) {
							t.Errorf("%s: run %v offers %s, which %s already replaces", what, run.IDs, id, d.RequestID)
						}
					}
				}
				summaries++
				at := now.Add(time.Second)
				s := declare.Declaration{RequestID: fmt.Sprintf("loop-sum-%d", summaries), MemoryType: declare.History, Scope: declare.ScopeSession,
					SessionID: "s1", LastModified: &at, Replaces: run.IDs, Content: "SUMMARY " + words(r, 3+r.IntN(8))}
				if err := eng.Declare(s); err != nil {
					t.Fatalf("%s: declaring the summary of %v: %v", what, run.IDs, err)
				}
				declared = append(declared, s)
				stats["summaries declared"]++
			}
		}
	}
	t.Logf("%v", stats)
	for _, k := range []string{"summarized", "summaries declared"} {
		if stats[k] == 0 {
			t.Errorf("no call had %q (%v)", k, stats)
		}
	}
}
