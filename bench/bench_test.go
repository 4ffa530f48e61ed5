package bench

import (
	"context"
	"fmt"
	"testing"

	"github.com/contextasm/contextasm/contextasm"
	"github.com/contextasm/contextasm/declare"
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
	_, req, decls := setup(b, n, 8192)
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
