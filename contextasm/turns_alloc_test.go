package contextasm_test

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/contextasm/contextasm/bench"
	"github.com/contextasm/contextasm/chat"
	"github.com/contextasm/contextasm/contextasm"
	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/template"
)

// TestTurnAllocations holds a turn (one history block declared, then the
// conversation's request assembled) to a budget of allocations, in count
// and in bytes, that does not grow with the store: the same at 2,000 and
// 20,000 blocks, give or take a fifth, under 1,000 allocations and 1 MB.
// What a turn allocates is what it writes (the text, its spans and
// hashes, the decision) and what it changed; the rows and events that
// list every block are made only when asked for.
func TestTurnAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	if testing.Short() {
		t.Skip("declares 22,000 blocks")
	}
	tpl, err := template.Parse(bench.TemplateJSON(8192), "bench.json")
	if err != nil {
		t.Fatal(err)
	}
	var allocs, bytes [2]float64
	for i, n := range []int{2000, 20000} {
		eng := newEngine(t, contextasm.Config{}, bench.Generate(n, 1)...)
		req := contextasm.Request{Template: tpl, Now: bench.Epoch, SessionID: bench.Session, UserID: bench.User}
		ctx := context.Background()
		if _, err := eng.Assemble(ctx, req); err != nil {
			t.Fatal(err)
		}
		turn := 0
		do := func() {
			turn++
			if err := eng.Declare(bench.Turn(turn)); err != nil {
				t.Fatal(err)
			}
			if _, err := eng.Assemble(ctx, req); err != nil {
				t.Fatal(err)
			}
		}
		allocs[i] = testing.AllocsPerRun(50, do)
		// The least of three windows: the learned state's goroutine
		// flushes on a timer, and what a flush allocates lands in
		// whichever window it falls in (it is not a turn's).
		for w := range 3 {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			for range 50 {
				do()
			}
			runtime.ReadMemStats(&after)
			if b := float64(after.TotalAlloc-before.TotalAlloc) / 50; w == 0 || b < bytes[i] {
				bytes[i] = b
			}
		}
		t.Logf("%d blocks: %.0f allocations, %.0f bytes a turn", n, allocs[i], bytes[i])
	}
	if allocs[1] > 1000 || allocs[1] > allocs[0]*1.2+20 || bytes[1] > 1<<20 || bytes[1] > bytes[0]*1.2+16<<10 {
		t.Errorf("a turn allocates %.0f times (%.0f bytes) at 2,000 blocks and %.0f times (%.0f bytes) at 20,000: want no growth with the store, under 1,000 and 1 MB",
			allocs[0], bytes[0], allocs[1], bytes[1])
	}
}

// TestToolTurnAllocations holds a chat turn of a tool-using conversation
// (a user turn and, every other call, a tool exchange declared, then the
// OpenAI request assembled) to allocations that do not grow with the
// conversation: the same with 40 tool exchanges behind it and with 400,
// give or take a fifth. Its units (each exchange is one) are planned at
// every call; what they hold is kept from call to call, not made again.
func TestToolTurnAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	tpl, err := template.Parse(bench.TemplateJSON(8192), "bench.json")
	if err != nil {
		t.Fatal(err)
	}
	exchange := func(i int, at time.Time) []declare.Declaration {
		res := at.Add(time.Millisecond)
		call := fmt.Sprintf("call_%d", i)
		return []declare.Declaration{
			{RequestID: fmt.Sprintf("tool-%06d-a", i), MemoryType: declare.History, Scope: declare.ScopeSession, SessionID: bench.Session, LastModified: &at,
				Role: declare.RoleAssistant, ToolCalls: []declare.ToolCall{{ID: call, Name: "get_fees", Arguments: `{"account":"PT50"}`}}},
			{RequestID: fmt.Sprintf("tool-%06d-r", i), MemoryType: declare.History, Scope: declare.ScopeSession, SessionID: bench.Session, LastModified: &res,
				Role: declare.RoleTool, ToolCallID: call, Content: `{"fee_eur": 2.5, "arrival": "2026-12-03"}`},
		}
	}
	var allocs [2]float64
	for i, n := range []int{40, 400} {
		eng := newEngine(t, contextasm.Config{}, bench.Generate(2000, 1)...)
		at := bench.Epoch
		for k := range n {
			at = at.Add(time.Second)
			if err := eng.Declare(exchange(k, at)...); err != nil {
				t.Fatal(err)
			}
		}
		req := contextasm.Request{Template: tpl, SessionID: bench.Session, UserID: bench.User, Format: chat.FormatOpenAI}
		ctx := context.Background()
		turn := 0
		do := func() {
			turn++
			at = at.Add(time.Second)
			d := bench.Turn(turn)
			d.LastModified = &at
			ds := []declare.Declaration{d}
			if turn%2 == 0 {
				ds = append(ds, exchange(100000+turn, at.Add(time.Millisecond))...)
			}
			if err := eng.Declare(ds...); err != nil {
				t.Fatal(err)
			}
			r := req
			r.Now = at.Add(time.Second / 2)
			if _, err := eng.Assemble(ctx, r); err != nil {
				t.Fatal(err)
			}
		}
		for range 20 {
			do()
		}
		allocs[i] = testing.AllocsPerRun(50, do)
		t.Logf("%d tool exchanges: %.0f allocations a turn", n, allocs[i])
	}
	if allocs[1] > allocs[0]*1.2+20 {
		t.Errorf("a tool-using turn allocates %.0f times with 40 exchanges behind it and %.0f with 400: want no growth with the conversation", allocs[0], allocs[1])
	}
}
