package contextasm_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/contextasm/contextasm/chat"
	"github.com/contextasm/contextasm/contextasm"
	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/feedback"
	"github.com/contextasm/contextasm/outcome"
	"github.com/contextasm/contextasm/truncate"
)

// hostsTemplate has two text sections and a history one; with
// MinCachePrefix 1 each text section ends at a breakpoint on a
// conversation's first assembly.
const hostsTemplate = `{"budget": 600, "encoding": %q, "sections": [
    {"name": "RULES", "priority": 1, "memory_types": ["constraint"], "max_tokens": 100, "render": "<rule id=\"{request_id}\">{content}</rule>"},
    {"name": "FACTS", "priority": 2, "memory_types": ["context"], "max_tokens": 200, "render": "<fact id=\"{request_id}\">{content}</fact>"},
    {"name": "HISTORY", "priority": 3, "memory_types": ["history"], "max_tokens": 300, "render": "{content}"}]}`

func hostsDecls() []declare.Declaration {
	at := func(m int) *time.Time {
		t := time.Date(2026, 11, 30, 8, m, 0, 0, time.UTC)
		return &t
	}
	hist := func(id string, m int, role declare.Role, content string) declare.Declaration {
		return declare.Declaration{RequestID: id, MemoryType: declare.History, Scope: declare.ScopeSession, SessionID: "s1", LastModified: at(m), Role: role, Content: content}
	}
	return []declare.Declaration{
		global("rule-apr", declare.Constraint, "Quote rates with their APR."),
		global("fact-rate", declare.Context, "The car-loan rate is 6.9% APR."),
		global("fact-term", declare.Context, "Car loans run 12 to 84 months."),
		hist("t1", 1, "", "What is the car-loan rate?"),
		hist("t2", 2, declare.RoleAssistant, "6.9% APR."),
		hist("t3", 3, "", "And the longest term?"),
	}
}

func hostsEngine(t *testing.T, cfg contextasm.Config) *contextasm.Engine {
	cfg.Stickiness = truncate.Stickiness{MinCachePrefix: 1}
	return newEngine(t, cfg, hostsDecls()...)
}

// TestReportUsageChat checks that a chat format's usage is compared with
// the conversation sent, not the system prompt alone: a provider counting
// exactly o200k_base gives a ratio near 1, not the ratio of the whole
// conversation to its system prompt.
func TestReportUsageChat(t *testing.T) {
	eng := hostsEngine(t, contextasm.Config{})
	tpl := parseTemplate(t, strings.Replace(hostsTemplate, "%q", `"approx:claude"`, 1))
	res := assemble(t, eng, contextasm.Request{Template: tpl, Now: time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC), SessionID: "s1", Format: chat.FormatOpenAI})
	conv := res.Messages()
	if len(conv.Messages) != 3 {
		t.Fatalf("messages %+v", conv.Messages)
	}
	tok := o200k(t)
	n := tok.Count(res.Text)
	for _, m := range conv.Messages {
		n += tok.Count(string(m.Role)) + tok.Count(m.Content)
	}
	if err := eng.ReportUsage(res, n); err != nil {
		t.Fatal(err)
	}
	ratio, reports := eng.Usage().Ratio("claude")
	if reports != 1 || ratio < 0.9 || ratio > 1.1 {
		t.Errorf("ratio %v from %d reports, want about 1", ratio, reports)
	}
}

func TestFeedbackResponse(t *testing.T) {
	eng := hostsEngine(t, contextasm.Config{})
	tpl := parseTemplate(t, strings.Replace(hostsTemplate, "%q", `"o200k_base"`, 1))
	res := assemble(t, eng, contextasm.Request{Template: tpl, Now: time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC), SessionID: "s1"})
	ctx := context.Background()
	response := "Up to 84 months."
	fb, err := eng.FeedbackResponse(ctx, res, contextasm.Response{Text: response, Cited: []feedback.Tag{{ID: "fact-term", Offset: 0}, {ID: "nope", Offset: 3}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(fb.Refs) != 1 || fb.Refs[0].RequestID != "fact-term" || fb.Refs[0].Position != feedback.Start {
		t.Errorf("refs %+v", fb.Refs)
	}
	if len(fb.UnknownRefs) != 1 || fb.UnknownRefs[0] != "nope" {
		t.Errorf("unknown refs %q", fb.UnknownRefs)
	}
	if got := eng.State().Trust["fact-term"]; got != 0.55 {
		t.Errorf("learned trust %v, want 0.55", got)
	}
	if _, err := eng.FeedbackResponse(ctx, res, contextasm.Response{Text: response, Cited: []feedback.Tag{{ID: "fact-rate", Offset: 99}}}); !errors.Is(err, feedback.ErrInvalidCitation) {
		t.Errorf("a citation past the response: %v", err)
	}
	if _, ok := eng.State().Trust["fact-rate"]; ok {
		t.Error("a refused citation taught trust")
	}
}

func TestFeedbackResponseUsage(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	for _, enc := range []string{"o200k_base", "approx:claude"} {
		eng := hostsEngine(t, contextasm.Config{})
		tpl := parseTemplate(t, strings.Replace(hostsTemplate, "%q", `"`+enc+`"`, 1))
		res := assemble(t, eng, contextasm.Request{Template: tpl, Now: now, SessionID: "s1"})
		for _, u := range []contextasm.Usage{{InputTokens: -1}, {InputTokens: 10, CachedTokens: 8, CacheWriteTokens: 3}, {CachedTokens: 1}} {
			if _, err := eng.FeedbackResponse(ctx, res, contextasm.Response{Text: `<memory_ref id="fact-term"/>`, Usage: u}); !errors.Is(err, contextasm.ErrInvalid) {
				t.Errorf("%s: usage %+v: %v", enc, u, err)
			}
		}
		if len(eng.State().Trust) != 0 || len(eng.Usage()) != 0 {
			t.Fatalf("%s: refused usage taught something", enc)
		}
		n := o200k(t).Count(res.Text)
		if _, err := eng.FeedbackResponse(ctx, res, contextasm.Response{Text: "ok", Usage: contextasm.Usage{InputTokens: n, CachedTokens: n / 2}}); err != nil {
			t.Fatal(err)
		}
		_, reports := eng.Usage().Ratio("claude")
		if want := map[string]int{"o200k_base": 0, "approx:claude": 1}[enc]; reports != want {
			t.Errorf("%s: %d usage reports, want %d", enc, reports, want)
		}
	}
}

func TestReplacePrefix(t *testing.T) {
	eng := hostsEngine(t, contextasm.Config{})
	base := eng.Len()
	now := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	declareConv := func(msgs ...chat.Message) error {
		decls, err := declare.Conversation(chat.Conversation{Messages: msgs}, declare.ConversationOptions{SessionID: "s2", Now: now})
		if err != nil {
			t.Fatal(err)
		}
		return eng.ReplacePrefix("s2/", decls...)
	}
	user := chat.Message{Role: chat.RoleUser, Content: "Rate?"}
	call := chat.Message{Role: chat.RoleAssistant, ToolCalls: []chat.ToolCall{{ID: "c1", Name: "rate", Arguments: "{}"}}}
	result := chat.Message{Role: chat.RoleTool, ToolCallID: "c1", Content: "6.9%"}
	if err := declareConv(user, user, user, call, result); err != nil {
		t.Fatal(err)
	}
	if eng.Len() != base+5 {
		t.Fatalf("%d blocks, want %d", eng.Len(), base+5)
	}
	// The framework trimmed its history: the repeated user turns it let go
	// must leave the store, and the exchange keeps its blocks.
	if err := declareConv(user, call, result); err != nil {
		t.Fatal(err)
	}
	if eng.Len() != base+3 {
		t.Fatalf("%d blocks after the trim, want %d", eng.Len(), base+3)
	}
	// Nothing is applied when a declaration is refused, or misses the prefix.
	bad := chat.Message{Role: chat.RoleUser, Content: "  "}
	if err := declareConv(user, bad); !errors.Is(err, declare.ErrInvalid) {
		t.Errorf("an empty message: %v", err)
	}
	if err := eng.ReplacePrefix("s3/", global("s2/x", declare.Context, "x")); !errors.Is(err, contextasm.ErrInvalid) {
		t.Errorf("an id outside the prefix: %v", err)
	}
	if err := eng.ReplacePrefix(""); !errors.Is(err, contextasm.ErrInvalid) {
		t.Errorf("an empty prefix: %v", err)
	}
	if eng.Len() != base+3 {
		t.Fatalf("%d blocks after refusals, want %d", eng.Len(), base+3)
	}
	if err := eng.ReplacePrefix("s2/"); err != nil || eng.Len() != base {
		t.Errorf("an empty set: %v, %d blocks, want %d", err, eng.Len(), base)
	}
}

// TestFeedbackResponseURI checks that a citation may name a block by its
// provenance uri, as a provider's URL citations do.
func TestFeedbackResponseURI(t *testing.T) {
	decls := hostsDecls()
	for i := range decls {
		if decls[i].RequestID == "fact-rate" {
			decls[i].Provenance.URI = "https://bank.example/rates"
		}
	}
	eng := newEngine(t, contextasm.Config{}, decls...)
	tpl := parseTemplate(t, strings.Replace(hostsTemplate, "%q", `"o200k_base"`, 1))
	res := assemble(t, eng, contextasm.Request{Template: tpl, Now: time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC), SessionID: "s1"})
	fb, err := eng.FeedbackResponse(context.Background(), res, contextasm.Response{Text: "6.9% APR.",
		Cited: []feedback.Tag{{ID: "https://bank.example/rates"}, {ID: "https://elsewhere.example/", Offset: 4}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(fb.Refs) != 1 || fb.Refs[0].RequestID != "fact-rate" {
		t.Errorf("refs %+v, want fact-rate by its uri", fb.Refs)
	}
	if len(fb.UnknownRefs) != 1 || fb.UnknownRefs[0] != "https://elsewhere.example/" {
		t.Errorf("unknown refs %q", fb.UnknownRefs)
	}
}

// TestShedToolExchangesInBatches drives a conversation of tool exchanges
// (each an assistant call and its result, a group) past its history cap,
// call by call, as an agent loop does: once the history is full, a call
// sheds a batch of the oldest exchanges down to the slack, and the calls
// after it only append, rather than every call dropping the oldest
// exchange and rewriting the messages.
func TestShedToolExchangesInBatches(t *testing.T) {
	eng := newEngine(t, contextasm.Config{})
	tpl := parseTemplate(t, `{"budget": 400, "sections": [
	    {"name": "HISTORY", "priority": 1, "memory_types": ["history"], "max_tokens": 150, "render": "{content}"}]}`)
	now := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	var prev []string
	appends, sheds := 0, 0
	for n := 1; n <= 16; n++ {
		at := now.Add(time.Duration(n) * time.Second)
		id := fmt.Sprintf("call_%d", n)
		if err := eng.Declare(
			declare.Declaration{RequestID: id + "-use", MemoryType: declare.History, Scope: declare.ScopeSession, SessionID: "s1", LastModified: &at,
				Role: declare.RoleAssistant, ToolCalls: []declare.ToolCall{{ID: id, Name: "get_rate", Arguments: fmt.Sprintf(`{"months":%d}`, 12*n)}}},
			declare.Declaration{RequestID: id + "-result", MemoryType: declare.History, Scope: declare.ScopeSession, SessionID: "s1", LastModified: &at,
				Role: declare.RoleTool, ToolCallID: id, Content: fmt.Sprintf("6.9%% APR over %d months", 12*n)},
		); err != nil {
			t.Fatal(err)
		}
		res := assemble(t, eng, contextasm.Request{Template: tpl, Now: at, SessionID: "s1", Format: chat.FormatOpenAI})
		var ids []string
		for _, m := range res.Messages().Messages {
			ids = append(ids, m.BlockIDs...)
		}
		if testing.Verbose() {
			t.Logf("call %d: %d tokens, messages %q", n, res.TotalTokens, ids)
		}
		if n > 1 {
			if len(ids) >= len(prev) && slices.Equal(ids[:len(prev)], prev) {
				appends++
			} else {
				sheds++
				if gone := len(prev) + 2 - len(ids); gone < 4 {
					t.Errorf("call %d dropped %d messages, not a batch of exchanges: %q after %q", n, gone, ids, prev)
				}
			}
		}
		prev = ids
	}
	if sheds == 0 {
		t.Fatal("the history never outgrew its cap")
	}
	if appends < 2*sheds {
		t.Errorf("%d calls appended and %d dropped exchanges: tool exchanges are not shed in batches", appends, sheds)
	}
}

// TestShedOnceToTheSlack checks that a section that sheds keeps Slack
// times its cap, less one turn at most: it sheds once, not once while
// filling and again at the budget cut (to Slack²).
func TestShedOnceToTheSlack(t *testing.T) {
	eng := newEngine(t, contextasm.Config{})
	const capTokens = 150
	slack := truncate.DefaultStickiness().Slack
	tpl := parseTemplate(t, fmt.Sprintf(`{"budget": 400, "sections": [
	    {"name": "HISTORY", "priority": 1, "memory_types": ["history"], "max_tokens": %d, "render": "{content}"}]}`, capTokens))
	now := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	for n := 1; n <= 12; n++ {
		at := now.Add(time.Duration(n) * time.Second)
		if err := eng.Declare(declare.Declaration{RequestID: fmt.Sprintf("t%02d", n), MemoryType: declare.History, Scope: declare.ScopeSession, SessionID: "s1",
			LastModified: &at, Content: fmt.Sprintf("6.9%% APR over %d months, says turn number %d.", 12*n, n)}); err != nil {
			t.Fatal(err)
		}
		res := assemble(t, eng, contextasm.Request{Template: tpl, Now: at, SessionID: "s1", Format: chat.FormatOpenAI})
		shed, largest := false, 0
		for _, ev := range res.Events() {
			shed = shed || ev.Reason == outcome.ReasonSlack
		}
		sec := res.Sections()[0]
		for _, b := range sec.Blocks {
			largest = max(largest, b.Tokens)
		}
		if shed {
			if floor := int(slack*float64(capTokens)) - largest; sec.UsedTokens < floor {
				t.Errorf("call %d shed to %d tokens, below %d (the slack, less one turn)", n, sec.UsedTokens, floor)
			}
			return
		}
	}
	t.Fatal("the history never shed")
}
