package assemble_test

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/contextasm/contextasm/chat"
	"github.com/contextasm/contextasm/contextasm/internal/assemble"
	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/internal/lexical"
	"github.com/contextasm/contextasm/outcome"
	"github.com/contextasm/contextasm/template"
	"github.com/contextasm/contextasm/truncate"
)

// summaryHistory returns runs of ten turns, each with a summary naming
// its turns and, when chained, the summary before it: what a host
// declares summarising every run it was told of.
func summaryHistory(runs int, chained bool) []assemble.Block {
	var blocks []assemble.Block
	for r := range runs {
		var ids []string
		for k := range 10 {
			id := fmt.Sprintf("t%04d-%d", r, k)
			blocks = append(blocks, turnAt(id, 6, 100000-r*11-k))
			ids = append(ids, id)
		}
		if chained && r > 0 {
			ids = append(ids, fmt.Sprintf("s%04d", r-1))
		}
		blocks = append(blocks, summaryOf(fmt.Sprintf("s%04d", r), 5, 100000-r*11-10, ids...))
	}
	return blocks
}

// manySummariesTemplate has one history section in time order, room for
// about fifty turns.
const manySummariesTemplate = `{"budget": 8192, "sections": [
 {"name": "HISTORY", "priority": 1, "memory_types": ["history"], "max_tokens": 400, "render": "{content}", "order": "time", "fill": "stop"}]}`

// Many summaries: chained, each superseded by the newest, which stands
// for all of their turns; independent, none superseded. Every block is
// explained either way.
func TestManySummaries(t *testing.T) {
	tpl := mustParse(t, manySummariesTemplate)
	for _, chained := range []bool{true, false} {
		t.Run(fmt.Sprint("chained=", chained), func(t *testing.T) {
			const runs = 300
			out := mustAssemble(t, tpl, summaryHistory(runs, chained), assemble.Request{})
			checkExplained(t, out)
			newest := fmt.Sprintf("s%04d", runs-1)
			superseded := 0
			for r := range runs {
				for _, e := range eventsOf(out, fmt.Sprintf("s%04d", r)) {
					if e.Reason == outcome.ReasonSuperseded {
						superseded++
						if e.By != newest {
							t.Errorf("s%04d superseded by %s, want %s", r, e.By, newest)
						}
					}
				}
			}
			if want := map[bool]int{true: runs - 1, false: 0}[chained]; superseded != want {
				t.Errorf("%d summaries superseded, want %d", superseded, want)
			}
		})
	}
}

// BenchmarkManySummaries assembles a history of chained summaries: the
// cost grows with the blocks, not with their square (10× the runs, about
// 10× the time).
func BenchmarkManySummaries(b *testing.B) {
	for _, runs := range []int{100, 1000} {
		b.Run(fmt.Sprintf("summaries=%d", runs), func(b *testing.B) {
			tpl := mustParse(b, manySummariesTemplate)
			blocks := summaryHistory(runs, true)
			a := assemble.Assembler{}
			tok := realTokenizer(b)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := a.Assemble(tpl, blocks, assemble.Request{}, tok); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkIndexedSummaries is one call at a clock moving a second a
// call, on a history of runs of turns each with its summary (chained:
// each naming the one before too, the worst case: the newest stands for
// every turn), in the OpenAI format: from scratch (full) and from an
// Index kept at the clock (indexed), which must give the same text.
func BenchmarkIndexedSummaries(b *testing.B) {
	for _, runs := range []int{200, 2000} {
		for _, chained := range []bool{false, true} {
			tpl := mustParse(b, manySummariesTemplate)
			blocks, get := summaryStore(runs, chained)
			tok := &memoCounter{Counter: realTokenizer(b), counts: map[string]int{}}
			req := assemble.Request{Chat: assemble.ChatCost{Format: chat.FormatOpenAI, PerMessage: 3, Reply: 3}}
			name := fmt.Sprintf("blocks=%d/chained=%v", len(blocks), chained)
			b.Run(name+"/full", func(b *testing.B) {
				a := assemble.Assembler{SortedByID: true}
				at := now
				for b.Loop() {
					at = at.Add(time.Second)
					req.Now = at
					if _, err := a.AssembleRefs(tpl, blocks, req, tok); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run(name+"/indexed", func(b *testing.B) {
				a, full := assemble.Assembler{SortedByID: true}, assemble.Assembler{SortedByID: true}
				x := assemble.NewIndex(tpl, req, truncate.Scoring{})
				at := now
				x.Build(blocks, at)
				for b.Loop() {
					at = at.Add(time.Second)
					req.Now = at
					out, ok, err := indexedAt(&a, x, blocks, req, tok, get)
					if !ok || err != nil {
						b.Fatalf("not served: %v", err)
					}
					if b.N == 1 {
						want, _ := full.AssembleRefs(tpl, blocks, req, tok)
						if want.Text != out.Text || !reflect.DeepEqual(want.Messages, out.Messages) {
							b.Fatal("the indexed assembly differs from the full one")
						}
					}
				}
			})
		}
	}
}

// TestIndexedServesSummaries: a history of summarised runs, chained or
// not, in a chat format at a moving clock, is served by the Index and
// gives the full assembly's text and messages; not chained, it looks at
// a small part of the index.
func TestIndexedServesSummaries(t *testing.T) {
	tpl := mustParse(t, manySummariesTemplate)
	tok := &memoCounter{Counter: realTokenizer(t), counts: map[string]int{}}
	for _, chained := range []bool{false, true} {
		blocks, get := summaryStore(300, chained)
		req := assemble.Request{Chat: assemble.ChatCost{Format: chat.FormatOpenAI, PerMessage: 3, Reply: 3}}
		x := assemble.NewIndex(tpl, req, truncate.Scoring{})
		at := now
		x.Build(blocks, at)
		var a, full assemble.Assembler
		for step := range 5 {
			at = at.Add(time.Second)
			req.Now = at
			out, _ := servedAsFull(t, fmt.Sprintf("chained=%v step %d", chained, step), &a, &full, x, tpl, blocks, req, tok, get)
			if len(out.Messages) == 0 {
				t.Fatalf("chained=%v step %d: no messages", chained, step)
			}
			// Chained, the newest summary stands for every turn: the walk
			// passes over all of them (without making them candidates).
			if !chained && a.Looked() > len(blocks)/4 {
				t.Errorf("chained=%v step %d: looked at %d index entries of %d", chained, step, a.Looked(), len(blocks))
			}
		}
	}
}

// summaryStore returns summaryHistory's blocks as a store holds them (by
// request_id) and its lookup.
func summaryStore(runs int, chained bool) ([]*assemble.Block, func(string) (*assemble.Block, bool)) {
	var blocks []*assemble.Block
	for _, bl := range summaryHistory(runs, chained) {
		blocks = append(blocks, &bl)
	}
	get := sortedLookup(blocks)
	return blocks, get
}

// sortedLookup sorts blocks by request_id, as a store holds them, and
// returns their lookup.
func sortedLookup(blocks []*assemble.Block) func(string) (*assemble.Block, bool) {
	slices.SortFunc(blocks, func(p, q *assemble.Block) int { return strings.Compare(p.ID, q.ID) })
	return func(id string) (*assemble.Block, bool) {
		i, ok := slices.BinarySearchFunc(blocks, id, func(x *assemble.Block, id string) int { return strings.Compare(x.ID, id) })
		if !ok {
			return nil, false
		}
		return blocks[i], true
	}
}

// servedAsFull assembles req from x (indexedAt) and from scratch with
// full, failing unless x serves it and both give the same text and
// messages; describe names the step.
func servedAsFull(t *testing.T, describe string, a, full *assemble.Assembler, x *assemble.Index, tpl *template.Template, blocks []*assemble.Block, req assemble.Request, c truncate.Counter, get func(string) (*assemble.Block, bool)) (out, want *assemble.Output) {
	t.Helper()
	out, ok, err := indexedAt(a, x, blocks, req, c, get)
	if !ok || err != nil {
		t.Fatalf("%s: not served (%v)", describe, err)
	}
	if want, err = full.AssembleRefs(tpl, blocks, req, c); err != nil {
		t.Fatal(err)
	}
	if out.Text != want.Text || !reflect.DeepEqual(out.Messages, want.Messages) {
		t.Fatalf("%s: the indexed assembly differs from the full one: %d messages, full %d", describe, len(out.Messages), len(want.Messages))
	}
	return out, want
}

// indexedAt moves x to req.Now, as the engine does, and assembles from it.
func indexedAt(a *assemble.Assembler, x *assemble.Index, blocks []*assemble.Block, req assemble.Request, c truncate.Counter, get func(string) (*assemble.Block, bool)) (*assemble.Output, bool, error) {
	if !x.Serves(req.Now) {
		x.Refresh(blocks, req.Now)
	}
	out, _, ok, err := a.AssembleIndexed(x, req, c, get)
	return out, ok, err
}

// TestSummarisedAsItGoes: a conversation whose host summarises every run
// it is offered, as it goes (the summaries of runs that hold summaries
// chain them), is served incrementally and gives the full assembly's
// text, messages and runs at every call; the plan of its summaries is
// extended, not made again, and neither what an assembly makes
// candidates of nor the history it reads for the runs it offers grows
// with what was summarised before; nor do the blocks of the plan it
// seeks rather than finds where the plan found them (the replacements'
// lane's, the summaries it leaves out).
func TestSummarisedAsItGoes(t *testing.T) {
	tpl := mustParse(t, `{"budget": 8192, "sections": [
 {"name": "CONTEXT", "priority": 1, "memory_types": ["context"], "max_tokens": 300, "render": "<context>{content}</context>", "fill": "skip"},
 {"name": "HISTORY", "priority": 2, "memory_types": ["history"], "max_tokens": 400, "render": "{content}", "fill": "skip"}]}`)
	tok := &memoCounter{Counter: realTokenizer(t), counts: map[string]int{}}
	s := &store{heat: map[string]*assemble.Heat{}}
	for i := range 30 {
		s.put(keyedPtr(&assemble.Block{ID: fmt.Sprintf("c%03d", i), Type: declare.Context, Scope: declare.ScopeGlobal, ForAssistant: true,
			Weight: float64(i%5) / 4, Trust: 0.5, Content: fmt.Sprintf("a document about fee number %d and its rate", i), LastModified: now}))
	}
	turn := func(id string, role declare.Role, content string, at time.Time) *assemble.Block {
		return keyedPtr(&assemble.Block{ID: id, Type: declare.History, Scope: declare.ScopeSession, SessionID: "s1", ForAssistant: true,
			Weight: 0.5, Trust: 0.5, Role: role, Content: content, LastModified: at})
	}
	req := assemble.Request{SessionID: "s1", Record: true, Chat: assemble.ChatCost{Format: chat.FormatOpenAI, PerMessage: 3, Reply: 3}}
	at := now
	req.Now = at
	x := assemble.NewIndex(tpl, req, truncate.Scoring{})
	x.Build(s.blocks, at)
	var a, full assemble.Assembler
	const calls = 120
	var made, looked, summarised, sought [calls]int
	nsum, declaring := 0, 0 // summaries, and calls that declared some
	for call := range calls {
		at = at.Add(time.Minute)
		for _, b := range []*assemble.Block{
			turn(fmt.Sprintf("t%04d-a", call), declare.RoleUser, fmt.Sprintf("USER: what is fee number %d?", call%30), at),
			turn(fmt.Sprintf("t%04d-b", call), declare.RoleAssistant, fmt.Sprintf("ASSISTANT: fee number %d is the one in the rate sheet, paid monthly.", call%30), at.Add(time.Second)),
		} {
			x.Update(s.put(b), b)
		}
		req.Now = at.Add(2 * time.Second)
		out, want := servedAsFull(t, fmt.Sprintf("call %d", call), &a, &full, x, tpl, s.blocks, req, tok, s.get)
		made[call], looked[call] = a.CandidatesMade(), a.HistoryRead()
		sought[call] = a.PlanSought()
		if !reflect.DeepEqual(out.SummarizeCandidates, want.SummarizeCandidates) {
			t.Fatalf("call %d: the incremental assembly offers other runs than the full one", call)
		}
		if len(want.SummarizeCandidates) > 0 {
			declaring++
		}
		for _, run := range want.SummarizeCandidates {
			b := turn(fmt.Sprintf("sum%04d", nsum), declare.RoleAssistant, fmt.Sprintf("SUMMARY of %d turns about fees.", len(run.IDs)), req.Now)
			b.EditRare().Replaces = slices.Clone(run.IDs)
			x.Update(s.put(b), b)
			nsum++
		}
		for _, b := range s.blocks {
			summarised[call] += len(b.Replaces())
		}
		req.Previous = want.Decision
	}
	for c := calls - 1; c > 0; c-- {
		sought[c] -= sought[c-1]
	}
	t.Logf("%d summaries, declared after %d calls; %d plans extended; candidates made at calls 20, 60, 119: %d, %d, %d; history entries read for the runs to summarise: %d, %d, %d (%d, %d, %d turns summarised)",
		nsum, declaring, a.PlansExtended(), made[20], made[60], made[calls-1], looked[20], looked[60], looked[calls-1], summarised[20], summarised[60], summarised[calls-1])
	// The first assembly with summaries makes the plan; each after a
	// call that declared more extends it.
	if a.PlansExtended() < declaring-1-declaring/10 {
		t.Errorf("%d plans extended after %d calls that declared summaries: the plan was made again", a.PlansExtended(), declaring)
	}
	if looked[20] == 0 {
		t.Errorf("no history read for the runs to summarise at call 20: HistoryRead counts nothing")
	}
	if summarised[calls-1] < 3*summarised[20] || made[calls-1] > made[20]+made[20]/2 || looked[calls-1] > 3*looked[20] {
		t.Errorf("at call 20: %d candidates made, %d history entries read; at call %d: %d, %d (%d and %d turns summarised): they grow with what was summarised",
			made[20], looked[20], calls-1, made[calls-1], looked[calls-1], summarised[20], summarised[calls-1])
	}
	// The plan's blocks are found where the plan found them last, when
	// the plan is extended too: the assembly seeks only the ones the new
	// summaries bring.
	if early, late := slices.Max(sought[:calls/4]), slices.Max(sought[calls/2:]); late > 2*early {
		t.Errorf("the assembly sought up to %d blocks the plan had not found in a call of the first %d, and %d in one of the last %d: it seeks what was summarised before",
			early, calls/4, late, calls-calls/2)
	}
}

// TestToolExchangesKeepThePlan: a tool exchange declared in a
// conversation with summaries that reach none of its blocks keeps the
// plan of the summaries (a tool-using conversation declares one every
// other call, and the plan is what every summary reaches), and a link
// that joins a block a summary reaches (the result of a call a summary
// names, declared after it) has the plan made again. Every plan kept is
// checked against one made again, and every output against the full
// assembly's.
func TestToolExchangesKeepThePlan(t *testing.T) {
	defer assemble.CheckPlans(t.Errorf)()
	tpl := mustParse(t, `{"budget": 4000, "sections": [
 {"name": "HISTORY", "priority": 1, "memory_types": ["history"], "max_tokens": 2000, "render": "{content}", "fill": "skip"}]}`)
	tok := &memoCounter{Counter: realTokenizer(t), counts: map[string]int{}}
	s := &store{heat: map[string]*assemble.Heat{}}
	at := now
	turn := func(id string, role declare.Role, content string) *assemble.Block {
		at = at.Add(time.Minute)
		return keyedPtr(&assemble.Block{ID: id, Type: declare.History, Scope: declare.ScopeSession, SessionID: "s1", ForAssistant: true,
			Weight: 0.5, Trust: 0.5, Role: role, Content: content, LastModified: at})
	}
	call := func(id, callID string) *assemble.Block {
		b := turn(id, declare.RoleAssistant, "")
		b.EditRare().ToolCalls = []declare.ToolCall{{ID: callID, Name: "get_rate", Arguments: `{"term_months":36}`}}
		return keyedPtr(b)
	}
	result := func(id, callID string) *assemble.Block {
		b := turn(id, declare.RoleTool, "rate sheet: 4.9% over 36 months")
		b.EditRare().ToolCallID = callID
		return keyedPtr(b)
	}
	s.put(turn("t1-user", declare.RoleUser, "What is the rate over 36 months?"))
	s.put(call("t1-call", "call_1")) // its result is not declared yet: not sent
	s.put(turn("t2-user", declare.RoleUser, "And over 48?"))
	sum := turn("t3-sum", declare.RoleAssistant, "SUMMARY: the user asked for the rates over 36 and 48 months.")
	sum.EditRare().Replaces = []string{"t1-user", "t1-call", "t2-user"}
	s.put(keyedPtr(sum))
	s.put(turn("t4-user", declare.RoleUser, "Which one is cheaper?"))
	req := assemble.Request{SessionID: "s1", Record: true, Chat: assemble.ChatCost{Format: chat.FormatOpenAI, PerMessage: 3, Reply: 3}}
	req.Now = at.Add(time.Minute)
	x := assemble.NewIndex(tpl, req, truncate.Scoring{})
	x.Build(s.blocks, req.Now)
	var a, full assemble.Assembler
	step := func(describe string) {
		t.Helper()
		req.Now = at.Add(time.Minute)
		_, want := servedAsFull(t, describe, &a, &full, x, tpl, s.blocks, req, tok, s.get)
		req.Previous = want.Decision
	}
	declareAll := func(bs ...*assemble.Block) {
		for _, b := range bs {
			x.Update(s.put(b), b)
		}
	}
	step("the first call")
	made := a.PlansMade()
	if made != 1 {
		t.Fatalf("%d plans made by the first call, want 1", made)
	}
	for k, callID := range []string{"call_2", "call_3", "call_4"} {
		declareAll(turn(callID+"-user", declare.RoleUser, "And the fees?"), call(callID+"-call", callID), result(callID+"-result", callID))
		step(callID)
		if a.PlansMade() != made {
			t.Fatalf("tool exchange %d, which no summary reaches: the plan was made again (%d plans made)", k+1, a.PlansMade())
		}
	}
	declareAll(result("t1-result", "call_1")) // t1-call, which the summary names, can be sent now
	step("the result of the summarised call")
	if a.PlansMade() != made+1 {
		t.Fatalf("the result of a call the summary names: %d plans made, want %d: the plan kept does not see the call", a.PlansMade(), made+1)
	}
}

// TestSummariesQueryOnce: an assembly with summaries and a query walks
// twice, with the summaries and without (the one that represents more is
// taken); the second walk reads the first one's lexical hits, not the
// lexical index again, and both give the full assembly's text, with the
// host's query or the newest turn's, as the store changes between calls.
func TestSummariesQueryOnce(t *testing.T) {
	tpl := mustParse(t, `{"budget": 8192, "sections": [
 {"name": "HISTORY", "priority": 1, "memory_types": ["history"], "max_tokens": 300, "render": "{content}", "fill": "skip"}]}`)
	tok := &memoCounter{Counter: realTokenizer(t), counts: map[string]int{}}
	s := &store{heat: map[string]*assemble.Heat{}}
	at := now
	turn := func(id, content string) *assemble.Block {
		at = at.Add(time.Minute)
		return keyedPtr(&assemble.Block{ID: id, Type: declare.History, Scope: declare.ScopeSession, SessionID: "s1", ForAssistant: true,
			Weight: 0.5, Trust: 0.5, Role: declare.RoleUser, Content: content, LastModified: at})
	}
	var ids []string
	for k := range 40 {
		b := turn(fmt.Sprintf("t%03d", k), fmt.Sprintf("USER: question %d about the passport renewal fees and the arrival date of the card.", k))
		s.put(b)
		if k < 30 {
			ids = append(ids, b.ID)
		}
	}
	sum := turn("sum", "SUMMARY: thirty questions about passport renewal fees.")
	sum.EditRare().Replaces = ids
	s.put(keyedPtr(sum))
	req := assemble.Request{SessionID: "s1", Record: true}
	req.Now = at.Add(time.Minute)
	x := assemble.NewIndex(tpl, req, truncate.Scoring{})
	x.Build(s.blocks, req.Now)
	var a, full assemble.Assembler
	const calls = 6
	for call := range calls {
		req.Query, req.QueryKey, req.NewestTurnQuery = nil, "", false
		if call%2 == 0 {
			q := fmt.Sprintf("passport fees question %d", call)
			req.Query, req.QueryKey = lexical.NewQuery(q), q
		} else {
			req.NewestTurnQuery = true
		}
		req.Now = at.Add(time.Minute)
		_, want := servedAsFull(t, fmt.Sprintf("call %d", call), &a, &full, x, tpl, s.blocks, req, tok, s.get)
		if !strings.Contains(want.Text, "SUMMARY") {
			t.Fatalf("call %d: the full assembly does not keep the summary, and weighs it against nothing: %q", call, want.Text)
		}
		if a.LexicalQueries() != call+1 {
			t.Fatalf("%d lexical queries after %d assemblies with summaries: the walk without them queried again", a.LexicalQueries(), call+1)
		}
		b := turn(fmt.Sprintf("t%03d", 40+call), fmt.Sprintf("USER: and the fees of card number %d?", call))
		x.Update(s.put(b), b)
		req.Previous = want.Decision
	}
}

// floorUser and floorAnswer are TestSummarisedUnderAFloor's turns, which
// come back as the conversation goes on.
var (
	floorUser = []string{
		"What is the total cost if I repay the loan in 36 months instead of 48?",
		"Can you show the fees as a table, with the date each one is charged?",
		"My employer pays on the 25th; does that change the first instalment?",
		"Is the rate fixed for the whole term, or only for the first year?",
	}
	floorAnswer = []string{
		"The annual percentage rate includes the opening fee, so it is higher than the nominal rate.",
		"Repaying over 36 months raises the monthly instalment but lowers the total interest paid.",
		"Early repayment is allowed; the fee is capped at 0.5% of the amount repaid.",
		"The first instalment is due one month after the money arrives in your account.",
		"All figures assume the rate sheet of this month; they change if it is revised.",
	}
)

// TestSummarisedUnderAFloor: a conversation whose questions come back
// (its newest turn, the query, touches old turns and summaries), whose
// host summarises every run it is offered, and whose history section
// sheds, so that the calls follow a floor: the incremental assembly gives
// the full one's text, messages and runs at every call, in a section
// that fills by skip and by stop, as text and as chat. Under the floor
// the walk still decides a replacement whose summary or turn the query
// touches (relHead), keeps a replacement's turns only when none it has
// not pulled stays out for the shed (unpulledBelowFloor), and finds a
// replacement's hits by entry (orderMembers): without any of the three
// the texts differ within the first 70 calls.
func TestSummarisedUnderAFloor(t *testing.T) {
	defer assemble.CheckPlans(t.Errorf)()
	calls := 150
	if testing.Short() {
		calls = 80
	}
	for _, fill := range []string{"skip", "stop"} {
		for _, format := range []chat.Format{0, chat.FormatOpenAI} {
			tpl := mustParse(t, `{"budget": 8192, "sections": [
 {"name": "CONTEXT", "priority": 1, "memory_types": ["context"], "max_tokens": 200, "render": "<context>{content}</context>", "fill": "skip"},
 {"name": "HISTORY", "priority": 2, "memory_types": ["history"], "max_tokens": 300, "render": "{content}", "fill": "`+fill+`"}]}`)
			tok := &memoCounter{Counter: realTokenizer(t), counts: map[string]int{}}
			s := &store{heat: map[string]*assemble.Heat{}}
			at := now
			for i := range 20 {
				s.put(keyedPtr(&assemble.Block{ID: fmt.Sprintf("c%03d", i), Type: declare.Context, Scope: declare.ScopeGlobal, ForAssistant: true,
					Weight: float64(i%5) / 4, Trust: 0.5, Content: fmt.Sprintf("rate sheet %d: the fee and the instalment", i), LastModified: now}))
			}
			turn := func(id string, role declare.Role, content string, at time.Time) *assemble.Block {
				return keyedPtr(&assemble.Block{ID: id, Type: declare.History, Scope: declare.ScopeSession, SessionID: "s1", ForAssistant: true,
					Weight: 0.5, Trust: 0.5, Role: role, Content: content, LastModified: at})
			}
			req := assemble.Request{SessionID: "s1", Record: true, NewestTurnQuery: true}
			if format != 0 {
				req.Chat = assemble.ChatCost{Format: format, PerMessage: 3, Reply: 3}
			}
			req.Now = at
			x := assemble.NewIndex(tpl, req, truncate.Scoring{})
			x.Build(s.blocks, at)
			var a, full assemble.Assembler
			nsum, floors := 0, 0
			for call := range calls {
				at = at.Add(time.Minute)
				for _, b := range []*assemble.Block{
					turn(fmt.Sprintf("t%04d-a", call), declare.RoleUser, floorUser[call%len(floorUser)], at),
					turn(fmt.Sprintf("t%04d-b", call), declare.RoleAssistant, floorAnswer[call%len(floorAnswer)], at.Add(time.Second)),
				} {
					x.Update(s.put(b), b)
				}
				req.Now = at.Add(2 * time.Second)
				what := fmt.Sprintf("%s %v call %d", fill, format, call)
				out, want := servedAsFull(t, what, &a, &full, x, tpl, s.blocks, req, tok, s.get)
				if !reflect.DeepEqual(out.SummarizeCandidates, want.SummarizeCandidates) {
					t.Fatalf("%s: the incremental assembly offers other runs than the full one", what)
				}
				if slices.ContainsFunc(want.Decision.Sections, func(d assemble.SectionDecision) bool { return d.Floor != nil }) {
					floors++ // the next call follows it
				}
				for _, run := range want.SummarizeCandidates {
					b := turn(fmt.Sprintf("sum%04d", nsum), declare.RoleAssistant, fmt.Sprintf("SUMMARY of %d turns about the fees and the instalment.", len(run.IDs)), req.Now)
					b.EditRare().Replaces = slices.Clone(run.IDs)
					x.Update(s.put(b), b)
					nsum++
				}
				req.Previous = want.Decision
			}
			t.Logf("%s %v: %d summaries, %d calls following a floor", fill, format, nsum, floors)
			if nsum == 0 || floors < calls/2 {
				t.Errorf("%s %v: %d summaries, %d calls of %d following a floor: the conversation does not cover what it tests", fill, format, nsum, floors, calls)
			}
		}
	}
}

// TestSummaryLooksPastAHitThatDoesNotFit: in a section that fills by
// skip, a relevance hit too large for the section ranks between a summary
// and its turns. The full fill, come to the summary, counts the hit among
// what lies between (fitsUntil) and takes the summary at once; the walk
// passed the hit over before it came to the summary, and must count it
// too (walk.relSkip).
func TestSummaryLooksPastAHitThatDoesNotFit(t *testing.T) {
	tpl := mustParse(t, `{"budget": 8192, "sections": [
 {"name": "HISTORY", "priority": 1, "memory_types": ["history"], "max_tokens": 120, "render": "{content}", "fill": "skip"}]}`)
	tok := boundedCounter{&memoCounter{Counter: realTokenizer(t), counts: map[string]int{}}} // lower bounds: the walk passes over what cannot fit
	var blocks []*assemble.Block
	var ids []string
	for k := range 4 {
		b := turnAt(fmt.Sprintf("t%d", k), 20, 30+k)
		blocks = append(blocks, &b)
		ids = append(ids, b.ID)
	}
	big := turnAt("big", 400, 29)
	big.Content = "passport renewal fees " + big.Content
	big.MinTokens, big.Weight = 380, 0 // ranked under the summary even with its relevance
	sum := summaryOf("sum", 10, 1, ids...)
	sum.Content = "SUMMARY: " + sum.Content // no hit: the walk takes it from the replacements' lane
	sum.Weight, sum.Trust = 1, 1
	blocks = append(blocks, &big, &sum)
	req := assemble.Request{Now: now}
	req.Query, req.QueryKey = lexical.NewQuery("passport renewal fees"), "passport renewal fees"
	out, want, _ := bothWays(t, tpl, blocks, req, tok)
	if !strings.Contains(want.Text, "SUMMARY") {
		t.Fatalf("the full assembly does not keep the summary: %q", want.Text)
	}
	if out.Text != want.Text {
		t.Errorf("incremental %q, full %q", out.Text, want.Text)
	}
}

// TestSummariesLetTheWalkPassOver: a section that fills by skip, with
// summaries in it, is walked as one without: what cannot fit is passed
// over (the replacements' blocks come from their own lane), not made a
// candidate, and the text is the full assembly's.
func TestSummariesLetTheWalkPassOver(t *testing.T) {
	tpl := mustParse(t, `{"budget": 8192, "sections": [
 {"name": "HISTORY", "priority": 1, "memory_types": ["history"], "max_tokens": 300, "render": "{content}", "fill": "skip"}]}`)
	tok := boundedCounter{&memoCounter{Counter: realTokenizer(t), counts: map[string]int{}}}
	var blocks []*assemble.Block
	for k := range 400 {
		b := turnAt(fmt.Sprintf("t%04d", k), 80, 10+k) // too large for what is left, once a few are in
		b.MinTokens = int32(tokensOf(t, b.Content)) - 2
		blocks = append(blocks, &b)
	}
	for r := range 5 {
		var ids []string
		for k := range 10 {
			ids = append(ids, fmt.Sprintf("t%04d", 100+r*50+k))
		}
		s := summaryOf(fmt.Sprintf("sum%d", r), 8, 5+r, ids...)
		blocks = append(blocks, &s)
	}
	out, want, made := bothWays(t, tpl, blocks, assemble.Request{Now: now}, tok)
	if out.Text != want.Text {
		t.Errorf("incremental %q, full %q", out.Text, want.Text)
	}
	t.Logf("%d candidates made of %d blocks", made, len(blocks))
	if made > len(blocks)/4 {
		t.Errorf("%d candidates made of %d blocks: the walk passes nothing over", made, len(blocks))
	}
}

// bothWays assembles blocks for req from an Index made of them and by
// AssembleRefs, and returns both outputs and how many candidates the
// incremental assembly made.
func bothWays(t *testing.T, tpl *template.Template, blocks []*assemble.Block, req assemble.Request, tok truncate.Counter) (out, want *assemble.Output, made int) {
	t.Helper()
	get := sortedLookup(blocks)
	x := assemble.NewIndex(tpl, req, truncate.Scoring{})
	x.Build(blocks, req.Now)
	var a, full assemble.Assembler
	out, _, ok, err := a.AssembleIndexed(x, req, tok, get)
	if !ok || err != nil {
		t.Fatalf("not served: %v", err)
	}
	want, err = full.AssembleRefs(tpl, blocks, req, tok)
	if err != nil {
		t.Fatal(err)
	}
	return out, want, a.CandidatesMade()
}

// TestSummarisedTiesAsFull: runs of turns and their summaries all said at
// one instant tie in rank (score, time, declaration), so only request_id
// orders them; the Index's replacements' lane must take them in the full
// assembly's order, which decides what a section that cannot hold them
// all keeps.
func TestSummarisedTiesAsFull(t *testing.T) {
	tok := &memoCounter{Counter: realTokenizer(t), counts: map[string]int{}}
	for _, fill := range []string{"stop", "skip"} {
		tpl := mustParse(t, strings.Replace(manySummariesTemplate, `"fill": "stop"`, `"fill": "`+fill+`"`, 1))
		for _, chained := range []bool{false, true} {
			var blocks []*assemble.Block
			for r := range 60 {
				var ids []string
				for k := range 1 + r%4 {
					id := fmt.Sprintf("t%04d-%d", (r*37)%60, k) // request_ids out of run order
					b := turnAt(id, 6+k%3, 30)
					blocks = append(blocks, &b)
					ids = append(ids, id)
				}
				if chained && r%5 > 0 {
					ids = append(ids, fmt.Sprintf("s%04d", ((r-1)*37)%60))
				}
				s := summaryOf(fmt.Sprintf("s%04d", (r*37)%60), 4+r%3, 30, ids...)
				blocks = append(blocks, &s)
			}
			get := sortedLookup(blocks)
			req := assemble.Request{Chat: assemble.ChatCost{Format: chat.FormatOpenAI, PerMessage: 3, Reply: 3}}
			x := assemble.NewIndex(tpl, req, truncate.Scoring{})
			at := now
			x.Build(blocks, at)
			var a, full assemble.Assembler
			for step := range 3 {
				at = at.Add(time.Minute)
				req.Now = at
				_, want := servedAsFull(t, fmt.Sprintf("fill=%s chained=%v step %d", fill, chained, step), &a, &full, x, tpl, blocks, req, tok, get)
				if len(want.Messages) == 0 || len(want.Messages) >= len(blocks) {
					t.Fatalf("fill=%s chained=%v: %d messages of %d blocks: the section must hold some", fill, chained, len(want.Messages), len(blocks))
				}
			}
		}
	}
}
