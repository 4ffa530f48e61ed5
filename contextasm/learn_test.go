package contextasm_test

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/contextasm/contextasm/contextasm"
	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/feedback"
	"github.com/contextasm/contextasm/learned"
	"github.com/contextasm/contextasm/outcome"
)

const learnTemplate = `{"budget": 400, "sections": [
	{"name": "RULES", "priority": 1, "memory_types": ["constraint"], "max_tokens": 200, "render": "<rule id=\"{request_id}\">{content}</rule>"},
	{"name": "FACTS", "priority": 2, "memory_types": ["context"], "max_tokens": 40, "render": "{content}"}]}`

// Two facts of equal weight compete for a cap that holds one: the tie goes
// to "fact-a" by request_id, until feedback teaches that "fact-b" is cited.
func learnDecls() []declare.Declaration {
	fact := func(id string) declare.Declaration {
		d := global(id, declare.Context, "A fact that fills most of its section: "+strings.Repeat(id+" ", 8))
		d.SemanticWeight = ptr(0.5)
		return d
	}
	rule := global("rule-ages", declare.Constraint, "Never decide on the applicant's age.")
	rule.BreakOnViolation = true
	rule.ViolationPatterns = []string{`(?i)because of (his|her) age`}
	return []declare.Declaration{fact("fact-a"), fact("fact-b"), rule}
}

func statusOf(res *contextasm.Result, id string) (outcome.Status, float64) {
	for _, s := range res.Sections() {
		for _, b := range s.Blocks {
			if b.RequestID == id {
				return b.Status, b.Score
			}
		}
	}
	return outcome.StatusDropped, -1
}

func TestLearnedTrustChangesRanking(t *testing.T) {
	tpl := parseTemplate(t, learnTemplate)
	eng := newEngine(t, contextasm.Config{}, learnDecls()...)
	req := contextasm.Request{Template: tpl, Now: demoNow}
	before := assemble(t, eng, req)
	if st, _ := statusOf(before, "fact-a"); st != outcome.StatusKept {
		t.Fatalf("before feedback fact-a is %v, want kept (tie broken by id)", st)
	}
	_, scoreB := statusOf(before, "fact-b")

	// fact-b is not in the context, so citing it moves nothing.
	fb, err := eng.Feedback(t.Context(), before, `<memory_ref id="fact-b"/> and <memory_ref id="fact-a"/>`)
	if err != nil {
		t.Fatal(err)
	}
	if len(fb.UnknownRefs) != 1 || fb.UnknownRefs[0] != "fact-b" {
		t.Fatalf("unknown refs = %v, want fact-b (it was dropped)", fb.UnknownRefs)
	}

	// Now teach the engine through a context that kept fact-b.
	eng2 := newEngine(t, contextasm.Config{}, learnDecls()[1:]...)
	withB := assemble(t, eng2, req)
	for range 3 {
		if _, err := eng2.Feedback(t.Context(), withB, `<memory_ref id="fact-b"/> is what I used.`); err != nil {
			t.Fatal(err)
		}
	}
	if got := eng2.State().Trust["fact-b"]; got != 0.65 {
		t.Fatalf("learned trust = %v, want 0.65 after three start citations", got)
	}
	// Declaring fact-a now: fact-b's learned trust outranks it.
	if err := eng2.Declare(learnDecls()[0]); err != nil {
		t.Fatal(err)
	}
	after := assemble(t, eng2, req)
	stA, _ := statusOf(after, "fact-a")
	stB, newScoreB := statusOf(after, "fact-b")
	if stB != outcome.StatusKept || stA != outcome.StatusDropped {
		t.Errorf("after feedback: fact-a %v, fact-b %v; want fact-b kept, fact-a dropped", stA, stB)
	}
	if newScoreB <= scoreB {
		t.Errorf("fact-b score %v did not rise above %v", newScoreB, scoreB)
	}
}

func TestFeedbackViolationAndAudit(t *testing.T) {
	tpl := parseTemplate(t, learnTemplate)
	var audit bytes.Buffer
	eng := newEngine(t, contextasm.Config{Audit: slog.New(slog.NewJSONHandler(&audit, nil))}, learnDecls()...)
	res := assemble(t, eng, contextasm.Request{Template: tpl, Now: demoNow, ID: "turn-7"})
	fb, err := eng.Feedback(t.Context(), res, "Declined because of her age. <memory_ref id='rule-ages'/>")
	var ve *feedback.ViolationError
	if !errors.Is(err, feedback.ErrConstraintViolation) || !errors.As(err, &ve) || fb == nil {
		t.Fatalf("Feedback = %v, %v; want a violation with the result", fb, err)
	}
	if ve.Violations[0].RequestID != "rule-ages" {
		t.Errorf("violation names %q", ve.Violations[0].RequestID)
	}
	if res.Audit().ModelResponseHash != "" || fb.ModelResponseHash == "" {
		t.Errorf("Feedback modified the Result (%q) or gave no hash (%q)", res.Audit().ModelResponseHash, fb.ModelResponseHash)
	}
	lines := strings.Split(strings.TrimSpace(audit.String()), "\n")
	if len(lines) != 2 || strings.Contains(lines[0], "model_response_hash") || !strings.Contains(lines[1], `"model_response_hash":"`+fb.ModelResponseHash+`"`) {
		t.Errorf("audit log: want an assembly record, then one with the response hash:\n%s", audit.String())
	}
	if strings.Contains(audit.String(), "because of her age") || strings.Contains(audit.String(), "applicant's age") {
		t.Error("audit log carries content")
	}
	// A clean response after a violation is not an error.
	if _, err := eng.Feedback(t.Context(), res, "Approved."); err != nil {
		t.Errorf("clean response: %v", err)
	}
	if _, err := eng.Feedback(t.Context(), nil, "x"); !errors.Is(err, contextasm.ErrInvalid) {
		t.Errorf("nil result: %v", err)
	}
}

func TestStatePersistsAcrossEngines(t *testing.T) {
	tpl := parseTemplate(t, learnTemplate)
	path := filepath.Join(t.TempDir(), "state.json")
	cfg := contextasm.Config{State: learned.NewFileStore(path)}
	eng := newEngine(t, cfg, learnDecls()[1:]...)
	res := assemble(t, eng, contextasm.Request{Template: tpl, Now: demoNow})
	if _, err := eng.Feedback(t.Context(), res, `<memory_ref id="fact-b"/>`); err != nil {
		t.Fatal(err)
	}
	want := eng.State()
	if want.Trust["fact-b"] != 0.55 || want.Heat["fact-b"].Refs != 1 || want.Heat["fact-b"].Included != 1 {
		t.Fatalf("state after one render and one citation: %+v", want)
	}
	// Feedback and heat reach the file in the background; Flush waits.
	if err := eng.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	// A new engine on the same file starts where the old one stopped.
	eng2 := newEngine(t, cfg, learnDecls()[1:]...)
	if got := eng2.State(); got.Trust["fact-b"] != 0.55 || got.Heat["fact-b"] != want.Heat["fact-b"] {
		t.Errorf("reloaded state %+v, want %+v", got, want)
	}
	res2 := assemble(t, eng2, contextasm.Request{Template: tpl, Now: demoNow})
	for _, b := range res2.Sections()[1].Blocks {
		if b.RequestID == "fact-b" && b.Trust != 0.55 {
			t.Errorf("reloaded engine ranks fact-b with trust %v, want the learned 0.55", b.Trust)
		}
	}
	if err := eng2.SaveState(); err != nil {
		t.Fatal(err)
	}
	st, err := learned.NewFileStore(path).Load()
	if err != nil || st.Heat["fact-b"].Included != 2 {
		t.Errorf("saved heat: %+v, %v; want 2 renders included", st.Heat["fact-b"], err)
	}
	// An unknown version is an error, not a reset.
	bad := filepath.Join(t.TempDir(), "v9.json")
	if err := writeFileString(bad, `{"version": 9}`); err != nil {
		t.Fatal(err)
	}
	if _, err := contextasm.New(contextasm.Config{State: learned.NewFileStore(bad)}); !errors.Is(err, learned.ErrStateVersion) {
		t.Errorf("New with a version-9 state: %v", err)
	}
}

// Many goroutines assemble and give feedback on one Engine; run with -race.
func TestConcurrentAssembleAndFeedback(t *testing.T) {
	tpl := parseTemplate(t, learnTemplate)
	eng := newEngine(t, contextasm.Config{}, learnDecls()...)
	const workers, rounds = 8, 25
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Go(func() {
			for r := range rounds {
				res, err := eng.Assemble(t.Context(), contextasm.Request{Template: tpl, Now: demoNow, ID: fmt.Sprintf("w%d-r%d", w, r)})
				if err != nil {
					errs <- err
					return
				}
				if _, err := eng.Feedback(t.Context(), res, `<memory_ref id="rule-ages"/> then, much later in a longer answer, <memory_ref id="fact-a"/>`); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	st := eng.State()
	if h := st.Heat["rule-ages"]; h.Included != workers*rounds || h.Refs != workers*rounds {
		t.Errorf("rule-ages heat %+v, want %d renders and citations", h, workers*rounds)
	}
	if st.Trust["rule-ages"] != 0.99 {
		t.Errorf("trust after %d start citations = %v, want the 0.99 ceiling", workers*rounds, st.Trust["rule-ages"])
	}
}

func writeFileString(name, s string) error { return os.WriteFile(name, []byte(s), 0o644) }

// A warm re-assembly (nothing changed) reuses the last output but still
// counts as a render in the heat.
func TestWarmReassemblyCountsHeat(t *testing.T) {
	tpl := parseTemplate(t, learnTemplate)
	eng := newEngine(t, contextasm.Config{}, learnDecls()...)
	req := contextasm.Request{Template: tpl, Now: demoNow}
	first := assemble(t, eng, req)
	second := assemble(t, eng, req)
	if first.Text != second.Text || !slices.Equal(first.Events(), second.Events()) {
		t.Fatal("warm re-assembly differs")
	}
	st := eng.State()
	if h := st.Heat["fact-a"]; h.Included != 2 {
		t.Errorf("fact-a heat %+v, want 2 renders included", h)
	}
	if h := st.Heat["fact-b"]; h.Dropped != 2 {
		t.Errorf("fact-b heat %+v, want 2 renders dropped", h)
	}
	// Another request (a later now) is assembled afresh.
	later := req
	later.Now = demoNow.Add(time.Hour)
	assemble(t, eng, later)
	if h := eng.State().Heat["fact-a"]; h.Included != 3 {
		t.Errorf("after a third render: %+v", h)
	}
}

// Concurrent feedback loses nothing: once flushed, the file holds every
// citation, and the trust they add up to.
func TestConcurrentFeedbackSavesLatestState(t *testing.T) {
	tpl := parseTemplate(t, learnTemplate)
	path := filepath.Join(t.TempDir(), "state.json")
	eng := newEngine(t, contextasm.Config{State: learned.NewFileStore(path)}, learnDecls()...)
	res := assemble(t, eng, contextasm.Request{Template: tpl, Now: demoNow})
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 5 {
				if _, err := eng.Feedback(t.Context(), res, `<memory_ref id="fact-a"/>`); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	if err := eng.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	saved, err := learned.NewFileStore(path).Load()
	if err != nil {
		t.Fatal(err)
	}
	if want := eng.State(); saved.Heat["fact-a"] != want.Heat["fact-a"] || saved.Trust["fact-a"] != want.Trust["fact-a"] || want.Heat["fact-a"].Refs != 40 {
		t.Errorf("saved %+v / %v, engine %+v / %v", saved.Heat["fact-a"], saved.Trust["fact-a"], want.Heat["fact-a"], want.Trust["fact-a"])
	}
}

// Config.FeedbackLimits bound the checking of violation patterns: past
// them Feedback fails with feedback.ErrResponseTooLarge and learns
// nothing; the defaults check the same response; a negative limit is
// refused.
func TestFeedbackLimits(t *testing.T) {
	tpl := parseTemplate(t, learnTemplate)
	req := contextasm.Request{Template: tpl, Now: demoNow}
	response := `<memory_ref id="fact-a"/> ` + strings.Repeat("is what I used. ", 10)

	tight := newEngine(t, contextasm.Config{FeedbackLimits: feedback.Limits{MaxResponseBytes: 64}}, learnDecls()...)
	if _, err := tight.Feedback(t.Context(), assemble(t, tight, req), response); !errors.Is(err, feedback.ErrResponseTooLarge) {
		t.Fatalf("a %d-byte response under a 64-byte limit: %v, want ErrResponseTooLarge", len(response), err)
	}
	if got := tight.State().Trust["fact-a"]; got != 0 {
		t.Errorf("trust learned from an unchecked response: %v", got)
	}

	def := newEngine(t, contextasm.Config{}, learnDecls()...)
	if _, err := def.Feedback(t.Context(), assemble(t, def, req), response); err != nil {
		t.Fatalf("the same response under the default limits: %v", err)
	}
	if got := def.State().Trust["fact-a"]; got == 0 {
		t.Error("no trust learned under the default limits")
	}

	if _, err := contextasm.New(contextasm.Config{FeedbackLimits: feedback.Limits{MaxMatchWork: -1}}); !errors.Is(err, contextasm.ErrInvalid) {
		t.Errorf("a negative FeedbackLimits field: %v, want ErrInvalid", err)
	}
}
