package main

import (
	"fmt"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/contextasm/contextasm/chat"
	"github.com/contextasm/contextasm/contextasm"
	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/internal/cputime"
	"github.com/contextasm/contextasm/outcome"
	"github.com/contextasm/contextasm/template"
)

// What `bench --turns N` simulates of a chat host (--request-format,
// --summaries, --clear, --state): the call a host really makes, timed.

// summaryPrefix starts the request_id of every summary the bench declares.
const summaryPrefix = "conv-sum-"

// hostOptions say how the simulated host calls the engine.
type hostOptions struct {
	format    chat.Format // the request body's format; zero: the text format
	summaries bool        // declare a summary of each run offered
	clear     string      // --clear as given: "", "on" or "off"
	store     stateStore  // --state; nil: none
	// onBody, when set, is shown each call's encoded body (tests).
	onBody func(call int, body []byte)
}

// requestFormatName is the name --request-format gives f.
func requestFormatName(f chat.Format) string {
	if f == 0 {
		return "text"
	}
	return f.String()
}

// withClear returns tpl with every history section's clear_tool_results
// set (on: the defaults, or the template's own when it sets them) or
// removed (off); "" leaves it as it is.
func withClear(tpl *template.Template, clear string) (*template.Template, error) {
	if clear == "" {
		return tpl, nil
	}
	def := tpl.Definition()
	found := false
	for i := range def.Sections {
		s := &def.Sections[i]
		if !slices.Contains(s.MemoryTypes, declare.History) {
			continue
		}
		found = true
		switch {
		case clear == "off":
			s.ClearToolResults = nil
		case s.ClearToolResults == nil:
			s.ClearToolResults = &template.ClearToolResults{}
		}
	}
	if !found {
		return nil, usagef("bench: --clear: the template has no history section")
	}
	return template.Compile(def)
}

// hostTimer times a call's engine work in segments (start, pause, resume,
// stop): wall time, the process's CPU time and heap allocations. Each
// segment starts from a collected heap, so the measuring between calls
// (a dump, the tokenizer's counts) is not the call's garbage to collect.
type hostTimer struct {
	wall, cpu []time.Duration
	allocs    uint64

	t0       time.Time
	w, c     time.Duration // the call's so far
	mallocs0 uint64
	cpu0     time.Duration
	ms       runtime.MemStats
}

func (t *hostTimer) begin() {
	runtime.GC()
	runtime.ReadMemStats(&t.ms)
	t.mallocs0 = t.ms.Mallocs
	t.cpu0 = cputime.Process()
	t.t0 = time.Now()
}

func (t *hostTimer) end() {
	t.w += time.Since(t.t0)
	t.c += cputime.Process() - t.cpu0
	runtime.ReadMemStats(&t.ms)
	t.allocs += t.ms.Mallocs - t.mallocs0
}

// start begins a call.
func (t *hostTimer) start() { t.w, t.c = 0, 0; t.begin() }

// pause and resume leave the measuring out of the call.
func (t *hostTimer) pause()  { t.end() }
func (t *hostTimer) resume() { t.begin() }

// stop ends a call.
func (t *hostTimer) stop() {
	t.end()
	t.wall = append(t.wall, t.w)
	t.cpu = append(t.cpu, t.c)
}

// hostFigures are the run's per-call figures.
func (r *convRun) hostFigures() hostFigures {
	f := hostFigures{ToolExchanges: r.toolExchanges, Summaries: r.summaries}
	n := len(r.calls)
	if n == 0 {
		return f
	}
	f.TurnMS, f.TurnMSP99 = medianMS(r.wall), percentileMS(r.wall, 0.99)
	tenth := max(len(r.wall)/10, 1)
	f.TurnMSFirst, f.TurnMSLast = medianMS(r.wall[:tenth]), medianMS(r.wall[len(r.wall)-tenth:])
	var cpu time.Duration
	for _, c := range r.cpu {
		cpu += c
	}
	f.TurnCPUMS = float64(cpu.Microseconds()) / 1000 / float64(n)
	f.Allocs = float64(r.allocs) / float64(n)
	f.BodyBytes = float64(r.bodyBytes) / float64(n)
	var represented int
	for _, c := range r.calls {
		represented += c.represented
		f.Cleared += c.cleared
		f.SummariesUsed += c.summariesUsed
	}
	f.TurnsRepresented = float64(represented) / float64(n)
	return f
}

// percentileMS is the p-th percentile of ds (nearest rank), in ms.
func percentileMS(ds []time.Duration, p float64) float64 {
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(p*float64(len(s))+0.999999) - 1
	i = max(0, min(i, len(s)-1))
	return float64(s[i].Microseconds()) / 1000
}

// toolExchange is call i's tool exchange: an assistant turn calling
// get_rate and the tool's result (about 250 tokens), after the user's turn.
func (c *conversation) toolExchange(i int, now time.Time) []declare.Declaration {
	id := fmt.Sprintf("call_%03d", i+1)
	months := 12 * (1 + i%10)
	a := c.turn(fmt.Sprintf("conv-%03d-call", i+1), "", now.Add(10*time.Second))
	a.Role = declare.RoleAssistant
	a.ToolCalls = []declare.ToolCall{{ID: id, Name: "get_rate", Arguments: fmt.Sprintf(`{"term_months":%d}`, months)}}
	var b strings.Builder
	fmt.Fprintf(&b, "get_rate(term_months=%d), rate sheet of call %d:", months, i+1)
	for k := range 14 {
		fmt.Fprintf(&b, " %d months: %d.%02d%% APR, opening fee EUR %d, first instalment on day %d;", months+6*k, 4+(i+k)%5, (17*k+i)%100, 150+25*((i+k)%7), 1+(i+3*k)%28)
	}
	r := c.turn(fmt.Sprintf("conv-%03d-result", i+1), b.String(), now.Add(20*time.Second))
	r.Role, r.ToolCallID = declare.RoleTool, id
	return []declare.Declaration{a, r}
}

// summaries are the summaries a host declares after call res: one for
// each run of history the call dropped and offered (with --summaries).
// The summarising model call is the host's own; here it is a sentence.
func (c *conversation) summaries(res *contextasm.Result, now time.Time) []declare.Declaration {
	if !c.host.summaries {
		return nil
	}
	var out []declare.Declaration
	for _, run := range res.SummarizeCandidates {
		c.nsum++
		lm := now
		if t, err := time.Parse(time.RFC3339Nano, run.To); err == nil {
			lm = t // where its turns were
		}
		d := c.turn(fmt.Sprintf("%s%04d", summaryPrefix, c.nsum), fmt.Sprintf("SUMMARY of %d earlier turns: the user asked about the loan's rate, fees and repayment dates; the assistant answered from the rate sheet.", len(run.IDs)), lm)
		d.Replaces = slices.Clone(run.IDs)
		out = append(out, d)
	}
	return out
}

// chatText is a conversation as one text, for the prefix a provider's
// cache can reuse: the system prompt, then each message's role, the call
// it answers, its content and its tool calls, each message ending a line.
func chatText(c chat.Conversation) string {
	var b strings.Builder
	for _, p := range c.System {
		b.WriteString(p.Text)
	}
	for _, m := range c.Messages {
		fmt.Fprintf(&b, "\n[%s %s]\n%s", m.Role, m.ToolCallID, m.Content)
		for _, tc := range m.ToolCalls {
			fmt.Fprintf(&b, "\n%s %s %s", tc.ID, tc.Name, tc.Arguments)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// measureChat is measure for a chat format: text is the conversation as
// one text (chatText), and the engine's count of the conversation is what
// the budget bounds.
func (c *conversation) measureChat(prevText, text string, hasPrev bool, res *contextasm.Dump, newest string) convCall {
	call := convCall{tokens: c.tok.Count(text), counted: res.TotalTokens}
	call.overBudget = res.TotalTokens > res.Budget
	checkCall(&call, res, newest)
	if hasPrev {
		call.stable = c.tok.Count(text[:sharedLines(prevText, text)])
	}
	return call
}

// historyFigures counts, in res, the history blocks represented (in the
// context, or dropped for a summary in it), the cleared notices and the
// bench's summaries in the context.
func historyFigures(res *contextasm.Dump) (represented, cleared, summaries int) {
	for _, s := range res.Sections {
		for _, b := range s.Blocks {
			if b.MemoryType != string(declare.History) {
				continue
			}
			switch in := b.Status != outcome.StatusDropped; {
			case in && strings.HasPrefix(b.RequestID, summaryPrefix):
				summaries++
			case in, b.Reason == outcome.ReasonSummarized:
				represented++
			}
		}
	}
	for _, ev := range res.Events {
		if ev.Reason == outcome.ReasonCleared {
			cleared++
		}
	}
	return represented, cleared, summaries
}
