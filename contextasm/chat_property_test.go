package contextasm_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/contextasm/contextasm/chat"
	"github.com/contextasm/contextasm/contextasm"
	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/internal/bpe"
	"github.com/contextasm/contextasm/internal/chatcheck"
	"github.com/contextasm/contextasm/outcome"
	"github.com/contextasm/contextasm/template"
	"github.com/contextasm/contextasm/truncate"
)

var chatNow = time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)

// words makes n words of text.
func words(r *rand.Rand, n int) string {
	vocab := []string{"rate", "loan", "the", "APR", "is", "6.9%", "month", "payment", "EUR", "18,000", "über", "ação", "<b>", "&", "ok", "line\nbreak", "credit", "score", "712"}
	w := make([]string, n)
	for i := range w {
		w[i] = vocab[r.IntN(len(vocab))]
	}
	return strings.Join(w, " ")
}

// session generates one session's conversation: user turns, assistant
// turns with text, assistant turns making one to three parallel calls
// whose results come back in any order (a user sometimes writes in
// between), results that expired (so their calls are orphans), groups of
// turns, and required turns. Every history block has its own time.
func session(r *rand.Rand, turns int) []declare.Declaration {
	decls := []declare.Declaration{
		{RequestID: "rule", MemoryType: declare.Constraint, Scope: declare.ScopeGlobal, Required: true, Content: "Quote the APR with every rate."},
		{RequestID: "ctx", MemoryType: declare.Context, Scope: declare.ScopeGlobal, Content: words(r, 5+r.IntN(20))},
	}
	at := chatNow.Add(-time.Hour)
	next := func() *time.Time {
		at = at.Add(time.Duration(1+r.IntN(90)) * time.Second)
		t := at
		return &t
	}
	hist := func(id string, role declare.Role, content string) declare.Declaration {
		return declare.Declaration{RequestID: id, MemoryType: declare.History, Scope: declare.ScopeSession, SessionID: "s1",
			Role: role, Content: content, LastModified: next(), SemanticWeight: ptr(r.Float64())}
	}
	call := 0
	for turn := range turns {
		id := fmt.Sprintf("t%02d", turn)
		switch r.IntN(5) {
		case 0, 1:
			d := hist(id+"-user", declare.RoleUser, words(r, 1+r.IntN(30)))
			d.Required = r.IntN(8) == 0
			decls = append(decls, d)
		case 2:
			d := hist(id+"-agent", declare.RoleAssistant, words(r, 1+r.IntN(40)))
			if r.IntN(4) == 0 {
				d.Group = "g" + id
				u := hist(id+"-follow", declare.RoleUser, words(r, 1+r.IntN(10)))
				u.Group = d.Group
				decls = append(decls, d, u)
				continue
			}
			decls = append(decls, d)
		default:
			content := ""
			if r.IntN(2) == 0 {
				content = words(r, 1+r.IntN(10))
			}
			a := hist(id+"-call", declare.RoleAssistant, content)
			n := 1 + r.IntN(3)
			var results []declare.Declaration
			for k := range n {
				call++
				cid := fmt.Sprintf("call_%d", call)
				if call%4 == 0 { // an id Anthropic does not take as it is (Kimi's)
					cid = fmt.Sprintf("functions.get_rate:%d", call)
				}
				a.ToolCalls = append(a.ToolCalls, declare.ToolCall{ID: cid, Name: []string{"get_rate", "quote", "lookup-file"}[r.IntN(3)],
					Arguments: fmt.Sprintf(`{"n":%d,"q":%q}`, k, words(r, 1+r.IntN(3)))})
				res := hist(fmt.Sprintf("%s-result-%d", id, k), declare.RoleTool, words(r, 1+r.IntN(60)))
				res.ToolCallID = cid
				if r.IntN(12) == 0 {
					res.ValidUntil = &declare.Time{Time: chatNow.Add(-time.Minute)} // expired: its call is an orphan
				}
				results = append(results, res)
			}
			if r.IntN(6) == 0 {
				a.Required = true
			}
			if call%3 == 0 { // reasoning of both providers
				a.Reasoning = chatReasoning
			}
			decls = append(decls, a)
			if r.IntN(3) == 0 { // the user writes before the results come back
				decls = append(decls, hist(id+"-meanwhile", declare.RoleUser, words(r, 1+r.IntN(8))))
			}
			r.Shuffle(len(results), func(i, j int) { results[i], results[j] = results[j], results[i] })
			for _, res := range results {
				res.LastModified = next()
				decls = append(decls, res)
			}
		}
	}
	return decls
}

// chatReasoning are reasoning items of every type, as providers return
// them.
var chatReasoning = func() []declare.Reasoning {
	var rs []declare.Reasoning
	if err := json.Unmarshal([]byte(`[{"type":"thinking","thinking":"The rate first.","signature":"EqQBCkYI"},{"type":"redacted_thinking","data":"EmwKAhgB"},{"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"Rate first."}],"encrypted_content":"gAAAA"}]`), &rs); err != nil {
		panic(err)
	}
	return rs
}()

// chatTemplate returns a template with a history section of cap hcap; one
// cap in three clears older tool results.
func chatTemplate(t testing.TB, budget, hcap int, partial bool) *template.Template {
	clearing := ""
	if hcap%3 == 0 {
		clearing = `,"clear_tool_results":{"keep":1,"at_least":30}`
	}
	return parseTemplate(t, fmt.Sprintf(`{"template_version":"chat","budget":%d,"encoding":"o200k_base","sections":[
		{"name":"RULES","priority":1,"memory_types":["constraint"],"max_tokens":100,"render":"<rule>{content}</rule>"},
		{"name":"CONTEXT","priority":2,"memory_types":["context"],"max_tokens":100,"render":"<ctx>{content}</ctx>","fill":"skip"},
		{"name":"HISTORY","priority":3,"memory_types":["history"],"max_tokens":%d,"render":"{content}","order":"time","partial":%t%s}]}`,
		budget, hcap, partial, clearing))
}

// TestChatProperties assembles several hundred generated conversations at
// random budgets in the text and both chat formats, and checks every
// guarantee of docs/chat.md with the independent checker of the APIs'
// rules.
func TestChatProperties(t *testing.T) {
	tok := o200k(t)
	r := rand.New(rand.NewPCG(10, 0xC4A7))
	conversations := 300
	if testing.Short() {
		conversations = 100 // the fewest whose generator still reaches every case checked below
	}
	stats := map[string]int{}
	for i := range conversations {
		decls := session(r, 3+r.IntN(14))
		tpl := chatTemplate(t, 60+r.IntN(900), 80+r.IntN(900), r.IntN(2) == 0)
		overhead := contextasm.ChatOverhead{}
		if i%7 == 0 {
			overhead = contextasm.ChatOverhead{PerMessage: 5, Reply: -1}
		}
		for _, f := range []chat.Format{0, chat.FormatOpenAI, chat.FormatAnthropic, chat.FormatResponses} {
			what := fmt.Sprintf("conversation %d, format %v", i, f)
			eng := newEngine(t, contextasm.Config{ChatOverhead: overhead}, decls...)
			req := contextasm.Request{Template: tpl, Now: chatNow, SessionID: "s1", Format: f}
			res, err := eng.Assemble(context.Background(), req)
			if errors.Is(err, contextasm.ErrBudgetTooSmall) {
				stats["too small"]++
				continue
			}
			if err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			checkChatResult(t, what, tok, overhead, decls, res)
			stats[f.String()]++
			if len(res.Messages().Messages) > 0 {
				stats["with messages"]++
			}
			for _, m := range res.Messages().Messages {
				if len(m.Reasoning) > 0 {
					stats["reasoning written"]++
				}
			}
			for _, e := range res.Events() {
				stats[string(e.Reason)]++
			}

			// Determinism: another engine, the declarations in another
			// order, gives the same bytes.
			shuffled := slices.Clone(decls)
			r.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
			again := assemble(t, newEngine(t, contextasm.Config{ChatOverhead: overhead}, shuffled...), req)
			if again.RenderHash != res.RenderHash || again.Text != res.Text || !slices.Equal(again.Events(), res.Events()) ||
				!slices.EqualFunc(again.Messages().Messages, res.Messages().Messages, sameMessage) {
				t.Fatalf("%s: another declaration order gives another result", what)
			}
		}
	}
	t.Logf("%v", stats)
	// The generator must exercise what is checked.
	for _, k := range []string{"with messages", "group", "orphan", "budget", "section_cap", "first_message", "too small", "reasoning_dropped", "reasoning written", "cleared"} {
		if stats[k] == 0 {
			t.Errorf("no assembly had %q: the generator does not test it (%v)", k, stats)
		}
	}
}

func sameMessage(a, b chat.Message) bool {
	return a.Role == b.Role && a.Content == b.Content && a.ToolCallID == b.ToolCallID &&
		slices.Equal(a.ToolCalls, b.ToolCalls) && slices.Equal(a.BlockIDs, b.BlockIDs)
}

// checkChatResult checks one assembly's guarantees.
func checkChatResult(t *testing.T, what string, tok *bpe.Tokenizer, overhead contextasm.ChatOverhead, decls []declare.Declaration, res *contextasm.Result) {
	t.Helper()
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("%s: %s\ntext:\n%s\nmessages: %+v\nevents: %+v", what, fmt.Sprintf(format, args...), res.Text, res.Messages().Messages, res.Events())
	}
	by := make(map[string]*declare.Declaration)
	for i := range decls {
		by[decls[i].RequestID] = &decls[i]
	}
	conv := res.Messages()

	// The budget, counted independently: the text, or the system prompt
	// and every message with its overhead.
	if res.TotalTokens > res.Budget {
		fail("%d tokens over the budget %d", res.TotalTokens, res.Budget)
	}
	want := tok.Count(res.Text)
	if res.Format != 0 {
		per, reply := overhead.PerMessage, overhead.Reply
		if per == 0 {
			per = contextasm.DefaultPerMessageTokens
		}
		if reply == 0 {
			reply = contextasm.DefaultReplyTokens
		}
		per, reply = max(per, 0), max(reply, 0)
		want += per + tok.Count("system") + reply
		for _, m := range conv.Messages {
			want += per + tok.Count(string(m.Role)) + tok.Count(m.Content)
			if m.ToolCallID != "" {
				want += tok.Count(chat.WireID(m.ToolCallID)) // the id as written
			}
			for _, c := range m.ToolCalls {
				want += tok.Count(chat.WireID(c.ID)) + tok.Count(c.Name) + tok.Count(c.Arguments)
			}
			for _, rs := range m.Reasoning { // the items written
				if !rs.For(res.Format) {
					fail("message %s carries reasoning its format does not write", m.BlockIDs)
				}
				want += tok.Count(string(rs.JSON))
			}
		}
	} else if len(conv.Messages) != 0 {
		fail("a text result has messages")
	}
	if res.TotalTokens != want {
		fail("TotalTokens %d, counted %d", res.TotalTokens, want)
	}

	// The body passes the API's rules, and hashes to RenderHash.
	if res.Format != 0 {
		body, err := chat.Encode(res.Format, conv)
		if err != nil {
			fail("encode: %v", err)
		}
		check := chatcheck.OpenAI
		switch res.Format {
		case chat.FormatAnthropic:
			check = chatcheck.Anthropic
		case chat.FormatResponses:
			check = chatcheck.Responses
		}
		if err := check(body, chatcheck.Options{AllowNoMessages: true}); err != nil {
			fail("%v\n%s", err, body)
		}
		if got := renderHash(body); got != res.RenderHash {
			fail("RenderHash %s, body hashes to %s", res.RenderHash, got)
		}
		if !bytes.Equal(res.Body(), body) {
			fail("Body is not the encoded Messages:\n%s\n%s", res.Body(), body)
		}
	} else if res.Body() != nil {
		fail("a text result has a body: %s", res.Body())
		if res.Format == chat.FormatAnthropic && len(conv.Messages) > 0 && conv.Messages[0].Role != chat.RoleUser {
			fail("the Anthropic conversation opens with %s", conv.Messages[0].Role)
		}
	}

	// Each block's fate: in the result (a message, or a place in the
	// text), or explained by an event. Blocks kept are the ones sent.
	status := map[string]outcome.Status{}
	for _, s := range res.Sections() {
		if s.UsedTokens > s.MaxTokens {
			fail("section %s uses %d tokens, over its cap %d", s.Name, s.UsedTokens, s.MaxTokens)
		}
		for _, b := range s.Blocks {
			status[b.RequestID] = b.Status
		}
	}
	events := map[string]outcome.Event{}
	notices := map[string]map[outcome.Reason]bool{}
	for _, e := range res.Events() {
		if e.Kind != outcome.KindNotice {
			events[e.RequestID] = e
		} else {
			if notices[e.RequestID] == nil {
				notices[e.RequestID] = map[outcome.Reason]bool{}
			}
			notices[e.RequestID][e.Reason] = true
		}
	}
	// The current turn: the newest user turn still eligible is sent, in
	// every chat body that renders.
	if res.Format != 0 {
		var newest *declare.Declaration
		for i := range decls {
			d := &decls[i]
			if e, ok := events[d.RequestID]; d.Role != declare.RoleUser || ok && e.Kind == outcome.KindExcluded {
				continue
			}
			if newest == nil || d.LastModified.After(*newest.LastModified) {
				newest = d
			}
		}
		if newest != nil && status[newest.RequestID] == outcome.StatusDropped {
			fail("the current turn %s is not in the body", newest.RequestID)
		}
	}
	sent := map[string]bool{}
	var last time.Time
	for i, m := range conv.Messages {
		if len(m.BlockIDs) != 1 || sent[m.BlockIDs[0]] {
			fail("message %d has blocks %q", i, m.BlockIDs)
		}
		sent[m.BlockIDs[0]] = true
		d := by[m.BlockIDs[0]]
		// Time order, but for results, which follow their call.
		if m.Role != chat.RoleTool {
			if d.LastModified.Before(last) {
				fail("message %d (%s) is older than the one before it", i, d.RequestID)
			}
			last = *d.LastModified
		}
		if d.ChatRole() != m.Role || d.ToolCallID != m.ToolCallID || !slices.Equal(d.ToolCalls, m.ToolCalls) {
			fail("message %d is not block %s", i, d.RequestID)
		}
		want := d.Content
		switch {
		case notices[d.RequestID][outcome.ReasonCleared]:
			name := ""
			for _, c := range decls {
				for _, tc := range c.ToolCalls {
					if tc.ID == d.ToolCallID {
						name = tc.Name
					}
				}
			}
			if n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(m.Content, "[tool result cleared: "+name+", call "+d.ToolCallID+", "), " tokens]")); err == nil && n >= tok.Count(d.Content)/2 {
				want = m.Content // the tokens the result holds, clipped or not
			}
		case notices[d.RequestID][outcome.ReasonClipped]:
			if at := strings.LastIndex(m.Content, "\n[clipped: "); at >= 0 && strings.HasPrefix(d.Content, m.Content[:at]) {
				want = m.Content
			}
		}
		if st := status[d.RequestID]; st == outcome.StatusDropped || (st == outcome.StatusKept && m.Content != want) ||
			(st == outcome.StatusCut && !strings.HasPrefix(d.Content, m.Content)) {
			fail("message %d (%s, %v) has content %q", i, d.RequestID, st, m.Content)
		}
	}
	for _, d := range decls {
		st, inSection := status[d.RequestID]
		inText := inSection && st != outcome.StatusDropped
		if res.Format != 0 && d.MemoryType == declare.History {
			if inText != sent[d.RequestID] {
				fail("%s: %v in the sections, sent %v", d.RequestID, st, sent[d.RequestID])
			}
		}
		if !inText {
			if _, ok := events[d.RequestID]; !ok {
				fail("%s left out without an event", d.RequestID)
			}
			if d.Required && d.ValidUntil == nil {
				fail("required %s left out", d.RequestID)
			}
		}
	}

	// Never orphaned, and groups whole: a call is sent iff all its results
	// are; blocks of one group share their fate.
	kept := func(id string) bool { st, ok := status[id]; return ok && st != outcome.StatusDropped }
	answer := map[string]string{}
	for _, d := range decls {
		if d.ToolCallID != "" {
			answer[d.ToolCallID] = d.RequestID
		}
	}
	fates := map[string]bool{}
	for _, d := range decls {
		for _, c := range d.ToolCalls {
			if kept(d.RequestID) != kept(answer[c.ID]) {
				fail("call %s of %s (kept %v) and its result %s (kept %v) part", c.ID, d.RequestID, kept(d.RequestID), answer[c.ID], kept(answer[c.ID]))
			}
		}
		if d.Group != "" {
			if f, ok := fates[d.Group]; ok && f != kept(d.RequestID) {
				fail("group %s is split", d.Group)
			}
			fates[d.Group] = kept(d.RequestID)
		}
		if e, ok := events[d.RequestID]; ok && (e.Reason == outcome.ReasonGroup || e.Reason == outcome.ReasonOrphan) && e.Group == "" && d.ToolCallID == "" {
			fail("event %+v names no group", e)
		}
	}
}

func renderHash(body []byte) string {
	sum := sha256.Sum256(body)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// BenchmarkAssembleChat assembles a 200-turn session with tool calls for a
// chat format after each new turn (one more block, the rest from the
// caches), and encodes the body.
func BenchmarkAssembleChat(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 4))
	decls := session(r, 200)
	for i := range decls { // no required turn, no orphan: every assembly succeeds
		decls[i].Required, decls[i].ValidUntil = false, nil
	}
	tpl := chatTemplate(b, 4000, 3000, true)
	for _, f := range []chat.Format{0, chat.FormatOpenAI, chat.FormatAnthropic} {
		name := "text"
		if f != 0 {
			name = f.String()
		}
		b.Run("format="+name, func(b *testing.B) {
			eng := newEngine(b, contextasm.Config{}, decls...)
			req := contextasm.Request{Template: tpl, Now: chatNow, SessionID: "s1", Format: f}
			ctx := context.Background()
			turn := 0
			b.ReportAllocs()
			for b.Loop() {
				turn++
				d := declare.Declaration{RequestID: fmt.Sprintf("new-%d", turn), MemoryType: declare.History, Scope: declare.ScopeSession,
					SessionID: "s1", Content: "And one more question.", LastModified: ptr(chatNow.Add(-time.Second))}
				if err := eng.Declare(d); err != nil {
					b.Fatal(err)
				}
				res, err := eng.Assemble(ctx, req)
				if err != nil {
					b.Fatal(err)
				}
				if f != 0 {
					if _, err := chat.Encode(f, res.Messages()); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}

// TestChatConversationProperties drives generated conversations call by
// call, as a host does: each call declares the next blocks and assembles,
// so every assembly after the first follows the previous decision (sticky
// kept sets, history shed in batches). Every guarantee holds at every call,
// in every format.
func TestChatConversationProperties(t *testing.T) {
	tok := o200k(t)
	r := rand.New(rand.NewPCG(11, 0xC4A7))
	// Conversation 81 sheds by clearing tool results shorter than their
	// placeholders (TestClearingFreesRoom).
	conversations := 150
	if testing.Short() {
		conversations = 100 // the fewest whose generator still reaches every case checked below
	}
	stats := map[string]int{}
	for i := range conversations {
		decls := session(r, 6+r.IntN(20))
		tpl := chatTemplate(t, 150+r.IntN(700), 100+r.IntN(500), r.IntN(2) == 0)
		// Calls declare up to the next user turn (a call's results come
		// with it: a result is never declared before its call).
		var stops []int
		for j := 2; j < len(decls); j++ {
			if decls[j].ChatRole() == declare.RoleUser && decls[j].Group == "" {
				stops = append(stops, j)
			}
		}
		stops = append(stops, len(decls))
		// Half the conversations mark cache breakpoints from 64 tokens.
		cfg := contextasm.Config{}
		if i%2 == 0 {
			cfg.Stickiness = truncate.Stickiness{MinCachePrefix: 64}
		}
		for _, f := range []chat.Format{0, chat.FormatOpenAI, chat.FormatAnthropic, chat.FormatResponses} {
			eng := newEngine(t, cfg)
			declared := 0
			for call, stop := range stops {
				if err := eng.Declare(decls[declared:stop]...); err != nil {
					t.Fatal(err)
				}
				declared = stop
				what := fmt.Sprintf("conversation %d, format %v, call %d", i, f, call)
				res, err := eng.Assemble(context.Background(), contextasm.Request{Template: tpl, Now: chatNow.Add(time.Duration(call) * time.Minute), SessionID: "s1", Format: f})
				if errors.Is(err, contextasm.ErrBudgetTooSmall) {
					stats["too small"]++
					continue
				}
				if err != nil {
					t.Fatalf("%s: %v", what, err)
				}
				checkChatResult(t, what, tok, contextasm.ChatOverhead{}, decls[:declared], res)
				stats["assemblies"]++
				for _, e := range res.Events() {
					stats[string(e.Reason)]++
				}
				if res.Prefix != nil {
					stats["with a prefix"]++
				}
				conv := res.Messages()
				if conv.SystemText() != res.Text {
					t.Fatalf("%s: the system parts are not the text", what)
				}
				marks := 0
				for _, p := range conv.System {
					if p.CacheBreakpoint {
						marks++
						stats["system breakpoints"]++
					}
				}
				for j, m := range conv.Messages {
					if m.CacheBreakpoint {
						marks++
						stats["message breakpoints"]++
						if j != len(conv.Messages)-1 {
							t.Fatalf("%s: a breakpoint on message %d of %d", what, j, len(conv.Messages))
						}
					}
				}
				if f != 0 && (marks > chat.MaxCacheBreakpoints || marks < min(len(res.CacheBreakpoints), chat.MaxCacheBreakpoints-1)) {
					t.Fatalf("%s: %d breakpoints marked for %d in the result", what, marks, len(res.CacheBreakpoints))
				}
			}
		}
	}
	t.Logf("%v", stats)
	for _, k := range []string{"group", "orphan", "slack", "sticky", "with a prefix", "system breakpoints", "message breakpoints"} {
		if stats[k] == 0 {
			t.Errorf("no assembly had %q: the generator does not test it (%v)", k, stats)
		}
	}
}
