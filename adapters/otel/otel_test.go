package oteladapter_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	oteladapter "github.com/contextasm/contextasm/adapters/otel"
	"github.com/contextasm/contextasm/chat"
	"github.com/contextasm/contextasm/contextasm"
	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/feedback"
	"github.com/contextasm/contextasm/learned"
	"github.com/contextasm/contextasm/outcome"
	"github.com/contextasm/contextasm/template"
	"github.com/contextasm/contextasm/truncate"
)

var now = time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)

// The blocks' contents are distinctive, so that a test can tell whether
// any of them reached a span or a metric.
var contents = map[string]string{
	"rule-apr":  "SECRET-RULE Quote rates with their APR.",
	"rule-ecoa": "SECRET-ECOA Never ask about marital status.",
	"fact-rate": "SECRET-FACT The car-loan rate is 6.9% APR.",
	"fact-long": "SECRET-LONG " + strings.Repeat("A long appendix nobody needs today. ", 40),
	"s1/msg-0":  "SECRET-TURN What is the car-loan rate?",
}

const tplSrc = `{"budget": 300, "sections": [
    {"name": "RULES", "priority": 1, "memory_types": ["constraint"], "max_tokens": 60, "render": "<rule id=\"{request_id}\">{content}</rule>"},
    {"name": "FACTS", "priority": 2, "memory_types": ["context"], "max_tokens": 80, "render": "<fact id=\"{request_id}\">{content}</fact>"},
    {"name": "HISTORY", "priority": 3, "memory_types": ["history"], "max_tokens": 60, "render": "{content}"}]}`

type fixture struct {
	eng     *contextasm.Engine
	tel     *oteladapter.Engine
	spans   *tracetest.SpanRecorder
	metrics *sdkmetric.ManualReader
	req     contextasm.Request
}

func setup(t *testing.T, cfg contextasm.Config, recordContent bool) *fixture {
	t.Helper()
	cfg.Stickiness = truncate.Stickiness{MinCachePrefix: 1}
	eng, err := contextasm.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	rule := declare.Declaration{RequestID: "rule-apr", MemoryType: declare.Constraint, Scope: declare.ScopeGlobal, Content: contents["rule-apr"]}
	ecoa := declare.Declaration{RequestID: "rule-ecoa", MemoryType: declare.Constraint, Scope: declare.ScopeGlobal, Content: contents["rule-ecoa"],
		BreakOnViolation: true, ViolationPatterns: []string{"(?i)are you married"}}
	other := declare.Declaration{RequestID: "other-session", MemoryType: declare.Context, Scope: declare.ScopeSession, SessionID: "s2", Content: "SECRET-OTHER"}
	if err := eng.Declare(rule, ecoa, other,
		declare.Declaration{RequestID: "fact-rate", MemoryType: declare.Context, Scope: declare.ScopeGlobal, Content: contents["fact-rate"]},
		declare.Declaration{RequestID: "fact-long", MemoryType: declare.Context, Scope: declare.ScopeGlobal, Content: contents["fact-long"]},
	); err != nil {
		t.Fatal(err)
	}
	turns, err := declare.Conversation(chat.Conversation{Messages: []chat.Message{{Role: chat.RoleUser, Content: contents["s1/msg-0"]}}},
		declare.ConversationOptions{SessionID: "s1", Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if err := eng.ReplacePrefix("s1/", turns...); err != nil {
		t.Fatal(err)
	}
	tpl, err := template.Parse([]byte(tplSrc), "template.json")
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{eng: eng, spans: tracetest.NewSpanRecorder(), metrics: sdkmetric.NewManualReader(),
		req: contextasm.Request{Template: tpl, Now: now, SessionID: "s1", Format: chat.FormatOpenAI}}
	f.tel, err = oteladapter.New(eng, oteladapter.Config{
		TracerProvider: sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(f.spans)),
		MeterProvider:  sdkmetric.NewMeterProvider(sdkmetric.WithReader(f.metrics)),
		RecordContent:  recordContent,
		Conventions:    oteladapter.ConventionsLegacy, // conventions_test.go covers the others
	})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func attrs(kvs []attribute.KeyValue) map[string]attribute.Value {
	m := make(map[string]attribute.Value, len(kvs))
	for _, kv := range kvs {
		m[string(kv.Key)] = kv.Value
	}
	return m
}

func TestAssembleSpan(t *testing.T) {
	f := setup(t, contextasm.Config{}, false)
	ctx := context.Background()
	res1, err := f.tel.Assemble(ctx, f.req)
	if err != nil {
		t.Fatal(err)
	}
	res2, err := f.tel.Assemble(ctx, f.req) // follows the first: a stable prefix
	if err != nil {
		t.Fatal(err)
	}
	spans := f.spans.Ended()
	if len(spans) != 2 {
		t.Fatalf("%d spans, want 2", len(spans))
	}
	for i, res := range []*contextasm.Result{res1, res2} {
		s := spans[i]
		if s.Name() != "assemble_context" {
			t.Errorf("span name %q", s.Name())
		}
		a := attrs(s.Attributes())
		var kept, cut, dropped, excluded, droppedTokens int
		for _, sec := range res.Sections() {
			for _, b := range sec.Blocks {
				switch b.Status {
				case outcome.StatusKept:
					kept++
				case outcome.StatusCut:
					cut++
				default:
					dropped++
				}
			}
		}
		for _, ev := range res.Events() {
			if ev.Kind == outcome.KindExcluded {
				excluded++
			}
			if ev.Kind == outcome.KindDropped {
				droppedTokens += ev.Tokens
			}
		}
		for _, n := range res.ExcludedCounts {
			excluded += n
		}
		if dropped == 0 || excluded == 0 {
			t.Fatalf("the fixture drops %d and excludes %d blocks; want some of each", dropped, excluded)
		}
		want := map[string]any{
			"gen_ai.operation.name":      "assemble_context",
			"gen_ai.conversation.id":     "s1",
			"contextasm.fingerprint":     res.Fingerprint,
			"contextasm.render_hash":     res.RenderHash,
			"contextasm.assembly_id":     res.Audit().RequestID,
			"contextasm.encoding":        "o200k_base",
			"contextasm.budget":          int64(300),
			"contextasm.used_tokens":     int64(res.TotalTokens),
			"contextasm.blocks.kept":     int64(kept),
			"contextasm.blocks.cut":      int64(cut),
			"contextasm.blocks.dropped":  int64(dropped),
			"contextasm.blocks.excluded": int64(excluded),
			"contextasm.dropped_tokens":  int64(droppedTokens),
			"contextasm.breakpoints":     int64(len(res.CacheBreakpoints)),
		}
		for k, v := range want {
			if got, ok := a[k]; !ok || got.AsInterface() != v {
				t.Errorf("span %d: %s = %v, want %v", i, k, got.AsInterface(), v)
			}
		}
		if _, ok := a["contextasm.state_version"]; ok {
			t.Errorf("span %d: a state version without a state store", i)
		}
		if (res.Prefix != nil) != (i == 1) {
			t.Fatalf("call %d: prefix %+v", i, res.Prefix)
		}
		if i == 1 {
			if got := a["contextasm.stable_prefix_tokens"].AsInt64(); got != int64(res.Prefix.StableTokens) || got == 0 {
				t.Errorf("stable prefix tokens %d, want %d", got, res.Prefix.StableTokens)
			}
		}
		evs := s.Events()
		if len(evs) != len(res.Events()) {
			t.Fatalf("span %d: %d span events for %d events", i, len(evs), len(res.Events()))
		}
		for j, ev := range res.Events() {
			ea := attrs(evs[j].Attributes)
			if evs[j].Name != "contextasm."+string(ev.Kind) || ea["contextasm.request_id"].AsString() != ev.RequestID ||
				ea["contextasm.reason"].AsString() != string(ev.Reason) || ea["contextasm.tokens"].AsInt64() != int64(ev.Tokens) {
				t.Errorf("span event %d: %s %v, for event %+v", j, evs[j].Name, ea, ev)
			}
		}
	}
}

func TestStateVersion(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	f := setup(t, contextasm.Config{State: learned.NewFileStore(path)}, false)
	ctx := context.Background()
	res, err := f.tel.Assemble(ctx, f.req)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.tel.Feedback(ctx, res, `<memory_ref id="fact-rate"/>`); err != nil {
		t.Fatal(err)
	}
	if err := f.eng.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	// A second engine starts from the state the first one stored.
	f = setup(t, contextasm.Config{State: learned.NewFileStore(path)}, false)
	res, err = f.tel.Assemble(ctx, f.req)
	if err != nil {
		t.Fatal(err)
	}
	if res.StateVersion == 0 {
		t.Fatal("no state version from a stored state")
	}
	spans := f.spans.Ended()
	if got := attrs(spans[len(spans)-1].Attributes())["contextasm.state_version"].AsInt64(); got != int64(res.StateVersion) {
		t.Errorf("state version %d, want %d", got, res.StateVersion)
	}
}

func TestFeedbackSpan(t *testing.T) {
	f := setup(t, contextasm.Config{}, false)
	ctx := context.Background()
	res, err := f.tel.Assemble(ctx, f.req)
	if err != nil {
		t.Fatal(err)
	}
	asm := f.spans.Ended()[0]
	usage := contextasm.Usage{InputTokens: 180, CachedTokens: 120, CacheWriteTokens: 20}
	fb, err := f.tel.FeedbackResponse(ctx, res, contextasm.Response{Text: `As the rules say <memory_ref id="rule-apr"/>, 6.9% APR.`, Usage: usage})
	if err != nil {
		t.Fatal(err)
	}
	s := f.spans.Ended()[1]
	if s.Name() != "contextasm.feedback" || len(s.Links()) != 1 || !s.Links()[0].SpanContext.Equal(asm.SpanContext()) {
		t.Fatalf("feedback span %q links %+v, want a link to %v", s.Name(), s.Links(), asm.SpanContext())
	}
	a := attrs(s.Attributes())
	want := map[string]any{
		"gen_ai.usage.input_tokens":                int64(180),
		"gen_ai.usage.cache_read.input_tokens":     int64(120),
		"gen_ai.usage.cache_creation.input_tokens": int64(20),
		"contextasm.refs":                          int64(len(fb.Refs)),
		"contextasm.trust_changes":                 int64(1),
		"contextasm.violations":                    int64(0),
		"contextasm.assembly_id":                   res.Audit().RequestID,
	}
	for k, v := range want {
		if got, ok := a[k]; !ok || got.AsInterface() != v {
			t.Errorf("%s = %v, want %v", k, got.AsInterface(), v)
		}
	}
	if s.Status().Code == codes.Error {
		t.Errorf("status %+v", s.Status())
	}
	// A violated constraint is an error on the span.
	if _, err := f.tel.Feedback(ctx, res, "Are you married?"); !errors.Is(err, feedback.ErrConstraintViolation) {
		t.Fatalf("violation: %v", err)
	}
	if s := f.spans.Ended()[2]; s.Status().Code != codes.Error || len(s.Links()) != 1 {
		t.Errorf("violation span: status %+v links %d", s.Status(), len(s.Links()))
	}
}

func TestFailedAssembly(t *testing.T) {
	f := setup(t, contextasm.Config{}, false)
	if err := f.eng.Declare(declare.Declaration{RequestID: "huge", MemoryType: declare.Constraint, Scope: declare.ScopeGlobal, Required: true,
		Content: strings.Repeat("must ", 200)}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.tel.Assemble(context.Background(), f.req); !errors.Is(err, contextasm.ErrBudgetTooSmall) {
		t.Fatalf("err %v", err)
	}
	s := f.spans.Ended()[0]
	if s.Status().Code != codes.Error || len(s.Events()) != 1 || s.Events()[0].Name != "exception" {
		t.Errorf("failed span: status %+v events %+v", s.Status(), s.Events())
	}
	rm := collect(t, f)
	if got := histogramCount(t, rm, "contextasm.assembly.duration", "contextasm.outcome", "error"); got != 1 {
		t.Errorf("%d error durations, want 1", got)
	}
}

func collect(t *testing.T, f *fixture) metricdata.ResourceMetrics {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := f.metrics.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	return rm
}

func find(rm metricdata.ResourceMetrics, name string) (metricdata.Metrics, bool) {
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name == name {
				return m, true
			}
		}
	}
	return metricdata.Metrics{}, false
}

// histogramCount returns how many values were recorded in the histogram
// with the attribute key=value.
func histogramCount(t *testing.T, rm metricdata.ResourceMetrics, name, key, value string) uint64 {
	t.Helper()
	m, ok := find(rm, name)
	if !ok {
		return 0
	}
	n := uint64(0)
	for _, dp := range m.Data.(metricdata.Histogram[float64]).DataPoints {
		if v, ok := dp.Attributes.Value(attribute.Key(key)); key == "" || ok && v.AsString() == value {
			n += dp.Count
		}
	}
	return n
}

func TestMetrics(t *testing.T) {
	f := setup(t, contextasm.Config{}, false)
	ctx := context.Background()
	var results []*contextasm.Result
	for range 2 {
		res, err := f.tel.Assemble(ctx, f.req)
		if err != nil {
			t.Fatal(err)
		}
		results = append(results, res)
	}
	if _, err := f.tel.FeedbackResponse(ctx, results[1], contextasm.Response{Text: "ok", Usage: contextasm.Usage{InputTokens: 100, CachedTokens: 75}}); err != nil {
		t.Fatal(err)
	}
	rm := collect(t, f)
	if got := histogramCount(t, rm, "contextasm.assembly.duration", "contextasm.outcome", "ok"); got != 2 {
		t.Errorf("%d durations, want 2", got)
	}
	// Tokens by section and status add up to the results'.
	want := map[string]float64{}
	for _, res := range results {
		for _, sec := range res.Sections() {
			for _, b := range sec.Blocks {
				if b.Tokens != 0 {
					want[sec.Name+"/"+b.Status.String()] += float64(b.Tokens)
				}
			}
		}
	}
	m, _ := find(rm, "contextasm.context.tokens")
	got := map[string]float64{}
	for _, dp := range m.Data.(metricdata.Histogram[float64]).DataPoints {
		sec, _ := dp.Attributes.Value("contextasm.section")
		st, _ := dp.Attributes.Value("contextasm.status")
		if dp.Sum != 0 {
			got[sec.AsString()+"/"+st.AsString()] += dp.Sum
		}
	}
	if len(got) == 0 || !mapsEqual(got, want) {
		t.Errorf("tokens by section and status %v, want %v", got, want)
	}
	// Truncations by reason count the events and the hidden exclusions.
	wantReasons := map[string]int64{}
	for _, res := range results {
		for _, ev := range res.Events() {
			wantReasons[string(ev.Reason)]++
		}
		for r, n := range res.ExcludedCounts {
			wantReasons[string(r)] += int64(n)
		}
	}
	m, _ = find(rm, "contextasm.truncations")
	gotReasons := map[string]int64{}
	for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
		r, _ := dp.Attributes.Value("contextasm.reason")
		gotReasons[r.AsString()] += dp.Value
	}
	if !mapsEqual(gotReasons, wantReasons) || gotReasons[string(outcome.ReasonOutOfScope)] == 0 {
		t.Errorf("truncations %v, want %v with out_of_scope", gotReasons, wantReasons)
	}
	m, _ = find(rm, "contextasm.prefix.stable_ratio")
	if dps := m.Data.(metricdata.Histogram[float64]).DataPoints; len(dps) != 1 || dps[0].Count != 1 ||
		dps[0].Sum != float64(results[1].Prefix.StableTokens)/float64(results[1].TotalTokens) {
		t.Errorf("stable ratio %+v", dps)
	}
	m, _ = find(rm, "contextasm.cache.read_ratio")
	if dps := m.Data.(metricdata.Histogram[float64]).DataPoints; len(dps) != 1 || dps[0].Sum != 0.75 {
		t.Errorf("cache read ratio %+v", dps)
	}
}

func mapsEqual[V comparable](a, b map[string]V) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// TestContent checks that no block content reaches a span or a metric
// unless the host opts in.
func TestContent(t *testing.T) {
	for _, record := range []bool{false, true} {
		f := setup(t, contextasm.Config{}, record)
		ctx := context.Background()
		res, err := f.tel.Assemble(ctx, f.req)
		if err != nil {
			t.Fatal(err)
		}
		response := "SECRET-RESPONSE " + `<memory_ref id="rule-apr"/>`
		if _, err := f.tel.FeedbackResponse(ctx, res, contextasm.Response{Text: response, Usage: contextasm.Usage{InputTokens: 10}}); err != nil {
			t.Fatal(err)
		}
		var seen []string
		look := func(where string, kvs []attribute.KeyValue) {
			for _, kv := range kvs {
				if s := kv.Value.String(); strings.Contains(s, "SECRET-") {
					seen = append(seen, where+" "+string(kv.Key))
				}
			}
		}
		for _, s := range f.spans.Ended() {
			look(s.Name(), s.Attributes())
			for _, ev := range s.Events() {
				look(s.Name()+"/"+ev.Name, ev.Attributes)
			}
		}
		rm := collect(t, f)
		for _, sm := range rm.ScopeMetrics {
			for _, m := range sm.Metrics {
				switch d := m.Data.(type) {
				case metricdata.Histogram[float64]:
					for _, dp := range d.DataPoints {
						look(m.Name, dp.Attributes.ToSlice())
					}
				case metricdata.Sum[int64]:
					for _, dp := range d.DataPoints {
						look(m.Name, dp.Attributes.ToSlice())
					}
				}
			}
		}
		want := []string(nil)
		if record {
			want = []string{"assemble_context contextasm.text", "contextasm.feedback contextasm.response"}
		}
		if strings.Join(seen, ",") != strings.Join(want, ",") {
			t.Errorf("RecordContent %v: content in %q, want %q", record, seen, want)
		}
		if record {
			a := attrs(f.spans.Ended()[0].Attributes())
			if a["contextasm.text"].AsString() != res.Text {
				t.Error("contextasm.text is not the rendered text")
			}
		}
	}
}
