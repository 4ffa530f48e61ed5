package contextasm_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/contextasm/contextasm/contextasm"
	"github.com/contextasm/contextasm/outcome"
)

// TestPrefixNamesNoHiddenBlock: a conversation's call made with a role,
// then one without it: the second call's prefix says the text lost a
// block, and no output of it names the block the role alone may see
// (it is counted as access_denied).
func TestPrefixNamesNoHiddenBlock(t *testing.T) {
	tpl, decls := loadDemo(t)
	eng := newEngine(t, contextasm.Config{}, decls...)
	req := contextasm.Request{Template: tpl, Now: demoNow, SessionID: "sess-4711", UserID: "u-ana", Roles: []string{"loan-agent", "credit-officer"}}
	first, err := eng.Assemble(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(first.Text, "policy-override-matrix") {
		t.Fatalf("fixture: the credit officer's text lacks policy-override-matrix:\n%s", first.Text)
	}
	req.Roles = []string{"loan-agent"}
	res, err := eng.Assemble(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if res.Prefix == nil || res.Prefix.Reason != outcome.PrefixRemoved || res.Prefix.FirstChangedBlock != "" {
		t.Errorf("prefix %+v, want removed, naming no block", res.Prefix)
	}
	js, err := json.Marshal(res.Dump())
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(js), "policy-override-matrix") {
		t.Errorf("the dump names policy-override-matrix:\n%s", js)
	}
	if res.ExcludedCounts[outcome.ReasonAccessDenied] == 0 {
		t.Errorf("excluded counts %v, want an access_denied block", res.ExcludedCounts)
	}
}
