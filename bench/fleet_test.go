//go:build unix

package bench

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/contextasm/contextasm/contextasm"
	"github.com/contextasm/contextasm/feedback"
	"github.com/contextasm/contextasm/internal/redistest"
	"github.com/contextasm/contextasm/learned"
	"github.com/contextasm/contextasm/learned/redisstore"
	"github.com/contextasm/contextasm/template"
)

// fleet makes n hosts sharing one learned-state store of the kind named
// ("none": each its own memory; "file"; "redis"), each with the 2,000-block
// workload declared.
func fleet(b *testing.B, kind string, n int) ([]*contextasm.Engine, contextasm.Request) {
	b.Helper()
	tpl, err := template.Parse(TemplateJSON(8192), "bench")
	if err != nil {
		b.Fatal(err)
	}
	decls := Generate(2000, 1)
	var srv *redistest.Server
	var path string
	switch kind {
	case "redis":
		srv = redistest.Start(b, redistest.Options{})
	case "file":
		path = filepath.Join(b.TempDir(), "state.json")
	}
	engines := make([]*contextasm.Engine, n)
	for i := range engines {
		cfg := contextasm.Config{Policy: feedback.Policy{StartGain: 1e-6}}
		switch kind {
		case "redis":
			store, err := redisstore.Open(srv.URL("prefix=bench"))
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { store.Close() })
			cfg.State = store
		case "file":
			cfg.State = learned.NewFileStore(path)
		}
		eng, err := contextasm.New(cfg)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { eng.Close() })
		if err := eng.Declare(decls...); err != nil {
			b.Fatal(err)
		}
		engines[i] = eng
	}
	return engines, contextasm.Request{Template: tpl, Now: Epoch, SessionID: Session, UserID: User}
}

var storeKinds = []string{"none", "file", "redis"}

// BenchmarkFleetAssemble assembles at a new instant each time (so nothing
// is reused but the token counts) with each kind of learned-state store:
// assembly reads the Engine's snapshot, never the store.
func BenchmarkFleetAssemble(b *testing.B) {
	for _, kind := range storeKinds {
		b.Run("store="+kind, func(b *testing.B) {
			engines, req := fleet(b, kind, 1)
			eng := engines[0]
			ctx := context.Background()
			if _, err := eng.Assemble(ctx, req); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				i++
				req.Now = Epoch.Add(time.Duration(i) * time.Second)
				if _, err := eng.Assemble(ctx, req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// citeAll cites five kept blocks of res at the start of a response.
func citeAll(b *testing.B, res *contextasm.Result) string {
	var ids []string
	for _, s := range res.Sections() {
		for _, blk := range s.Blocks {
			if blk.Tokens > 0 && len(ids) < 5 {
				ids = append(ids, blk.RequestID)
			}
		}
	}
	if len(ids) < 5 {
		b.Fatalf("only %d blocks kept", len(ids))
	}
	var sb strings.Builder
	for _, id := range ids {
		fmt.Fprintf(&sb, "<memory_ref id=%q/> ", id)
	}
	sb.WriteString(strings.Repeat("and the rest of the answer. ", 20))
	return sb.String()
}

// BenchmarkFleetFeedback is the feedback throughput of 3 hosts sharing a
// store: each gives b.N feedbacks (5 citations each: a trust and a heat
// delta per block) at once; the time runs until every delta is stored.
func BenchmarkFleetFeedback(b *testing.B) {
	for _, kind := range storeKinds[1:] {
		b.Run("store="+kind, func(b *testing.B) {
			engines, req := fleet(b, kind, 3)
			ctx := context.Background()
			results := make([]*contextasm.Result, len(engines))
			for i, eng := range engines {
				res, err := eng.Assemble(ctx, req)
				if err != nil {
					b.Fatal(err)
				}
				results[i] = res
				if err := eng.Flush(ctx); err != nil {
					b.Fatal(err)
				}
			}
			response := citeAll(b, results[0])
			n := b.N
			b.ResetTimer()
			start := time.Now()
			var wg sync.WaitGroup
			for i, eng := range engines {
				wg.Go(func() {
					for range n {
						if _, err := eng.Feedback(ctx, results[i], response); err != nil {
							b.Error(err)
							return
						}
					}
					if err := eng.Flush(ctx); err != nil {
						b.Error(err)
					}
				})
			}
			wg.Wait()
			elapsed := time.Since(start)
			b.ReportMetric(float64(len(engines)*n*10)/elapsed.Seconds(), "deltas/s")
		})
	}
}

// BenchmarkFleetPropagation is the time from one host's feedback until
// another host's snapshot shows it, with the default StateOptions (a poll
// every 100 ms; Redis wakes the other host at once through pub/sub).
func BenchmarkFleetPropagation(b *testing.B) {
	for _, kind := range storeKinds[1:] {
		b.Run("store="+kind, func(b *testing.B) {
			engines, req := fleet(b, kind, 2)
			ctx := context.Background()
			from, to := engines[0], engines[1]
			res, err := from.Assemble(ctx, req)
			if err != nil {
				b.Fatal(err)
			}
			response := citeAll(b, res)
			id := res.Sections()[0].Blocks[0].RequestID
			for _, blk := range res.Sections()[0].Blocks {
				if strings.Contains(response, `"`+blk.RequestID+`"`) {
					id = blk.RequestID
					break
				}
			}
			if err := from.Flush(ctx); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for b.Loop() {
				before := to.State().Trust[id]
				if _, err := from.Feedback(ctx, res, response); err != nil {
					b.Fatal(err)
				}
				deadline := time.Now().Add(10 * time.Second)
				for to.State().Trust[id] == before {
					if time.Now().After(deadline) {
						b.Fatal("the change did not arrive")
					}
					time.Sleep(200 * time.Microsecond)
				}
			}
		})
	}
}
