package bench

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/contextasm/contextasm/chat"
	"github.com/contextasm/contextasm/contextasm"
	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/internal/cputime"
)

// BenchmarkAssembleTurnChat is BenchmarkAssembleTurn in the OpenAI chat
// format: history as messages, the newest user turn required (the
// current turn), and the body encoded.
func BenchmarkAssembleTurnChat(b *testing.B) {
	benchTurns(b, false, func(r *contextasm.Request) { r.Format = chat.FormatOpenAI })
}

// BenchmarkAssembleTurnTools is a chat host's turn in a tool-using
// conversation: 40 tool exchanges in the store before it starts; each
// call one second later declares a user turn and, every other call, an
// assistant turn that calls a tool with its result, then assembles in the
// OpenAI format (the tool exchange, when there is one, is the current
// turn).
func BenchmarkAssembleTurnTools(b *testing.B) {
	for _, n := range []int{2000, 20000} {
		b.Run(fmt.Sprintf("blocks=%d", n), func(b *testing.B) {
			eng, req, _ := setup(b, n, 8192)
			req.Format = chat.FormatOpenAI
			ctx := context.Background()
			at := Epoch
			for i := range 40 {
				at = at.Add(time.Second)
				if err := eng.Declare(toolExchange(i, at)...); err != nil {
					b.Fatal(err)
				}
			}
			if _, err := eng.Assemble(ctx, req); err != nil {
				b.Fatal(err)
			}
			runtime.GC()
			b.ReportAllocs()
			start := cputime.Process()
			turn := 0
			for b.Loop() {
				turn++
				at = at.Add(time.Second)
				d := Turn(turn)
				d.LastModified = &at
				ds := []declare.Declaration{d}
				if turn%2 == 0 {
					ds = append(ds, toolExchange(1000+turn, at.Add(time.Millisecond))...)
				}
				if err := eng.Declare(ds...); err != nil {
					b.Fatal(err)
				}
				r := req
				r.Now = at.Add(time.Second / 2)
				if _, err := eng.Assemble(ctx, r); err != nil {
					b.Fatal(err)
				}
			}
			reportCPU(b, cputime.Process()-start)
		})
	}
}

// toolExchange is an assistant turn of the workload's session that calls
// a tool, and the tool's result, at at.
func toolExchange(i int, at time.Time) []declare.Declaration {
	w := 0.9
	res := at.Add(time.Millisecond)
	call := fmt.Sprintf("call_%d", i)
	return []declare.Declaration{
		{RequestID: fmt.Sprintf("tool-%06d-a", i), MemoryType: declare.History, Scope: declare.ScopeSession, SessionID: Session, SemanticWeight: &w, LastModified: &at,
			Role: declare.RoleAssistant, ToolCalls: []declare.ToolCall{{ID: call, Name: "get_fees", Arguments: `{"account":"PT50"}`}}},
		{RequestID: fmt.Sprintf("tool-%06d-r", i), MemoryType: declare.History, Scope: declare.ScopeSession, SessionID: Session, SemanticWeight: &w, LastModified: &res,
			Role: declare.RoleTool, ToolCallID: call, Content: `{"fee_eur": 2.5, "arrival": "2026-12-03", "rate": 0.004}`},
	}
}
