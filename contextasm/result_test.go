package contextasm_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"log/slog"
	"maps"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/contextasm/contextasm/contextasm"
	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/outcome"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

func TestResultFields(t *testing.T) {
	tpl, decls := loadDemo(t)
	eng := newEngine(t, contextasm.Config{}, decls...)
	req := demoRequest(tpl)
	res := assemble(t, eng, req)

	if res.Fingerprint != tpl.Fingerprint() || !regexp.MustCompile(`^sha256:[0-9a-f]{16}$`).MatchString(res.Fingerprint) {
		t.Errorf("Fingerprint = %q, want the template's %q", res.Fingerprint, tpl.Fingerprint())
	}
	sum := sha256.Sum256([]byte(res.Text))
	if want := "sha256:" + hex.EncodeToString(sum[:]); res.RenderHash != want {
		t.Errorf("RenderHash = %q, want %q", res.RenderHash, want)
	}
	if want := o200k(t).Count(res.Text); res.TotalTokens != want {
		t.Errorf("TotalTokens = %d, the tokenizer counts %d", res.TotalTokens, want)
	}
	if res.TotalTokens > res.Budget || res.Budget != tpl.Budget() {
		t.Errorf("TotalTokens %d, Budget %d; want at most the template's budget %d", res.TotalTokens, res.Budget, tpl.Budget())
	}
	if !strings.HasPrefix(res.Text, tpl.Header()+"\n") || !strings.Contains(tpl.Header(), "fp:"+res.Fingerprint+"]") {
		t.Errorf("Text does not open with the header line %q:\n%s", tpl.Header(), res.Text)
	}
	if res.Encoding != tpl.Encoding() || !res.Now.Equal(req.Now) {
		t.Errorf("Encoding %q, Now %v; want %q, %v", res.Encoding, res.Now, tpl.Encoding(), req.Now)
	}

	// Sections come in template order; every block in the text is where
	// its Offset and Length say.
	if len(res.Sections()) != tpl.NumSections() {
		t.Fatalf("%d sections, want %d", len(res.Sections()), tpl.NumSections())
	}
	content := map[string]string{}
	for _, d := range decls {
		content[d.RequestID] = d.Content
	}
	inText := 0
	for i, sec := range res.Sections() {
		if sec.Name != tpl.Section(i).Name() {
			t.Errorf("section %d is %q, want %q", i, sec.Name, tpl.Section(i).Name())
		}
		for _, b := range sec.Blocks {
			if b.Status == outcome.StatusDropped {
				if b.Offset != 0 || b.Length != 0 {
					t.Errorf("dropped block %s has offset %d, length %d", b.RequestID, b.Offset, b.Length)
				}
				continue
			}
			inText++
			part := res.Text[b.Offset : b.Offset+b.Length]
			prefix := content[b.RequestID][:20]
			if !strings.Contains(part, prefix) {
				t.Errorf("block %s: text at its offset is %q, want its content (%q…)", b.RequestID, part, prefix)
			}
		}
	}
	if inText == 0 {
		t.Fatal("no block in the text")
	}
}

func TestAuditRecord(t *testing.T) {
	tpl, decls := loadDemo(t)
	eng := newEngine(t, contextasm.Config{}, decls...)

	req := demoRequest(tpl)
	req.ID = "turn-42"
	res := assemble(t, eng, req)
	a := res.Audit()
	if a.RequestID != "turn-42" {
		t.Errorf("Audit.RequestID = %q, want Request.ID", a.RequestID)
	}
	if a.Fingerprint != res.Fingerprint || a.RenderHash != res.RenderHash || a.RenderedTokens != res.TotalTokens || a.Budget != res.Budget {
		t.Errorf("Audit %+v does not match the result (fingerprint %s, render hash %s, %d tokens, budget %d)",
			a, res.Fingerprint, res.RenderHash, res.TotalTokens, res.Budget)
	}
	if !reflect.DeepEqual(a.Events, res.Events()) || len(a.Events) == 0 {
		t.Errorf("Audit.Events = %+v, want the result's %+v", a.Events, res.Events())
	}
	if want := []string{"constraint", "context", "history", "external"}; !slices.Equal(a.DeclaredMemoryTypes, want) {
		t.Errorf("DeclaredMemoryTypes = %q, want %q", a.DeclaredMemoryTypes, want)
	}

	// Without Request.ID the record is named after the render hash.
	res = assemble(t, eng, demoRequest(tpl))
	if want := "asm-" + strings.TrimPrefix(res.RenderHash, "sha256:")[:12]; res.Audit().RequestID != want {
		t.Errorf("Audit.RequestID = %q, want %q", res.Audit().RequestID, want)
	}
	if !regexp.MustCompile(`^asm-[0-9a-f]{12}$`).MatchString(res.Audit().RequestID) {
		t.Errorf("Audit.RequestID = %q, want asm- and 12 hex digits", res.Audit().RequestID)
	}

	// The record lists the result's events (Results are read-only and
	// share their slices; see Result).
	if !slices.Equal(res.Audit().Events, res.Events()) {
		t.Error("Audit.Events differ from Result.Events")
	}
}

func TestAuditDeclaredMemoryTypes(t *testing.T) {
	tpl := parseTemplate(t, simpleTemplate)
	tests := []struct {
		name  string
		decls []declare.Declaration
		want  []string
	}{
		{"none", nil, []string{}},
		{"present types only, in the fixed order", []declare.Declaration{
			global("h", declare.History, "a turn"),
			global("x", declare.External, "a source"),
			global("c", declare.Constraint, "a rule"),
			global("h2", declare.History, "another turn"),
		}, []string{"constraint", "history", "external"}},
		{"types hidden from the request do not count", []declare.Declaration{
			global("c", declare.Constraint, "a rule"),
			{RequestID: "other", MemoryType: declare.History, Scope: declare.ScopeSession, SessionID: "someone-else", Content: "not yours"},
		}, []string{"constraint"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			eng := newEngine(t, contextasm.Config{}, tt.decls...)
			res := assemble(t, eng, contextasm.Request{Template: tpl, Now: demoNow})
			if !slices.Equal(res.Audit().DeclaredMemoryTypes, tt.want) || res.Audit().DeclaredMemoryTypes == nil {
				t.Errorf("DeclaredMemoryTypes = %#v, want %#v", res.Audit().DeclaredMemoryTypes, tt.want)
			}
		})
	}
}

// auditKeys are the fields of an audit record (docs/dump.md).
var auditKeys = []string{"request_id", "fingerprint", "render_hash", "declared_memory_types", "rendered_tokens", "budget", "events"}

func TestAuditLogIsOneJSONLineWithoutContent(t *testing.T) {
	tpl, decls := loadDemo(t)
	eng := newEngine(t, contextasm.Config{}, decls...)
	res := assemble(t, eng, demoRequest(tpl))

	var buf bytes.Buffer
	audit := res.Audit()
	audit.Log(context.Background(), slog.New(slog.NewJSONHandler(&buf, nil)))
	line := buf.String()
	if strings.Count(line, "\n") != 1 || !strings.HasSuffix(line, "\n") {
		t.Fatalf("want one JSON line, got %q", line)
	}
	var rec map[string]json.RawMessage
	if err := json.Unmarshal([]byte(line), &rec); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, line)
	}
	for _, k := range auditKeys {
		if _, ok := rec[k]; !ok {
			t.Errorf("audit line lacks %q: %s", k, line)
		}
	}
	var got struct {
		RequestID           string             `json:"request_id"`
		Fingerprint         string             `json:"fingerprint"`
		RenderHash          string             `json:"render_hash"`
		DeclaredMemoryTypes []string           `json:"declared_memory_types"`
		RenderedTokens      int                `json:"rendered_tokens"`
		Budget              int                `json:"budget"`
		Events              []contextasm.Event `json:"events"`
	}
	if err := json.Unmarshal([]byte(line), &got); err != nil {
		t.Fatal(err)
	}
	a := res.Audit()
	if got.RequestID != a.RequestID || got.Fingerprint != a.Fingerprint || got.RenderHash != a.RenderHash ||
		!slices.Equal(got.DeclaredMemoryTypes, a.DeclaredMemoryTypes) || got.RenderedTokens != a.RenderedTokens ||
		got.Budget != a.Budget || !reflect.DeepEqual(got.Events, a.Events) {
		t.Errorf("audit line %s\ndoes not carry the record %+v", line, a)
	}

	// No block content, not even a piece of it, in the line or in any
	// string it decodes to.
	var decoded any
	if err := json.Unmarshal([]byte(line), &decoded); err != nil {
		t.Fatal(err)
	}
	texts := []string{line}
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			texts = append(texts, v)
		case []any:
			for _, e := range v {
				walk(e)
			}
		case map[string]any:
			for _, e := range v {
				walk(e)
			}
		}
	}
	walk(decoded)
	all := strings.Join(texts, "\x00")
	for _, d := range decls {
		for _, piece := range []string{d.Content, d.Content[:24]} {
			if strings.Contains(all, piece) {
				t.Errorf("audit line carries content of %s (%q): %s", d.RequestID, piece, line)
			}
		}
	}
}

func TestConfigAuditLogsEveryAssembly(t *testing.T) {
	tpl, decls := loadDemo(t)
	var buf bytes.Buffer
	eng := newEngine(t, contextasm.Config{Audit: slog.New(slog.NewJSONHandler(&buf, nil))}, decls...)
	var hashes []string
	for _, id := range []string{"first", "second"} {
		req := demoRequest(tpl)
		req.ID = id
		hashes = append(hashes, assemble(t, eng, req).RenderHash)
	}
	if _, err := eng.Assemble(context.Background(), contextasm.Request{}); err == nil {
		t.Fatal("invalid request succeeded")
	}
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d audit lines for 2 assemblies and a failed one, want 2:\n%s", len(lines), buf.String())
	}
	for i, line := range lines {
		var rec struct {
			Msg        string `json:"msg"`
			RequestID  string `json:"request_id"`
			RenderHash string `json:"render_hash"`
		}
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatal(err)
		}
		if want := []string{"first", "second"}[i]; rec.RequestID != want || rec.RenderHash != hashes[i] || rec.Msg != "contextasm.assembly" {
			t.Errorf("line %d = %+v, want request_id %q, render_hash %s", i, rec, want, hashes[i])
		}
	}
}

func TestDumpRoundTrips(t *testing.T) {
	tpl, decls := loadDemo(t)
	res := assemble(t, newEngine(t, contextasm.Config{}, decls...), demoRequest(tpl))
	dump := res.Dump()

	data, err := json.Marshal(dump)
	if err != nil {
		t.Fatal(err)
	}
	var back contextasm.Dump
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	// BlockResult.Index is for the process that assembled (json:"-").
	for si := range dump.Sections {
		for bi := range back.Sections[si].Blocks {
			back.Sections[si].Blocks[bi].Index = dump.Sections[si].Blocks[bi].Index
		}
	}
	if !reflect.DeepEqual(back, dump) {
		t.Errorf("Dump does not round-trip:\ngot  %+v\nwant %+v", back, dump)
	}
	again, err := json.Marshal(back)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again, data) {
		t.Errorf("re-marshalled dump differs:\n%s\n%s", again, data)
	}

	// The shape of `render --format json` (docs/dump.md).
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		t.Fatal(err)
	}
	want := []string{"budget", "encoding", "events", "excluded_counts", "fingerprint", "now", "protocol_version", "query", "render_hash", "sections", "summarize_candidates", "text", "total_tokens"}
	if got := slices.Sorted(maps.Keys(top)); !slices.Equal(got, want) {
		t.Errorf("dump keys %q, want %q", got, want)
	}
	if dump.ProtocolVersion != "1.2" || dump.Now != "2026-11-30T09:00:00Z" || dump.Text != res.Text || dump.TotalTokens != res.TotalTokens {
		t.Errorf("dump header fields: %q %q, text equal %v, tokens %d", dump.ProtocolVersion, dump.Now, dump.Text == res.Text, dump.TotalTokens)
	}
	statuses := map[string]bool{}
	for _, sec := range dump.Sections {
		for _, b := range sec.Blocks {
			s, _ := b.Status.MarshalText()
			statuses[string(s)] = true
		}
	}
	if !statuses["kept"] || !statuses["cut"] || !statuses["dropped"] {
		t.Errorf("fixture: statuses %v, want kept, cut and dropped to round-trip", statuses)
	}
}

// TestResultOutlivesNextAssembly: an Engine pools its scratch space, so a
// Result must own its memory; a later assembly must not change it.
func TestResultOutlivesNextAssembly(t *testing.T) {
	tpl, decls := loadDemo(t)
	eng := newEngine(t, contextasm.Config{}, decls...)
	res := assemble(t, eng, demoRequest(tpl))
	before := dumpJSON(t, res)

	other := demoRequest(tpl)
	other.SessionID, other.UserID = "sess-5012", "u-rui"
	for range 3 {
		if o := assemble(t, eng, other); o.Text == res.Text {
			t.Fatal("fixture: the other request renders the same text")
		}
	}
	if after := dumpJSON(t, res); after != before {
		t.Errorf("a later assembly changed an earlier Result:\nbefore %s\nafter  %s", before, after)
	}
}

// TestDemoGolden pins the demo's whole dump. Regenerate with
// `go test ./contextasm -run TestDemoGolden -update` after an intended
// change, and review the diff.
func TestDemoGolden(t *testing.T) {
	tpl, decls := loadDemo(t)
	res := assemble(t, newEngine(t, contextasm.Config{}, decls...), demoRequest(tpl))
	got, err := json.MarshalIndent(res.Dump(), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	const golden = "testdata/demo.golden.json"
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("the demo's dump differs from %s (run with -update after an intended change):\n%s", golden, got)
	}
}
