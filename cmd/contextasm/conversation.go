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
	editEvery      = 10 // a document is edited every editEvery calls
)

// conversationReport is `bench --turns N --format json`.
type conversationReport struct {
	Encoding string               `json:"encoding"`
	Blocks   int                  `json:"blocks"`
	Turns    int                  `json:"turns"`
	Session  string               `json:"session"`
	Results  []conversationResult `json:"results"`
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
	overBudget, reqMissing bool
	newestMissing          bool
}

// conversation is the simulated host: an engine, the workload, and the
// turns it has declared so far.
type conversation struct {
	tok   truncate.Counter
	req   contextasm.Request
	docs  map[string]declare.Declaration // context and external blocks by id, for edits
	fresh bool
}

// runConversations measures every budget, sticky and from scratch.
func runConversations(ctx context.Context, w io.Writer, format string, tok truncate.Counter, in *inputs, budgets []int, turns int, req contextasm.Request) error {
	rep := conversationReport{Encoding: in.tpl.Encoding(), Blocks: len(in.decls), Turns: turns, Session: req.SessionID}
	for _, b := range budgets {
		tpl, err := in.tpl.WithBudget(b)
		if err != nil {
			return err
		}
		req.Template = tpl
		r := conversationResult{Budget: b, Turns: turns}
		calls, err := simulate(ctx, tok, in.decls, req, turns, false)
		if err != nil {
			return fmt.Errorf("bench: budget %d: %w", b, err)
		}
		r.convFigures = figures(calls)
		for _, c := range calls {
			r.MaxTokens = max(r.MaxTokens, c.tokens)
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
		scratch, err := simulate(ctx, tok, in.decls, req, turns, true)
		if err != nil {
			return fmt.Errorf("bench: budget %d, from scratch: %w", b, err)
		}
		f := figures(scratch)
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
// call the host declares the user's new turn (and, every editEvery calls,
// an edited document), assembles with now advanced by turnInterval, and
// after it declares the assistant's answer, which cites two of the
// documents the call kept (fed back, so their trust moves). fresh asks for
// a decision from scratch on every call.
func simulate(ctx context.Context, tok truncate.Counter, decls []declare.Declaration, req contextasm.Request, turns int, fresh bool) ([]convCall, error) {
	eng, err := contextasm.New(contextasm.Config{Encoding: req.Template.Encoding()})
	if err != nil {
		return nil, err
	}
	if err := eng.Declare(decls...); err != nil {
		return nil, err
	}
	conv := &conversation{tok: tok, req: req, docs: map[string]declare.Declaration{}, fresh: fresh}
	for _, d := range decls {
		if d.MemoryType == declare.Context || d.MemoryType == declare.External {
			conv.docs[d.RequestID] = d
		}
	}
	rng := rand.New(rand.NewPCG(7, 11)) // the same conversation for every run
	start := req.Now
	var prev *contextasm.Dump
	calls := make([]convCall, 0, turns)
	for i := range turns {
		now := start.Add(time.Duration(i) * turnInterval)
		newDecls := []declare.Declaration{conv.userTurn(i, now)}
		if i%editEvery == editEvery-1 && prev != nil {
			if d, ok := conv.edit(prev, rng, now); ok {
				newDecls = append(newDecls, d)
			}
		}
		if err := eng.Declare(newDecls...); err != nil {
			return nil, err
		}
		r := req
		r.Now = now
		r.Fresh = fresh
		res, err := eng.Assemble(ctx, r)
		if err != nil {
			return nil, fmt.Errorf("call %d: %w", i+1, err)
		}
		d := res.Dump()
		calls = append(calls, conv.measure(prev, &d, newDecls[0].RequestID))
		answer := conv.answer(i, &d, rng)
		if _, err := eng.Feedback(ctx, res, answer); err != nil && !errors.Is(err, feedback.ErrConstraintViolation) {
			return nil, fmt.Errorf("call %d: feedback: %w", i+1, err)
		}
		lm := now.Add(time.Minute)
		if err := eng.Declare(conv.turn(fmt.Sprintf("conv-%03d-assistant", i+1), answer, lm)); err != nil {
			return nil, err
		}
		prev = &d
	}
	return calls, nil
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
	call.overBudget = call.tokens > res.Budget || call.tokens != res.TotalTokens
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
	if prev != nil {
		call.stable = c.tok.Count(res.Text[:sharedLines(prev.Text, res.Text)])
	}
	return call
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
	fmt.Fprintf(w, "%d blocks, %s, a %d-call conversation in session %q (now +%s a call, a user and an assistant turn a call,\n", rep.Blocks, rep.Encoding, rep.Turns, rep.Session, turnInterval)
	fmt.Fprintf(w, "two citations fed back a call, a document edited every %d calls); costs are fractions of no cache\n\n", editEvery)
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "budget\tstable\tanthropic\topenai\tscratch stable\tscratch anthropic\tscratch openai\tmax tokens\tover budget\trequired missing\tnewest turn missing\t")
	for _, r := range rep.Results {
		fmt.Fprintf(tw, "%d\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%d\t%d\t%d\t%d\t\n", r.Budget, r.StableFraction, r.CostAnthropic, r.CostOpenAI,
			r.ScratchStableFraction, r.ScratchCostAnthropic, r.ScratchCostOpenAI, r.MaxTokens, r.OverBudget, r.RequiredMissing, r.NewestTurnMissing)
	}
	tw.Flush()
}

// benchConversation is `bench --turns N`: the session defaults to the
// generated workload's (bench/genworkload), whose session blocks it sees.
func benchConversation(ctx context.Context, w io.Writer, format string, in *inputs, budgets []int, turns int, req contextasm.Request) error {
	if req.SessionID == "" {
		req.SessionID = "s-bench"
	}
	tok, err := bpe.Load(in.tpl.Encoding())
	if err != nil {
		return err
	}
	return runConversations(ctx, w, format, tok, in, budgets, turns, req)
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
