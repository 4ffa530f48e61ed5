package bench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/contextasm/contextasm/contextasm"
	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/outcome"
	"github.com/contextasm/contextasm/template"
)

// degradeTemplate is the template of the long conversation: rules, task
// context and a history section the budget leaves about 2,000 tokens.
const degradeTemplate = `{"template_version":"degrade-bench","budget":3000,"encoding":"o200k_base","sections":[
 {"name":"RULES","priority":1,"memory_types":["constraint"],"max_tokens":400,"render":"<rule>{content}</rule>"},
 {"name":"CONTEXT","priority":2,"memory_types":["context"],"max_tokens":600,"render":"<context>{content}</context>"},
 {"name":"HISTORY","priority":3,"memory_types":["history"],"max_tokens":2400,"render":"{content}","order":"time"}]}`

// sentences returns n of the workload's phrases, picked by r.
func sentences(r *rand.Rand, n int) string {
	s := make([]string, n)
	for i := range s {
		s[i] = phrases[r.IntN(len(phrases))]
	}
	return strings.Join(s, " ")
}

// represented is what one call's context holds of the turns declared so
// far: whole, as a variant, clipped, or inside a summary.
type represented struct {
	whole, variant, clipped, summarized, turns int
}

func (r represented) total() int { return r.whole + r.variant + r.clipped + r.summarized }

// conversationRun drives a calls-long conversation through one engine, as
// a host would: before each call it declares the user's turn; the
// assistant's answer (and every seventh call a tool call whose result is
// long) comes after. With fields, the answers carry a one-sentence
// variant, tool results a max_tokens of 200, and after each call the host
// summarises every run the result offers and declares the summary with
// replaces. Each call follows the previous one's decision, or with fresh
// decides from scratch. It returns what each call's context represents.
func conversationRun(t testing.TB, calls int, fields, fresh bool) []represented {
	t.Helper()
	tpl, err := template.Parse([]byte(degradeTemplate), "degrade-bench.json")
	if err != nil {
		t.Fatal(err)
	}
	eng, err := contextasm.New(contextasm.Config{})
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(16, 0x5EED))
	decl := func(ds ...declare.Declaration) {
		t.Helper()
		if err := eng.Declare(ds...); err != nil {
			t.Fatal(err)
		}
	}
	decl(declare.Declaration{RequestID: "rule", MemoryType: declare.Constraint, Scope: declare.ScopeGlobal, Required: true,
		Content: "Always state the annual percentage rate next to any quoted rate."},
		declare.Declaration{RequestID: "task", MemoryType: declare.Context, Scope: declare.ScopeSession, SessionID: Session,
			Content: sentences(r, 8)})
	content := map[string]string{}
	turn := func(id string, role declare.Role, text string, at time.Time) declare.Declaration {
		content[id] = text
		return declare.Declaration{RequestID: id, MemoryType: declare.History, Scope: declare.ScopeSession, SessionID: Session,
			Role: role, Content: text, LastModified: &at}
	}
	var out []represented
	var turns []string
	now := Epoch
	summaries := 0
	for call := range calls {
		user := turn(fmt.Sprintf("c%03d-user", call), declare.RoleUser, "USER: "+sentences(r, 1+r.IntN(3)), now)
		decl(user)
		turns = append(turns, user.RequestID)
		res, err := eng.Assemble(context.Background(), contextasm.Request{Template: tpl, Now: now, SessionID: Session, Fresh: fresh})
		if err != nil {
			t.Fatalf("call %d: %v", call, err)
		}
		out = append(out, representedIn(res, len(turns)))

		// The answer, after the call.
		now = now.Add(time.Minute)
		var answer []declare.Declaration
		if call%7 == 6 {
			c := turn(fmt.Sprintf("c%03d-call", call), declare.RoleAssistant, "AGENT: Looking it up.", now)
			c.ToolCalls = []declare.ToolCall{{ID: fmt.Sprintf("call_%d", call), Name: "search", Arguments: `{"q":"loans"}`}}
			res := turn(fmt.Sprintf("c%03d-result", call), declare.RoleTool, sentences(r, 40+r.IntN(40)), now.Add(time.Second))
			res.ToolCallID = c.ToolCalls[0].ID
			if fields {
				res.MaxTokens = new(200)
			}
			answer = append(answer, c, res)
		}
		a := turn(fmt.Sprintf("c%03d-agent", call), declare.RoleAssistant, "AGENT: "+sentences(r, 2+r.IntN(5)), now.Add(2*time.Second))
		if fields {
			// One line: the answer's first eight words.
			w := strings.Fields(a.Content)
			if v := strings.Join(w[:min(len(w), 8)], " ") + " …"; len(v) < len(a.Content) {
				a.Variants = []string{v}
			}
		}
		answer = append(answer, a)
		decl(answer...)
		for _, d := range answer {
			turns = append(turns, d.RequestID)
		}
		if fields {
			// Summarise what the call let go, before the next call: the
			// first words of each turn, about a tenth of the run.
			for _, run := range res.SummarizeCandidates {
				summaries++
				var b strings.Builder
				b.WriteString("SUMMARY of earlier turns:")
				for _, id := range run.IDs {
					w := strings.Fields(content[id])
					fmt.Fprintf(&b, " %s", strings.Join(w[:min(len(w), 4)], " "))
				}
				s := turn(fmt.Sprintf("sum-%03d", summaries), declare.RoleUser, b.String(), now)
				s.Replaces = run.IDs
				decl(s)
			}
		}
		now = now.Add(2 * time.Minute)
	}
	return out
}

// representedIn counts the turns res represents, of the first n declared.
func representedIn(res *contextasm.Result, n int) represented {
	rep := represented{turns: n}
	in := map[string]bool{}
	for _, s := range res.Sections() {
		for _, b := range s.Blocks {
			if b.Status == outcome.StatusDropped || b.MemoryType != string(declare.History) {
				continue
			}
			in[b.RequestID] = true
			switch {
			case strings.HasPrefix(b.RequestID, "sum-"):
			case b.Variant > 0:
				rep.variant++
			default:
				rep.whole++
			}
		}
	}
	for _, e := range res.Events() {
		switch {
		case e.Reason == outcome.ReasonSummarized && in[e.By]:
			rep.summarized++
		case e.Reason == outcome.ReasonClipped:
			rep.whole--
			rep.clipped++
		}
	}
	return rep
}

// TestConversationRepresented measures, on a 300-call conversation at a
// budget of 3,000 tokens, how many of its turns each call's context
// represents, without and with variants, max_tokens and summaries
// (bench/README.md). It checks that the fields never represent fewer:
// call by call from scratch, where both runs see the same turns; and on
// the mean when each call follows the previous, where each run follows
// its own previous decisions (the plain comparison of degrade.go holds
// a call to what dropping alone gives after the same previous decision,
// not after the other run's).
//
//	go test ./bench -run TestConversationRepresented -v
func TestConversationRepresented(t *testing.T) {
	calls := 300
	if testing.Short() {
		calls = 60
	}
	t.Logf("%d calls, budget 3,000; turns represented (whole, variant, clipped, in a summary in the context)", calls)
	t.Logf("| calls | fields | at the last call | mean per call | whole | variant | clipped | in a summary | mean share of the turns so far |")
	t.Logf("|---|---|---|---|---|---|---|---|---|")
	for _, fresh := range []bool{false, true} {
		without := conversationRun(t, calls, false, fresh)
		with := conversationRun(t, calls, true, fresh)
		type sums struct {
			represented
			share float64
		}
		add := func(s *sums, r represented) {
			s.whole, s.variant, s.clipped, s.summarized = s.whole+r.whole, s.variant+r.variant, s.clipped+r.clipped, s.summarized+r.summarized
			s.share += float64(r.total()) / float64(r.turns)
		}
		var sw, sv sums
		for i := range without {
			if fresh && with[i].total() < without[i].total() {
				t.Errorf("call %d (fresh %v): %d turns represented with the fields, %d without", i, fresh, with[i].total(), without[i].total())
			}
			add(&sw, without[i])
			add(&sv, with[i])
		}
		n := float64(len(without))
		last := len(without) - 1
		if sv.total() < sw.total() {
			t.Errorf("fresh %v: %.1f turns represented a call with the fields, %.1f without", fresh, float64(sv.total())/n, float64(sw.total())/n)
		}
		how := "following the previous"
		if fresh {
			how = "from scratch"
		}
		for _, row := range []struct {
			name string
			last represented
			s    sums
		}{{"without", without[last], sw}, {"with", with[last], sv}} {
			t.Logf("| %s | %s | %d of %d | %.1f | %.1f | %.1f | %.1f | %.1f | %.3f |", how, row.name, row.last.total(), row.last.turns, float64(row.s.total())/n,
				float64(row.s.whole)/n, float64(row.s.variant)/n, float64(row.s.clipped)/n, float64(row.s.summarized)/n, row.s.share/n)
		}
	}
}
