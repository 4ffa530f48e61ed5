package bench

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/contextasm/contextasm/contextasm"
	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/internal/cputime"
	"github.com/contextasm/contextasm/template"
)

func setup(b *testing.B, n, budget int) (*contextasm.Engine, contextasm.Request, []declare.Declaration) {
	b.Helper()
	tpl, err := template.Parse(TemplateJSON(budget), "bench")
	if err != nil {
		b.Fatal(err)
	}
	decls := Generate(n, 1)
	eng, err := contextasm.New(contextasm.Config{})
	if err != nil {
		b.Fatal(err)
	}
	if err := eng.Declare(decls...); err != nil {
		b.Fatal(err)
	}
	return eng, contextasm.Request{Template: tpl, Now: Epoch, SessionID: Session, UserID: User}, decls
}

// BenchmarkAssembleWarm re-assembles unchanged blocks: every count comes
// from the cache.
func BenchmarkAssembleWarm(b *testing.B) {
	for _, n := range []int{2000, 20000} {
		b.Run(fmt.Sprintf("blocks=%d", n), func(b *testing.B) {
			eng, req, _ := setup(b, n, 8192)
			ctx := context.Background()
			if _, err := eng.Assemble(ctx, req); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := eng.Assemble(ctx, req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkAssembleCold assembles with an empty token-count cache each
// time (the encoder is already loaded: it is shared by the process).
func BenchmarkAssembleCold(b *testing.B) {
	const n = 2000
	_, req, decls := setup(b, n, 16384)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		eng, err := contextasm.New(contextasm.Config{})
		if err != nil {
			b.Fatal(err)
		}
		if err := eng.Declare(decls...); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if _, err := eng.Assemble(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDeclare measures validating and loading declarations into
// an Engine.
func BenchmarkDeclare(b *testing.B) {
	decls := Generate(2000, 1)
	b.ReportAllocs()
	for b.Loop() {
		eng, err := contextasm.New(contextasm.Config{})
		if err != nil {
			b.Fatal(err)
		}
		if err := eng.Declare(decls...); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAssembleTurn adds one history block (a new turn of the
// conversation) and assembles: one block is counted, the rest comes from
// the caches.
func BenchmarkAssembleTurn(b *testing.B) { benchTurns(b, false) }

// BenchmarkAssembleTurnMovingNow is a turn as a live conversation makes
// one: each call a second later than the one before, with the new turn
// dated at its now. History ranks by recency, so a moving now re-ranks
// the history section on every call (docs/performance.md).
func BenchmarkAssembleTurnMovingNow(b *testing.B) { benchTurns(b, true) }

// BenchmarkAssembleTurnNoQuery is BenchmarkAssembleTurn without the
// query (Request.NoQuery): the baseline of what asking about the newest
// turn costs (docs/performance.md).
func BenchmarkAssembleTurnNoQuery(b *testing.B) {
	benchTurns(b, false, func(r *contextasm.Request) { r.NoQuery = true })
}

func benchTurns(b *testing.B, moveNow bool, opts ...func(*contextasm.Request)) {
	for _, n := range []int{2000, 20000, 200000} {
		b.Run(fmt.Sprintf("blocks=%d", n), func(b *testing.B) {
			eng, req, _ := setup(b, n, 8192)
			for _, o := range opts {
				o(&req)
			}
			ctx := context.Background()
			if _, err := eng.Assemble(ctx, req); err != nil {
				b.Fatal(err)
			}
			turn := 0
			runtime.GC() // the setup's garbage is not the turns' to collect (cpu-ms/op counts the collector)
			b.ReportAllocs()
			start := cputime.Process()
			for b.Loop() {
				turn++
				d, r := Turn(turn), req
				if moveNow {
					at := Epoch.Add(time.Duration(turn) * time.Second)
					d.LastModified, r.Now = &at, at
				}
				if err := eng.Declare(d); err != nil {
					b.Fatal(err)
				}
				if _, err := eng.Assemble(ctx, r); err != nil {
					b.Fatal(err)
				}
			}
			reportCPU(b, cputime.Process()-start)
		})
	}
}

// BenchmarkScaling measures a changed-store assembly (the output cannot be
// reused, every count is cached) from 100 to 200,000 blocks: a block no
// request sees re-declared, then the workload's request assembled.
func BenchmarkScaling(b *testing.B) {
	for _, n := range []int{100, 1000, 10000, 100000, 200000} {
		b.Run(fmt.Sprintf("blocks=%d", n), func(b *testing.B) {
			eng, req, _ := setup(b, n, 8192)
			ctx := context.Background()
			if _, err := eng.Assemble(ctx, req); err != nil {
				b.Fatal(err)
			}
			other := Other()
			runtime.GC()
			b.ReportAllocs()
			for b.Loop() {
				// Re-declaring a block no request sees changes the store
				// without changing the output: the whole path runs, warm.
				if err := eng.Declare(other); err != nil {
					b.Fatal(err)
				}
				if _, err := eng.Assemble(ctx, req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkStoreMemory reports the heap an Engine holds per declared block
// (B/block) beside the blocks' content (content-B/block), after one
// assembly has filled the caches.
func BenchmarkStoreMemory(b *testing.B) {
	for _, n := range []int{20000, 200000} {
		b.Run(fmt.Sprintf("blocks=%d", n), func(b *testing.B) { storeMemory(b, n) })
	}
}

func storeMemory(b *testing.B, n int) {
	decls := Generate(n, 1)
	content := 0
	for i := range decls {
		content += len(decls[i].Content)
	}
	tpl, err := template.Parse(TemplateJSON(8192), "bench")
	if err != nil {
		b.Fatal(err)
	}
	var held float64
	for b.Loop() {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		eng, err := contextasm.New(contextasm.Config{})
		if err != nil {
			b.Fatal(err)
		}
		if err := eng.Declare(decls...); err != nil {
			b.Fatal(err)
		}
		if _, err := eng.Assemble(context.Background(), contextasm.Request{Template: tpl, Now: Epoch, SessionID: Session, UserID: User}); err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		held = float64(after.HeapAlloc-before.HeapAlloc) / float64(n)
		runtime.KeepAlive(eng)
	}
	b.ReportMetric(held, "B/block")
	b.ReportMetric(float64(content)/float64(n), "content-B/block")
}
