package assemble_test

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/contextasm/contextasm/chat"
	"github.com/contextasm/contextasm/contextasm/internal/assemble"
	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/outcome"
	"github.com/contextasm/contextasm/template"
	"github.com/contextasm/contextasm/truncate"
)

// sized returns content the real tokenizer counts as n tokens (n+1 with
// the newline a line-mode section counts a block with), starting with tag.
func sized(tag string, n int) string {
	return tag + strings.Repeat(" a", n-1)
}

// turnAt returns a history block of about n tokens, modified at
// minute m before now.
func turnAt(id string, n, m int) assemble.Block {
	b := block(id, declare.History, sized(id, n))
	b.Role = declare.RoleUser
	b.LastModified = now.Add(-time.Duration(m) * time.Minute)
	b.Seq = int64(1000 - m)
	return b
}

// summaryOf returns a summary of n tokens replacing ids, written at
// minute m before now.
func summaryOf(id string, n, m int, ids ...string) assemble.Block {
	b := turnAt(id, n, m)
	b.EditRare().Replaces = ids
	return b
}

// tokensOf counts text as a line-mode section counts a block.
func tokensOf(t testing.TB, text string) int {
	return realTokenizer(t).Count(text + "\n")
}

// oneEvent returns the one event of reason r about id, failing otherwise.
func oneEvent(t *testing.T, out *assemble.Output, id string, r outcome.Reason) outcome.Event {
	t.Helper()
	var found []outcome.Event
	for _, e := range eventsOf(out, id) {
		if e.Reason == r {
			found = append(found, e)
		}
	}
	if len(found) != 1 {
		t.Fatalf("events of %s: %+v, want one %s", id, eventsOf(out, id), r)
	}
	return found[0]
}

// checkExplained fails when a block of a section is not in the text and
// has no event, or is in the text with a dropped event.
func checkExplained(t *testing.T, out *assemble.Output) {
	t.Helper()
	for _, s := range out.Sections {
		for _, b := range s.Blocks {
			var dropped int
			for _, e := range eventsOf(out, b.RequestID) {
				if e.Kind == outcome.KindDropped || e.Kind == outcome.KindExcluded {
					dropped++
				}
			}
			switch {
			case b.Status == outcome.StatusDropped && dropped != 1:
				t.Errorf("%s dropped (%s) with %d drop events: %+v", b.RequestID, b.Reason, dropped, eventsOf(out, b.RequestID))
			case b.Status != outcome.StatusDropped && dropped != 0:
				t.Errorf("%s %s with drop events %+v", b.RequestID, b.Status, eventsOf(out, b.RequestID))
			}
		}
	}
}

func TestDegradedInSection(t *testing.T) {
	tpl := mustParse(t, `{"budget": 4096, "sections": [
	 {"name": "NOTES", "priority": 1, "memory_types": ["context"], "max_tokens": 30, "render": "{content}"}]}`)
	top := weighted("top", declare.Context, sized("alpha", 7), 0.9)
	doc := block("doc", declare.Context, sized("beta", 50))
	doc.EditRare().Variants = []string{sized("gamma", 25), sized("delta", 20), sized("omega", 5)}
	room := 30 - tokensOf(t, top.Content)
	if tokensOf(t, doc.Variants()[0]) <= room || tokensOf(t, doc.Variants()[1]) > room {
		t.Fatalf("sizes: room %d, variants %d and %d", room, tokensOf(t, doc.Variants()[0]), tokensOf(t, doc.Variants()[1]))
	}
	out := mustAssemble(t, tpl, []assemble.Block{top, doc}, assemble.Request{})
	_, br, _ := result(out, "doc")
	if br.Status != outcome.StatusKept || br.Variant != 2 || br.Tokens != tokensOf(t, doc.Variants()[1]) {
		t.Fatalf("doc: %+v, want kept as variant 2", br)
	}
	if e := oneEvent(t, out, "doc", outcome.ReasonDegraded); e.Kind != outcome.KindNotice || e.Variant != 2 || e.Section != "NOTES" {
		t.Errorf("degraded event %+v", e)
	}
	if !strings.Contains(out.Text, doc.Variants()[1]+"\n") || strings.Contains(out.Text, "gamma") || strings.Contains(out.Text, "beta") {
		t.Errorf("text does not hold variant 2 alone:\n%s", out.Text)
	}
	checkExplained(t, out)

	// A block that fits whole is written whole, with no event.
	wide := mustParse(t, strings.Replace(tplJSON(tpl), `"max_tokens":30`, `"max_tokens":300`, 1))
	out = mustAssemble(t, wide, []assemble.Block{top, doc}, assemble.Request{})
	if _, br, _ := result(out, "doc"); br.Variant != 0 || br.Tokens != tokensOf(t, doc.Content) || len(eventsOf(out, "doc")) != 0 {
		t.Errorf("doc with room: %+v, events %+v", br, eventsOf(out, "doc"))
	}
}

// withBudget returns tpl with another budget.
func withBudget(t *testing.T, tpl *template.Template, budget int) *template.Template {
	t.Helper()
	out, err := tpl.WithBudget(budget)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// overBudget returns tpl with a budget over tokens short of what the
// assembly of full needs under it, or, when the header's count makes that
// impossible, the least shortfall above it, which it returns too: the
// budget is in the header's fingerprint, whose count moves with it.
func overBudget(t *testing.T, tpl *template.Template, full *assemble.Output, over int) (*template.Template, int) {
	t.Helper()
	tok := realTokenizer(t)
	body := full.TotalTokens - tok.Count(tpl.Header()+"\n")
	var best *template.Template
	bestOver := 0
	for budget := full.TotalTokens - over - 40; budget < full.TotalTokens-over+40; budget++ {
		tb := withBudget(t, tpl, budget)
		if got := body + tok.Count(tb.Header()+"\n") - budget; got >= over && (best == nil || got < bestOver) {
			best, bestOver = tb, got
		}
	}
	if best == nil || bestOver > over+3 {
		t.Fatalf("no budget %d short of the full assembly", over)
	}
	return best, bestOver
}

// tplJSON returns a template's canonical JSON.
func tplJSON(tpl interface{ Canonical() []byte }) string { return string(tpl.Canonical()) }

func TestDegradedByBudget(t *testing.T) {
	tpl := mustParse(t, `{"budget": 4096, "sections": [
	 {"name": "RULES", "priority": 1, "memory_types": ["constraint"], "max_tokens": 300, "render": "{content}"},
	 {"name": "NOTES", "priority": 2, "memory_types": ["context"], "max_tokens": 300, "render": "{content}"}]}`)
	rule := block("rule", declare.Constraint, sized("alpha", 20))
	doc := block("doc", declare.Context, sized("beta", 60))
	doc.EditRare().Variants = []string{sized("gamma", 30), sized("delta", 10)}
	low := weighted("low", declare.Context, sized("omega", 5), 0.1)
	blocks := []assemble.Block{rule, doc, low}
	full := mustAssemble(t, tpl, blocks, assemble.Request{})
	whole, v1, v2, lowTokens := tokensOf(t, doc.Content), tokensOf(t, doc.Variants()[0]), tokensOf(t, doc.Variants()[1]), tokensOf(t, low.Content)
	for _, tt := range []struct {
		over    int // tokens too many for the budget
		variant int
	}{
		{lowTokens + whole - v1 - 1, 1}, // low goes, and variants[0] is enough
		{lowTokens + whole - v1 + 1, 2}, // low goes, and variants[1] is needed
		{lowTokens + whole - v2 + 1, 0}, // even variants[1] is not enough: doc goes
		{lowTokens - 1, 0},              // low alone is enough
	} {
		tb, over := overBudget(t, tpl, full, tt.over)
		if over != tt.over {
			t.Fatalf("no budget exactly %d short", tt.over)
		}
		budget := tb.Budget()
		out := mustAssemble(t, tb, blocks, assemble.Request{})
		if out.TotalTokens > budget {
			t.Fatalf("total %d over budget %d", out.TotalTokens, budget)
		}
		_, br, _ := result(out, "doc")
		if br.Variant != tt.variant || (tt.over > lowTokens+whole-v2) != (br.Status == outcome.StatusDropped) {
			t.Errorf("%d over: doc %+v, want variant %d", tt.over, br, tt.variant)
		}
		if e := oneEvent(t, out, "low", outcome.ReasonBudget); e.Kind != outcome.KindDropped {
			t.Errorf("low: %+v", e)
		}
		if tt.variant > 0 {
			oneEvent(t, out, "doc", outcome.ReasonDegraded)
		}
		checkExplained(t, out)
	}
}

func TestDegradeRequired(t *testing.T) {
	const src = `{"budget": 4096, "sections": [
	 {"name": "RULES", "priority": 1, "memory_types": ["constraint"], "max_tokens": 30, "render": "{content}"%s}]}`
	rule := block("rule", declare.Constraint, sized("alpha", 40))
	rule.Required = true
	rule.EditRare().Variants = []string{sized("beta", 20)}
	var a assemble.Assembler
	_, err := a.Assemble(mustParse(t, fmt.Sprintf(src, "")), []assemble.Block{rule}, assemble.Request{Now: now}, realTokenizer(t))
	if !errors.Is(err, truncate.ErrBudgetTooSmall) {
		t.Fatalf("a required block over its cap, not allowed to degrade: %v", err)
	}
	out := mustAssemble(t, mustParse(t, fmt.Sprintf(src, `, "degrade_required": true`)), []assemble.Block{rule}, assemble.Request{})
	if _, br, _ := result(out, "rule"); br.Status != outcome.StatusKept || br.Variant != 1 || !br.Required {
		t.Fatalf("rule: %+v, want kept as variant 1", br)
	}
	oneEvent(t, out, "rule", outcome.ReasonDegraded)

	// Under a budget the whole required block exceeds, it degrades too.
	tpl := mustParse(t, fmt.Sprintf(strings.Replace(src, `"max_tokens": 30`, `"max_tokens": 300`, 1), `, "degrade_required": true`))
	full := mustAssemble(t, tpl, []assemble.Block{rule}, assemble.Request{})
	tb, _ := overBudget(t, tpl, full, 10)
	out = mustAssemble(t, tb, []assemble.Block{rule}, assemble.Request{})
	if _, br, _ := result(out, "rule"); br.Variant != 1 || out.TotalTokens > tb.Budget() {
		t.Fatalf("rule under budget: %+v, total %d", br, out.TotalTokens)
	}
}

func TestClipped(t *testing.T) {
	tpl := mustParse(t, `{"budget": 4096, "sections": [
	 {"name": "TOOLS", "priority": 1, "memory_types": ["history"], "max_tokens": 3000, "render": "<out>{content}</out>"}]}`)
	content := strings.Repeat("row 17, status ok, latency 12 ms; ", 40)
	out1 := block("out1", declare.History, content)
	out1.EditRare().MaxTokens = 50
	tok := realTokenizer(t)
	part := tok.Cut(content, 50)
	left := tok.Count(content) - tok.Count(part)
	for _, format := range []chat.Format{0, chat.FormatOpenAI} {
		t.Run(fmt.Sprint(format), func(t *testing.T) {
			out := mustAssemble(t, tpl, []assemble.Block{out1}, assemble.Request{Chat: assemble.ChatCost{Format: format, PerMessage: 3, Reply: 3}})
			want := part + assemble.ClipMarker(left)
			if !strings.Contains(want, fmt.Sprintf("[clipped: %d tokens left out]", left)) {
				t.Fatalf("marker %q does not say how much was left out", want)
			}
			got := out.Text
			if format != 0 {
				got = out.Messages[0].Content
			}
			if !strings.Contains(got, want) {
				t.Fatalf("the clipped content is not written:\n%s\nwant it to hold\n%s", got, want)
			}
			e := oneEvent(t, out, "out1", outcome.ReasonClipped)
			if e.Kind != outcome.KindNotice || e.Tokens != left || e.Section != "TOOLS" {
				t.Errorf("clipped event %+v, want a notice with %d tokens", e, left)
			}
			if _, br, _ := result(out, "out1"); br.Status != outcome.StatusKept {
				t.Errorf("out1: %+v", br)
			}
		})
	}
	// A content within its max_tokens is written as it is.
	out1.EditRare().MaxTokens = 1000
	out := mustAssemble(t, tpl, []assemble.Block{out1}, assemble.Request{})
	if !strings.Contains(out.Text, content+"</out>") || len(eventsOf(out, "out1")) != 0 {
		t.Errorf("an unclipped block changed: events %+v", eventsOf(out, "out1"))
	}
}

func TestSuperseded(t *testing.T) {
	tpl := mustParse(t, eventsTemplate)
	v1, v2, v3 := block("rate-v1", declare.Context, "Rate 7.4%."), block("rate-v2", declare.Context, "Rate 7.1%."), block("rate-v3", declare.Context, "Rate 6.9%.")
	v1.Required, v1.Weight = true, 1 // whatever its weight, and required
	v2.EditRare().Supersedes, v3.EditRare().Supersedes = []string{"rate-v1"}, []string{"rate-v2"}
	for _, tt := range []struct {
		name   string
		edit   func(v1, v2, v3 *assemble.Block)
		req    assemble.Request
		kept   []string
		events map[string]string // id → newest that supersedes it
	}{
		{"a chain resolves to its newest", nil, assemble.Request{}, []string{"rate-v3"}, map[string]string{"rate-v1": "rate-v3", "rate-v2": "rate-v3"}},
		{"an expired correction supersedes nothing", func(_, _, v3 *assemble.Block) { v3.ValidUntil = now }, assemble.Request{},
			[]string{"rate-v2"}, map[string]string{"rate-v1": "rate-v2"}},
		{"another session's correction supersedes nothing here", func(_, _, v3 *assemble.Block) {
			v3.Scope, v3.SessionID = declare.ScopeSession, "s2"
			v3.EditRare().Supersedes = []string{"rate-v1", "rate-v2"}
		}, assemble.Request{SessionID: "s1"}, []string{"rate-v2"}, map[string]string{"rate-v1": "rate-v2"}},
		{"two newest: the smaller id", func(_, v2, v3 *assemble.Block) {
			v2.EditRare().Supersedes, v3.EditRare().Supersedes = []string{"rate-v1"}, []string{"rate-v1"}
		},
			assemble.Request{}, []string{"rate-v2", "rate-v3"}, map[string]string{"rate-v1": "rate-v2"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a, b, c := v1, v2, v3
			if tt.edit != nil {
				tt.edit(&a, &b, &c)
			}
			out := mustAssemble(t, tpl, []assemble.Block{a, b, c}, tt.req)
			var kept []string
			for id, st := range statuses(out) {
				if st == "kept" {
					kept = append(kept, id)
				}
			}
			slices.Sort(kept)
			if !slices.Equal(kept, tt.kept) {
				t.Errorf("kept %v, want %v", kept, tt.kept)
			}
			for id, by := range tt.events {
				if e := oneEvent(t, out, id, outcome.ReasonSuperseded); e.Kind != outcome.KindExcluded || e.By != by || e.Section != "" {
					t.Errorf("%s: %+v, want excluded by %s", id, e, by)
				}
			}
		})
	}
}

// histTemplate has one history section in time order.
func histTemplate(t *testing.T, capTokens, budget int, fill string) string {
	return fmt.Sprintf(`{"budget": %d, "sections": [
	 {"name": "HISTORY", "priority": 1, "memory_types": ["history"], "max_tokens": %d, "render": "{content}", "order": "time", "fill": %q}]}`, budget, capTokens, fill)
}

func TestSummarized(t *testing.T) {
	turns := []assemble.Block{turnAt("t1", 20, 60), turnAt("t2", 20, 50), turnAt("t3", 20, 40), turnAt("t4", 20, 30), turnAt("t5", 20, 20)}
	sum := summaryOf("s123", 10, 35, "t1", "t2", "t3")
	all := append(slices.Clone(turns), sum)

	// Room for the newest three turns and a little: the summary stands in
	// for t1..t3 and is written where they were, before t4.
	out := mustAssemble(t, mustParse(t, histTemplate(t, 70, 4096, "stop")), all, assemble.Request{})
	for _, id := range []string{"t1", "t2", "t3"} {
		if e := oneEvent(t, out, id, outcome.ReasonSummarized); e.Kind != outcome.KindDropped || e.By != "s123" {
			t.Errorf("%s: %+v", id, e)
		}
		if _, br, _ := result(out, id); br.By != "s123" || br.Reason != outcome.ReasonSummarized {
			t.Errorf("%s: %+v", id, br)
		}
	}
	if st := statuses(out); st["s123"] != "kept" || st["t4"] != "kept" || st["t5"] != "kept" {
		t.Fatalf("statuses %v", st)
	}
	if i, j := strings.Index(out.Text, "s123"), strings.Index(out.Text, "t4"); i < 0 || i > j {
		t.Errorf("the summary is not written before t4:\n%s", out.Text)
	}
	checkExplained(t, out)

	// Room for every turn: the turns are used, the summary is not.
	out = mustAssemble(t, mustParse(t, histTemplate(t, 400, 4096, "stop")), all, assemble.Request{})
	if e := oneEvent(t, out, "s123", outcome.ReasonTurnsKept); e.Kind != outcome.KindDropped {
		t.Errorf("s123: %+v", e)
	}
	for _, id := range []string{"t1", "t2", "t3"} {
		if statuses(out)[id] != "kept" {
			t.Errorf("%s not kept: %v", id, statuses(out))
		}
	}
	checkExplained(t, out)

	// The budget, not the cap, makes turns go: the summary stands in
	// before the budget cut drops one.
	wide := mustParse(t, histTemplate(t, 400, 4096, "stop"))
	full := mustAssemble(t, wide, turns, assemble.Request{})
	tb, _ := overBudget(t, wide, full, 29)
	budget := tb.Budget()
	out = mustAssemble(t, tb, all, assemble.Request{})
	if st := statuses(out); st["s123"] != "kept" || st["t1"] != "dropped" || st["t4"] != "kept" || out.TotalTokens > budget {
		t.Fatalf("statuses %v, total %d of %d", st, out.TotalTokens, budget)
	}
	oneEvent(t, out, "t1", outcome.ReasonSummarized)
	checkExplained(t, out)
}

func TestSummaryOfToolExchange(t *testing.T) {
	call := turnAt("call", 10, 50)
	call.Role, call.EditRare().ToolCalls = declare.RoleAssistant, []declare.ToolCall{{ID: "c1", Name: "search", Arguments: "{}"}}
	res := turnAt("res", 60, 49)
	res.Role, res.EditRare().ToolCallID = declare.RoleTool, "c1"
	t2, t3 := turnAt("t2", 20, 40), turnAt("t3", 20, 30)
	sum := summaryOf("sum", 8, 45, "call") // names the call only: its result goes with it
	blocks := []assemble.Block{call, res, t2, t3, sum}
	for _, format := range []chat.Format{0, chat.FormatAnthropic} {
		t.Run(fmt.Sprint(format), func(t *testing.T) {
			out := mustAssemble(t, mustParse(t, histTemplate(t, 70, 4096, "stop")), blocks, assemble.Request{Chat: assemble.ChatCost{Format: format, PerMessage: 3, Reply: 3}})
			st := statuses(out)
			if st["sum"] != "kept" || st["call"] != "dropped" || st["res"] != "dropped" {
				t.Fatalf("statuses %v", st)
			}
			for _, id := range []string{"call", "res"} {
				if e := oneEvent(t, out, id, outcome.ReasonSummarized); e.By != "sum" || e.Group != "call" {
					t.Errorf("%s: %+v", id, e)
				}
			}
			if format != 0 {
				conv := chat.Conversation{Messages: out.Messages}
				if err := conv.Check(format); err != nil {
					t.Errorf("messages: %v", err)
				}
			}
			checkExplained(t, out)
		})
	}
}

func TestSummaryCases(t *testing.T) {
	t1, t2, t3 := turnAt("t1", 20, 60), turnAt("t2", 20, 50), turnAt("t3", 20, 40)
	for _, tt := range []struct {
		name   string
		blocks []assemble.Block
		cap    int
		want   map[string]string // id → status, or status/reason for dropped
	}{
		{"a summary naming a turn that is not here stands in whatever fits",
			[]assemble.Block{t1, t2, t3, summaryOf("s", 5, 45, "t0", "t1")}, 400,
			map[string]string{"s": "kept", "t1": "dropped/summarized", "t2": "kept", "t3": "kept"}},
		{"a summary that does not fit: the turns are decided one by one",
			[]assemble.Block{t1, t2, t3, summaryOf("s", 60, 45, "t1", "t2")}, 50,
			map[string]string{"s": "dropped/section_cap", "t1": "dropped/section_cap", "t2": "kept", "t3": "kept"}},
		{"a newer summary of some of the same turns supersedes an older one",
			[]assemble.Block{t1, t2, t3, summaryOf("old", 5, 45, "t1", "t2"), summaryOf("new", 5, 35, "t2", "t3")}, 30,
			map[string]string{"new": "kept", "t2": "dropped/summarized", "t3": "dropped/summarized"}},
		{"a summary naming a summary stands for its turns too",
			[]assemble.Block{t1, t2, t3, summaryOf("s1", 15, 45, "t1", "t2"), summaryOf("s2", 5, 35, "s1", "t3")}, 30,
			map[string]string{"s2": "kept", "t1": "dropped/summarized", "t2": "dropped/summarized", "t3": "dropped/summarized"}},
		{"a summary replacing a required turn is never used",
			[]assemble.Block{required(t1), t2, t3, summaryOf("s", 5, 45, "t1", "t2")}, 45,
			map[string]string{"s": "dropped/turns_kept", "t1": "kept", "t2": "dropped/section_cap", "t3": "kept"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out := mustAssemble(t, mustParse(t, histTemplate(t, tt.cap, 4096, "skip")), tt.blocks, assemble.Request{})
			for id, want := range tt.want {
				_, br, ok := result(out, id)
				got := br.Status.String()
				if br.Status == outcome.StatusDropped {
					got += "/" + string(br.Reason)
				}
				if !ok {
					got = "none"
				}
				if got != want {
					t.Errorf("%s: %s, want %s; events %+v", id, got, want, eventsOf(out, id))
				}
			}
			checkExplained(t, out)
			if strings.HasPrefix(tt.name, "a newer") {
				if e := oneEvent(t, out, "old", outcome.ReasonSuperseded); e.By != "new" {
					t.Errorf("old: %+v", e)
				}
			}
		})
	}
}

func required(b assemble.Block) assemble.Block {
	b.Required = true
	return b
}

// A degraded assembly that would represent fewer blocks than dropping
// alone gives way to the plain one; its summary is left out, no_gain.
func TestNoGain(t *testing.T) {
	// Ranked t2, u1..u5, t0 (newest first), the summary last; it replaces
	// t2 and t0, which fit together (95 of 100) and so would be kept as a
	// unit when t2 comes up, crowding out u2..u5: plain keeps t2 and
	// u1..u5 (six), not three.
	blocks := []assemble.Block{turnAt("t2", 9, 10), turnAt("t0", 84, 90)}
	for i := 1; i <= 5; i++ {
		blocks = append(blocks, turnAt(fmt.Sprintf("u%d", i), 4, 10+i))
	}
	blocks = append(blocks, summaryOf("s", 5, 95, "t2", "t0")) // ranked below its turns: decided with them
	out := mustAssemble(t, mustParse(t, histTemplate(t, 100, 4096, "stop")), blocks, assemble.Request{})
	if e := oneEvent(t, out, "s", outcome.ReasonNoGain); e.Kind != outcome.KindExcluded {
		t.Errorf("s: %+v", e)
	}
	kept := 0
	for _, st := range statuses(out) {
		if st == "kept" {
			kept++
		}
	}
	if kept != 6 {
		t.Errorf("%d kept, want 6: %v", kept, statuses(out))
	}
}

func TestSummarizeCandidates(t *testing.T) {
	var blocks []assemble.Block
	for i := 1; i <= 8; i++ {
		blocks = append(blocks, turnAt(fmt.Sprintf("t%d", i), 20, 100-10*i))
	}
	tpl := mustParse(t, histTemplate(t, 70, 4096, "stop"))
	out := mustAssemble(t, tpl, blocks, assemble.Request{Record: true})
	// t6..t8 fit; runs are found from t5 back until they hold the
	// section's 70 tokens: t2..t5, oldest first.
	per := tokensOf(t, blocks[0].Content)
	if len(out.SummarizeCandidates) != 1 {
		t.Fatalf("candidates %+v", out.SummarizeCandidates)
	}
	c := out.SummarizeCandidates[0]
	if !slices.Equal(c.IDs, []string{"t2", "t3", "t4", "t5"}) || c.Tokens != 4*per || c.Section != "HISTORY" ||
		c.From != now.Add(-80*time.Minute).Format(time.RFC3339) || c.To != now.Add(-50*time.Minute).Format(time.RFC3339) {
		t.Errorf("candidate %+v", c)
	}
	// Declared as a summary, the run is stood for, and the next run back
	// is offered.
	blocks = append(blocks, summaryOf("sum", 2, 45, c.IDs...))
	out = mustAssemble(t, tpl, blocks, assemble.Request{Record: true})
	if st := statuses(out); st["sum"] != "kept" || st["t5"] != "dropped" {
		t.Fatalf("statuses %v", st)
	}
	if len(out.SummarizeCandidates) != 1 || !slices.Equal(out.SummarizeCandidates[0].IDs, []string{"t1"}) {
		t.Errorf("after the summary: candidates %+v", out.SummarizeCandidates)
	}
	// Without a conversation (no Record), none are listed.
	if out := mustAssemble(t, tpl, blocks[:8], assemble.Request{}); out.SummarizeCandidates != nil {
		t.Errorf("candidates without a conversation: %+v", out.SummarizeCandidates)
	}
}

// A summary ranked above its turns (written lately) is decided where it
// comes up: when what ranks between it and its last turn does not fit,
// it takes its place at its own rank, and the newest turns after it fill
// the rest.
func TestSummaryTakesItsRank(t *testing.T) {
	var blocks []assemble.Block
	for i := 1; i <= 6; i++ {
		blocks = append(blocks, turnAt(fmt.Sprintf("t%d", i), 20, 70-10*i))
	}
	blocks = append(blocks, summaryOf("s", 10, 1, "t1", "t2", "t3"))
	out := mustAssemble(t, mustParse(t, histTemplate(t, 70, 4096, "stop")), blocks, assemble.Request{})
	want := map[string]string{"s": "kept", "t6": "kept", "t5": "kept", "t4": "dropped", "t3": "dropped", "t2": "dropped", "t1": "dropped"}
	if st := statuses(out); !maps.Equal(st, want) {
		t.Fatalf("statuses %v, want %v", st, want)
	}
	oneEvent(t, out, "t4", outcome.ReasonSectionCap)
	for _, id := range []string{"t1", "t2", "t3"} {
		oneEvent(t, out, id, outcome.ReasonSummarized)
	}
	checkExplained(t, out)
}
