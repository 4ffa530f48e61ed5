package toolsel

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/contextasm/contextasm/chat"
	"github.com/contextasm/contextasm/internal/lexical"
	"github.com/contextasm/contextasm/template"
)

func keptNames(set *Set, res *Result) []string {
	var out []string
	for _, k := range res.Kept {
		out = append(out, set.Tool(k.Index).Name)
	}
	return out
}

// TestSelectFollowsItself: whatever the previous selection, following
// the result of a selection gives that result again (the output memo
// reuses a conversation's result for the call that follows it, so the
// two must agree); the cap holds and required tools stay.
func TestSelectFollowsItself(t *testing.T) {
	c := counter(t)
	all, _ := manyTools()
	all[7].Required = true
	base := NewSet(all)
	rng := rand.New(rand.NewPCG(1, 2))
	queries := []string{"refund the invoice", "weather calendar", "export spreadsheet contact", "archive a playlist recipe"}
	for trial := range 200 {
		var prev []string
		for i := range base.Len() {
			if rng.IntN(3) == 0 {
				prev = append(prev, base.Tool(i).Name)
			}
		}
		cap := 1500 + rng.IntN(4000)
		margin := []float64{0, 0.05, 0.2, 1}[trial%4]
		q := lexical.NewQuery(queries[rng.IntN(len(queries))])
		in := Input{Part: &template.ToolsDefinition{MaxTokens: cap}, Budget: 100_000, Format: chat.FormatOpenAI, Query: q, Counter: c, Encoding: "o200k_base"}
		in.Set = base.With(Options{Previous: prev, Margin: margin})
		first, err := Select(in)
		if err != nil {
			t.Fatal(err)
		}
		if first.Tokens > cap {
			t.Fatalf("trial %d: %d tokens over the cap %d", trial, first.Tokens, cap)
		}
		names := keptNames(base, first)
		if !slices.Contains(names, all[7].Name) {
			t.Fatalf("trial %d: the required tool %s left out", trial, all[7].Name)
		}
		in.Set = base.With(Options{Previous: names, Margin: margin})
		again, err := Select(in)
		if err != nil {
			t.Fatal(err)
		}
		if got := keptNames(base, again); !slices.Equal(got, names) {
			t.Fatalf("trial %d (cap %d, margin %v): following its own result changed the set:\n%v\n%v", trial, cap, margin, names, got)
		}
	}
}

// TestSelectSticky: a query on another topic keeps the previous tools
// while no left-out tool outranks the weakest of them by more than the
// margin; each tool a fresh selection would carry is left out with reason
// sticky; past the margin the set changes; a previous tool no longer
// allowed leaves at once.
func TestSelectSticky(t *testing.T) {
	c := counter(t)
	all, planted := manyTools()
	set := NewSet(all)
	part := &template.ToolsDefinition{MaxTokens: 1200}
	in := func(q string, o Options) Input {
		return Input{Set: set.With(o), Part: part, Budget: 100_000, Format: chat.FormatOpenAI, Query: lexical.NewQuery(q), Counter: c, Encoding: "o200k_base"}
	}
	fresh := func(q string) *Result {
		res, err := Select(in(q, Options{}))
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	billing := fresh("refund the invoice payment")
	prev := keptNames(set, billing)
	for _, p := range planted {
		if !slices.Contains(prev, p) {
			t.Fatalf("fresh: %s left out of %v", p, prev)
		}
	}
	weather := fresh("weather forecast")
	relOf := make(map[int]float64)
	for _, k := range weather.Kept {
		relOf[k.Index] = k.Relevance
	}
	for _, l := range weather.Left {
		relOf[l.Index] = l.Relevance
	}
	// The best weather tool, and the weakest billing one, for weather.
	best, weakest := 0.0, 1.0
	for _, k := range weather.Kept {
		if !slices.Contains(prev, set.Tool(k.Index).Name) {
			best = max(best, k.Relevance)
		}
	}
	for _, k := range billing.Kept {
		weakest = min(weakest, relOf[k.Index])
	}
	if best <= weakest {
		t.Fatalf("the weather tools (best %.3f) do not outrank the billing ones (%.3f): no test", best, weakest)
	}
	for _, tc := range []struct {
		margin float64
		stays  bool
	}{{best - weakest + 0.01, true}, {(best - weakest) / 4, false}} {
		res, err := Select(in("weather forecast", Options{Previous: prev, Margin: tc.margin}))
		if err != nil {
			t.Fatal(err)
		}
		got := keptNames(set, res)
		if stayed := slices.Equal(got, prev); stayed != tc.stays {
			t.Errorf("margin %.3f (gap %.3f): stayed %v, want %v; kept %v", tc.margin, best-weakest, stayed, tc.stays, got)
		}
		sticky := 0
		for _, l := range res.Left {
			if l.Reason == ReasonSticky {
				sticky++
				if !slices.ContainsFunc(weather.Kept, func(k Kept) bool { return k.Index == l.Index }) {
					t.Errorf("%s left out as sticky, but a fresh selection leaves it out too", set.Tool(l.Index).Name)
				}
			}
		}
		if tc.stays && sticky == 0 {
			t.Error("the tools the previous call kept out have no sticky reason")
		}
	}
	// The cap shrinks: the weakest of the kept tools leave, the billing
	// ones (the most relevant) stay, and nothing new comes in.
	part.MaxTokens = 400
	shrunk, err := Select(in("refund the invoice payment", Options{Previous: prev, Margin: 1}))
	if err != nil {
		t.Fatal(err)
	}
	got := keptNames(set, shrunk)
	if shrunk.Tokens > 400 || len(got) >= len(prev) {
		t.Errorf("cap 400: %d tokens, %d of %d kept", shrunk.Tokens, len(got), len(prev))
	}
	for _, name := range got {
		if !slices.Contains(prev, name) {
			t.Errorf("cap 400: %s came in", name)
		}
	}
	for _, p := range planted {
		if !slices.Contains(got, p) {
			t.Errorf("cap 400: %s left, weaker tools stayed: %v", p, got)
		}
	}
	part.MaxTokens = 1200
	// A tool the previous call carried that the request may no longer see
	// leaves, whatever the margin.
	gone := set.Tool(billing.Kept[0].Index).Name
	changed := slices.Clone(all)
	for i := range changed {
		if changed[i].Name == gone {
			changed[i].Roles = []string{"admin"}
		}
	}
	set = NewSet(changed)
	res, err := Select(in("refund the invoice payment", Options{Previous: prev, Margin: 1}))
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(keptNames(set, res), gone) || res.Hidden[ReasonRole] != 1 {
		t.Errorf("%s, now admin-only, still kept (hidden %v)", gone, res.Hidden)
	}
}

// TestSelectScale: the learned margin multiplies the anthropic-tools
// count, never the OpenAI rule's, and the cap holds under it.
func TestSelectScale(t *testing.T) {
	c := counter(t)
	all, _ := manyTools()
	set := NewSet(all)
	part := &template.ToolsDefinition{MaxTokens: 3000}
	for _, f := range []chat.Format{chat.FormatAnthropic, chat.FormatOpenAI} {
		t.Run(fmt.Sprint(f), func(t *testing.T) {
			sel := func(scale float64) *Result {
				res, err := Select(Input{Set: set.With(Options{AnthropicScale: scale}), Part: part, Budget: 100_000, Format: f, Query: lexical.NewQuery("refund invoice"), Counter: c, Encoding: "o200k_base"})
				if err != nil {
					t.Fatal(err)
				}
				return res
			}
			plain, scaled := sel(0), sel(1.5)
			if plain.Counted != plain.Tokens {
				t.Errorf("without a margin, counted %d, tokens %d", plain.Counted, plain.Tokens)
			}
			if f == chat.FormatOpenAI {
				if scaled.Tokens != plain.Tokens || len(scaled.Kept) != len(plain.Kept) {
					t.Errorf("the OpenAI rule is exact: a margin changed %d to %d tokens", plain.Tokens, scaled.Tokens)
				}
				return
			}
			if scaled.Tokens > 3000 || len(scaled.Kept) >= len(plain.Kept) {
				t.Errorf("scaled: %d tokens, %d kept; plain %d kept", scaled.Tokens, len(scaled.Kept), len(plain.Kept))
			}
			sum := scaled.Fixed
			raw := AnthropicToolSystemPrompt
			for _, k := range scaled.Kept {
				n := c.Count(string(AnthropicTool(set.Tool(k.Index))))
				raw += n
				sum += k.Tokens
				if float64(k.Tokens) < 1.5*float64(n) {
					t.Errorf("%s: %d tokens under the margin, %d counted", set.Tool(k.Index).Name, k.Tokens, n)
				}
			}
			if sum != scaled.Tokens || raw != scaled.Counted || float64(scaled.Tokens) < 1.5*float64(raw) {
				t.Errorf("tokens %d (sum %d), counted %d (raw %d)", scaled.Tokens, sum, scaled.Counted, raw)
			}
		})
	}
}
