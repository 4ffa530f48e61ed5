package contextasm_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/contextasm/contextasm/contextasm"
	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/feedback"
	"github.com/contextasm/contextasm/outcome"
)

// rateRules are the founding design's conflicting pair: "the rate may not
// exceed 15%" against "small businesses may go up to 18%".
func rateRules() []declare.Declaration {
	cap15 := global("rate-cap-15", declare.Constraint, "The rate may not exceed 15%.")
	cap15.TrustScore, cap15.ConflictKey = ptr(0.6), "max-rate"
	cap18 := global("rate-sb-18", declare.Constraint, "Small businesses may go up to 18%.")
	cap18.TrustScore, cap18.ConflictKey = ptr(0.5), "max-rate"
	return []declare.Declaration{cap15, cap18}
}

func winnerOf(t *testing.T, res *contextasm.Result) outcome.Conflict {
	t.Helper()
	cs := res.Conflicts()
	if len(cs) != 1 || len(cs[0].Losers) != 1 {
		t.Fatalf("conflicts %+v, want one of two blocks", cs)
	}
	return cs[0]
}

// TestConflictFeedbackChangesWinner: learned trust overrides the declared
// one, so feedback that lowers the winner's trust below the other's makes
// the other the winner, and the events say so with the learned trusts.
func TestConflictFeedbackChangesWinner(t *testing.T) {
	tpl := parseTemplate(t, learnTemplate)
	// A citation that costs trust: this host's answers cite rules they
	// then break.
	eng := newEngine(t, contextasm.Config{Policy: feedback.Policy{StartGain: -0.06}}, rateRules()...)
	req := contextasm.Request{Template: tpl, Now: demoNow}
	res := assemble(t, eng, req)
	c := winnerOf(t, res)
	if c.Winner != "rate-cap-15" || c.WinnerTrust != 0.6 || c.Losers[0].Trust != 0.5 || c.Losers[0].Rule != outcome.RuleTrust {
		t.Fatalf("before feedback: %+v, want rate-cap-15 (0.6) over rate-sb-18 (0.5)", c)
	}
	if !strings.Contains(res.Text, "15%") || strings.Contains(res.Text, "18%") {
		t.Fatalf("text %q, want the 15%% rule only", res.Text)
	}
	for step, wantWinner := range []string{"rate-cap-15", "rate-sb-18"} { // 0.54, then 0.48
		if _, err := eng.Feedback(t.Context(), res, `<memory_ref id="rate-cap-15"/> says so.`); err != nil {
			t.Fatal(err)
		}
		res = assemble(t, eng, req)
		c = winnerOf(t, res)
		if c.Winner != wantWinner {
			t.Fatalf("after %d feedback: winner %s, want %s (%+v)", step+1, c.Winner, wantWinner, c)
		}
	}
	learned := eng.State().Trust["rate-cap-15"]
	if c.Losers[0].RequestID != "rate-cap-15" || c.Losers[0].Trust != learned || c.WinnerTrust != 0.5 {
		t.Fatalf("conflict %+v; want rate-cap-15 at its learned trust %v losing to 0.5", c, learned)
	}
	var ev *contextasm.Event
	for i, e := range res.Events() {
		if e.Reason == outcome.ReasonConflict {
			ev = &res.Events()[i]
		}
	}
	if ev == nil || ev.RequestID != "rate-cap-15" || ev.By != "rate-sb-18" || ev.Conflict.Trust != learned || ev.Conflict.ByTrust != 0.5 {
		t.Fatalf("conflict event %+v", ev)
	}
	if !strings.Contains(res.Text, "18%") || strings.Contains(res.Text, "15%") {
		t.Fatalf("text %q, want the 18%% rule only", res.Text)
	}
}

func TestConflictRequiredPairFails(t *testing.T) {
	decls := rateRules()
	decls[0].Required, decls[1].Required = true, true
	eng := newEngine(t, contextasm.Config{}, decls...)
	_, err := eng.Assemble(t.Context(), contextasm.Request{Template: parseTemplate(t, learnTemplate), Now: demoNow})
	var ce *outcome.ConflictError
	if !errors.Is(err, contextasm.ErrConflict) || !errors.As(err, &ce) || errors.Is(err, contextasm.ErrBudgetTooSmall) {
		t.Fatalf("error %v, want ErrConflict only", err)
	}
	if len(ce.Keys) != 1 || ce.Keys[0].Key != "max-rate" || strings.Join(ce.Keys[0].IDs, ",") != "rate-cap-15,rate-sb-18" {
		t.Fatalf("conflict error %+v", ce.Keys)
	}
}

// TestConflictDumpAndAudit: the dump and the audit record list the
// conflict (key, winner, losers, trusts), and the audit record carries no
// content of either block.
func TestConflictDumpAndAudit(t *testing.T) {
	var log bytes.Buffer
	eng := newEngine(t, contextasm.Config{Audit: slog.New(slog.NewJSONHandler(&log, nil))}, rateRules()...)
	res := assemble(t, eng, contextasm.Request{Template: parseTemplate(t, learnTemplate), Now: demoNow})
	want := `[{"key":"max-rate","winner":"rate-cap-15","winner_trust":0.6,"losers":[{"request_id":"rate-sb-18","trust":0.5,"rule":"trust"}]}]`
	var dump struct {
		Conflicts json.RawMessage `json:"conflicts"`
	}
	if err := json.Unmarshal([]byte(dumpJSON(t, res)), &dump); err != nil {
		t.Fatal(err)
	}
	if string(dump.Conflicts) != want {
		t.Fatalf("dump conflicts %s\nwant %s", dump.Conflicts, want)
	}
	var rec struct {
		Conflicts json.RawMessage `json:"conflicts"`
	}
	if err := json.Unmarshal(log.Bytes(), &rec); err != nil {
		t.Fatalf("%v: %s", err, log.Bytes())
	}
	if string(rec.Conflicts) != want {
		t.Fatalf("audit conflicts %s\nwant %s", rec.Conflicts, want)
	}
	if bytes.Contains(log.Bytes(), []byte("18%")) || bytes.Contains(log.Bytes(), []byte("15%")) {
		t.Fatalf("the audit record carries content: %s", log.Bytes())
	}
}
