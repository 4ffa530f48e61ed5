package contextasm_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/contextasm/contextasm/contextasm"
	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/outcome"
	"github.com/contextasm/contextasm/view"
)

// visibleTo reports whether d may be seen by a request of that session,
// user and roles: the declaration-side rule, restated independently of the
// engine.
func visibleTo(d *declare.Declaration, session, user string, roles []string) bool {
	switch {
	case d.Scope == declare.ScopeSession && d.SessionID != session,
		d.Scope == declare.ScopeUser && d.UserID != user:
		return false
	case len(d.Roles) > 0 && !slices.ContainsFunc(d.Roles, func(r string) bool { return slices.Contains(roles, r) }):
		return false
	}
	return d.ForAssistant()
}

// TestTenantsSeeOnlyTheirOwnIDs: an assembly for user u-mallory (another
// session, without the credit-officer role) never names a block of u-ana,
// of her session or of a role it lacks, in the dump, the report, the HTML
// page or the audit record. The exclusions are counted.
func TestTenantsSeeOnlyTheirOwnIDs(t *testing.T) {
	tpl, decls := loadDemo(t)
	var audit bytes.Buffer
	eng := newEngine(t, contextasm.Config{Audit: slog.New(slog.NewJSONHandler(&audit, nil))}, decls...)
	req := contextasm.Request{Template: tpl, Now: demoNow, SessionID: "sess-9000", UserID: "u-mallory", Roles: []string{"loan-agent"}}

	var hidden []string
	for i := range decls {
		if !visibleTo(&decls[i], req.SessionID, req.UserID, req.Roles) {
			hidden = append(hidden, decls[i].RequestID)
		}
	}
	if !slices.Contains(hidden, "user-u-ana-preferences") || !slices.Contains(hidden, "policy-override-matrix") || len(hidden) < 10 {
		t.Fatalf("fixture: hidden blocks %q", hidden)
	}

	outputs := func(req contextasm.Request) map[string]string {
		audit.Reset()
		res, err := eng.Assemble(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		d := res.Dump()
		js, err := json.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		var report, page bytes.Buffer
		if err := view.WriteReport(&report, &d, view.ReportOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := view.WriteHTML(&page, &d); err != nil {
			t.Fatal(err)
		}
		return map[string]string{"dump": string(js), "report": report.String(), "html": page.String(), "audit": audit.String()}
	}
	for what, out := range outputs(req) {
		for _, id := range hidden {
			if strings.Contains(out, id) {
				t.Errorf("u-mallory's %s names %q", what, id)
			}
		}
	}
	res, err := eng.Assemble(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, n := range res.ExcludedCounts {
		total += n
	}
	if total != len(hidden) || res.ExcludedCounts[outcome.ReasonOutOfScope] == 0 || res.ExcludedCounts[outcome.ReasonAccessDenied] != 1 {
		t.Errorf("excluded counts %v, want %d blocks in all", res.ExcludedCounts, len(hidden))
	}
	if !maps.Equal(res.Audit().ExcludedCounts, res.ExcludedCounts) {
		t.Errorf("audit counts %v, result counts %v", res.Audit().ExcludedCounts, res.ExcludedCounts)
	}

	// The trusted debugging mode names them; the warm path keeps the two
	// modes apart.
	debug := req
	debug.ListHidden = true
	for what, out := range outputs(debug) {
		if !strings.Contains(out, "user-u-ana-preferences") {
			t.Errorf("ListHidden: %s does not name user-u-ana-preferences", what)
		}
	}
	for what, out := range outputs(req) {
		if strings.Contains(out, "user-u-ana-preferences") {
			t.Errorf("after a ListHidden assembly, the default %s names user-u-ana-preferences", what)
		}
	}
}

// TestRolesKeyedUnambiguously: roles ["a", "b"] and ["a\x00b"] must not
// share a warm-path entry: the second is refused, as is
// a control character in a session or user id, and role lists that join
// alike get different keys.
func TestRolesKeyedUnambiguously(t *testing.T) {
	tpl := parseTemplate(t, simpleTemplate)
	eng := newEngine(t, contextasm.Config{}, declare.Declaration{
		RequestID: "role-a-only", MemoryType: declare.Context, Scope: declare.ScopeGlobal, Roles: []string{"a"}, Content: "for role a",
	})
	ab, err := eng.Assemble(context.Background(), contextasm.Request{Template: tpl, Now: demoNow, Roles: []string{"a", "b"}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(ab.Text, "for role a") {
		t.Fatalf("roles a, b: the role-a block is missing:\n%s", ab.Text)
	}
	for _, req := range []contextasm.Request{
		{Template: tpl, Now: demoNow, Roles: []string{"a\x00b"}},
		{Template: tpl, Now: demoNow, Roles: []string{"a", "b\n"}},
		{Template: tpl, Now: demoNow, SessionID: "s\x001"},
		{Template: tpl, Now: demoNow, UserID: "u\x7f"},
	} {
		res, err := eng.Assemble(context.Background(), req)
		if !errors.Is(err, contextasm.ErrInvalid) || !strings.Contains(err.Error(), "control character") {
			t.Errorf("%+q %q %q: %v, want ErrInvalid about a control character", req.Roles, req.SessionID, req.UserID, err)
		}
		if res != nil {
			t.Errorf("%+q: a result came back with the error", req.Roles)
		}
	}
	// Roles that join alike with a separator: ["a,b"] vs ["a", "b"], and
	// ["ab"]: each gets its own assembly.
	for _, roles := range [][]string{{"a,b"}, {"ab"}, {""}, nil} {
		res, err := eng.Assemble(context.Background(), contextasm.Request{Template: tpl, Now: demoNow, Roles: roles})
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(res.Text, "for role a") {
			t.Errorf("roles %q see the role-a block:\n%s", roles, res.Text)
		}
	}
}

// TestAuditHashesRenderedBlocks: the audit record lists every block in the
// text with the SHA-256 of exactly its rendered span, cut ones marked cut,
// and the inputs the host recorded; still no content.
func TestAuditHashesRenderedBlocks(t *testing.T) {
	tpl, decls := loadDemo(t)
	var log bytes.Buffer
	eng := newEngine(t, contextasm.Config{Audit: slog.New(slog.NewJSONHandler(&log, nil))}, decls...)
	eng.SetInput("file:b.jsonl", strings.Repeat("b", 64))
	eng.SetInput("file:a.jsonl", strings.Repeat("a", 64))
	eng.SetInput("file:gone.jsonl", strings.Repeat("c", 64))
	eng.SetInput("file:gone.jsonl", "")
	res := assemble(t, eng, demoRequest(tpl))

	var want []outcome.AuditBlock
	cut := false
	for _, s := range res.Sections() {
		for _, b := range s.Blocks {
			if b.Status == outcome.StatusDropped {
				continue
			}
			cut = cut || b.Status == outcome.StatusCut
			sum := sha256.Sum256([]byte(res.Text[b.Offset : b.Offset+b.Length]))
			want = append(want, outcome.AuditBlock{RequestID: b.RequestID, Status: b.Status, SHA256: hex.EncodeToString(sum[:])})
		}
	}
	if !cut || len(want) < 10 {
		t.Fatalf("fixture: %d blocks in the text, a cut one: %v", len(want), cut)
	}
	if !slices.Equal(res.Audit().Blocks, want) {
		t.Errorf("audit blocks %+v\nwant %+v", res.Audit().Blocks, want)
	}
	inputs := []outcome.Input{{Name: "file:a.jsonl", SHA256: strings.Repeat("a", 64)}, {Name: "file:b.jsonl", SHA256: strings.Repeat("b", 64)}}
	if !slices.Equal(res.Audit().Inputs, inputs) {
		t.Errorf("audit inputs %+v, want %+v", res.Audit().Inputs, inputs)
	}
	// The logged line holds the same, and no block's content.
	var line struct {
		Blocks []outcome.AuditBlock `json:"blocks"`
		Inputs []outcome.Input      `json:"inputs"`
	}
	if err := json.Unmarshal(log.Bytes(), &line); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(line.Blocks, want) || !slices.Equal(line.Inputs, inputs) {
		t.Errorf("logged blocks/inputs differ from the record: %s", log.String())
	}
	for _, d := range decls {
		if len(d.Content) > 20 && strings.Contains(log.String(), d.Content[:20]) {
			t.Errorf("the audit line holds content of %s", d.RequestID)
		}
	}
}
