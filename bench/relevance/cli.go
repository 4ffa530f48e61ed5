package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/contextasm/contextasm/bench"
	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/internal/lexical"
)

// The CLI arm: the real contextasm, as a user would run it on a
// conversation, one `render --format json` per question and budget.
// Each conversation becomes a memories file of its turns (history blocks
// of one session, dated) and each question a file of one block, the
// newest user turn; the template has one history section and sets no
// weight. Nothing here tells the engine what the question is but the
// question being the newest user turn, and --query when the binary has
// it.

// cliTemplate is the one-section history template; --budget sets the
// budget of each render.
const cliTemplate = `{
  "template_version": "relevance-eval",
  "budget": 16000,
  "encoding": "o200k_base",
  "sections": [
    {"name": "HISTORY", "priority": 1, "memory_types": ["history"], "max_tokens": 1000000, "render": "{content}", "order": "time"}
  ]
}
`

// writeConversation writes c's template and turns to dir, and returns the
// turns file.
func writeConversation(dir string, c *Conversation) (template, turns string, err error) {
	template, turns = filepath.Join(dir, "template.json"), filepath.Join(dir, "turns.jsonl")
	if err := os.WriteFile(template, []byte(cliTemplate), 0o644); err != nil {
		return "", "", err
	}
	decls := make([]declare.Declaration, len(c.Turns))
	for i, t := range c.Turns {
		decls[i] = block(c, t.ID, t.Role, t.Content, t.Time)
	}
	return template, turns, writeJSONL(turns, decls)
}

// writeQuestion writes question j, asked at, as the newest user turn.
func writeQuestion(dir string, c *Conversation, j int, at time.Time) (string, error) {
	path := filepath.Join(dir, fmt.Sprintf("question-%d.jsonl", j))
	d := block(c, fmt.Sprintf("question-%d", j), "user", c.Questions[j].Text, at)
	return path, writeJSONL(path, []declare.Declaration{d})
}

func block(c *Conversation, id, role, content string, at time.Time) declare.Declaration {
	return declare.Declaration{
		RequestID: id, MemoryType: declare.History, Scope: declare.ScopeSession, SessionID: c.Name,
		Role: declare.Role(role), Content: content, LastModified: &at,
	}
}

func writeJSONL(path string, decls []declare.Declaration) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := bench.WriteJSONL(f, decls); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// hasQueryFlag reports whether the binary's render takes --query.
func hasQueryFlag(bin string) bool {
	out, _ := exec.Command(bin, "render", "--help").CombinedOutput()
	return bytes.Contains(out, []byte("-query"))
}

// renderKept runs one render and returns the ids of the blocks it kept.
func renderKept(bin string, args []string) (map[string]bool, error) {
	cmd := exec.Command(bin, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w: %s", bin, strings.Join(args, " "), err, stderr.String())
	}
	var dump struct {
		Sections []struct {
			Blocks []struct {
				RequestID string `json:"request_id"`
				Status    string `json:"status"`
			} `json:"blocks"`
		} `json:"sections"`
	}
	if err := json.Unmarshal(out, &dump); err != nil {
		return nil, fmt.Errorf("render dump: %w", err)
	}
	kept := make(map[string]bool)
	for _, s := range dump.Sections {
		for _, b := range s.Blocks {
			if b.Status == "kept" || b.Status == "cut" {
				kept[b.RequestID] = true
			}
		}
	}
	return kept, nil
}

// renderArgs are the arguments of question j's render at budget.
func renderArgs(tpl, turns, question string, c *Conversation, j, budget int, at time.Time, query bool, state string) []string {
	args := []string{"render", "-t", tpl, "-m", turns, "-m", question, "--session", c.Name,
		"--now", at.UTC().Format(time.RFC3339), "--budget", strconv.Itoa(budget), "--format", "json"}
	if query {
		args = append(args, "--query", c.Questions[j].Text)
	}
	if state != "" {
		args = append(args, "--state", state)
	} else {
		args = append(args, "--fresh")
	}
	return args
}

// cliKept returns whether question j was answerable from a render's kept ids.
func cliAnswerable(c *Conversation, j int, kept map[string]bool) bool {
	for _, e := range c.Questions[j].Evidence {
		if !kept[c.Turns[e].ID] {
			return false
		}
	}
	return true
}

// cliResult is what the CLI arm measured.
type cliResult struct {
	query    bool   // the binary took --query
	asked    []int  // per budget: renders made
	recall   recall // per budget
	disagree int    // without --query: renders whose answerability differs from the simulated window
	renders  int
	sticky   float64 // recall of the questions asked one after another
	stickyN  int
	// With --relevance carrying the plain BM25 retriever's scores: renders
	// and hits per budget, and that retriever's own hits (simulated) on
	// the same questions.
	hostAsked, hostHits, retrieved []int
}

// cliJob is one render of the CLI arm.
type cliJob struct {
	c      *Conversation
	j, b   int
	args   []string
	window bool // the simulated window kept the evidence
	host   bool // with --relevance: the retriever's scores
}

// cliJobs writes each conversation's files under tmp and returns the
// renders of every every-th question at each budget: with the engine's
// own relevance, and with --relevance carrying the plain BM25
// retriever's scores, whose own hits (simulated) it counts into res.
func cliJobs(convs []*Conversation, tmp string, budgets []int, every int, res *cliResult) ([]cliJob, map[*Conversation][2]string, error) {
	var jobs []cliJob
	var window, retriever scorer
	var keep []bool
	res.hostAsked, res.retrieved = make([]int, len(budgets)), make([]int, len(budgets))
	plain := Formula{Relevance: 1} // the plain BM25 retriever's arm
	files := make(map[*Conversation][2]string)
	for ci, c := range convs {
		dir := filepath.Join(tmp, strconv.Itoa(ci))
		if err := os.Mkdir(dir, 0o755); err != nil {
			return nil, nil, err
		}
		tpl, turns, err := writeConversation(dir, c)
		if err != nil {
			return nil, nil, err
		}
		files[c] = [2]string{tpl, turns}
		for j := 0; j < len(c.Questions); j += max(every, 1) {
			q, err := writeQuestion(dir, c, j, c.askedAt(0))
			if err != nil {
				return nil, nil, err
			}
			score := window.scores(Formula{Recency: 1}, c, c.askedAt(0))
			// A host's retriever: the plain BM25 arm's scores, given with
			// --relevance (the engine's own relevance then does not count).
			retriever.relevance(c, j, lexical.Params{})
			host, err := writeRelevance(dir, c, j, retriever.rel)
			if err != nil {
				return nil, nil, err
			}
			rscore := retriever.scores(plain, c, c.askedAt(0))
			for b, budget := range budgets {
				keep = window.fill(Formula{Recency: 1}, c, j, score, budget, keep)
				jobs = append(jobs, cliJob{c: c, j: j, b: b, args: renderArgs(tpl, turns, q, c, j, budget, c.askedAt(0), res.query, ""), window: answerable(&c.Questions[j], keep)})
				keep = retriever.fill(plain, c, j, rscore, budget, keep)
				if answerable(&c.Questions[j], keep) {
					res.retrieved[b]++
				}
				hostArgs := append(renderArgs(tpl, turns, q, c, j, budget, c.askedAt(0), false, ""), "--relevance", host)
				jobs = append(jobs, cliJob{c: c, j: j, b: b, args: hostArgs, host: true})
			}
		}
	}
	return jobs, files, nil
}

// runCLI runs the CLI arm: every every-th question at each budget, from
// scratch, and the first sticky questions of each conversation one after
// another with a learned-state file at stickyBudget tokens. Without
// --query it also compares each render with the simulated sliding window,
// which the engine is while it has no relevance: a check of the
// simulation.
func runCLI(bin string, convs []*Conversation, budgets []int, every, sticky int) (*cliResult, error) {
	res := &cliResult{query: hasQueryFlag(bin), asked: make([]int, len(budgets))}
	tmp, err := os.MkdirTemp("", "relevance-cli-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	jobs, files, err := cliJobs(convs, tmp, budgets, every, res)
	if err != nil {
		return nil, err
	}
	hits := make([]int, len(budgets))
	res.hostHits = make([]int, len(budgets))
	var mu sync.Mutex
	var firstErr error
	work := make(chan cliJob)
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			for jb := range work {
				kept, err := renderKept(bin, jb.args)
				mu.Lock()
				switch {
				case err != nil:
					if firstErr == nil {
						firstErr = err
					}
				case jb.host:
					res.hostAsked[jb.b]++
					if cliAnswerable(jb.c, jb.j, kept) {
						res.hostHits[jb.b]++
					}
				default:
					ok := cliAnswerable(jb.c, jb.j, kept)
					res.asked[jb.b]++
					res.renders++
					if ok {
						hits[jb.b]++
					}
					if !res.query && ok != jb.window {
						res.disagree++
					}
				}
				mu.Unlock()
			}
		})
	}
	for _, jb := range jobs {
		work <- jb
	}
	close(work)
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	res.recall = make(recall, len(budgets))
	for b := range budgets {
		res.recall[b] = float64(hits[b]) / float64(max(res.asked[b], 1))
	}
	if err := runSticky(bin, convs, tmp, files, every, sticky, res); err != nil {
		return nil, err
	}
	return res, nil
}

// runSticky asks the first sticky of the questions the fresh arm asks
// (every every-th) of each conversation one after another in one session,
// with a learned-state file, and sets res.sticky and res.stickyN.
func runSticky(bin string, convs []*Conversation, tmp string, files map[*Conversation][2]string, every, sticky int, res *cliResult) error {
	hitsSticky := 0
	for ci, c := range convs {
		dir := filepath.Join(tmp, strconv.Itoa(ci))
		state := filepath.Join(dir, "state.json")
		// The questions the fresh arm asks (every every-th), the first
		// sticky of them, one after another in one session.
		for n, j := 0, 0; n < sticky && j < len(c.Questions); n, j = n+1, j+max(every, 1) {
			q, err := writeQuestion(dir, c, j, c.askedAt(j))
			if err != nil {
				return err
			}
			kept, err := renderKept(bin, renderArgs(files[c][0], files[c][1], q, c, j, stickyBudget, c.askedAt(j), res.query, state))
			if err != nil {
				return err
			}
			if cliAnswerable(c, j, kept) {
				hitsSticky++
			}
			res.stickyN++
		}
	}
	res.sticky = float64(hitsSticky) / float64(max(res.stickyN, 1))
	return nil
}

// reportCLI runs the CLI arm and prints what it measured.
func reportCLI(w io.Writer, bin string, convs []*Conversation, budgets []int, every, sticky int) error {
	res, err := runCLI(bin, convs, budgets, every, sticky)
	if err != nil {
		return err
	}
	how := "without --query (the binary has none: the engine decides alone)"
	if res.query {
		how = "with --query"
	}
	fmt.Fprintf(w, "\nThe CLI (%s), every %d-th question, `render --fresh --format json`, %s:\n\n", bin, every, how)
	table(w, budgets)
	row(w, fmt.Sprintf("contextasm render (%d questions)", res.asked[0]), res.recall)
	if !res.query {
		fmt.Fprintf(w, "\nRenders whose answerability differs from the simulated sliding window: %d of %d.\n", res.disagree, res.renders)
	}
	host, alone := make(recall, len(budgets)), make(recall, len(budgets))
	for b := range budgets {
		host[b] = float64(res.hostHits[b]) / float64(max(res.hostAsked[b], 1))
		alone[b] = float64(res.retrieved[b]) / float64(max(res.hostAsked[b], 1))
	}
	fmt.Fprintf(w, "\nThe CLI with `--relevance` carrying the plain BM25 retriever's scores (`render --fresh`, no --query), against that retriever alone on the same questions:\n\n")
	table(w, budgets)
	row(w, fmt.Sprintf("contextasm render --relevance (%d questions)", res.hostAsked[0]), host)
	row(w, "the retriever alone (simulated)", alone)
	if res.stickyN > 0 {
		fmt.Fprintf(w, "\nThe CLI, the first %d of those questions of each conversation one after another with `--state` (no --fresh) at %d tokens: %.2f (%d questions)\n",
			sticky, stickyBudget, res.sticky, res.stickyN)
	}
	return nil
}

// writeRelevance writes the host scores of question j, each turn's rel
// that is positive, as a --relevance file.
func writeRelevance(dir string, c *Conversation, j int, rel []float64) (string, error) {
	m := make(map[string]float64)
	for i, r := range rel {
		if r > 0 {
			m[c.Turns[i].ID] = r
		}
	}
	b, err := json.Marshal(m)
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, fmt.Sprintf("relevance-%d.json", j))
	return path, os.WriteFile(path, b, 0o644)
}
