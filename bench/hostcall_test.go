package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/contextasm/contextasm/chat"
	"github.com/contextasm/contextasm/contextasm"
	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/internal/cputime"
	"github.com/contextasm/contextasm/learned"
	"github.com/contextasm/contextasm/outcome"
	"github.com/contextasm/contextasm/template"
)

// The call a chat host makes (BenchmarkHostCall), and priompt on the same
// blocks in the same run when CONTEXTASM_PRIOMPT is set (bench/peers, with
// its packages installed).

// hostTurns is how many calls of a tool-using conversation the store
// holds before the measured calls start.
const hostTurns = 20

// toolConversation returns calls calls of the workload's session, each a
// user question, an assistant turn calling get_rate, its result (about 250
// tokens) and the answer, dated before Epoch.
func toolConversation(calls int) []declare.Declaration {
	var out []declare.Declaration
	for i := range calls {
		at := func(s int) *time.Time {
			t := Epoch.Add(time.Duration(i-calls)*time.Minute + time.Duration(s)*time.Second)
			return &t
		}
		turn := func(kind string, role declare.Role, content string, s int) declare.Declaration {
			return declare.Declaration{RequestID: fmt.Sprintf("tc-%03d-%s", i, kind), MemoryType: declare.History,
				Scope: declare.ScopeSession, SessionID: Session, Role: role, Content: content, LastModified: at(s)}
		}
		id := fmt.Sprintf("call_%03d", i)
		months := 12 * (1 + i%10)
		call := turn("call", declare.RoleAssistant, "", 10)
		call.ToolCalls = []declare.ToolCall{{ID: id, Name: "get_rate", Arguments: fmt.Sprintf(`{"term_months":%d}`, months)}}
		var b bytes.Buffer
		fmt.Fprintf(&b, "get_rate(term_months=%d):", months)
		for k := range 14 {
			fmt.Fprintf(&b, " %d months: %d.%02d%% APR, opening fee EUR %d;", months+6*k, 4+(i+k)%5, (17*k+i)%100, 150+25*((i+k)%7))
		}
		result := turn("result", declare.RoleTool, b.String(), 20)
		result.ToolCallID = id
		out = append(out,
			turn("user", declare.RoleUser, fmt.Sprintf("USER: what would a %d-month loan cost me?", months), 0),
			call, result,
			turn("answer", declare.RoleAssistant, fmt.Sprintf("ASSISTANT: over %d months the rate sheet gives the figures above.", months), 30))
	}
	return out
}

// BenchmarkHostCall is one call of a chat host, on the bench workload
// with a tool-using conversation in the store, learned state in a file
// store: a new user turn declared (each call a second after the one
// before, dated at its now), the OpenAI request assembled and its body
// encoded, the answer fed back (two citations); with /summaries, also a
// summary declared for each run the call offers
// (Result.SummarizeCandidates). cpu-ms/op is the process's CPU time (the
// file store's and the collector's goroutines too).
//
// The 200,000-block cases run with CONTEXTASM_BENCH_LARGE set: their
// setup (generating and declaring the blocks) takes longer than CI's
// one-iteration run of every benchmark should.
func BenchmarkHostCall(b *testing.B) {
	for _, n := range []int{2000, 20000, 200000} {
		b.Run(fmt.Sprintf("blocks=%d", n), func(b *testing.B) {
			if n > 20000 && os.Getenv("CONTEXTASM_BENCH_LARGE") == "" {
				b.Skip("set CONTEXTASM_BENCH_LARGE=1 to run the 200,000-block host call")
			}
			b.Run("plain", func(b *testing.B) { hostCall(b, n, false) })
			b.Run("summaries", func(b *testing.B) { hostCall(b, n, true) })
		})
	}
}

func hostCall(b *testing.B, n int, summaries bool) {
	const budget = 8192
	tpl, err := template.Parse(TemplateJSON(budget), "bench")
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	store := learned.NewFileStore(filepath.Join(dir, "state.json"))
	eng, err := contextasm.New(contextasm.Config{State: store, StateOptions: contextasm.StateOptions{LocalGlobal: true}})
	if err != nil {
		b.Fatal(err)
	}
	defer eng.Close()
	decls := append(Generate(n, 1), toolConversation(hostTurns)...)
	if err := eng.Declare(decls...); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	req := contextasm.Request{Template: tpl, Now: Epoch, SessionID: Session, UserID: User, Format: chat.FormatOpenAI}
	first, err := eng.Assemble(ctx, req)
	if err != nil {
		b.Fatal(err)
	}
	answer := hostAnswer(first.Dump())
	var declared []declare.Declaration // the turns and summaries, for priompt's store
	nsum, turn, bodyBytes := 0, 0, 0
	runtime.GC() // the setup's garbage is not the calls' to collect
	b.ReportAllocs()
	start := cputime.Process()
	for b.Loop() {
		turn++
		at := Epoch.Add(time.Duration(turn) * time.Second)
		d := Turn(turn)
		d.LastModified = &at
		if err := eng.Declare(d); err != nil {
			b.Fatal(err)
		}
		r := req
		r.Now = at
		res, err := eng.Assemble(ctx, r)
		if err != nil {
			b.Fatal(err)
		}
		body := res.Body() // encoded once, by the assembly
		bodyBytes += len(body)
		if _, err := eng.Feedback(ctx, res, answer); err != nil {
			b.Fatal(err)
		}
		declared = append(declared, d)
		if summaries {
			for _, run := range res.SummarizeCandidates {
				nsum++
				s := declare.Declaration{RequestID: fmt.Sprintf("sum-%05d", nsum), MemoryType: declare.History, Scope: declare.ScopeSession,
					SessionID: Session, LastModified: &at, Replaces: slices.Clone(run.IDs),
					Content: fmt.Sprintf("SUMMARY of %d earlier turns: rates, fees and repayment dates, answered from the rate sheet.", len(run.IDs))}
				if err := eng.Declare(s); err != nil {
					b.Fatal(err)
				}
				declared = append(declared, s)
			}
		}
	}
	reportCPU(b, cputime.Process()-start)
	b.ReportMetric(float64(bodyBytes)/float64(b.N), "body-B/op")
	if summaries {
		b.ReportMetric(float64(nsum)/float64(b.N), "summaries/op")
	}
	if os.Getenv("CONTEXTASM_PRIOMPT") != "" {
		opMS := float64(b.Elapsed().Nanoseconds()) / float64(b.N) / 1e6
		// A peer that cannot render the blocks (priompt where the stack
		// cannot be raised: priomptMS) leaves the ratio out, not the
		// call's figures.
		if ms, err := priomptMS(dir, budget, append(decls, declared...)); err != nil {
			b.Logf("priompt: %v: no ratio", err)
		} else {
			b.ReportMetric(ms, "priompt-ms")
			b.ReportMetric(ms/opMS, "priompt-x")
		}
	}
}

// hostAnswer is an answer citing two of the context and external blocks res
// kept, as the conversation bench's answers do.
func hostAnswer(res contextasm.Dump) string {
	var ids []string
	for _, s := range res.Sections {
		for _, bl := range s.Blocks {
			if bl.Status != outcome.StatusDropped && (bl.MemoryType == string(declare.Context) || bl.MemoryType == string(declare.External)) {
				ids = append(ids, bl.RequestID)
			}
		}
	}
	slices.Sort(ids)
	answer := "ASSISTANT: "
	for _, id := range ids[:min(2, len(ids))] {
		answer += fmt.Sprintf("<memory_ref id=%q/> ", id)
	}
	return answer + "The annual percentage rate includes the opening fee, so it is higher than the nominal rate."
}

// priomptMS renders decls with priompt (bench/peers/render.mjs, the
// workload's template for budget) and returns its median ms per render,
// 5 renders after a warm-up. The blocks are the store's after the measured
// calls; priompt renders them as text, history and tool results alike.
func priomptMS(dir string, budget int, decls []declare.Declaration) (float64, error) {
	wl := filepath.Join(dir, "priompt")
	if err := os.MkdirAll(wl, 0o755); err != nil {
		return 0, err
	}
	if err := os.WriteFile(filepath.Join(wl, "template.json"), TemplateJSON(budget), 0o644); err != nil {
		return 0, err
	}
	f, err := os.Create(filepath.Join(wl, "memories.jsonl"))
	if err != nil {
		return 0, err
	}
	err = WriteJSONL(f, decls)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return 0, err
	}
	// priompt builds its element tree by recursion, which at 200,000
	// blocks overflows Node's default stack and the system's usual 8 MB:
	// it runs with both raised (--stack-size is in KiB), or not at all.
	cmd := exec.Command("sh", "-c", `ulimit -s unlimited && exec node --stack-size=200000 "$@"`, "sh",
		filepath.Join("peers", "render.mjs"), "-w", wl, "--budgets", fmt.Sprint(budget), "--runs", "5",
		"--peers", "priompt", "--now", Epoch.Format(time.RFC3339), "--session", Session, "--user", User)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return 0, fmt.Errorf("%w: %s (install the peers: npm install --no-save --ignore-scripts in bench/peers)", err, stderr.Bytes())
	}
	var rep struct {
		Results []struct {
			MS           float64 `json:"ms"`
			WithinBudget bool    `json:"within_budget"`
		} `json:"results"`
	}
	if err := json.Unmarshal(out, &rep); err != nil {
		return 0, err
	}
	if len(rep.Results) != 1 || !rep.Results[0].WithinBudget {
		return 0, fmt.Errorf("render.mjs: %s", out)
	}
	return rep.Results[0].MS, nil
}
