package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/contextasm/contextasm/chat"
	"github.com/contextasm/contextasm/contextasm"
	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/internal/bpe"
	"github.com/contextasm/contextasm/outcome"
)

// benchReport is `bench --format json` (see docs/cli.md).
type benchReport struct {
	Encoding string        `json:"encoding"`
	Blocks   int           `json:"blocks"`
	Runs     int           `json:"runs"`
	Results  []benchResult `json:"results"`
}

type benchResult struct {
	Budget             int     `json:"budget"`
	TotalTokens        int     `json:"total_tokens"`
	Kept               int     `json:"kept"`
	Cut                int     `json:"cut"`
	Dropped            int     `json:"dropped"`
	ColdMS             float64 `json:"cold_ms"`
	WarmMS             float64 `json:"warm_ms"`
	TurnMS             float64 `json:"turn_ms"`
	WarmAllocs         uint64  `json:"warm_allocs"`
	TokenizerCallsWarm int64   `json:"tokenizer_calls_warm"`
	TokenizerCallsTurn int64   `json:"tokenizer_calls_turn"`

	sections []sectionCounts
}

// sectionCounts is what the text report says of a section: not its rows,
// which would keep a whole store alive from one run to the next.
type sectionCounts struct {
	name               string
	kept, cut, dropped int
	used, max          int
}

// callCounter counts the calls that reach the real tokenizer.
type callCounter struct {
	tok   *bpe.Tokenizer
	calls atomic.Int64
}

func (c *callCounter) Count(s string) int         { c.calls.Add(1); return c.tok.Count(s) }
func (c *callCounter) Cut(s string, n int) string { c.calls.Add(1); return c.tok.Cut(s, n) }
func (c *callCounter) LineAdditive() bool         { return c.tok.LineAdditive() }
func (c *callCounter) LowerBounded() bool         { return c.tok.LowerBounded() }
func (c *callCounter) PlanCuts(s string) (bpe.CutPlan, bool) {
	c.calls.Add(1)
	return c.tok.PlanCuts(s)
}
func (c *callCounter) CutPlanned(p bpe.CutPlan, s string, n int) string {
	c.calls.Add(1)
	return c.tok.CutPlanned(p, s, n)
}
func (c *callCounter) JoinDelta(text string, cuts []int) (int, bool) {
	c.calls.Add(1)
	return c.tok.JoinDelta(text, cuts)
}
func (c *callCounter) take() int64 { return c.calls.Swap(0) }

// The bench must count as the engine does with its own tokenizer.
var (
	_ interface{ LineAdditive() bool } = (*callCounter)(nil)
	_ interface{ LowerBounded() bool } = (*callCounter)(nil)
	_ interface {
		JoinDelta(string, []int) (int, bool)
	} = (*callCounter)(nil)
)

func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("bench", stdout)
	var inf inputFlags
	var reqf requestFlags
	var query queryFlags
	inf.register(fs)
	budgets := fs.String("budgets", "", "comma-separated budgets to try (default: the template's)")
	runs := fs.Int("runs", 5, "runs per measurement; times are medians")
	reqf.register(fs)
	query.register(fs)
	format := fs.String("format", "text", "output format: text or json")
	turns := fs.Int("turns", 0, "simulate a conversation of this many calls and report its prompt-cache figures and per-call costs instead of timings")
	reqFormat := fs.String("request-format", "text", "with --turns: the request each call makes: text, or openai, anthropic or responses (a chat API's body, encoded each call; every other call a tool call and its result)")
	summaries := fs.Bool("summaries", false, "with --turns: after each call, declare a summary of each run of history it dropped (summarize_candidates), as a host would")
	clear := fs.String("clear", "", "with --turns: on or off: clear older tool results in the history sections (clear_tool_results), overriding the template (default: as the template says)")
	state := fs.String("state", "", "with --turns: learned state (trust, heat, the conversation's decisions) of the host's run: a file, or redis://…; read at the start, written as it learns")
	var sources sourceOptions // collected once, before measuring (sources.go)
	sources.register(fs)
	if err := parse(fs, args, 0); err != nil {
		return err
	}
	if inf.template == "" || (len(inf.memories) == 0 && !sources.any()) {
		return usagef("bench: -t TEMPLATE and at least one -m MEMORIES (or a source: --mcp, --mcp-url, --files) are required")
	}
	if *format != "text" && *format != "json" {
		return usagef("bench: --format must be text or json (got %q)", *format)
	}
	if *turns < 0 {
		return usagef("bench: --turns must not be negative (got %d)", *turns)
	}
	if *runs < 1 {
		return usagef("bench: --runs must be at least 1 (got %d)", *runs)
	}
	host, err := hostFlags(*turns, *reqFormat, *summaries, *clear, *state)
	if err != nil {
		return err
	}
	now, err := reqf.instant("bench")
	if err != nil {
		return err
	}
	// Timings declare the memories into each run's Engine again, read
	// from their files (benchinput.go); a conversation holds them.
	memPaths := inf.memories
	if *turns == 0 {
		memPaths = nil
	}
	in, err := loadInputs(inf.template, memPaths, 0)
	if err != nil {
		return err
	}
	mems := &benchMemories{whole: true}
	if *turns == 0 && len(inf.memories) > 0 {
		if mems, err = loadBenchMemories(inf.memories); err != nil {
			return err
		}
	}
	if sources.any() {
		sources.stderr = stderr
		collected, err := sources.collect(ctx)
		if err != nil {
			return err
		}
		in.decls = append(in.decls, collected...)
	}
	mems.extra = in.decls
	list, err := parseBudgets(*budgets, in.tpl.Budget())
	if err != nil {
		return err
	}
	if *turns > 0 {
		req := reqf.request(nil, now)
		if err := query.apply(&req, "bench"); err != nil {
			return err
		}
		if in.tpl, err = withClear(in.tpl, host.clear); err != nil {
			return err
		}
		if *state != "" {
			store, err := openState(*state)
			if err != nil {
				return err
			}
			host.store = store
			err = benchConversation(ctx, stdout, *format, in, list, *turns, req, host)
			if cerr := store.Close(); err == nil && cerr != nil {
				err = fmt.Errorf("bench: --state: %w", cerr)
			}
			return err
		}
		return benchConversation(ctx, stdout, *format, in, list, *turns, req, host)
	}
	if in.tpl.TokenizerFile() != "" || in.tpl.Approximate() {
		return usagef("bench: measures the built-in encodings (o200k_base, cl100k_base); the template counts with %s", in.tpl.Definition().Encoding)
	}
	// The encoder is built once per process, outside every measurement:
	// "cold" means an empty token-count cache, not an unloaded encoder.
	tok, err := bpe.Load(in.tpl.Encoding())
	if err != nil {
		return err
	}
	report := benchReport{Encoding: in.tpl.Encoding(), Blocks: mems.len(), Runs: *runs}
	for _, b := range list {
		tpl, err := in.tpl.WithBudget(b)
		if err != nil {
			return err
		}
		req := reqf.request(tpl, now)
		if err := query.apply(&req, "bench"); err != nil {
			return err
		}
		r, err := benchBudget(ctx, tok, mems, req, *runs)
		if err != nil {
			return fmt.Errorf("bench: budget %d: %w", b, err)
		}
		report.Results = append(report.Results, r)
	}
	if *format == "json" {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(report)
	}
	writeBenchText(stdout, report)
	return nil
}

// hostFlags checks the flags of the simulated host, which need --turns.
func hostFlags(turns int, reqFormat string, summaries bool, clear, state string) (hostOptions, error) {
	var host hostOptions
	if reqFormat != "text" {
		f, err := chat.ParseFormat(reqFormat)
		if err != nil {
			return host, usagef("bench: --request-format must be text, openai, anthropic or responses (got %q)", reqFormat)
		}
		host.format = f
	}
	if clear != "" && clear != "on" && clear != "off" {
		return host, usagef("bench: --clear must be on or off (got %q)", clear)
	}
	host.summaries, host.clear = summaries, clear
	if turns == 0 {
		for _, f := range []struct {
			name string
			set  bool
		}{{"--request-format", host.format != 0}, {"--summaries", summaries}, {"--clear", clear != ""}, {"--state", state != ""}} {
			if f.set {
				return host, usagef("bench: %s needs --turns N (it shapes the simulated conversation's calls)", f.name)
			}
		}
	}
	return host, nil
}

// benchBudget measures one budget: cold (fresh engine and cache), warm
// (nothing changed) and turn (one new history block declared, then
// assembled; the time covers both), each the median of runs.
func benchBudget(ctx context.Context, tok *bpe.Tokenizer, mems *benchMemories, req contextasm.Request, runs int) (benchResult, error) {
	var r benchResult
	var cold, warm, turn []time.Duration
	for run := range runs {
		// Each run starts from a collected heap: the last run's Engine
		// is not the next one's garbage to collect (nor its peak memory).
		// Twice: the Engine's pooled scratch outlives it by one collection.
		runtime.GC()
		runtime.GC()
		cc := &callCounter{tok: tok}
		eng, err := contextasm.New(contextasm.Config{Counter: cc})
		if err != nil {
			return r, err
		}
		if err := mems.declare(eng); err != nil {
			return r, err
		}
		start := time.Now()
		res, err := eng.Assemble(ctx, req)
		cold = append(cold, time.Since(start))
		if err != nil {
			return r, err
		}
		cc.take()

		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		start = time.Now()
		if _, err := eng.Assemble(ctx, req); err != nil {
			return r, err
		}
		warm = append(warm, time.Since(start))
		runtime.ReadMemStats(&after)
		warmCalls := cc.take()

		start = time.Now()
		if err := eng.Declare(benchTurn(req, run)); err != nil {
			return r, err
		}
		if _, err := eng.Assemble(ctx, req); err != nil {
			return r, err
		}
		turn = append(turn, time.Since(start))
		turnCalls := cc.take()

		if run == 0 {
			// The section counts need the rows of every block: a full
			// assembly of the whole store, made here from a collected
			// heap, as each run starts from one, not on top of the
			// measured assemblies' garbage.
			runtime.GC()
			r = benchResult{Budget: req.Template.Budget(), TotalTokens: res.TotalTokens,
				WarmAllocs: after.Mallocs - before.Mallocs, TokenizerCallsWarm: warmCalls, TokenizerCallsTurn: turnCalls}
			for _, s := range res.Sections() {
				sc := sectionCounts{name: s.Name, used: s.UsedTokens, max: s.MaxTokens}
				for _, b := range s.Blocks {
					switch b.Status {
					case outcome.StatusKept:
						sc.kept++
					case outcome.StatusCut:
						sc.cut++
					default:
						sc.dropped++
					}
				}
				r.Kept, r.Cut, r.Dropped = r.Kept+sc.kept, r.Cut+sc.cut, r.Dropped+sc.dropped
				r.sections = append(r.sections, sc)
			}
		}
	}
	r.ColdMS, r.WarmMS, r.TurnMS = medianMS(cold), medianMS(warm), medianMS(turn)
	return r, nil
}

// benchTurn is the history block a turn adds: recent, weighty, in the
// request's session.
func benchTurn(req contextasm.Request, run int) declare.Declaration {
	w := 0.95
	lm := req.Now
	d := declare.Declaration{
		RequestID: fmt.Sprintf("bench-turn-%d", run), MemoryType: declare.History, Scope: declare.ScopeGlobal,
		SemanticWeight: &w, LastModified: &lm,
		Content: "USER: one more question about the fees, the rate and when the money arrives?",
	}
	if req.SessionID != "" {
		d.Scope, d.SessionID = declare.ScopeSession, req.SessionID
	}
	return d
}

func medianMS(ds []time.Duration) float64 {
	s := slices.Clone(ds)
	slices.Sort(s)
	m := s[len(s)/2]
	if len(s)%2 == 0 {
		m = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return float64(m.Microseconds()) / 1000
}

func writeBenchText(w io.Writer, rep benchReport) {
	fmt.Fprintf(w, "%d blocks, %s, median of %d runs (cold: empty token cache, encoder loaded; turn: one history block declared and assembled)\n\n", rep.Blocks, rep.Encoding, rep.Runs)
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "budget\ttokens\tkept\tcut\tdropped\tcold ms\twarm ms\tturn ms\twarm allocs\tcalls warm\tcalls turn\t")
	for _, r := range rep.Results {
		fmt.Fprintf(tw, "%d\t%d\t%d\t%d\t%d\t%.3f\t%.3f\t%.3f\t%d\t%d\t%d\t\n", r.Budget, r.TotalTokens, r.Kept, r.Cut, r.Dropped,
			r.ColdMS, r.WarmMS, r.TurnMS, r.WarmAllocs, r.TokenizerCallsWarm, r.TokenizerCallsTurn)
	}
	tw.Flush()
	for _, r := range rep.Results {
		fmt.Fprintf(w, "\nbudget %d, per section (kept/cut/dropped, used of cap):\n", r.Budget)
		tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', 0)
		for _, s := range r.sections {
			fmt.Fprintf(tw, "  %s\t%d/%d/%d\t%d of %d\n", s.name, s.kept, s.cut, s.dropped, s.used, s.max)
		}
		tw.Flush()
	}
}

// parseBudgets reads --budgets, a comma-separated list of positive
// numbers; empty, it is the template's budget def.
func parseBudgets(s string, def int) ([]int, error) {
	if s == "" {
		return []int{def}, nil
	}
	var list []int
	for _, f := range strings.Split(s, ",") {
		b, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || b <= 0 {
			return nil, usagef("bench: --budgets: %q is not a positive number", f)
		}
		list = append(list, b)
	}
	return list, nil
}
