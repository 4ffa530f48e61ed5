package oteladapter

import (
	"context"
	"runtime"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/contextasm/contextasm/contextasm"
	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/template"
)

// TestSpansForgotten checks that the span contexts kept for feedback's
// links go with their Results: a long-running host does not accumulate
// them.
func TestSpansForgotten(t *testing.T) {
	eng, err := contextasm.New(contextasm.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	if err := eng.Declare(declare.Declaration{RequestID: "r", MemoryType: declare.Constraint, Scope: declare.ScopeGlobal, Content: "Be brief."}); err != nil {
		t.Fatal(err)
	}
	tpl, err := template.Parse([]byte(`{"budget": 50, "sections": [{"name": "R", "priority": 1, "memory_types": ["constraint"], "max_tokens": 40, "render": "{content}"}]}`), "t.json")
	if err != nil {
		t.Fatal(err)
	}
	tel, err := New(eng, Config{TracerProvider: sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(tracetest.NewSpanRecorder()))})
	if err != nil {
		t.Fatal(err)
	}
	held := func() int {
		n := 0
		tel.spans.Range(func(any, any) bool { n++; return true })
		return n
	}
	for i := range 10 {
		if _, err := tel.Assemble(context.Background(), contextasm.Request{Template: tpl, Now: time.Unix(int64(i), 0)}); err != nil {
			t.Fatal(err)
		}
	}
	if n := held(); n == 0 {
		t.Fatal("no span context kept")
	}
	for range 200 {
		runtime.GC()
		if held() == 0 {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Errorf("%d span contexts still held after their Results were collected", held())
}
