package assemble_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
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

// convo drives the assemblies of one conversation as package contextasm
// does: each call follows the decision the previous one recorded.
type convo struct {
	t      testing.TB
	tpl    *template.Template
	tok    truncate.Counter
	asm    assemble.Assembler
	blocks []assemble.Block // sorted by id
	prev   *assemble.Decision
	seq    int64
	chat   assemble.ChatCost // a chat format, or none
}

func newConvo(t testing.TB, tpl *template.Template, blocks ...assemble.Block) *convo {
	c := &convo{t: t, tpl: tpl, tok: realTokenizer(t)}
	c.put(blocks...)
	return c
}

// put declares blocks, replacing those with the same id (which keep
// their declaration number).
func (c *convo) put(blocks ...assemble.Block) {
	for _, b := range blocks {
		b = keyed(b)
		i, found := slices.BinarySearchFunc(c.blocks, b.ID, func(x assemble.Block, id string) int { return strings.Compare(x.ID, id) })
		if found {
			b.Seq = c.blocks[i].Seq
			c.blocks[i] = b
			continue
		}
		c.seq++
		b.Seq = c.seq
		c.blocks = slices.Insert(c.blocks, i, b)
	}
}

func (c *convo) remove(id string) {
	c.blocks = slices.DeleteFunc(c.blocks, func(b assemble.Block) bool { return b.ID == id })
}

func (c *convo) get(id string) assemble.Block {
	i := slices.IndexFunc(c.blocks, func(b assemble.Block) bool { return b.ID == id })
	if i < 0 {
		c.t.Fatalf("no block %s", id)
	}
	return c.blocks[i]
}

// call assembles at now, following the previous decision (unless fresh),
// and records the new one.
func (c *convo) call(at time.Time, fresh bool) *assemble.Output {
	c.t.Helper()
	out, err := c.asm.Assemble(c.tpl, c.blocks, assemble.Request{Now: at, SessionID: "s1", UserID: "u1", Previous: c.prev, Fresh: fresh, Record: true, Chat: c.chat}, c.tok)
	if err != nil {
		c.t.Fatalf("Assemble: %v", err)
	}
	c.prev = out.Decision
	return out
}

// turn is a history block of the conversation at at.
func chatTurn(id, content string, at time.Time) assemble.Block {
	b := block(id, declare.History, content)
	b.LastModified = at
	return b
}

func doc(id string, w float64, content string) assemble.Block {
	return weighted(id, declare.Context, content, w)
}

// words returns a sentence of n words, to size blocks.
func wordsN(prefix string, n int) string {
	var b strings.Builder
	b.WriteString(prefix)
	for i := range n {
		fmt.Fprintf(&b, " word%d", i)
	}
	return b.String()
}

const chatTemplate = `{"budget": %d, "sections": [
  {"name": "DOCS", "priority": 1, "memory_types": ["context"], "max_tokens": %d, "render": "<doc id=\"{request_id}\">{content}</doc>", "fill": "skip"},
  {"name": "HISTORY", "priority": 2, "memory_types": ["history"], "max_tokens": %d, "render": "{content}", "order": "time", "partial": true}]}`

func statusOf(out *assemble.Output, id string) outcome.Status {
	_, br, ok := result(out, id)
	if !ok {
		return 255
	}
	return br.Status
}

func inText(out *assemble.Output, id string) bool {
	s := statusOf(out, id)
	return s == outcome.StatusKept || s == outcome.StatusCut
}

// TestStickyRepeat: the same inputs after a decision give the same text,
// events and decision, and a prefix that covers all of it; without a
// previous decision, recording one changes nothing of the output.
func TestStickyRepeat(t *testing.T) {
	tpl := mustParse(t, fmt.Sprintf(chatTemplate, 400, 200, 300))
	var blocks []assemble.Block
	for i := range 8 {
		blocks = append(blocks, doc(fmt.Sprintf("doc-%d", i), float64(i)/10, wordsN("Document", 10+5*i)))
	}
	for i := range 12 {
		blocks = append(blocks, chatTurn(fmt.Sprintf("turn-%02d", i), wordsN(fmt.Sprintf("USER %d:", i), 8), now.Add(time.Duration(i-12)*time.Minute)))
	}
	c := newConvo(t, tpl, blocks...)
	first := c.call(now, false)
	plain := mustAssemble(t, tpl, c.blocks, assemble.Request{Now: now, SessionID: "s1", UserID: "u1"})
	if first.Text != plain.Text || !reflect.DeepEqual(first.Sections, plain.Sections) || !reflect.DeepEqual(first.Events, plain.Events) {
		t.Fatalf("recording a decision changed the output")
	}
	if first.Prefix != nil || first.Decision == nil {
		t.Fatalf("first call: prefix %+v, decision %v", first.Prefix, first.Decision)
	}
	for range 3 {
		again := c.call(now, false)
		if again.Text != first.Text || !reflect.DeepEqual(again.Events, first.Events) || !reflect.DeepEqual(again.Decision, first.Decision) {
			t.Fatalf("the same inputs again gave another output:\n%s\nevents %+v\nwant\n%s\nevents %+v", again.Text, again.Events, first.Text, first.Events)
		}
		want := outcome.Prefix{StableBytes: len(first.Text), StableTokens: first.TotalTokens, Reason: outcome.PrefixUnchanged}
		if *again.Prefix != want {
			t.Errorf("prefix %+v, want %+v", *again.Prefix, want)
		}
	}
	// The decision round-trips through JSON (the learned state).
	data, err := json.Marshal(c.prev)
	if err != nil {
		t.Fatal(err)
	}
	var back assemble.Decision
	if err := json.Unmarshal(data, &back); err != nil || !reflect.DeepEqual(&back, c.prev) {
		t.Fatalf("decision does not round-trip (%v):\n%s", err, data)
	}
}

// TestStickyMargin: learned trust moving a dropped block above a kept one
// by less than the margin changes nothing but the explanation; past the
// margin it takes the kept block's place.
func TestStickyMargin(t *testing.T) {
	tpl := mustParse(t, `{"budget": 1000, "sections": [
	  {"name": "DOCS", "priority": 1, "memory_types": ["context"], "max_tokens": 60, "render": "{content}", "fill": "skip"}]}`)
	a, b := doc("a", 0.6, wordsN("A", 25)), doc("b", 0.5, wordsN("B", 25))
	c := newConvo(t, tpl, a, b)
	first := c.call(now, false)
	if !inText(first, "a") || inText(first, "b") {
		t.Fatalf("fixture: want a kept and b dropped:\n%s", first.Text)
	}
	// Scores: a = 0.4·0.5 + 0.35·0.6 + 0.25·0.5 = 0.535; with a learned
	// trust of 0.8, b = 0.2 + 0.175 + 0.2 = 0.575: above a, within the
	// default margin of 0.05.
	b.Trust = 0.8
	c.put(b)
	held := c.call(now, false)
	if held.Text != first.Text {
		t.Fatalf("a move within the margin changed the text:\n%s", held.Text)
	}
	_, br, _ := result(held, "b")
	if br.Reason != outcome.ReasonSticky || !slices.Contains(held.Events, outcome.Event{Kind: outcome.KindNotice, Section: "DOCS", RequestID: "a", Reason: outcome.ReasonSticky}) {
		t.Errorf("b: %+v; events %+v: want b dropped as sticky and a sticky notice", br, held.Events)
	}
	if fresh := mustAssemble(t, tpl, c.blocks, assemble.Request{Now: now}); !inText(fresh, "b") {
		t.Fatalf("fixture: a fresh decision should now keep b")
	}
	// Past the margin: b takes a's place.
	b.Trust = 0.99
	c.put(b)
	moved := c.call(now, false)
	if !inText(moved, "b") || inText(moved, "a") {
		t.Fatalf("past the margin b should replace a:\n%s\n%+v\n%+v", moved.Text, moved.Sections, moved.Events)
	}
	if moved.Prefix.Reason != outcome.PrefixAdded && moved.Prefix.Reason != outcome.PrefixRemoved {
		t.Errorf("prefix %+v", moved.Prefix)
	}
}

// TestStickyWriteOrder: a section written in rank order keeps the
// previous text's order when scores drift, and appends a new block.
func TestStickyWriteOrder(t *testing.T) {
	tpl := mustParse(t, `{"budget": 1000, "sections": [
	  {"name": "DOCS", "priority": 1, "memory_types": ["context"], "max_tokens": 500, "render": "{content}"}]}`)
	x, y := doc("x", 0.6, "Document x."), doc("y", 0.5, "Document y.")
	c := newConvo(t, tpl, x, y)
	first := c.call(now, false)
	if !strings.HasSuffix(first.Text, "Document x.\nDocument y.\n") {
		t.Fatalf("fixture: %q", first.Text)
	}
	y.Weight = 0.9 // y now ranks first
	c.put(y, doc("z", 1, "Document z."))
	next := c.call(now, false)
	if !strings.HasSuffix(next.Text, "Document x.\nDocument y.\nDocument z.\n") {
		t.Errorf("text %q: want the previous order and z appended", next.Text)
	}
	if next.Prefix.Reason != outcome.PrefixAppended || !strings.HasPrefix(next.Text, first.Text) || next.Prefix.StableBytes != len(first.Text) {
		t.Errorf("prefix %+v, want the whole previous text", next.Prefix)
	}
	if fresh := c.call(now, true); !strings.HasSuffix(fresh.Text, "Document z.\nDocument y.\nDocument x.\n") {
		t.Errorf("a fresh decision writes in rank order: %q", fresh.Text)
	}
}

// TestStickyShedsInBatches: a history growing past its section drops its
// oldest turns in a batch, down to the slack, and the next calls only
// append; the turns let go do not come back into the room the slack
// freed.
func TestStickyShedsInBatches(t *testing.T) {
	tok := realTokenizer(t)
	line := tok.Count(wordsN("USER 00:", 20) + "\n")
	const perCall = 2
	tpl := mustParse(t, fmt.Sprintf(chatTemplate, 4000, 100, 12*line))
	c := newConvo(t, tpl)
	var appended, shed int
	var prev *assemble.Output
	for i := range 40 {
		at := now.Add(time.Duration(i) * time.Minute)
		for k := range perCall {
			c.put(chatTurn(fmt.Sprintf("turn-%03d-%d", i, k), wordsN(fmt.Sprintf("USER %02d:", i%100), 20), at.Add(time.Duration(k)*time.Second)))
		}
		out := c.call(at.Add(time.Minute), false)
		newest := fmt.Sprintf("turn-%03d-1", i)
		if !inText(out, newest) {
			t.Fatalf("call %d: the newest turn is not in the text", i)
		}
		var slack []string
		for _, e := range out.Events {
			if e.Reason == outcome.ReasonSlack {
				slack = append(slack, e.RequestID)
			}
		}
		if prev != nil {
			switch out.Prefix.Reason {
			case outcome.PrefixAppended:
				appended++
				if !strings.HasPrefix(out.Text, prev.Text[:len(prev.Text)-1]) {
					t.Fatalf("call %d: appended, but the text does not extend the previous one", i)
				}
			case outcome.PrefixRemoved:
				shed++
				if len(slack) == 0 {
					t.Errorf("call %d: the history changed at its start without a slack drop", i)
				}
				// Down to the slack: three quarters of the cap at most.
				sr, _, _ := result(out, newest)
				if sr.UsedTokens > 12*line*3/4 {
					t.Errorf("call %d: shed down to %d tokens, want at most %d", i, sr.UsedTokens, 12*line*3/4)
				}
			default:
				t.Fatalf("call %d: prefix %+v", i, out.Prefix)
			}
		}
		// Nothing let go comes back.
		if prev != nil {
			for _, s := range out.Sections {
				for _, b := range s.Blocks {
					if p, ok := statusIn(prev, b.RequestID); ok && p == outcome.StatusDropped && (b.Status != outcome.StatusDropped) {
						t.Fatalf("call %d: %s came back", i, b.RequestID)
					}
				}
			}
		}
		prev = out
	}
	if shed == 0 || appended < 2*shed {
		t.Errorf("%d calls appended, %d shed: want batches that leave room for several appends", appended, shed)
	}
}

func statusIn(out *assemble.Output, id string) (outcome.Status, bool) {
	_, br, ok := result(out, id)
	return br.Status, ok
}

// TestStickyEarlierSectionsStay: a section before the history is written
// byte for byte as before while its blocks do not change, whatever
// happens after it; an edit to one of its blocks breaks the prefix there.
func TestStickyEarlierSectionsStay(t *testing.T) {
	tpl := mustParse(t, fmt.Sprintf(chatTemplate, 600, 300, 400))
	var docs []assemble.Block
	for i := range 10 {
		d := doc(fmt.Sprintf("doc-%d", i), float64(i%5)/5, wordsN(fmt.Sprintf("Doc %d", i), 8+i))
		d.LastModified = now.Add(-time.Hour)
		docs = append(docs, d)
	}
	c := newConvo(t, tpl, docs...)
	var docsText string
	for i := range 20 {
		at := now.Add(time.Duration(i) * 3 * time.Minute)
		c.put(chatTurn(fmt.Sprintf("turn-%02d", i), wordsN(fmt.Sprintf("USER %d:", i), 15), at))
		if i == 10 {
			d := c.get("doc-3")
			d.Content += " Revised."
			d.LastModified = at
			c.put(d)
		}
		out := c.call(at, false)
		sr, _, _ := result(out, "doc-0")
		var this string
		for _, b := range sr.Blocks {
			if b.Status != outcome.StatusDropped {
				this += out.Text[b.Offset : b.Offset+b.Length]
			}
		}
		switch {
		case i == 0:
			docsText = this
		case i == 10:
			if out.Prefix.FirstChangedSection != "DOCS" || out.Prefix.FirstChangedBlock != "doc-3" || out.Prefix.Reason != outcome.PrefixChanged {
				t.Errorf("call %d: an edit to doc-3 gives prefix %+v", i, out.Prefix)
			}
			docsText = this
		default:
			if this != docsText {
				t.Fatalf("call %d: DOCS changed though its blocks did not", i)
			}
			if out.Prefix.FirstChangedSection == "DOCS" {
				t.Errorf("call %d: prefix %+v", i, out.Prefix)
			}
		}
	}
}

// TestPrefixAndBreakpoints: the prefix's bytes are the texts' common
// prefix through whole blocks, its tokens their count; breakpoints end
// sections that did not change, count what precedes them, and respect
// the minimum.
func TestPrefixAndBreakpoints(t *testing.T) {
	tok := realTokenizer(t)
	tpl := mustParse(t, `{"budget": 4000, "sections": [
	  {"name": "A", "priority": 1, "memory_types": ["constraint"], "max_tokens": 1000, "render": "<a>{content}</a>"},
	  {"name": "B", "priority": 2, "memory_types": ["context"], "max_tokens": 1000, "render": "{content}", "separator": " | "},
	  {"name": "C", "priority": 3, "memory_types": ["history"], "max_tokens": 1000, "render": "{content}", "order": "time"}]}`)
	base := []assemble.Block{
		block("a1", declare.Constraint, wordsN("rule one", 30)), block("a2", declare.Constraint, wordsN("rule two", 30)),
		block("b1", declare.Context, wordsN("ctx one", 20)), block("b2", declare.Context, wordsN("ctx two", 20)),
		chatTurn("c1", "USER: first", now.Add(-2*time.Minute)), chatTurn("c2", "USER: second", now.Add(-time.Minute)),
	}
	check := func(name string, prev, out *assemble.Output, reason outcome.PrefixReason, section, blk string) {
		t.Helper()
		p := out.Prefix
		if p == nil || p.Reason != reason || p.FirstChangedSection != section || p.FirstChangedBlock != blk {
			t.Errorf("%s: prefix %+v, want %s at %s/%s", name, p, reason, section, blk)
			return
		}
		if out.Text[:p.StableBytes] != prev.Text[:p.StableBytes] {
			t.Errorf("%s: the first %d bytes differ", name, p.StableBytes)
		}
		if n := tok.Count(out.Text[:p.StableBytes]); n != p.StableTokens {
			t.Errorf("%s: stable tokens %d, the bytes count %d", name, p.StableTokens, n)
		}
		for _, bp := range out.Breakpoints {
			if n := tok.Count(out.Text[:bp.Offset]); n != bp.Tokens || out.Text[bp.Offset-1] != '\n' {
				t.Errorf("%s: breakpoint %+v: the text before it counts %d", name, bp, n)
			}
		}
	}
	type step struct {
		name             string
		change           func(c *convo)
		reason           outcome.PrefixReason
		section, block   string
		breakpointsAfter []string // sections with a breakpoint (minimum 1 token)
	}
	steps := []step{
		{"same", func(*convo) {}, outcome.PrefixUnchanged, "", "", []string{"A", "B", "C"}},
		{"a turn appended", func(c *convo) { c.put(chatTurn("c3", "USER: third", now)) }, outcome.PrefixAppended, "C", "c3", []string{"A", "B"}},
		{"a context block edited", func(c *convo) { b := c.get("b2"); b.Content += " (edited)"; c.put(b) }, outcome.PrefixChanged, "B", "b2", []string{"A", "C"}},
		{"a rule added", func(c *convo) { c.put(block("a0", declare.Constraint, "rule zero")) }, outcome.PrefixAdded, "A", "a0", []string{"B", "C"}},
		{"a rule removed", func(c *convo) { c.remove("a1") }, outcome.PrefixRemoved, "A", "a1", []string{"B", "C"}},
		{"a turn removed at the end", func(c *convo) { c.remove("c3") }, outcome.PrefixRemoved, "C", "c3", []string{"A", "B"}},
	}
	c := newConvo(t, tpl, base...)
	c.asm.Stickiness = truncate.Stickiness{MinCachePrefix: 1}
	prev := c.call(now, false)
	if got := sectionsOf(prev.Breakpoints); !slices.Equal(got, []string{"A", "B", "C"}) {
		t.Errorf("first call: breakpoints at %v, want every section", got)
	}
	for _, s := range steps {
		s.change(c)
		out := c.call(now, false)
		check(s.name, prev, out, s.reason, s.section, s.block)
		if got := sectionsOf(out.Breakpoints); !slices.Equal(got, s.breakpointsAfter) {
			t.Errorf("%s: breakpoints at %v, want %v", s.name, got, s.breakpointsAfter)
		}
		prev = out
	}
	// The minimum: no breakpoint covers fewer tokens.
	all := c.call(now, false).Breakpoints // nothing changed: every section
	if len(all) != 3 {
		t.Fatalf("breakpoints %+v, want three", all)
	}
	c.asm.Stickiness = truncate.Stickiness{MinCachePrefix: all[1].Tokens + 1}
	if out := c.call(now, false); !slices.Equal(out.Breakpoints, all[2:]) {
		t.Errorf("with a minimum above B's end: %+v, want %+v", out.Breakpoints, all[2:])
	}
}

func sectionsOf(bps []outcome.Breakpoint) []string {
	var s []string
	for _, bp := range bps {
		s = append(s, bp.Section)
	}
	return s
}

// TestStickyIgnoresUnusableDecision: a decision of another version or of
// other sections is ignored; the assembly decides afresh.
func TestStickyIgnoresUnusableDecision(t *testing.T) {
	tpl := mustParse(t, fmt.Sprintf(chatTemplate, 400, 200, 300))
	c := newConvo(t, tpl, doc("d", 0.5, "Doc."), chatTurn("t", "USER: hi", now))
	first := c.call(now, false)
	for _, bad := range []*assemble.Decision{
		{Version: 99, Sections: first.Decision.Sections},
		{Version: assemble.DecisionVersion, Sections: first.Decision.Sections[:1]},
		{Version: assemble.DecisionVersion, Sections: []assemble.SectionDecision{{Name: "X"}, {Name: "Y"}}},
	} {
		c.prev = bad
		out := c.call(now, false)
		if out.Text != first.Text || out.Prefix != nil {
			t.Errorf("decision %+v: text %q, prefix %+v", bad, out.Text, out.Prefix)
		}
	}
}

// randomChat is a random template with a history section and blocks to
// start a conversation with.
func randomChat(t *testing.T, rng *rand.Rand) (*template.Template, []assemble.Block) {
	t.Helper()
	seps := []*string{nil, ptr(" | "), ptr("\n\n"), ptr("")}
	secs := []template.SectionDefinition{
		{Name: "RULES", MemoryTypes: []declare.MemoryType{declare.Constraint}, MaxTokens: 40 + rng.IntN(200), Render: "<rule>{content}</rule>"},
		{Name: "DOCS", MemoryTypes: []declare.MemoryType{declare.Context, declare.External}, MaxTokens: 50 + rng.IntN(600),
			Render: []string{"{content}", `<doc id="{request_id}">{content}</doc>`}[rng.IntN(2)], Separator: seps[rng.IntN(len(seps))]},
		{Name: "HISTORY", MemoryTypes: []declare.MemoryType{declare.History}, MaxTokens: 50 + rng.IntN(800), Render: "{content}",
			Order: []template.Order{template.OrderTime, template.OrderRank}[rng.IntN(2)], Separator: seps[rng.IntN(2)]},
	}
	for i := range secs {
		secs[i].Fill = []template.Fill{template.FillStop, template.FillSkip}[rng.IntN(2)]
		secs[i].Partial = rng.IntN(2) == 0
	}
	prio := rng.Perm(3)
	for i := range secs {
		secs[i].Priority = 1 + prio[i]
	}
	rng.Shuffle(len(secs), func(i, j int) { secs[i], secs[j] = secs[j], secs[i] })
	budget := 150 + rng.IntN(1400)
	if rng.IntN(8) == 0 {
		budget = 20 + rng.IntN(40) // tight: required rules may not fit
	}
	tpl, err := template.Compile(template.Definition{Budget: budget, Sections: secs})
	if err != nil {
		t.Fatal(err)
	}
	var blocks []assemble.Block
	for i := range rng.IntN(3) {
		b := block(fmt.Sprintf("rule-%d", i), declare.Constraint, randomContent(rng, 1))
		b.Required = rng.IntN(4) > 0
		blocks = append(blocks, b)
	}
	for i := range 5 + rng.IntN(15) {
		d := block(fmt.Sprintf("doc-%02d", i), []declare.MemoryType{declare.Context, declare.External}[rng.IntN(2)], randomContent(rng, 1+rng.IntN(8)))
		d.Weight, d.Trust = float64(rng.IntN(11))/10, float64(rng.IntN(11))/10*0.99
		d.LastModified = now.Add(-time.Duration(1+rng.IntN(48)) * time.Hour)
		if rng.IntN(8) == 0 {
			d.StaleFrom, d.StaleAfter = now.Add(-time.Hour), 24*time.Hour
		}
		blocks = append(blocks, d)
	}
	for i := range rng.IntN(10) {
		blocks = append(blocks, chatTurn(fmt.Sprintf("old-%02d", i), "USER: "+randomContent(rng, 1+rng.IntN(3)), now.Add(-time.Duration(100-i)*time.Minute)))
	}
	return tpl, blocks
}

func ptr[T any](v T) *T { return &v }

// TestStickyConversationProperties runs random conversations: per call a
// user turn (and often an answer), and now and then a document edited,
// added or removed or its trust moved, now advancing three minutes. Every
// rendering must keep every guarantee of a fresh one, and:
//   - the same previous decision and inputs give the same bytes (a second
//     Assembler agrees on text, results, events, decision and prefix);
//   - the newest user turn is in the text whenever a fresh decision keeps it;
//   - the prefix is a true common prefix with the previous text, counted,
//     and the breakpoints end lines, count what precedes them, and
//     respect the minimum;
//   - a required block is kept, or the assembly fails exactly when a
//     fresh one fails.
func TestStickyConversationProperties(t *testing.T) {
	tok := realTokenizer(t)
	rng := rand.New(rand.NewPCG(9, 2026))
	conversations, calls := 40, 12
	if testing.Short() {
		conversations = 10
	}
	var sticky, slack, shedCalls, rendered, failed int
	for conv := range conversations {
		tpl, blocks := randomChat(t, rng)
		c := newConvo(t, tpl, blocks...)
		var prevText string
		for i := range calls {
			at := now.Add(time.Duration(i) * 3 * time.Minute)
			user := fmt.Sprintf("turn-%02d-user", i)
			c.put(chatTurn(user, "USER: "+randomContent(rng, 1+rng.IntN(3)), at))
			if rng.IntN(3) > 0 && i > 0 {
				c.put(chatTurn(fmt.Sprintf("turn-%02d-agent", i-1), "AGENT: "+randomContent(rng, 1+rng.IntN(6)), at.Add(-time.Minute)))
			}
			docs := slices.DeleteFunc(slices.Clone(c.blocks), func(b assemble.Block) bool { return b.Type == declare.History || b.Type == declare.Constraint })
			if len(docs) > 0 {
				d := docs[rng.IntN(len(docs))]
				switch rng.IntN(10) {
				case 0:
					d.Content += " " + randomContent(rng, 1)
					d.LastModified = at
					c.put(d)
				case 1, 2:
					d.Trust = min(0.99, d.Trust+0.05)
					c.put(d)
				case 3:
					c.remove(d.ID)
				case 4:
					n := block(fmt.Sprintf("doc-new-%02d", i), declare.Context, randomContent(rng, 1+rng.IntN(4)))
					n.LastModified = at
					c.put(n)
				}
			}
			describe := fmt.Sprintf("conversation %d call %d", conv, i)
			req := assemble.Request{Now: at, SessionID: "s1", UserID: "u1", Previous: c.prev, Fresh: rng.IntN(10) == 0, Record: true}
			var second assemble.Assembler
			out, err := c.asm.Assemble(tpl, c.blocks, req, tok)
			out2, err2 := second.Assemble(tpl, c.blocks, req, tok)
			fresh, errFresh := (&assemble.Assembler{}).Assemble(tpl, c.blocks, assemble.Request{Now: at, SessionID: "s1", UserID: "u1"}, tok)
			if (err != nil) != (errFresh != nil) || (err != nil) != (err2 != nil) {
				t.Fatalf("%s: sticky %v, again %v, fresh %v", describe, err, err2, errFresh)
			}
			if err != nil {
				failed++
				continue
			}
			rendered++
			if out.Text != out2.Text || !reflect.DeepEqual(out.Sections, out2.Sections) || !reflect.DeepEqual(out.Events, out2.Events) ||
				!reflect.DeepEqual(out.Decision, out2.Decision) || !reflect.DeepEqual(out.Prefix, out2.Prefix) || !reflect.DeepEqual(out.Breakpoints, out2.Breakpoints) {
				t.Fatalf("%s: the same decision and inputs gave two outputs", describe)
			}
			checkChatOutput(t, describe, tpl, c.blocks, tok, out)
			if inText(fresh, user) && !inText(out, user) {
				t.Fatalf("%s: a fresh decision keeps the newest turn, the sticky one does not:\n%s\n%+v", describe, out.Text, out.Events)
			}
			if c.prev != nil {
				p := out.Prefix
				if p == nil || p.StableBytes > len(out.Text) || p.StableBytes > len(prevText) || out.Text[:p.StableBytes] != prevText[:p.StableBytes] {
					t.Fatalf("%s: prefix %+v is not a common prefix", describe, p)
				}
				if n := tok.Count(out.Text[:p.StableBytes]); n != p.StableTokens {
					t.Fatalf("%s: prefix %+v, its bytes count %d", describe, p, n)
				}
			}
			if len(out.Breakpoints) > 4 {
				t.Fatalf("%s: %d breakpoints", describe, len(out.Breakpoints))
			}
			for _, bp := range out.Breakpoints {
				if bp.Offset > len(out.Text) || out.Text[bp.Offset-1] != '\n' || tok.Count(out.Text[:bp.Offset]) != bp.Tokens || bp.Tokens < 1024 {
					t.Fatalf("%s: breakpoint %+v", describe, bp)
				}
			}
			shed := false
			for _, e := range out.Events {
				switch e.Reason {
				case outcome.ReasonSticky:
					sticky++
				case outcome.ReasonSlack:
					slack++
					shed = true
				}
			}
			if shed {
				shedCalls++
			}
			c.prev, prevText = out.Decision, out.Text
		}
	}
	t.Logf("%d renderings, %d failed closed; %d sticky events, %d slack drops in %d calls", rendered, failed, sticky, slack, shedCalls)
	if failed == 0 {
		t.Log("no conversation failed closed: the failure path is not exercised")
	}
	if sticky == 0 || slack == 0 || failed == 0 && !testing.Short() || rendered < conversations*calls/2 {
		t.Errorf("the conversations do not exercise stickiness: %d sticky, %d slack, %d rendered", sticky, slack, rendered)
	}
}

// checkChatOutput checks the guarantees every rendering keeps: the exact
// count within the budget, required blocks kept, every eligible block
// placed once with a status, a reason and its events, blocks located by
// their offsets, caps, and one header.
func checkChatOutput(t *testing.T, describe string, tpl *template.Template, blocks []assemble.Block, tok truncate.Counter, out *assemble.Output) {
	t.Helper()
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("%s: %s\n%s", describe, fmt.Sprintf(format, args...), out.Text)
	}
	if n := tok.Count(out.Text); n != out.TotalTokens || n > tpl.Budget() {
		fail("TotalTokens %d, the text counts %d, budget %d", out.TotalTokens, n, tpl.Budget())
	}
	if !strings.HasPrefix(out.Text, tpl.Header()+"\n") {
		fail("the text does not start with the header line")
	}
	byID := map[string]assemble.Block{}
	for _, b := range blocks {
		byID[b.ID] = b
	}
	seen := map[string]bool{}
	for si, s := range out.Sections {
		sec := tpl.Section(si)
		if s.UsedTokens > s.MaxTokens {
			fail("section %s uses %d of %d", s.Name, s.UsedTokens, s.MaxTokens)
		}
		for _, br := range s.Blocks {
			if seen[br.RequestID] {
				fail("%s placed twice", br.RequestID)
			}
			seen[br.RequestID] = true
			b := byID[br.RequestID]
			var evs []outcome.Event
			for _, e := range out.Events {
				if e.RequestID == br.RequestID && (e.Kind == outcome.KindDropped || e.Kind == outcome.KindCut) {
					evs = append(evs, e)
				}
			}
			var wantKinds []outcome.Kind
			switch {
			case br.Status == outcome.StatusKept && br.Reason == "":
			case br.Status == outcome.StatusCut && br.Reason == outcome.ReasonCut:
				wantKinds = []outcome.Kind{outcome.KindCut}
			case br.Status == outcome.StatusDropped && slices.Contains([]outcome.Reason{outcome.ReasonSectionCap, outcome.ReasonBudget, outcome.ReasonSticky, outcome.ReasonSlack}, br.Reason):
				if slices.ContainsFunc(evs, func(e outcome.Event) bool { return e.Kind == outcome.KindCut }) {
					wantKinds = append(wantKinds, outcome.KindCut)
				}
				wantKinds = append(wantKinds, outcome.KindDropped)
				if evs[len(evs)-1].Reason != br.Reason {
					fail("%s: reason %s, event %+v", br.RequestID, br.Reason, evs[len(evs)-1])
				}
			default:
				fail("%s: status %v reason %q", br.RequestID, br.Status, br.Reason)
			}
			var kinds []outcome.Kind
			for _, e := range evs {
				kinds = append(kinds, e.Kind)
			}
			if !slices.Equal(kinds, wantKinds) {
				fail("%s (%v %s): events %+v", br.RequestID, br.Status, br.Reason, evs)
			}
			if b.Required && br.Status != outcome.StatusKept {
				fail("required %s is %v", br.RequestID, br.Status)
			}
			if br.Status == outcome.StatusDropped {
				continue
			}
			got := out.Text[br.Offset : br.Offset+br.Length]
			if br.Status == outcome.StatusKept {
				if want := renderContent(sec, b, b.Content); got != want {
					// A neutralised block renders with joiners: compare
					// without them.
					if strings.ReplaceAll(got, "\u2060", "") != strings.ReplaceAll(want, "\u2060", "") {
						fail("%s at %d: %q, want %q", br.RequestID, br.Offset, got, want)
					}
				}
			}
		}
	}
	for _, b := range blocks {
		if !seen[b.ID] && !slices.ContainsFunc(out.Events, func(e outcome.Event) bool { return e.RequestID == b.ID && e.Kind == outcome.KindExcluded }) {
			fail("%s is neither placed nor excluded", b.ID)
		}
	}
}

// TestStickyAppendOnlyStable: in an append-only conversation (documents
// that do not change, one turn a call) most of every rendering is the
// previous one's prefix, far more than when every call decides afresh.
func TestStickyAppendOnlyStable(t *testing.T) {
	tok := realTokenizer(t)
	for seed := range uint64(5) {
		rng := rand.New(rand.NewPCG(seed, 77))
		tpl := mustParse(t, fmt.Sprintf(chatTemplate, 700+rng.IntN(400), 300+rng.IntN(200), 300+rng.IntN(300)))
		var docs []assemble.Block
		for i := range 12 {
			docs = append(docs, doc(fmt.Sprintf("doc-%02d", i), float64(rng.IntN(11))/10, randomContent(rng, 2+rng.IntN(4))))
		}
		stable := func(fresh bool) float64 {
			c := newConvo(t, tpl, docs...)
			var prev string
			var shared, total int
			for i := range 30 {
				at := now.Add(time.Duration(i) * 3 * time.Minute)
				c.put(chatTurn(fmt.Sprintf("turn-%02d", i), "USER: "+randomContent(rng, 1+rng.IntN(3)), at))
				out := c.call(at, fresh)
				total += out.TotalTokens
				if i > 0 {
					n := 0
					for n < len(prev) && n < len(out.Text) && prev[n] == out.Text[n] {
						n++
					}
					shared += tok.Count(out.Text[:strings.LastIndexByte(out.Text[:n], '\n')+1])
				}
				prev = out.Text
			}
			return float64(shared) / float64(total)
		}
		s, f := stable(false), stable(true)
		t.Logf("seed %d: stable fraction %.3f sticky, %.3f fresh", seed, s, f)
		if s < 0.85 || s <= f {
			t.Errorf("seed %d: stable fraction %.3f (fresh %.3f), want at least 0.85 and more than fresh", seed, s, f)
		}
	}
}

// TestStickyChatFormat: in a chat format the history is messages, not
// text; the decisions cover them too: the message list only grows (the
// newest turn in every call), except when the history sheds a batch of
// its oldest turns, and the system prompt stays the previous one's.
func TestStickyChatFormat(t *testing.T) {
	tok := realTokenizer(t)
	line := tok.Count(wordsN("USER 00:", 20))
	tpl := mustParse(t, fmt.Sprintf(chatTemplate, 4000, 200, 10*line))
	var docs []assemble.Block
	for i := range 6 {
		docs = append(docs, doc(fmt.Sprintf("doc-%d", i), float64(i)/10, wordsN(fmt.Sprintf("Doc %d", i), 10)))
	}
	c := newConvo(t, tpl, docs...)
	c.chat = assemble.ChatCost{Format: chat.FormatAnthropic, PerMessage: 3, Reply: 3}
	var prev *assemble.Output
	var appended, shed int
	for i := range 30 {
		at := now.Add(time.Duration(i) * 3 * time.Minute)
		user := chatTurn(fmt.Sprintf("turn-%02d", i), wordsN(fmt.Sprintf("USER %02d:", i), 20), at)
		user.Scope, user.SessionID = declare.ScopeSession, "s1"
		c.put(user)
		out := c.call(at, false)
		ids := messageIDs(out)
		if len(ids) == 0 || ids[len(ids)-1] != user.ID {
			t.Fatalf("call %d: messages %v do not end with the newest turn", i, ids)
		}
		var msgs int
		for _, s := range out.Decision.Sections {
			for _, w := range s.Blocks {
				if w.Message {
					msgs++
					if w.Span != "" {
						t.Fatalf("call %d: a message has a span", i)
					}
				}
			}
		}
		if msgs != len(ids) {
			t.Fatalf("call %d: the decision records %d messages, the output has %d", i, msgs, len(ids))
		}
		if prev != nil {
			if out.Text != prev.Text || out.Prefix.Reason != outcome.PrefixUnchanged {
				t.Fatalf("call %d: the system prompt changed (prefix %+v)", i, out.Prefix)
			}
			was := messageIDs(prev)
			switch {
			case slices.Equal(ids[:len(ids)-1], was):
				appended++
			case len(ids) < len(was)+1 && slices.Equal(ids[:len(ids)-1], was[len(was)-(len(ids)-1):]):
				shed++ // the oldest went, in a batch; the rest in place
			default:
				t.Fatalf("call %d: messages %v after %v", i, ids, was)
			}
		}
		prev = out
	}
	if shed == 0 || appended < 2*shed {
		t.Errorf("%d calls appended, %d shed: want batches", appended, shed)
	}
}

func messageIDs(out *assemble.Output) []string {
	var ids []string
	for _, m := range out.Messages {
		ids = append(ids, m.BlockIDs...)
	}
	return ids
}

// TestPrefixNamesNoHiddenBlock: the prefix never names a block hidden
// from the request, though the previous decision (of the same
// conversation with another role, or a crafted one) wrote it: it says
// the text lost a block, not which.
func TestPrefixNamesNoHiddenBlock(t *testing.T) {
	tok := realTokenizer(t)
	tpl := mustParse(t, `{"budget": 4000, "sections": [
	  {"name": "A", "priority": 1, "memory_types": ["constraint"], "max_tokens": 1000, "render": "<a>{content}</a>"},
	  {"name": "C", "priority": 2, "memory_types": ["history"], "max_tokens": 1000, "render": "{content}", "order": "time"}]}`)
	admin := block("role-ctx", declare.Constraint, "admins may see this")
	admin.EditRare().Roles = []string{"admin"}
	other := block("other-user", declare.Constraint, "u2's own rule")
	other.Scope, other.UserID = declare.ScopeUser, "u2"
	blocks := []assemble.Block{keyed(block("a-open", declare.Constraint, "everyone sees this")), keyed(admin), keyed(other),
		keyed(chatTurn("c1", "USER: hi", now))}
	var asm assemble.Assembler
	assembleAs := func(user string, roles []string, prev *assemble.Decision) *assemble.Output {
		t.Helper()
		out, err := asm.Assemble(tpl, blocks, assemble.Request{Now: now, SessionID: "s1", UserID: user, Roles: roles, Previous: prev, Record: true}, tok)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	for _, tt := range []struct {
		name       string
		user       string
		roles      []string
		hiddenNext string // the block the next request may not see
	}{
		{"a role dropped", "u1", []string{"admin"}, "role-ctx"},
		{"another user's decision", "u2", nil, "other-user"},
	} {
		first := assembleAs(tt.user, tt.roles, nil)
		if !strings.Contains(first.Text, blocks[slices.IndexFunc(blocks, func(b assemble.Block) bool { return b.ID == tt.hiddenNext })].Content) {
			t.Fatalf("%s: the first text lacks %s:\n%s", tt.name, tt.hiddenNext, first.Text)
		}
		next := assembleAs("u1", nil, first.Decision)
		p := next.Prefix
		if p == nil || p.Reason != outcome.PrefixRemoved {
			t.Fatalf("%s: prefix %+v, want removed", tt.name, p)
		}
		if p.FirstChangedBlock != "" {
			t.Errorf("%s: the prefix names %q, which the request may not see", tt.name, p.FirstChangedBlock)
		}
		if strings.Contains(fmt.Sprintf("%+v", next.Events), tt.hiddenNext) {
			t.Errorf("%s: an event names %s", tt.name, tt.hiddenNext)
		}
	}
}

// TestStickyRowsInRankOrder: a section that follows its previous decision
// fills in the sticky order (incumbents raised by the margin), but its
// rows list the blocks in rank order, as for a fresh one: required first,
// then by score.
func TestStickyRowsInRankOrder(t *testing.T) {
	tpl := mustParse(t, fmt.Sprintf(chatTemplate, 4000, 60, 300))
	c := newConvo(t, tpl, doc("d-low", 0.3, "low doc words here"), doc("d-mid", 0.5, "mid doc words here"))
	c.call(now, false)
	// A better document, by less than the margin: the incumbents stay
	// first in the fill, the rows still rank it first.
	c.put(doc("d-best", 0.6, "best doc words here"), doc("d-top", 0.9, wordsN("top doc", 5)))
	out := c.call(now.Add(time.Minute), false)
	for _, s := range out.Sections {
		for i := 1; i < len(s.Blocks); i++ {
			x, y := s.Blocks[i-1], s.Blocks[i]
			if !x.Required && y.Required || x.Required == y.Required && x.Score < y.Score {
				t.Errorf("section %s: row %d %s (score %v) before row %d %s (score %v)", s.Name, i-1, x.RequestID, x.Score, i, y.RequestID, y.Score)
			}
		}
	}
}

// TestDecisionKeys: a decision records, for each block written or sent
// as a message, the first 8 bytes of the block's key in hex, in text and
// messages alike, so that the next call tells an edit from the same
// block.
func TestDecisionKeys(t *testing.T) {
	tpl := mustParse(t, `{"budget": 4000, "sections": [
 {"name": "CONTEXT", "priority": 2, "memory_types": ["context"], "max_tokens": 1000, "render": "{content}"},
 {"name": "HISTORY", "priority": 1, "memory_types": ["history"], "max_tokens": 1000, "render": "{content}", "order": "time"}]}`)
	var blocks []assemble.Block
	want := map[string]string{}
	for i := range 6 {
		b := block(fmt.Sprintf("c%d", i), declare.Context, fmt.Sprintf("context number %d", i))
		b.Key = [16]byte{byte(i), 1, 2, 3, 4, 5, 6, 7, 0xff}
		want[b.ID] = fmt.Sprintf("%02x01020304050607", i)
		blocks = append(blocks, b)
		tb := turnAt(fmt.Sprintf("t%d", i), 5, 10-i)
		tb.Key = [16]byte{0xa0, byte(i), 9, 9, 9, 9, 9, 9}
		want[tb.ID] = fmt.Sprintf("a0%02x090909090909", i)
		blocks = append(blocks, tb)
	}
	for _, format := range []chat.Format{0, chat.FormatOpenAI} {
		out := mustAssemble(t, tpl, blocks, assemble.Request{Record: true, Chat: assemble.ChatCost{Format: format, PerMessage: 3, Reply: 3}})
		seen := 0
		for _, s := range out.Decision.Sections {
			for _, w := range s.Blocks {
				if w.Key != want[w.ID] {
					t.Errorf("format %v: %s recorded with key %q, want %q", format, w.ID, w.Key, want[w.ID])
				}
				seen++
			}
		}
		if seen != len(blocks) {
			t.Errorf("format %v: %d blocks recorded, want %d", format, seen, len(blocks))
		}
	}
}
