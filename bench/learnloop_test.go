package bench

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/contextasm/contextasm/contextasm"
	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/internal/cputime"
	"github.com/contextasm/contextasm/learned"
	"github.com/contextasm/contextasm/template"
)

// The learning loop's cost: what a host pays beside the assembly for
// feeding back citations, keeping the learned state in a file, ending
// sessions and interleaving conversations (docs/performance.md).

// citing returns a response that cites the first block res kept.
func citing(res *contextasm.Result) string {
	id := ""
	if i := strings.Index(res.Text, `id="`); i >= 0 {
		rest := res.Text[i+len(`id="`):]
		id = rest[:strings.IndexByte(rest, '"')]
	}
	return fmt.Sprintf("As the context says <memory_ref id=%q/>, the fee applies.", id)
}

// BenchmarkTurnFeedback is BenchmarkAssembleTurn with the model's answer
// fed back each call (Engine.Feedback citing a kept block), in memory and
// with the learned state in a file store.
func BenchmarkTurnFeedback(b *testing.B) {
	for _, store := range []string{"memory", "file"} {
		for _, n := range []int{2000, 20000, 200000} {
			b.Run(fmt.Sprintf("state=%s/blocks=%d", store, n), func(b *testing.B) {
				cfg := contextasm.Config{}
				if store == "file" {
					cfg.State = learned.NewFileStore(filepath.Join(b.TempDir(), "state.json"))
				}
				eng, req := setupWith(b, n, cfg)
				defer eng.Close()
				ctx := context.Background()
				turn := 0
				runtime.GC()
				b.ReportAllocs()
				start := cputime.Process()
				for b.Loop() {
					turn++
					if err := eng.Declare(Turn(turn)); err != nil {
						b.Fatal(err)
					}
					res, err := eng.Assemble(ctx, req)
					if err != nil {
						b.Fatal(err)
					}
					if _, err := eng.Feedback(ctx, res, citing(res)); err != nil {
						b.Fatal(err)
					}
				}
				reportCPU(b, cputime.Process()-start)
				if err := eng.Flush(ctx); err != nil {
					b.Fatal(err)
				}
			})
		}
	}
}

// setupWith is setup with an Engine configured by cfg.
func setupWith(b *testing.B, n int, cfg contextasm.Config) (*contextasm.Engine, contextasm.Request) {
	b.Helper()
	tpl, err := template.Parse(TemplateJSON(8192), "bench")
	if err != nil {
		b.Fatal(err)
	}
	eng, err := contextasm.New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	if err := eng.Declare(Generate(n, 1)...); err != nil {
		b.Fatal(err)
	}
	req := contextasm.Request{Template: tpl, Now: Epoch, SessionID: Session, UserID: User}
	if _, err := eng.Assemble(context.Background(), req); err != nil {
		b.Fatal(err)
	}
	return eng, req
}

// BenchmarkSessionChurn starts and ends one session per op: two turns
// declared, one assembly, EndSession. It reports the heap the Engine
// holds after the run (end-MB) beside the heap after the first 100
// sessions (start-MB), which stays flat when ending a session releases
// everything it held, the token counts of its texts too (before
// 2026-12-03 they stayed, and with the default Config.CacheSize of 65,536
// entries the heap grew by the cache's size; /cache=512 is a cache full
// before the start).
func BenchmarkSessionChurn(b *testing.B) {
	for _, size := range []int{0, 512} {
		name := "cache=default"
		if size > 0 {
			name = fmt.Sprintf("cache=%d", size)
		}
		b.Run(name, func(b *testing.B) { sessionChurn(b, contextasm.Config{CacheSize: size}) })
	}
}

func sessionChurn(b *testing.B, cfg contextasm.Config) {
	tpl, err := template.Parse(TemplateJSON(8192), "bench")
	if err != nil {
		b.Fatal(err)
	}
	eng, err := contextasm.New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	if err := eng.Declare(Generate(2000, 1)...); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	session := func(i int) {
		s := fmt.Sprintf("churn-%07d", i)
		var decls []declare.Declaration
		for k := range 2 {
			d := Turn(i*2 + k)
			d.RequestID, d.SessionID = fmt.Sprintf("%s-%d", s, k), s
			decls = append(decls, d)
		}
		if err := eng.Declare(decls...); err != nil {
			b.Fatal(err)
		}
		if _, err := eng.Assemble(ctx, contextasm.Request{Template: tpl, Now: Epoch, SessionID: s, UserID: User}); err != nil {
			b.Fatal(err)
		}
		if _, err := eng.EndSession(s); err != nil {
			b.Fatal(err)
		}
	}
	for i := range 100 { // the caches and the index made
		session(-1 - i)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	i := 0
	b.ReportAllocs()
	start := cputime.Process()
	for b.Loop() {
		session(i)
		i++
	}
	reportCPU(b, cputime.Process()-start)
	b.StopTimer()
	runtime.GC()
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(before.HeapAlloc)/1e6, "start-MB")
	b.ReportMetric(float64(after.HeapAlloc)/1e6, "end-MB")
	runtime.KeepAlive(eng)
}

// BenchmarkInterleavedSessions assembles the turns of k conversations in
// turn, each a session of its own on the same store (one op is one turn
// of one of them): past the request shapes the Engine keeps an index
// for, every turn would build its index again.
func BenchmarkInterleavedSessions(b *testing.B) {
	for _, k := range []int{2, 8} {
		b.Run(fmt.Sprintf("sessions=%d", k), func(b *testing.B) {
			eng, req := setupWith(b, 20000, contextasm.Config{})
			ctx := context.Background()
			reqs := make([]contextasm.Request, k)
			for s := range reqs {
				reqs[s] = req
				reqs[s].SessionID = fmt.Sprintf("%s-%d", Session, s)
				if _, err := eng.Assemble(ctx, reqs[s]); err != nil {
					b.Fatal(err)
				}
			}
			turn := 0
			runtime.GC()
			b.ReportAllocs()
			start := cputime.Process()
			for b.Loop() {
				turn++
				r := reqs[turn%k]
				d := Turn(turn)
				d.SessionID = r.SessionID
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
