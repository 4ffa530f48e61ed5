package oteladapter_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	oteladapter "github.com/contextasm/contextasm/adapters/otel"
	"github.com/contextasm/contextasm/contextasm"
)

// withConventions is the fixture's engine instrumented anew under c.
func withConventions(t *testing.T, c oteladapter.Conventions, content bool) *fixture {
	t.Helper()
	f := setup(t, contextasm.Config{}, content)
	f.spans = tracetest.NewSpanRecorder()
	var err error
	f.tel, err = oteladapter.New(f.eng, oteladapter.Config{TracerProvider: sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(f.spans)),
		MeterProvider: sdkmetric.NewMeterProvider(), RecordContent: content, Conventions: c})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// run assembles and feeds back, returning the two spans' names and
// attributes.
func (f *fixture) run(t *testing.T) (*contextasm.Result, []string, []map[string]string) {
	t.Helper()
	ctx := context.Background()
	res, err := f.tel.Assemble(ctx, f.req)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.tel.FeedbackResponse(ctx, res, contextasm.Response{Text: `SECRET-RESPONSE <memory_ref id="rule-apr"/>`,
		Usage: contextasm.Usage{InputTokens: 180, CachedTokens: 120, CacheWriteTokens: 20}})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	var out []map[string]string
	for _, s := range f.spans.Ended() {
		names = append(names, s.Name())
		m := map[string]string{}
		for k, v := range attrs(s.Attributes()) {
			m[k] = v.String()
		}
		out = append(out, m)
	}
	return res, names, out
}

// TestConventionsLatest: the current GenAI names: the feedback span is
// the inference, with cache_write and, content on, the system
// instructions, input and output messages in the conventions' shapes.
func TestConventionsLatest(t *testing.T) {
	f := withConventions(t, oteladapter.ConventionsLatest, true)
	res, names, a := f.run(t)
	if strings.Join(names, ",") != "assemble_context,"+oteladapter.InferenceSpan {
		t.Fatalf("spans %v", names)
	}
	fb := a[1]
	for k, want := range map[string]string{"gen_ai.operation.name": "chat", "gen_ai.usage.input_tokens": "180",
		"gen_ai.usage.cache_read.input_tokens": "120", "gen_ai.usage.cache_write.input_tokens": "20"} {
		if fb[k] != want {
			t.Errorf("%s = %q, want %q", k, fb[k], want)
		}
	}
	for _, gone := range []string{"gen_ai.usage.cache_creation.input_tokens", "contextasm.response"} {
		if _, ok := fb[gone]; ok {
			t.Errorf("the latest conventions carry the old %s", gone)
		}
	}
	if _, ok := a[0]["contextasm.text"]; ok {
		t.Errorf("the latest conventions carry contextasm.text")
	}
	conv := res.Messages()
	for i, span := range a {
		var system []map[string]any
		if err := json.Unmarshal([]byte(span["gen_ai.system_instructions"]), &system); err != nil || len(system) != len(conv.System) ||
			system[0]["type"] != "text" || system[0]["content"] != conv.System[0].Text {
			t.Errorf("span %d: gen_ai.system_instructions %s (%v)", i, span["gen_ai.system_instructions"], err)
		}
		var input []struct {
			Role  string           `json:"role"`
			Parts []map[string]any `json:"parts"`
		}
		if err := json.Unmarshal([]byte(span["gen_ai.input.messages"]), &input); err != nil || len(input) != len(conv.Messages) ||
			input[0].Role != "user" || input[0].Parts[0]["type"] != "text" || input[0].Parts[0]["content"] != conv.Messages[0].Content {
			t.Errorf("span %d: gen_ai.input.messages %s (%v)", i, span["gen_ai.input.messages"], err)
		}
	}
	var output []struct {
		Role  string           `json:"role"`
		Parts []map[string]any `json:"parts"`
	}
	if err := json.Unmarshal([]byte(fb["gen_ai.output.messages"]), &output); err != nil || output[0].Role != "assistant" ||
		!strings.HasPrefix(output[0].Parts[0]["content"].(string), "SECRET-RESPONSE") {
		t.Errorf("gen_ai.output.messages %s (%v)", fb["gen_ai.output.messages"], err)
	}
}

// TestConventionsContentOff: without RecordContent no convention puts
// content on a span.
func TestConventionsContentOff(t *testing.T) {
	for _, c := range []oteladapter.Conventions{oteladapter.ConventionsLatest, oteladapter.ConventionsBoth} {
		_, _, a := withConventions(t, c, false).run(t)
		for i, span := range a {
			for k, v := range span {
				if strings.Contains(v, "SECRET-") || k == "gen_ai.system_instructions" || k == "gen_ai.input.messages" {
					t.Errorf("conventions %d, span %d: %s without RecordContent", c, i, k)
				}
			}
		}
	}
}

// TestConventionsBoth: both attribute names, for a move between them.
func TestConventionsBoth(t *testing.T) {
	_, names, a := withConventions(t, oteladapter.ConventionsBoth, true).run(t)
	if names[1] != oteladapter.InferenceSpan {
		t.Errorf("spans %v", names)
	}
	for _, k := range []string{"gen_ai.usage.cache_write.input_tokens", "gen_ai.usage.cache_creation.input_tokens", "contextasm.response", "gen_ai.output.messages"} {
		if _, ok := a[1][k]; !ok {
			t.Errorf("both conventions lack %s", k)
		}
	}
	for _, k := range []string{"contextasm.text", "gen_ai.system_instructions"} {
		if _, ok := a[0][k]; !ok {
			t.Errorf("both conventions lack %s on the assembly", k)
		}
	}
}

// TestConventionsFromEnv: OTEL_SEMCONV_STABILITY_OPT_IN opts in; without
// it the old names stay.
func TestConventionsFromEnv(t *testing.T) {
	for _, c := range []struct {
		env, span string
	}{{"", "contextasm.feedback"}, {"http", "contextasm.feedback"}, {"http/dup, gen_ai_latest_experimental", oteladapter.InferenceSpan}} {
		t.Setenv(oteladapter.OptInEnv, c.env)
		_, names, _ := withConventions(t, oteladapter.ConventionsFromEnv, false).run(t)
		if names[1] != c.span {
			t.Errorf("%s=%q: the feedback span is %q, want %q", oteladapter.OptInEnv, c.env, names[1], c.span)
		}
	}
}
