package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/contextasm/contextasm/internal/bpe"
	"github.com/contextasm/contextasm/outcome"

	"github.com/contextasm/contextasm/contextasm"
	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/feedback"
	"github.com/contextasm/contextasm/truncate"
)

// The conversation bench (`bench --turns N`) measures how much of each
// rendering a model provider's prefix cache can reuse from the previous
// call of the same conversation, and what that saves under the providers'
// published prices. See docs/conversations.md.

// Prompt-cache prices, as fractions of the uncached input price.
const (
	anthropicRead  = 0.1  // a cached prefix read
	anthropicWrite = 1.25 // tokens written to the cache
	openaiRead     = 0.5  // a cached prefix read; no write premium
	cacheMinimum   = 1024 // neither provider caches a shorter prefix
	openaiStep     = 128  // OpenAI's cache hits grow in steps of 128 tokens
	turnInterval   = 3 * time.Minute
	hostInterval   = time.Minute // a chat format's calls (--request-format)
	editEvery      = 10          // a document is edited every editEvery calls
)

// conversationReport is `bench --turns N --format json`.
type conversationReport struct {
	Encoding string `json:"encoding"`
	Blocks   int    `json:"blocks"`
	Turns    int    `json:"turns"`
	Session  string `json:"session"`
	// RequestFormat is --request-format: text, openai, anthropic or
	// responses; Clear is --clear (empty: the template's).
	RequestFormat string               `json:"request_format"`
	Clear         string               `json:"clear,omitempty"`
	Results       []conversationResult `json:"results"`
}

// conversationResult is one budget's figures: the conversation assembled
// as a host would (sticky, with the previous decisions) and the same
// conversation re-decided from scratch on every call.
type conversationResult struct {
	Budget int `json:"budget"`
	Turns  int `json:"turns"`
	convFigures
	ScratchStableFraction float64 `json:"scratch_stable_fraction"`
	ScratchCostAnthropic  float64 `json:"scratch_cost_anthropic"`
	ScratchCostOpenAI     float64 `json:"scratch_cost_openai"`
	// Checks, over every call of the sticky run.
	MaxTokens         int `json:"max_tokens"`
	OverBudget        int `json:"over_budget"`
	RequiredMissing   int `json:"required_missing"`
	NewestTurnMissing int `json:"newest_turn_missing"`
	hostFigures
}

// hostFigures are what the host's calls of the sticky run cost and what
// their history held (benchhost.go).
type hostFigures struct {
	// TurnMS is the median wall time of a call's engine work: declaring
	// the call's turns, assembling, encoding the body (a chat format),
	// feeding the answer back, declaring it and the summaries; TurnMSP99
	// the 99th percentile.
	TurnMS    float64 `json:"turn_ms"`
	TurnMSP99 float64 `json:"turn_ms_p99"`
	// TurnMSFirst and TurnMSLast are the median wall times of the first
	// and the last tenth of the calls (one call at least): how a call's
	// cost grows with the conversation.
	TurnMSFirst float64 `json:"turn_ms_first_tenth"`
	TurnMSLast  float64 `json:"turn_ms_last_tenth"`
	// TurnCPUMS is the process's CPU time of the same work, a call on
	// average (0 where the platform does not say).
	TurnCPUMS float64 `json:"turn_cpu_ms"`
	// Allocs are the heap allocations of the same work, a call on average.
	Allocs float64 `json:"allocs"`
	// TurnsRepresented is, a call on average, the history blocks in the
	// context (whole, cut or with their tool result cleared) and those a
	// summary in it stands for.
	TurnsRepresented float64 `json:"turns_represented"`
	// Cleared counts the cleared notices over every call.
	Cleared int `json:"cleared"`
	// ToolExchanges counts the tool calls declared (each with its result).
	ToolExchanges int `json:"tool_exchanges"`
	// Summaries counts the summaries declared (--summaries); SummariesUsed,
	// over every call, the summaries in the context.
	Summaries     int `json:"summaries"`
	SummariesUsed int `json:"summaries_used"`
	// BodyBytes is the encoded request body's size, a call on average (0
	// for the text format).
	BodyBytes float64 `json:"body_bytes"`
}

// convFigures are one run's cache figures.
type convFigures struct {
	StableFraction float64 `json:"stable_fraction"`
	CostAnthropic  float64 `json:"cost_anthropic"`
	CostOpenAI     float64 `json:"cost_openai"`
}

// convCall is what one call of the simulated conversation measured.
type convCall struct {
	tokens, stable         int
	counted                int // the engine's count, which the budget bounds
	overBudget, reqMissing bool
	newestMissing          bool
	represented, cleared   int
	summariesUsed          int
}

// convRun is one simulated conversation: its calls, and what the host's
// engine work cost in each.
type convRun struct {
	calls         []convCall
	wall, cpu     []time.Duration
	allocs        uint64
	bodyBytes     int
	toolExchanges int
	summaries     int
}

// conversation is the simulated host: an engine, the workload, and the
// turns it has declared so far.
type conversation struct {
	tok   truncate.Counter
	req   contextasm.Request
	docs  map[string]declare.Declaration // context and external blocks by id, for edits
	fresh bool
	host  hostOptions
	nsum  int // summaries declared
}

// runConversations measures every budget, sticky and from scratch.
func runConversations(ctx context.Context, w io.Writer, format string, tok truncate.Counter, in *inputs, budgets []int, turns int, req contextasm.Request, host hostOptions) error {
	rep := conversationReport{Encoding: in.tpl.Encoding(), Blocks: len(in.decls), Turns: turns, Session: req.SessionID, RequestFormat: requestFormatName(host.format), Clear: host.clear}
	for _, b := range budgets {
		tpl, err := in.tpl.WithBudget(b)
		if err != nil {
			return err
		}
		req.Template = tpl
		r := conversationResult{Budget: b, Turns: turns}
		run, err := simulate(ctx, tok, in.decls, req, turns, false, host)
		if err != nil {
			return fmt.Errorf("bench: budget %d: %w", b, err)
		}
		r.convFigures = figures(run.calls)
		r.hostFigures = run.hostFigures()
		for _, c := range run.calls {
			r.MaxTokens = max(r.MaxTokens, c.counted)
			if c.overBudget {
				r.OverBudget++
			}
			if c.reqMissing {
				r.RequiredMissing++
			}
			if c.newestMissing {
				r.NewestTurnMissing++
			}
		}
		scratchHost := host
		scratchHost.store, scratchHost.onBody = nil, nil // the learned state is the host's run's
		scratch, err := simulate(ctx, tok, in.decls, req, turns, true, scratchHost)
		if err != nil {
			return fmt.Errorf("bench: budget %d, from scratch: %w", b, err)
		}
		f := figures(scratch.calls)
		r.ScratchStableFraction, r.ScratchCostAnthropic, r.ScratchCostOpenAI = f.StableFraction, f.CostAnthropic, f.CostOpenAI
		rep.Results = append(rep.Results, r)
	}
	if format == "json" {
		return writeJSON(w, rep)
	}
	writeConversationText(w, rep)
	return nil
}

// simulate runs a turns-call conversation on a fresh engine: before each
// call the host declares the user's new turn (with a chat format, every
// other call also an assistant tool call and its result; every editEvery
// calls, an edited document), assembles with now advanced by the
// interval, encodes the body, and after it feeds back the assistant's
// answer, which cites two of the documents the call kept (so their trust
// moves), declares it and, with host.summaries, a summary of each run the
// call offered (Result.SummarizeCandidates). fresh asks for a decision
// from scratch on every call. The host's engine work is timed; the
// measuring between (the dump, the tokenizer's counts) is not.
func simulate(ctx context.Context, tok truncate.Counter, decls []declare.Declaration, req contextasm.Request, turns int, fresh bool, host hostOptions) (*convRun, error) {
	cfg := contextasm.Config{Encoding: req.Template.Encoding()}
	if host.store != nil {
		cfg.State = host.store
		// A bench is no replica: its blocks stay its own.
		cfg.StateOptions = contextasm.StateOptions{LocalGlobal: true, Timeout: stateTimeout}
	}
	eng, err := contextasm.New(cfg)
	if err != nil {
		return nil, err
	}
	defer eng.Close()
	if err := eng.Declare(decls...); err != nil {
		return nil, err
	}
	conv := &conversation{tok: tok, req: req, docs: map[string]declare.Declaration{}, fresh: fresh, host: host}
	for _, d := range decls {
		if d.MemoryType == declare.Context || d.MemoryType == declare.External {
			conv.docs[d.RequestID] = d
		}
	}
	interval := turnInterval
	if host.format != 0 {
		interval = hostInterval
	}
	rng := rand.New(rand.NewPCG(7, 11)) // the same conversation for every run
	start := req.Now
	var prev *contextasm.Dump
	var prevText string
	run := &convRun{calls: make([]convCall, 0, turns)}
	var t hostTimer
	for i := range turns {
		now := start.Add(time.Duration(i) * interval)
		newDecls := []declare.Declaration{conv.userTurn(i, now)}
		if host.format != 0 && i%2 == 1 {
			newDecls = append(newDecls, conv.toolExchange(i, now)...)
			run.toolExchanges++
		}
		if i%editEvery == editEvery-1 && prev != nil {
			if d, ok := conv.edit(prev, rng, now); ok {
				newDecls = append(newDecls, d)
			}
		}
		r := req
		r.Now = now
		r.Fresh = fresh
		r.Format = host.format

		t.start()
		if err := eng.Declare(newDecls...); err != nil {
			return nil, err
		}
		res, err := eng.Assemble(ctx, r)
		if err != nil {
			return nil, fmt.Errorf("call %d: %w", i+1, err)
		}
		body := res.Body() // a chat format's, encoded by the assembly
		t.pause()

		run.bodyBytes += len(body)
		if host.onBody != nil && body != nil {
			host.onBody(i, body)
		}
		d := res.Dump()
		var call convCall
		if host.format != 0 {
			text := chatText(res.Messages())
			call = conv.measureChat(prevText, text, i > 0, &d, newDecls[0].RequestID)
			prevText = text
		} else {
			call = conv.measure(prev, &d, newDecls[0].RequestID)
		}
		call.represented, call.cleared, call.summariesUsed = historyFigures(&d)
		run.calls = append(run.calls, call)
		answer := conv.answer(i, &d, rng)
		sums := conv.summaries(res, now)
		run.summaries += len(sums)

		t.resume()
		if _, err := eng.Feedback(ctx, res, answer); err != nil && !errors.Is(err, feedback.ErrConstraintViolation) {
			return nil, fmt.Errorf("call %d: feedback: %w", i+1, err)
		}
		if err := eng.Declare(conv.answerTurn(i, answer, now)); err != nil {
			return nil, err
		}
		if len(sums) > 0 {
			if err := eng.Declare(sums...); err != nil {
				return nil, fmt.Errorf("call %d: the summaries: %w", i+1, err)
			}
		}
		t.stop()
		prev = &d
	}
	run.wall, run.cpu, run.allocs = t.wall, t.cpu, t.allocs
	if host.store != nil {
		// What the run learned reaches the store before the next one
		// (or the command's end) reads it.
		if err := eng.Close(); err != nil {
			return nil, fmt.Errorf("bench: --state: %w", err)
		}
	}
	return run, nil
}

// userPhrases and answerPhrases make the turns' content.
var (
	userPhrases = [...]string{
		"What is the total cost if I repay the loan in 36 months instead of 48?",
		"Can you show the fees as a table, with the date each one is charged?",
		"My employer pays on the 25th; does that change the first instalment?",
		"Is the rate fixed for the whole term, or only for the first year?",
		"我可以提前还款吗？需要支付违约金吗？",
		"Posso pagar antecipadamente sem comissão?",
	}
	answerPhrases = [...]string{
		"The annual percentage rate includes the opening fee, so it is higher than the nominal rate.",
		"Repaying over 36 months raises the monthly instalment but lowers the total interest paid.",
		"Your debt-to-income ratio stays below the 43% limit with the new instalment.",
		"Early repayment is allowed; the fee is capped at 0.5% of the amount repaid.",
		"The first instalment is due one month after the money arrives in your account.",
		"All figures assume the rate sheet of this month; they change if it is revised.",
	}
)

// answerTurn is call i's answer as the host declares it: an assistant
// message in a chat format, after the call's turns.
func (c *conversation) answerTurn(i int, answer string, now time.Time) declare.Declaration {
	if c.host.format == 0 {
		return c.turn(fmt.Sprintf("conv-%03d-assistant", i+1), answer, now.Add(time.Minute))
	}
	d := c.turn(fmt.Sprintf("conv-%03d-assistant", i+1), answer, now.Add(30*time.Second))
	d.Role = declare.RoleAssistant
	return d
}

func (c *conversation) turn(id, content string, lm time.Time) declare.Declaration {
	d := declare.Declaration{RequestID: id, MemoryType: declare.History, Scope: declare.ScopeGlobal,
		LastModified: &lm, Content: content}
	if c.req.SessionID != "" {
		d.Scope, d.SessionID = declare.ScopeSession, c.req.SessionID
	}
	return d
}

// userTurn is call i's user message: one or two questions.
func (c *conversation) userTurn(i int, now time.Time) declare.Declaration {
	text := "USER: " + userPhrases[i%len(userPhrases)]
	if i%3 == 2 {
		text += " " + userPhrases[(i+1)%len(userPhrases)]
	}
	return c.turn(fmt.Sprintf("conv-%03d-user", i+1), text, now)
}

// answer is call i's assistant message: it cites two documents res kept,
// in its first third, then explains in three to five sentences.
func (c *conversation) answer(i int, res *contextasm.Dump, rng *rand.Rand) string {
	docs := keptDocs(res)
	var b strings.Builder
	b.WriteString("ASSISTANT: ")
	for k := 0; k < 2 && len(docs) > 0; k++ {
		j := rng.IntN(len(docs))
		fmt.Fprintf(&b, "<memory_ref id=%q/> ", docs[j])
		docs = slices.Delete(docs, j, j+1)
	}
	for k := range 3 + i%3 {
		if k > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(answerPhrases[(i+k)%len(answerPhrases)])
	}
	return b.String()
}

// edit returns a document the previous call kept, revised.
func (c *conversation) edit(prev *contextasm.Dump, rng *rand.Rand, now time.Time) (declare.Declaration, bool) {
	docs := keptDocs(prev)
	if len(docs) == 0 {
		return declare.Declaration{}, false
	}
	d := c.docs[docs[rng.IntN(len(docs))]]
	d.Content += fmt.Sprintf(" Revised %s: the figures above were checked again.", now.Format(time.RFC3339))
	lm := now
	d.LastModified = &lm
	c.docs[d.RequestID] = d
	return d, true
}

// keptDocs lists, by request_id, the context and external blocks res kept
// whole or cut.
func keptDocs(res *contextasm.Dump) []string {
	var ids []string
	for _, s := range res.Sections {
		for _, b := range s.Blocks {
			if b.Status != outcome.StatusDropped && (b.MemoryType == string(declare.Context) || b.MemoryType == string(declare.External)) {
				ids = append(ids, b.RequestID)
			}
		}
	}
	slices.Sort(ids)
	return ids
}

// measure checks a call's rendering and measures the prefix it shares
// with the previous one: the longest common prefix of the two texts, up to
// the end of its last whole line (a provider caches tokens, and the token
// that straddles the first differing byte cannot be reused), counted by the
// real tokenizer.
func (c *conversation) measure(prev, res *contextasm.Dump, newest string) convCall {
	call := convCall{tokens: c.tok.Count(res.Text)}
	call.counted = call.tokens
	call.overBudget = call.tokens > res.Budget || call.tokens != res.TotalTokens
	checkCall(&call, res, newest)
	if prev != nil {
		call.stable = c.tok.Count(res.Text[:sharedLines(prev.Text, res.Text)])
	}
	return call
}

// checkCall sets what call says of res's blocks: a required one missing,
// the newest turn missing.
func checkCall(call *convCall, res *contextasm.Dump, newest string) {
	call.newestMissing = true
	for _, s := range res.Sections {
		for _, b := range s.Blocks {
			if b.Required && b.Status != outcome.StatusKept {
				call.reqMissing = true
			}
			if b.RequestID == newest && b.Status != outcome.StatusDropped {
				call.newestMissing = false
			}
		}
	}
}

// sharedLines returns the length of the longest common prefix of a and b
// that ends with a newline (or 0).
func sharedLines(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return strings.LastIndexByte(a[:n], '\n') + 1
}

// figures prices a run's calls. Anthropic: a prefix of at least
// cacheMinimum tokens is read at anthropicRead, and the rest of the
// rendering is written to the cache at anthropicWrite (the host marks the
// end of the context as a breakpoint, so the next call can read it); a
// rendering shorter than cacheMinimum is not cached at all. OpenAI: a
// prefix of at least cacheMinimum tokens, in steps of openaiStep, is read
// at openaiRead; the rest costs the full price. Costs are fractions of the
// same calls' price without any cache.
func figures(calls []convCall) convFigures {
	var total, stable, anthropic, openai float64
	for _, c := range calls {
		t, s := float64(c.tokens), float64(c.stable)
		total += t
		stable += s
		switch {
		case c.stable >= cacheMinimum:
			anthropic += anthropicRead*s + anthropicWrite*(t-s)
		case c.tokens >= cacheMinimum:
			anthropic += anthropicWrite * t
		default:
			anthropic += t
		}
		if c.stable >= cacheMinimum {
			hit := float64(cacheMinimum + (c.stable-cacheMinimum)/openaiStep*openaiStep)
			openai += openaiRead*hit + (t - hit)
		} else {
			openai += t
		}
	}
	if total == 0 {
		return convFigures{}
	}
	return convFigures{StableFraction: stable / total, CostAnthropic: anthropic / total, CostOpenAI: openai / total}
}

func writeConversationText(w io.Writer, rep conversationReport) {
	interval, calls := turnInterval, "a user and an assistant turn a call"
	if rep.RequestFormat != "text" {
		interval, calls = hostInterval, "a user turn, every other call a tool call and its result, and an answer a call"
	}
	fmt.Fprintf(w, "%d blocks, %s, %s bodies, a %d-call conversation in session %q (now +%s a call, %s,\n", rep.Blocks, rep.Encoding, rep.RequestFormat, rep.Turns, rep.Session, interval, calls)
	fmt.Fprintf(w, "two citations fed back a call, a document edited every %d calls); costs are fractions of no cache\n", editEvery)
	if rep.Clear != "" {
		fmt.Fprintf(w, "clearing of tool results: %s (--clear)\n", rep.Clear)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "budget\tstable\tanthropic\topenai\tscratch stable\tscratch anthropic\tscratch openai\tmax tokens\tover budget\trequired missing\tnewest turn missing\t")
	for _, r := range rep.Results {
		fmt.Fprintf(tw, "%d\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%d\t%d\t%d\t%d\t\n", r.Budget, r.StableFraction, r.CostAnthropic, r.CostOpenAI,
			r.ScratchStableFraction, r.ScratchCostAnthropic, r.ScratchCostOpenAI, r.MaxTokens, r.OverBudget, r.RequiredMissing, r.NewestTurnMissing)
	}
	tw.Flush()
	fmt.Fprintf(w, "\nper call (the host's engine work: declare, assemble, encode the body, feed back, declare the answer and summaries):\n\n")
	tw = tabwriter.NewWriter(w, 2, 8, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "budget\tturn ms\tturn ms p99\tfirst tenth\tlast tenth\tturn cpu ms\tallocs\tturns represented\tcleared\ttool exchanges\tsummaries\tsummaries used\tbody bytes\t")
	for _, r := range rep.Results {
		fmt.Fprintf(tw, "%d\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.0f\t%.1f\t%d\t%d\t%d\t%d\t%.0f\t\n", r.Budget, r.TurnMS, r.TurnMSP99, r.TurnMSFirst, r.TurnMSLast, r.TurnCPUMS, r.Allocs,
			r.TurnsRepresented, r.Cleared, r.ToolExchanges, r.Summaries, r.SummariesUsed, r.BodyBytes)
	}
	tw.Flush()
}

// benchConversation is `bench --turns N`: the session defaults to the
// generated workload's (bench/genworkload), whose session blocks it sees.
func benchConversation(ctx context.Context, w io.Writer, format string, in *inputs, budgets []int, turns int, req contextasm.Request, host hostOptions) error {
	if req.SessionID == "" {
		req.SessionID = "s-bench"
	}
	tok, err := bpe.Load(in.tpl.Encoding())
	if err != nil {
		return err
	}
	return runConversations(ctx, w, format, tok, in, budgets, turns, req, host)
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
