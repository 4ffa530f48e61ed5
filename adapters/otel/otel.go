package oteladapter

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"time"
	"weak"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/contextasm/contextasm/contextasm"
	"github.com/contextasm/contextasm/feedback"
	"github.com/contextasm/contextasm/outcome"
)

// ScopeName is the instrumentation scope of the spans and metrics.
const ScopeName = "github.com/contextasm/contextasm/adapters/otel"

// OperationName is the gen_ai.operation.name of an assembly's span.
const OperationName = "assemble_context"

// Config configures New. Its zero value uses the global providers and
// records no content.
type Config struct {
	// TracerProvider makes the spans; nil means otel.GetTracerProvider().
	TracerProvider trace.TracerProvider
	// MeterProvider makes the metrics; nil means otel.GetMeterProvider().
	MeterProvider metric.MeterProvider
	// RecordContent records the rendered text on the assembly's span and
	// the response on the feedback's. Off, spans carry ids, counts and
	// hashes only: a context holds what its users and sources said.
	RecordContent bool
	// Conventions selects the GenAI semantic conventions' names; zero reads
	// OTEL_SEMCONV_STABILITY_OPT_IN (see Conventions).
	Conventions Conventions
}

// Engine is a contextasm.Engine whose assemblies and feedback are traced
// and measured. It is safe for concurrent use.
type Engine struct {
	*contextasm.Engine
	tracer  trace.Tracer
	content bool
	conv    Conventions // resolved: never ConventionsFromEnv

	duration, tokens, stable, cacheRead metric.Float64Histogram
	truncations                         metric.Int64Counter

	// spans holds each Result's assembly span, for the feedback's link,
	// while the Result lives.
	spans sync.Map // weak.Pointer[contextasm.Result] -> trace.SpanContext
}

// New returns eng instrumented as cfg says.
func New(eng *contextasm.Engine, cfg Config) (*Engine, error) {
	if eng == nil {
		return nil, errors.New("oteladapter: New needs an Engine")
	}
	tp, mp := cfg.TracerProvider, cfg.MeterProvider
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	m := mp.Meter(ScopeName)
	e := &Engine{Engine: eng, tracer: tp.Tracer(ScopeName), content: cfg.RecordContent, conv: cfg.Conventions.resolve()}
	var errs [5]error
	e.duration, errs[0] = m.Float64Histogram("contextasm.assembly.duration", metric.WithUnit("s"),
		metric.WithDescription("Duration of an assembly."))
	e.tokens, errs[1] = m.Float64Histogram("contextasm.context.tokens", metric.WithUnit("{token}"),
		metric.WithDescription("Tokens of a section's blocks in one assembly, by status."))
	e.truncations, errs[2] = m.Int64Counter("contextasm.truncations", metric.WithUnit("{event}"),
		metric.WithDescription("Blocks dropped, cut, excluded or flagged, by reason."))
	e.stable, errs[3] = m.Float64Histogram("contextasm.prefix.stable_ratio", metric.WithUnit("1"),
		metric.WithDescription("Share of an assembly's tokens in the prefix it shares with the previous call of its conversation."))
	e.cacheRead, errs[4] = m.Float64Histogram("contextasm.cache.read_ratio", metric.WithUnit("1"),
		metric.WithDescription("Share of a call's input tokens the provider read from its prompt cache."))
	if err := errors.Join(errs[:]...); err != nil {
		return nil, err
	}
	return e, nil
}

// Assemble is contextasm.Engine.Assemble in a span, measured.
func (e *Engine) Assemble(ctx context.Context, req contextasm.Request) (*contextasm.Result, error) {
	attrs := []attribute.KeyValue{semconv.GenAIOperationNameKey.String(OperationName)}
	if req.SessionID != "" {
		attrs = append(attrs, semconv.GenAIConversationID(req.SessionID))
	}
	if req.Template != nil {
		attrs = append(attrs, attribute.String("contextasm.fingerprint", req.Template.Fingerprint()))
	}
	ctx, span := e.tracer.Start(ctx, OperationName, trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attrs...))
	defer span.End()
	start := time.Now()
	res, err := e.Engine.Assemble(ctx, req)
	elapsed := time.Since(start).Seconds()
	format := attribute.String("contextasm.format", formatName(req))
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
		e.duration.Record(ctx, elapsed, metric.WithAttributes(format, attribute.String("contextasm.outcome", "error")))
		return nil, err
	}
	e.duration.Record(ctx, elapsed, metric.WithAttributes(format, attribute.String("contextasm.outcome", "ok")))
	span.SetAttributes(e.resultAttributes(res)...)
	for _, ev := range res.Events() {
		span.AddEvent("contextasm."+string(ev.Kind), trace.WithAttributes(eventAttributes(ev)...))
		e.truncations.Add(ctx, 1, metric.WithAttributes(attribute.String("contextasm.reason", string(ev.Reason)), attribute.String("contextasm.kind", string(ev.Kind))))
	}
	for reason, n := range res.ExcludedCounts {
		e.truncations.Add(ctx, int64(n), metric.WithAttributes(attribute.String("contextasm.reason", string(reason)), attribute.String("contextasm.kind", string(outcome.KindExcluded))))
	}
	for _, sec := range res.Sections() {
		var by [3]int
		for _, b := range sec.Blocks {
			by[b.Status] += b.Tokens
		}
		for st, n := range by {
			e.tokens.Record(ctx, float64(n), metric.WithAttributes(attribute.String("contextasm.section", sec.Name), attribute.String("contextasm.status", outcome.Status(st).String())))
		}
	}
	if res.Prefix != nil && res.TotalTokens > 0 {
		e.stable.Record(ctx, float64(res.Prefix.StableTokens)/float64(res.TotalTokens), metric.WithAttributes(format))
	}
	e.remember(res, span.SpanContext())
	return res, nil
}

func formatName(req contextasm.Request) string {
	if req.Format == 0 {
		return "text"
	}
	return req.Format.String()
}

// resultAttributes describes an assembly's outcome: ids, counts and
// hashes, and its text only when the host opted in.
func (e *Engine) resultAttributes(res *contextasm.Result) []attribute.KeyValue {
	var blocks [3]int
	for _, sec := range res.Sections() {
		for _, b := range sec.Blocks {
			blocks[b.Status]++
		}
	}
	excluded, droppedTokens := 0, 0
	for _, ev := range res.Events() {
		switch ev.Kind {
		case outcome.KindExcluded:
			excluded++
		case outcome.KindDropped:
			droppedTokens += ev.Tokens
		}
	}
	for _, n := range res.ExcludedCounts {
		excluded += n
	}
	bps := make([]int64, len(res.CacheBreakpoints))
	for i, bp := range res.CacheBreakpoints {
		bps[i] = int64(bp.Tokens)
	}
	attrs := []attribute.KeyValue{
		attribute.String("contextasm.assembly_id", res.Audit().RequestID),
		attribute.String("contextasm.render_hash", res.RenderHash),
		attribute.String("contextasm.encoding", res.Encoding),
		attribute.Int("contextasm.budget", res.Budget),
		attribute.Int("contextasm.used_tokens", res.TotalTokens),
		attribute.Int("contextasm.blocks.kept", blocks[outcome.StatusKept]),
		attribute.Int("contextasm.blocks.cut", blocks[outcome.StatusCut]),
		attribute.Int("contextasm.blocks.dropped", blocks[outcome.StatusDropped]),
		attribute.Int("contextasm.blocks.excluded", excluded),
		attribute.Int("contextasm.dropped_tokens", droppedTokens),
		attribute.Int("contextasm.breakpoints", len(bps)),
	}
	if len(bps) > 0 {
		attrs = append(attrs, attribute.Int64Slice("contextasm.breakpoint_tokens", bps))
	}
	if p := res.Prefix; p != nil {
		attrs = append(attrs, attribute.Int("contextasm.stable_prefix_tokens", p.StableTokens),
			attribute.String("contextasm.prefix_reason", string(p.Reason)))
	}
	if res.StateVersion != 0 {
		attrs = append(attrs, attribute.Int64("contextasm.state_version", int64(res.StateVersion)))
	}
	if a := res.Approximate; a != nil {
		attrs = append(attrs, attribute.String("contextasm.approximate", a.Basis))
	}
	if e.content && e.conv.legacy() {
		attrs = append(attrs, attribute.String("contextasm.text", res.Text))
	}
	if e.content && e.conv.latest() {
		attrs = append(attrs, contentAttributes(res)...)
	}
	return attrs
}

func eventAttributes(ev outcome.Event) []attribute.KeyValue {
	attrs := []attribute.KeyValue{
		attribute.String("contextasm.request_id", ev.RequestID),
		attribute.String("contextasm.reason", string(ev.Reason)),
		attribute.Int("contextasm.tokens", ev.Tokens),
	}
	if ev.Section != "" {
		attrs = append(attrs, attribute.String("contextasm.section", ev.Section))
	}
	if ev.Group != "" {
		attrs = append(attrs, attribute.String("contextasm.group", ev.Group))
	}
	return attrs
}

// remember keeps res's span context until res is collected.
func (e *Engine) remember(res *contextasm.Result, sc trace.SpanContext) {
	if !sc.IsValid() {
		return
	}
	key := weak.Make(res)
	e.spans.Store(key, sc)
	runtime.AddCleanup(res, func(k weak.Pointer[contextasm.Result]) { e.spans.Delete(k) }, key)
}

// Feedback is contextasm.Engine.Feedback in a span linked to res's
// assembly.
func (e *Engine) Feedback(ctx context.Context, res *contextasm.Result, response string) (*feedback.Result, error) {
	return e.FeedbackResponse(ctx, res, contextasm.Response{Text: response})
}

// FeedbackResponse is contextasm.Engine.FeedbackResponse in a span linked
// to res's assembly, with the provider's reported usage.
func (e *Engine) FeedbackResponse(ctx context.Context, res *contextasm.Result, r contextasm.Response) (*feedback.Result, error) {
	opts := []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindInternal)}
	if res != nil {
		if sc, ok := e.spans.Load(weak.Make(res)); ok {
			opts = append(opts, trace.WithLinks(trace.Link{SpanContext: sc.(trace.SpanContext)}))
		}
	}
	name := legacyFeedbackSpan
	if e.conv.latest() {
		name = InferenceSpan
		opts = append(opts, trace.WithAttributes(semconv.GenAIOperationNameChat))
	}
	ctx, span := e.tracer.Start(ctx, name, opts...)
	defer span.End()
	if res != nil {
		span.SetAttributes(attribute.String("contextasm.assembly_id", res.Audit().RequestID))
	}
	if u := r.Usage; u.InputTokens > 0 {
		span.SetAttributes(semconv.GenAIUsageInputTokens(u.InputTokens),
			semconv.GenAIUsageCacheReadInputTokens(u.CachedTokens))
		if e.conv.legacy() {
			span.SetAttributes(keyCacheCreation.Int(u.CacheWriteTokens))
		}
		if e.conv.latest() {
			span.SetAttributes(keyCacheWrite.Int(u.CacheWriteTokens))
		}
	}
	if e.content && e.conv.legacy() {
		span.SetAttributes(attribute.String("contextasm.response", r.Text))
	}
	if e.content && e.conv.latest() {
		if res != nil {
			span.SetAttributes(contentAttributes(res)...)
		}
		span.SetAttributes(outputAttribute(r.Text))
	}
	fb, err := e.Engine.FeedbackResponse(ctx, res, r)
	if fb != nil {
		span.SetAttributes(attribute.Int("contextasm.refs", len(fb.Refs)),
			attribute.Int("contextasm.unknown_refs", len(fb.UnknownRefs)),
			attribute.Int("contextasm.trust_changes", len(fb.TrustChanges)),
			attribute.Int("contextasm.violations", len(fb.Violations)),
			attribute.String("contextasm.response_hash", fb.ModelResponseHash))
		if u := r.Usage; u.InputTokens > 0 {
			e.cacheRead.Record(ctx, float64(u.CachedTokens)/float64(u.InputTokens))
		}
	}
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	}
	return fb, err
}
