// Command relevance measures how often a context keeps what a question
// needs: per question, whether every one of its evidence turns survives
// into a one-section history context of 1,000 to 16,000 o200k_base
// tokens, for a sliding window, a plain BM25 retriever and the candidate
// scoring formulas of the engine (recency and relevance mixed, relevance
// passed to neighbouring turns), on two sets:
//
//   - LoCoMo, a public benchmark of ten long conversations, read from the
//     folder $CONTEXTASM_LOCOMO (or -locomo): never in this repository,
//     so that it measures and does not train;
//   - the synthetic set of this package (-synthetic, on by default),
//     generated deterministically: planted facts asked about much later,
//     distractors that share their words, answers in the turn after the
//     question, facts in five languages.
//
// With -cli BINARY it also runs the real CLI, one `render --format json`
// per question and budget (every -cli-every-th question), with the
// question declared as the newest user history block of a one-section
// template and no weights set, and passes --query when the binary has it.
//
//	go run ./bench/relevance                       # synthetic set
//	CONTEXTASM_LOCOMO=DIR go run ./bench/relevance # and LoCoMo
//	go run ./bench/relevance -cli /tmp/contextasm -cli-every 10
//
// See bench/README.md ("Relevance") for the figures and docs/relevance.md
// for the formula.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/contextasm/contextasm/internal/bpe"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("relevance", flag.ContinueOnError)
	fs.SetOutput(stderr)
	locomo := fs.String("locomo", os.Getenv("CONTEXTASM_LOCOMO"), "LoCoMo folder (default $CONTEXTASM_LOCOMO); empty: skip LoCoMo")
	synthetic := fs.Bool("synthetic", true, "evaluate the synthetic set")
	seed := fs.Uint64("seed", 1, "the synthetic set's seed")
	budgetList := fs.String("budgets", "1000,2000,4000,8000,16000", "budgets, in o200k_base tokens")
	grid := fs.Bool("grid", false, "also print every formula of the grid")
	cli := fs.String("cli", "", "a contextasm binary: also run the CLI arm")
	cliEvery := fs.Int("cli-every", 10, "with -cli: every n-th question")
	cliSticky := fs.Int("cli-sticky", 20, "with -cli: the first n of the -cli-every questions of each conversation asked in one session with --state")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	budgets, err := parseBudgets(*budgetList)
	if err != nil {
		fmt.Fprintln(stderr, "relevance:", err)
		return 2
	}
	tok, err := bpe.Load(bpe.O200kBase)
	if err != nil {
		fmt.Fprintln(stderr, "relevance:", err)
		return 1
	}
	type set struct {
		name  string
		convs []*Conversation
	}
	var sets []set
	if *synthetic {
		sets = append(sets, set{"synthetic", Synthetic(*seed)})
	}
	if *locomo != "" {
		convs, err := loadLoCoMo(*locomo)
		if err != nil {
			fmt.Fprintln(stderr, "relevance:", err)
			return 1
		}
		sets = append(sets, set{"LoCoMo", convs})
	} else {
		fmt.Fprintln(stderr, "relevance: LoCoMo skipped: set CONTEXTASM_LOCOMO (or -locomo) to its folder")
	}
	for _, s := range sets {
		prepare(s.convs, tok)
		report(stdout, s.name, s.convs, budgets, *grid)
		if *cli != "" {
			if err := reportCLI(stdout, *cli, s.convs, budgets, *cliEvery, *cliSticky); err != nil {
				fmt.Fprintln(stderr, "relevance:", err)
				return 1
			}
		}
	}
	return 0
}

func parseBudgets(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("-budgets: %q is not a positive number of tokens", f)
		}
		out = append(out, n)
	}
	return out, nil
}

// report prints the arms' recall on one set.
func report(w io.Writer, name string, convs []*Conversation, budgets []int, grid bool) {
	turns, questions, skipped, tokens := stats(convs)
	fmt.Fprintf(w, "\n## %s: %d conversations, %d turns (%d o200k tokens), %d questions (%d without usable evidence left out)\n\n",
		name, len(convs), turns, tokens, questions, skipped)
	table(w, budgets)
	var newest []recall
	for _, f := range arms() {
		r, n := evaluate(f, convs, budgets)
		row(w, f.String(), r)
		newest = append(newest, n)
	}
	fmt.Fprintf(w, "\nThe newest %d turns kept (share):\n\n", newestKept)
	table(w, budgets)
	for i, f := range arms() {
		row(w, f.String(), newest[i])
	}
	fmt.Fprintf(w, "\nAsked one after another in one session (simulated stickiness, margin 0.05), recall at %d tokens:\n\n", stickyBudget)
	fmt.Fprintln(w, "| formula | fresh | sticky |\n|---|---|---|")
	for _, f := range stickyArms() {
		fresh, _ := evaluate(f, convs, []int{stickyBudget})
		fmt.Fprintf(w, "| %s | %.2f | %.2f |\n", f, fresh[0], stickyEvaluate(f, convs, stickyBudget, 0.05))
	}
	fmt.Fprintf(w, "\nBy kind of question, recall at %d tokens:\n\n", stickyBudget)
	cats := categories(convs)
	fmt.Fprint(w, "| formula |")
	for _, c := range cats {
		fmt.Fprintf(w, " %s (%d) |", c.name, c.n)
	}
	fmt.Fprint(w, "\n|---|")
	for range cats {
		fmt.Fprint(w, "---|")
	}
	fmt.Fprintln(w)
	for _, f := range stickyArms() {
		fmt.Fprintf(w, "| %s |", f)
		for _, c := range cats {
			r, _ := evaluate(f, only(convs, c.name), []int{stickyBudget})
			fmt.Fprintf(w, " %.2f |", r[0])
		}
		fmt.Fprintln(w)
	}
	if grid {
		fmt.Fprintln(w, "\nThe grid:")
		fmt.Fprintln(w)
		table(w, budgets)
		for _, f := range gridArms() {
			r, _ := evaluate(f, convs, budgets)
			row(w, f.String(), r)
		}
	}
}

const stickyBudget = 4000

func table(w io.Writer, budgets []int) {
	fmt.Fprint(w, "| arm |")
	for _, b := range budgets {
		fmt.Fprintf(w, " %d |", b)
	}
	fmt.Fprint(w, "\n|---|")
	for range budgets {
		fmt.Fprint(w, "---|")
	}
	fmt.Fprintln(w)
}

func row(w io.Writer, name string, r recall) {
	fmt.Fprintf(w, "| %s |", name)
	for _, v := range r {
		fmt.Fprintf(w, " %.2f |", v)
	}
	fmt.Fprintln(w)
}

type category struct {
	name string
	n    int
}

// categories lists the kinds of question of convs, in first-seen order.
func categories(convs []*Conversation) []category {
	var out []category
	for _, c := range convs {
		for _, q := range c.Questions {
			i := slices.IndexFunc(out, func(x category) bool { return x.name == q.Category })
			if i < 0 {
				i = len(out)
				out = append(out, category{name: q.Category})
			}
			out[i].n++
		}
	}
	slices.SortFunc(out, func(a, b category) int { return strings.Compare(a.name, b.name) })
	return out
}

// only returns convs with only the questions of one kind.
func only(convs []*Conversation, cat string) []*Conversation {
	out := make([]*Conversation, len(convs))
	for i, c := range convs {
		cc := *c
		cc.Questions = nil
		for _, q := range c.Questions {
			if q.Category == cat {
				cc.Questions = append(cc.Questions, q)
			}
		}
		out[i] = &cc
	}
	return out
}
