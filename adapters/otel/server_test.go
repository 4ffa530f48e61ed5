package oteladapter_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	oteladapter "github.com/contextasm/contextasm/adapters/otel"
	"github.com/contextasm/contextasm/contextasm"
	"github.com/contextasm/contextasm/internal/server"
	"github.com/contextasm/contextasm/template"
)

// TestServerSpans: contextasm serve's engines, instrumented through the
// server's hook with this adapter, trace every assembly and feedback
// made over HTTP: the same spans, linked, as a Go host gets.
func TestServerSpans(t *testing.T) {
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	tpl, err := template.Parse([]byte(tplSrc), "template.json")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(server.Config{Templates: map[string]*template.Template{"t": tpl},
		Instrument: func(_ string, eng *contextasm.Engine) (server.Instrumented, error) {
			return oteladapter.New(eng, oteladapter.Config{TracerProvider: tp, MeterProvider: sdkmetric.NewMeterProvider(),
				Conventions: oteladapter.ConventionsLatest})
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	hs := httptest.NewServer(srv.Handler())
	defer hs.Close()
	post := func(path, body string) map[string]any {
		resp, err := http.Post(hs.URL+path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		json.NewDecoder(resp.Body).Decode(&out)
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d %v", path, resp.StatusCode, out)
		}
		return out
	}
	post("/v1/declarations", `{"request_id":"rule-apr","memory_type":"constraint","scope":"global","content":"Quote rates with their APR."}`)
	a := post("/v1/assemble", `{"template":"t","session":"s1","now":"2026-11-30T09:00:00Z"}`)
	post("/v1/feedback", `{"assembly_id":"`+a["assembly_id"].(string)+`","response":"<memory_ref id=\"rule-apr\"/>","usage":{"input_tokens":50,"cache_write_tokens":10}}`)
	ended := spans.Ended()
	if len(ended) != 2 || ended[0].Name() != oteladapter.OperationName || ended[1].Name() != oteladapter.InferenceSpan {
		t.Fatalf("spans %v", ended)
	}
	asm := attrs(ended[0].Attributes())
	if asm["contextasm.assembly_id"].AsString() != a["assembly_id"] || asm["gen_ai.conversation.id"].AsString() != "s1" {
		t.Errorf("the assembly span does not name the server's assembly: %v", asm)
	}
	if l := ended[1].Links(); len(l) != 1 || !l[0].SpanContext.Equal(ended[0].SpanContext()) {
		t.Errorf("the inference span is not linked to its assembly's")
	}
	if fb := attrs(ended[1].Attributes()); fb["gen_ai.usage.cache_write.input_tokens"].AsInt64() != 10 {
		t.Errorf("inference span: %v", fb)
	}
}
