package bench

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/contextasm/contextasm/contextasm"
	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/internal/bpe"
	"github.com/contextasm/contextasm/internal/cputime"
	"github.com/contextasm/contextasm/template"
)

// BenchmarkLowerBound bounds every block of the 20,000-block workload and
// reports how tight the bound is: its sum over the real counts' sum
// (lb/count), and the worst block's ratio (worst-lb/count).
func BenchmarkLowerBound(b *testing.B) {
	decls := Generate(20000, 1)
	tok, err := bpe.Load(bpe.O200kBase)
	if err != nil {
		b.Fatal(err)
	}
	sumLB, sumN, worst := 0, 0, 1.0
	for i := range decls {
		lb, n := bpe.LowerBound(decls[i].Content), tok.Count(decls[i].Content)
		if lb > n {
			b.Fatalf("%s: lower bound %d > count %d", decls[i].RequestID, lb, n)
		}
		sumLB, sumN = sumLB+lb, sumN+n
		worst = min(worst, float64(lb)/float64(n))
	}
	b.ReportAllocs()
	for b.Loop() {
		for i := range decls {
			bpe.LowerBound(decls[i].Content)
		}
	}
	b.ReportMetric(float64(sumLB)/float64(sumN), "lb/count")
	b.ReportMetric(worst, "worst-lb/count")
}

// BenchmarkCountWorkload counts every block of the 20,000-block workload
// (about 12 MB), cold: the tokenizer's throughput on multilingual text.
func BenchmarkCountWorkload(b *testing.B) {
	decls := Generate(20000, 1)
	tok, err := bpe.Load(bpe.O200kBase)
	if err != nil {
		b.Fatal(err)
	}
	size := 0
	for i := range decls {
		size += len(decls[i].Content)
	}
	b.SetBytes(int64(size))
	b.ReportAllocs()
	for b.Loop() {
		for i := range decls {
			tok.Count(decls[i].Content)
		}
	}
}

// reportCPU reports the CPU time per operation (cpu-ms/op), when the
// platform tells it: on a shared machine a steadier measure than ns/op.
func reportCPU(b *testing.B, cpu time.Duration) {
	if cpu > 0 {
		b.ReportMetric(float64(cpu)/float64(b.N)/1e6, "cpu-ms/op")
	}
}

// workloadRequest is the workload's request with its template for budget.
func workloadRequest(b *testing.B, budget int) contextasm.Request {
	b.Helper()
	tpl, err := template.Parse(TemplateJSON(budget), "bench")
	if err != nil {
		b.Fatal(err)
	}
	return contextasm.Request{Template: tpl, Now: Epoch, SessionID: Session, UserID: User}
}

// tallyCounter is the built-in tokenizer with its calls counted.
type tallyCounter struct {
	*bpe.Tokenizer
	calls atomic.Int64
}

func (c *tallyCounter) Count(s string) int { c.calls.Add(1); return c.Tokenizer.Count(s) }
func (c *tallyCounter) Cut(s string, n int) string {
	c.calls.Add(1)
	return c.Tokenizer.Cut(s, n)
}
func (c *tallyCounter) PlanCuts(s string) (bpe.CutPlan, bool) {
	c.calls.Add(1)
	return c.Tokenizer.PlanCuts(s)
}

// BenchmarkAssembleColdCounted is a cold assembly (a fresh Engine) of 2,000
// and 20,000 blocks, reporting the tokenizer calls it makes (calls/op):
// nearly all of them count a block, so fewer means the lower bound spared
// more blocks the counting.
func BenchmarkAssembleColdCounted(b *testing.B) {
	for _, n := range []int{2000, 20000} {
		b.Run(fmt.Sprintf("blocks=%d", n), func(b *testing.B) {
			req := workloadRequest(b, 16384)
			decls := Generate(n, 1)
			tok, err := bpe.Load(bpe.O200kBase)
			if err != nil {
				b.Fatal(err)
			}
			tc := &tallyCounter{Tokenizer: tok}
			var calls int64
			var cpu time.Duration
			b.ReportAllocs()
			for b.Loop() {
				b.StopTimer()
				eng, err := contextasm.New(contextasm.Config{Counter: tc})
				if err != nil {
					b.Fatal(err)
				}
				if err := eng.Declare(decls...); err != nil {
					b.Fatal(err)
				}
				tc.calls.Store(0)
				start := cputime.Process()
				b.StartTimer()
				if _, err := eng.Assemble(context.Background(), req); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				cpu += cputime.Process() - start
				calls = tc.calls.Load()
				eng.Close()
				b.StartTimer()
			}
			b.ReportMetric(float64(calls), "calls/op")
			reportCPU(b, cpu)
		})
	}
}

// BenchmarkAssembleTurnIndented is BenchmarkAssembleTurn with every history
// block indented by a tab, as code is: its lines do not start cleanly, so
// the final text's count is not the sum of its lines. Counting only the
// joins (bpe.Tokenizer.JoinDelta) keeps a turn from counting the whole
// text again.
func BenchmarkAssembleTurnIndented(b *testing.B) {
	for _, n := range []int{2000, 20000} {
		b.Run(fmt.Sprintf("blocks=%d", n), func(b *testing.B) {
			req := workloadRequest(b, 16384)
			decls := Generate(n, 1)
			for i := range decls {
				if decls[i].MemoryType == declare.History {
					decls[i].Content = "\t" + decls[i].Content
				}
			}
			eng, err := contextasm.New(contextasm.Config{})
			if err != nil {
				b.Fatal(err)
			}
			defer eng.Close()
			if err := eng.Declare(decls...); err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			if _, err := eng.Assemble(ctx, req); err != nil {
				b.Fatal(err)
			}
			turn := 0
			b.ReportAllocs()
			start := cputime.Process()
			for b.Loop() {
				turn++
				d := Turn(turn)
				d.Content = "\t" + d.Content
				if err := eng.Declare(d); err != nil {
					b.Fatal(err)
				}
				if _, err := eng.Assemble(ctx, req); err != nil {
					b.Fatal(err)
				}
			}
			reportCPU(b, cputime.Process()-start)
		})
	}
}
