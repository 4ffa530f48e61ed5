package contextasm_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/contextasm/contextasm/contextasm"
	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/outcome"
	"github.com/contextasm/contextasm/truncate"
)

// simpleTemplate takes every memory type, with room to spare.
const simpleTemplate = `{"budget": 1000, "sections": [
  {"name": "RULES", "priority": 1, "memory_types": ["constraint"], "max_tokens": 300, "render": "<rule id=\"{request_id}\">{content}</rule>"},
  {"name": "NOTES", "priority": 2, "memory_types": ["context", "history", "external"], "max_tokens": 300, "render": "{content}"}
]}`

func TestNewRejectsNegativeLimits(t *testing.T) {
	for _, tt := range []struct {
		field string
		cfg   contextasm.Config
	}{
		{"CacheSize", contextasm.Config{CacheSize: -1}},
		{"MaxContentBytes", contextasm.Config{MaxContentBytes: -1}},
		{"MaxBlocks", contextasm.Config{MaxBlocks: -5}},
	} {
		_, err := contextasm.New(tt.cfg)
		if !errors.Is(err, contextasm.ErrInvalid) || !strings.Contains(err.Error(), "Config."+tt.field) {
			t.Errorf("New(%s negative) = %v, want ErrInvalid naming Config.%s", tt.field, err, tt.field)
		}
	}
}

func TestNewRejectsUnknownEncoding(t *testing.T) {
	if _, err := contextasm.New(contextasm.Config{Encoding: "p50k_base"}); err == nil {
		t.Fatal("New(Encoding: p50k_base) succeeded, want an error")
	}
}

func TestDeclareReplacesSameRequestID(t *testing.T) {
	tpl := parseTemplate(t, simpleTemplate)
	req := contextasm.Request{Template: tpl, Now: demoNow}
	eng := newEngine(t, contextasm.Config{},
		global("rule-a", declare.Constraint, "old wording of rule A"),
		global("rule-b", declare.Constraint, "rule B"))

	if err := eng.Declare(global("rule-a", declare.Constraint, "new wording of rule A")); err != nil {
		t.Fatal(err)
	}
	if got := eng.Len(); got != 2 {
		t.Errorf("Len after replacing = %d, want 2", got)
	}
	res := assemble(t, eng, req)
	if strings.Contains(res.Text, "old wording") || !strings.Contains(res.Text, "new wording of rule A") {
		t.Errorf("Text after replacing rule-a:\n%s\nwant the new wording only", res.Text)
	}
	if n := strings.Count(res.Text, `id="rule-a"`); n != 1 {
		t.Errorf("rule-a rendered %d times, want once", n)
	}
}

func TestDeclareAllOrNothing(t *testing.T) {
	tpl, decls := loadDemo(t)
	newOK := global("new-ok", declare.Constraint, "A valid new rule that must not be half-loaded.")
	newOK2 := global("new-ok-2", declare.History, "Another valid block.")
	tests := []struct {
		name      string
		bad       declare.Declaration
		requestID string // of the problem; "" when the declaration has no valid id
		field     string
	}{
		{"weight out of range", func() declare.Declaration {
			d := global("bad-weight", declare.Context, "x")
			d.SemanticWeight = ptr(1.5)
			return d
		}(), "bad-weight", "semantic_weight"},
		{"trust out of range", func() declare.Declaration {
			d := global("bad-trust", declare.Context, "x")
			d.TrustScore = ptr(1.0)
			return d
		}(), "bad-trust", "trust_score"},
		{"unknown memory type", global("bad-type", "note", "x"), "bad-type", "memory_type"},
		{"missing content", global("no-content", declare.Context, ""), "no-content", "content"},
		{"session scope without session_id", declare.Declaration{
			RequestID: "no-session", MemoryType: declare.History, Scope: declare.ScopeSession, Content: "x",
		}, "no-session", "session_id"},
		{"invalid utf-8", global("bad-utf8", declare.Context, "ok \xff"), "bad-utf8", "content"},
		{"whitespace in request_id", global("has space", declare.Context, "x"), "", "declarations[1].request_id"},
		// The id of an existing block: a failed replace must not touch it.
		{"bad replacement of a stored block", func() declare.Declaration {
			d := global("reg-tila-apr", declare.Constraint, "Replaced wording.")
			d.Priority = ptr(2.0)
			return d
		}(), "reg-tila-apr", "priority"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			eng := newEngine(t, contextasm.Config{}, decls...)
			before := dumpWithoutPrefix(t, assemble(t, eng, demoRequest(tpl)))
			lenBefore := eng.Len()

			err := eng.Declare(newOK, tt.bad, newOK2)
			if err == nil {
				t.Fatal("Declare with an invalid declaration succeeded")
			}
			if !errors.Is(err, declare.ErrInvalid) {
				t.Errorf("errors.Is(err, declare.ErrInvalid) = false for %v", err)
			}
			var ve *declare.ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("error %T is not a *declare.ValidationError: %v", err, err)
			}
			if len(ve.Problems) != 1 {
				t.Fatalf("got %d problems, want 1 (only the bad declaration):\n%v", len(ve.Problems), err)
			}
			p := ve.Problems[0]
			if p.RequestID != tt.requestID || p.Field != tt.field {
				t.Errorf("problem names request_id %q field %q, want %q and %q (%v)", p.RequestID, p.Field, tt.requestID, tt.field, err)
			}
			if !strings.Contains(err.Error(), tt.field) {
				t.Errorf("error text %q does not name the field %q", err, tt.field)
			}
			if tt.requestID != "" && !strings.Contains(err.Error(), `request_id "`+tt.requestID+`"`) {
				t.Errorf("error text %q does not name request_id %q", err, tt.requestID)
			}

			if got := eng.Len(); got != lenBefore {
				t.Errorf("Len = %d after a failed Declare, want %d", got, lenBefore)
			}
			if after := dumpWithoutPrefix(t, assemble(t, eng, demoRequest(tpl))); after != before {
				t.Errorf("assembly changed after a failed Declare:\nbefore %s\nafter  %s", before, after)
			}
			if n := eng.Forget(newOK.RequestID, newOK2.RequestID); n != 0 {
				t.Errorf("Forget found %d of the valid declarations of the failed call, want 0", n)
			}
		})
	}
}

func TestDeclareReportsEveryProblem(t *testing.T) {
	eng := newEngine(t, contextasm.Config{})
	a := global("a", declare.Context, "x")
	a.SemanticWeight = ptr(-1.0)
	b := global("b", declare.Context, "")
	err := eng.Declare(a, global("ok", declare.Context, "fine"), b)
	var ve *declare.ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("Declare: got %v, want a *declare.ValidationError", err)
	}
	var got []string
	for _, p := range ve.Problems {
		got = append(got, p.RequestID+"."+p.Field)
	}
	if want := []string{"a.semantic_weight", "b.content"}; strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("problems %v, want %v", got, want)
	}
	if eng.Len() != 0 {
		t.Errorf("Len = %d, want 0", eng.Len())
	}
}

func TestDeclareSameRequestIDTwiceInOneCall(t *testing.T) {
	eng := newEngine(t, contextasm.Config{}, global("kept", declare.Context, "already here"))
	err := eng.Declare(
		global("twice", declare.Context, "first"),
		global("other", declare.Context, "other"),
		global("twice", declare.Context, "second"),
	)
	if !errors.Is(err, declare.ErrInvalid) {
		t.Fatalf("Declare with a repeated request_id: got %v, want an error wrapping declare.ErrInvalid", err)
	}
	var ve *declare.ValidationError
	if !errors.As(err, &ve) || len(ve.Problems) != 1 {
		t.Fatalf("got %v, want one problem", err)
	}
	if p := ve.Problems[0]; p.RequestID != "twice" || p.Field != "request_id" {
		t.Errorf("problem names %q field %q, want \"twice\" and request_id", p.RequestID, p.Field)
	}
	if eng.Len() != 1 {
		t.Errorf("Len = %d after the failed call, want 1", eng.Len())
	}
}

func TestDeclareNothing(t *testing.T) {
	eng := newEngine(t, contextasm.Config{}, global("a", declare.Context, "x"))
	if err := eng.Declare(); err != nil {
		t.Fatal(err)
	}
	if eng.Len() != 1 {
		t.Errorf("Len = %d, want 1", eng.Len())
	}
}

func TestForget(t *testing.T) {
	tpl := parseTemplate(t, simpleTemplate)
	req := contextasm.Request{Template: tpl, Now: demoNow}
	eng := newEngine(t, contextasm.Config{},
		global("a", declare.Constraint, "alpha rule"),
		global("b", declare.Context, "bravo note"),
		global("c", declare.History, "charlie turn"))

	if n := eng.Forget("b", "no-such-id"); n != 1 {
		t.Errorf("Forget(b, no-such-id) = %d, want 1", n)
	}
	if eng.Len() != 2 {
		t.Errorf("Len = %d, want 2", eng.Len())
	}
	res := assemble(t, eng, req)
	if strings.Contains(res.Text, "bravo") {
		t.Errorf("forgotten block still rendered:\n%s", res.Text)
	}
	if !strings.Contains(res.Text, "alpha rule") || !strings.Contains(res.Text, "charlie turn") {
		t.Errorf("Forget removed too much:\n%s", res.Text)
	}
	if n := eng.Forget("b"); n != 0 {
		t.Errorf("second Forget(b) = %d, want 0", n)
	}
	if n := eng.Forget(); n != 0 {
		t.Errorf("Forget() = %d, want 0", n)
	}
	// A forgotten id can be declared again.
	if err := eng.Declare(global("b", declare.Context, "bravo again")); err != nil {
		t.Fatal(err)
	}
	if res := assemble(t, eng, req); !strings.Contains(res.Text, "bravo again") {
		t.Errorf("re-declared block missing:\n%s", res.Text)
	}
}

func TestConfigMaxContentBytes(t *testing.T) {
	tests := []struct {
		name  string
		limit int // Config.MaxContentBytes
		size  int
		ok    bool
	}{
		{"at a small limit", 64, 64, true},
		{"over a small limit", 64, 65, false},
		{"default limit", 0, declare.DefaultMaxContentBytes, true},
		{"over the default limit", 0, declare.DefaultMaxContentBytes + 1, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			eng := newEngine(t, contextasm.Config{MaxContentBytes: tt.limit})
			err := eng.Declare(global("big", declare.Context, strings.Repeat("a", tt.size)))
			if tt.ok {
				if err != nil {
					t.Fatalf("%d bytes under a limit of %d: %v", tt.size, tt.limit, err)
				}
				return
			}
			var ve *declare.ValidationError
			if !errors.As(err, &ve) || len(ve.Problems) != 1 || ve.Problems[0].Field != "content" || ve.Problems[0].RequestID != "big" {
				t.Fatalf("%d bytes under a limit of %d: got %v, want one problem with big's content", tt.size, tt.limit, err)
			}
			if eng.Len() != 0 {
				t.Errorf("Len = %d, want 0", eng.Len())
			}
		})
	}
}

func TestAssembleInvalidRequest(t *testing.T) {
	tpl := parseTemplate(t, simpleTemplate)
	eng := newEngine(t, contextasm.Config{}, global("a", declare.Constraint, "alpha"))
	tests := []struct {
		name string
		req  contextasm.Request
	}{
		{"nil template", contextasm.Request{Now: demoNow}},
		{"zero now", contextasm.Request{Template: tpl}},
		{"nothing", contextasm.Request{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := eng.Assemble(context.Background(), tt.req)
			if !errors.Is(err, contextasm.ErrInvalid) {
				t.Fatalf("got %v, want an error wrapping ErrInvalid", err)
			}
			if res != nil {
				t.Errorf("got a result with the error")
			}
		})
	}
}

func TestAssembleCancelledContext(t *testing.T) {
	tpl := parseTemplate(t, simpleTemplate)
	eng := newEngine(t, contextasm.Config{}, global("a", declare.Constraint, "alpha"))

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res, err := eng.Assemble(ctx, contextasm.Request{Template: tpl, Now: demoNow})
	if err == nil || err != ctx.Err() {
		t.Fatalf("cancelled context: got %v, want ctx.Err() (%v)", err, ctx.Err())
	}
	if res != nil {
		t.Error("got a result with the error")
	}

	ctx, cancel = context.WithDeadline(context.Background(), time.Unix(1, 0))
	defer cancel()
	if _, err := eng.Assemble(ctx, contextasm.Request{Template: tpl, Now: demoNow}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("expired deadline: got %v, want context.DeadlineExceeded", err)
	}
}

func TestAssembleRequiredDoesNotFit(t *testing.T) {
	long := strings.Repeat("Never do the forbidden thing, in any form. ", 20) // about 180 tokens
	required := func(id string, mt declare.MemoryType, content string) declare.Declaration {
		d := global(id, mt, content)
		d.Required = true
		return d
	}
	tests := []struct {
		name     string
		template string
		decls    []declare.Declaration
		want     []truncate.RequiredMiss // RequestID, Section and Reason are compared
	}{
		{
			name: "section cap",
			template: `{"budget": 4000, "sections": [
			  {"name": "RULES", "priority": 1, "memory_types": ["constraint"], "max_tokens": 50, "render": "{content}"}]}`,
			decls: []declare.Declaration{required("rule-long", declare.Constraint, long), global("rule-short", declare.Constraint, "short")},
			want:  []truncate.RequiredMiss{{RequestID: "rule-long", Section: "RULES", Reason: outcome.ReasonSectionCap}},
		},
		{
			name: "priority 1 implies required",
			template: `{"budget": 4000, "sections": [
			  {"name": "RULES", "priority": 1, "memory_types": ["constraint"], "max_tokens": 50, "render": "{content}"}]}`,
			decls: []declare.Declaration{func() declare.Declaration {
				d := global("rule-p1", declare.Constraint, long)
				d.Priority = ptr(1.0)
				return d
			}()},
			want: []truncate.RequiredMiss{{RequestID: "rule-p1", Section: "RULES", Reason: outcome.ReasonSectionCap}},
		},
		{
			name: "budget",
			template: `{"budget": 300, "sections": [
			  {"name": "RULES", "priority": 1, "memory_types": ["constraint"], "max_tokens": 1000, "render": "{content}"},
			  {"name": "NOTES", "priority": 2, "memory_types": ["context"], "max_tokens": 1000, "render": "{content}"}]}`,
			decls: []declare.Declaration{
				required("rule-1", declare.Constraint, long),
				required("note-1", declare.Context, long),
				global("note-2", declare.Context, "optional"),
			},
			want: []truncate.RequiredMiss{
				{RequestID: "rule-1", Section: "RULES", Reason: outcome.ReasonBudget},
				{RequestID: "note-1", Section: "NOTES", Reason: outcome.ReasonBudget},
			},
		},
		{
			name: "no section",
			template: `{"budget": 300, "sections": [
			  {"name": "RULES", "priority": 1, "memory_types": ["constraint"], "max_tokens": 100, "render": "{content}"}]}`,
			decls: []declare.Declaration{required("hist-1", declare.History, "a turn nobody takes")},
			want:  []truncate.RequiredMiss{{RequestID: "hist-1", Reason: outcome.ReasonNoSection}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tpl := parseTemplate(t, tt.template)
			eng := newEngine(t, contextasm.Config{}, tt.decls...)
			res, err := eng.Assemble(context.Background(), contextasm.Request{Template: tpl, Now: demoNow})
			if !errors.Is(err, contextasm.ErrBudgetTooSmall) {
				t.Fatalf("got %v (result %v), want an error wrapping ErrBudgetTooSmall", err, res != nil)
			}
			if errors.Is(err, contextasm.ErrInvalid) {
				t.Errorf("a budget failure also wraps ErrInvalid: %v", err)
			}
			var re *truncate.RequiredError
			if !errors.As(err, &re) {
				t.Fatalf("error %v is not a *truncate.RequiredError", err)
			}
			if len(re.Misses) != len(tt.want) {
				t.Fatalf("misses %+v, want %+v", re.Misses, tt.want)
			}
			for i, m := range re.Misses {
				w := tt.want[i]
				if m.RequestID != w.RequestID || m.Section != w.Section || m.Reason != w.Reason {
					t.Errorf("miss %d = %+v, want %+v", i, m, w)
				}
				if !strings.Contains(err.Error(), `"`+w.RequestID+`"`) {
					t.Errorf("error text does not name %q:\n%v", w.RequestID, err)
				}
			}
		})
	}
}

// declaredTemplate writes its blocks in declaration order.
const declaredTemplate = `{"budget": 1000, "sections": [
  {"name": "LOG", "priority": 1, "memory_types": ["history"], "max_tokens": 500, "render": "[{request_id}] {content}", "order": "declared"}
]}`

func TestOrderDeclared(t *testing.T) {
	tpl := parseTemplate(t, declaredTemplate)
	req := contextasm.Request{Template: tpl, Now: demoNow}
	h := func(id, content string) declare.Declaration { return global(id, declare.History, content) }

	eng := newEngine(t, contextasm.Config{})
	// Declaration order, across and within calls, is neither id nor rank
	// order: "zulu" is declared first and has the lowest weight.
	zulu := h("zulu", "first declared")
	zulu.SemanticWeight = ptr(0.1)
	if err := eng.Declare(zulu, h("alpha", "second declared"), h("mike", "third declared")); err != nil {
		t.Fatal(err)
	}
	if err := eng.Declare(h("bravo", "fourth declared")); err != nil {
		t.Fatal(err)
	}
	wantLines := func(lines ...string) string { return tpl.Header() + "\n" + strings.Join(lines, "\n") + "\n" }

	want := wantLines("[zulu] first declared", "[alpha] second declared", "[mike] third declared", "[bravo] fourth declared")
	if got := assemble(t, eng, req).Text; got != want {
		t.Errorf("order declared:\ngot\n%s\nwant\n%s", got, want)
	}

	// Re-declaring a block replaces it in place; a new one goes last.
	if err := eng.Declare(h("kilo", "fifth declared"), h("alpha", "second, revised")); err != nil {
		t.Fatal(err)
	}
	want = wantLines("[zulu] first declared", "[alpha] second, revised", "[mike] third declared", "[bravo] fourth declared", "[kilo] fifth declared")
	if got := assemble(t, eng, req).Text; got != want {
		t.Errorf("after re-declaring alpha:\ngot\n%s\nwant\n%s", got, want)
	}

	// A forgotten and re-declared block is a new declaration: it goes last.
	eng.Forget("zulu")
	if err := eng.Declare(zulu); err != nil {
		t.Fatal(err)
	}
	want = wantLines("[alpha] second, revised", "[mike] third declared", "[bravo] fourth declared", "[kilo] fifth declared", "[zulu] first declared")
	if got := assemble(t, eng, req).Text; got != want {
		t.Errorf("after forgetting and re-declaring zulu:\ngot\n%s\nwant\n%s", got, want)
	}
}

func TestConfigScoring(t *testing.T) {
	// Room for one of the two blocks: the score decides which.
	tpl := parseTemplate(t, `{"budget": 1000, "sections": [
	  {"name": "NOTES", "priority": 1, "memory_types": ["context"], "max_tokens": 12, "render": "{content}"}]}`)
	weighty := global("weighty", declare.Context, "Weighty note, barely trusted.")
	weighty.SemanticWeight, weighty.TrustScore = ptr(0.9), ptr(0.1)
	trusted := global("trusted", declare.Context, "Trusted note of little weight.")
	trusted.SemanticWeight, trusted.TrustScore = ptr(0.1), ptr(0.9)

	for _, tt := range []struct {
		name    string
		scoring truncate.Scoring
		want    string
	}{
		{"default", truncate.Scoring{}, "Weighty note"},
		{"trust only", truncate.Scoring{Priority: 1e-9, SemanticWeight: 1e-9, Trust: 1}, "Trusted note"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			eng := newEngine(t, contextasm.Config{Scoring: tt.scoring}, weighty, trusted)
			res := assemble(t, eng, contextasm.Request{Template: tpl, Now: demoNow})
			if want := tpl.Header() + "\n" + map[string]string{
				"Weighty note": weighty.Content, "Trusted note": trusted.Content,
			}[tt.want] + "\n"; res.Text != want {
				t.Errorf("Text:\n%s\nwant\n%s", res.Text, want)
			}
		})
	}
}

func TestDeclareCopiesWhatItKeeps(t *testing.T) {
	tpl := parseTemplate(t, simpleTemplate)
	d := global("analysts-only", declare.Context, "For analysts.")
	d.Roles = []string{"analyst"}
	decls := []declare.Declaration{d}
	eng := newEngine(t, contextasm.Config{}, decls...)

	// The host reuses its slices; the stored block must not change.
	decls[0].Roles[0] = "nobody"
	decls[0].Content = "Changed."
	res := assemble(t, eng, contextasm.Request{Template: tpl, Now: demoNow, Roles: []string{"analyst"}})
	if !strings.Contains(res.Text, "For analysts.") {
		t.Errorf("a change to the caller's declaration after Declare reached the store:\n%s", res.Text)
	}
}

func TestMaxBlocksBoundsTheStore(t *testing.T) {
	eng := newEngine(t, contextasm.Config{MaxBlocks: 2},
		global("a", declare.Context, "one"), global("b", declare.Context, "two"))
	err := eng.Declare(global("c", declare.Context, "three"), global("a", declare.Context, "one, again"))
	if !errors.Is(err, contextasm.ErrStoreFull) || eng.Len() != 2 {
		t.Fatalf("Declare past MaxBlocks: %v, Len %d; want ErrStoreFull and nothing applied", err, eng.Len())
	}
	// Replacing within the bound is fine.
	if err := eng.Declare(global("a", declare.Context, "one, again")); err != nil {
		t.Fatal(err)
	}
	if eng.Forget("b") != 1 || eng.Declare(global("c", declare.Context, "three")) != nil {
		t.Error("after Forget, the freed slot should take a new block")
	}
}

// A block that fits its section is kept, however its text is made: runs of
// slashes and newlines are one o200k piece, and the lower bound that spares
// counting used to count each slash (102 for a block of 53 tokens), so the
// block was dropped uncounted.
func TestLowerBoundKeepsABlockThatFits(t *testing.T) {
	tpl := parseTemplate(t, `{"budget": 1000, "sections": [
	  {"name": "NOTES", "priority": 1, "memory_types": ["context"], "max_tokens": 64, "render": "{content}"}]}`)
	slashes := global("slashes", declare.Context, strings.Repeat("/\n/", 101))
	if n := o200k(t).Count(slashes.Content + "\n"); n > 64 {
		t.Fatalf("fixture: the block counts %d, more than the section's 64", n)
	}
	eng := newEngine(t, contextasm.Config{}, slashes)
	res := assemble(t, eng, contextasm.Request{Template: tpl, Now: demoNow})
	if !strings.Contains(res.Text, slashes.Content) {
		t.Errorf("the block that fits was left out:\n%s\nevents: %+v", res.Text, res.Events())
	}
}
