package declare_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/contextasm/contextasm/declare"
)

func TestLoadToolsValid(t *testing.T) {
	tools, err := declare.LoadToolsFile("testdata/tools/valid.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if len(tools) != 3 {
		t.Fatalf("got %d tools, want 3", len(tools))
	}
	rate, mail, closeAcc := &tools[0], &tools[1], &tools[2]
	if rate.Name != "get_rate" || rate.Destructive() || rate.OpenWorld() {
		t.Errorf("get_rate: %+v: read-only and closed-world hints lost", rate)
	}
	// MCP's defaults: an unannotated tool may destroy and reaches out.
	if !closeAcc.Destructive() || !closeAcc.OpenWorld() {
		t.Errorf("close_account without hints should read as destructive and open-world")
	}
	if mail.Destructive() || !mail.OpenWorld() {
		t.Errorf("send_email: destructiveHint false, openWorld absent: got %v %v", mail.Destructive(), mail.OpenWorld())
	}
	if !closeAcc.IsRequired() || closeAcc.SourceOf() != declare.SourceHost {
		t.Errorf("close_account: required by the host: %v %q", closeAcc.IsRequired(), closeAcc.SourceOf())
	}
	closeAcc.Untrusted = true
	if closeAcc.IsRequired() {
		t.Error("an untrusted source made a tool required")
	}
}

func TestLoadToolsInvalid(t *testing.T) {
	_, err := declare.LoadToolsFile("testdata/tools/invalid.jsonl")
	var ve *declare.ValidationError
	if !errors.As(err, &ve) || !errors.Is(err, declare.ErrInvalid) {
		t.Fatalf("got %v, want a *ValidationError", err)
	}
	want := []string{
		`invalid.jsonl:1: name: tool "bad name": "bad name" must be 1 to 64 characters`,
		`invalid.jsonl:2: input_schema: tool "no_schema": is required`,
		`invalid.jsonl:3: input_schema: tool "array_schema": must be a JSON object`,
		`invalid.jsonl:4: input_schema: tool "string_type": must have "type": "object"`,
		`invalid.jsonl:5: NAME: unknown field: field names are case-sensitive`,
		`invalid.jsonl:6: roles[0]: tool "roles"`,
		`invalid.jsonl:9: colour: unknown field`,
		`invalid.jsonl:10: `,
		`invalid.jsonl:8: name: tool "dup" is declared on line 7 already`,
	}
	msg := err.Error()
	for _, w := range want {
		if !strings.Contains(msg, w) {
			t.Errorf("missing %q in\n%s", w, msg)
		}
	}
	if len(ve.Problems) != len(want) {
		t.Errorf("got %d problems, want %d:\n%s", len(ve.Problems), len(want), msg)
	}
}

func TestValidateTools(t *testing.T) {
	obj := json.RawMessage(`{"type":"object"}`)
	for _, tc := range []struct {
		name  string
		tools []declare.Tool
		want  string // "" for valid
	}{
		{"ok", []declare.Tool{{Name: "a", InputSchema: obj}, {Name: "b", InputSchema: obj}}, ""},
		{"dup", []declare.Tool{{Name: "a", InputSchema: obj}, {Name: "a", InputSchema: obj}}, `tools["a"].name: is declared twice (tools[0] and tools[1])`},
		{"bad name by index", []declare.Tool{{Name: "a.b", InputSchema: obj}}, `tools[0].name:`},
		{"properties not object", []declare.Tool{{Name: "a", InputSchema: json.RawMessage(`{"type":"object","properties":[]}`)}}, `"properties" must be an object`},
		{"long description", []declare.Tool{{Name: "a", InputSchema: obj, Description: strings.Repeat("x", declare.MaxToolDescriptionBytes+1)}}, `tools["a"].description: has 16385 bytes`},
		{"control in source", []declare.Tool{{Name: "a", InputSchema: obj, Source: "mcp:\x00"}}, `tools["a"].source:`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := declare.ValidateTools(tc.tools)
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
		})
	}
}

func TestMCPToolName(t *testing.T) {
	for _, tc := range []struct {
		server, tool, want string
		ok                 bool
	}{
		{"everything", "echo", "everything__echo", true},
		{"docs.v2", "get-doc", "docs_v2__get-doc", true},
		{"s", "ünï", "s___n_", true},
		{"s", "", "s__", false},
		{"s", strings.Repeat("x", 62), "", false},
	} {
		got, ok := declare.MCPToolName(tc.server, tc.tool)
		if ok != tc.ok || ok && got != tc.want {
			t.Errorf("MCPToolName(%q, %q) = %q, %v; want %q, %v", tc.server, tc.tool, got, ok, tc.want, tc.ok)
		}
	}
}

func TestLoadToolsLongLine(t *testing.T) {
	line := `{"name":"a","input_schema":{"type":"object"},"description":"` + strings.Repeat("x", 1<<20) + "\"}\n"
	_, err := declare.LoadTools(strings.NewReader(line), "big.jsonl")
	if err == nil || !strings.Contains(err.Error(), "big.jsonl:1: line longer than") {
		t.Fatalf("got %v", err)
	}
}

// FuzzLoadTools: the tools parser never panics; it returns valid tools, as
// many as the input has object lines, or a *ValidationError whose problems
// point at lines of the input; what it returns writes back as JSON that
// loads to the same thing.
func FuzzLoadTools(f *testing.F) {
	for _, name := range []string{"testdata/tools/valid.jsonl", "testdata/tools/invalid.jsonl"} {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
		for l := range bytes.Lines(b) {
			f.Add(l)
		}
	}
	for _, s := range []string{"", "\n", "{}", "null", `{"name":"a","input_schema":{"type":"object"}}{}`, `{"name":"a","input_schema":{"type":"object","type":"x"}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		tools, err := declare.LoadTools(bytes.NewReader(data), "f.jsonl")
		lines := bytes.Count(data, []byte("\n")) + 1
		if err != nil {
			var ve *declare.ValidationError
			if !errors.As(err, &ve) || len(ve.Problems) == 0 {
				t.Fatalf("error %v is not a *ValidationError with problems", err)
			}
			for _, p := range ve.Problems {
				if p.File != "f.jsonl" || p.Line < 1 || p.Line > lines {
					t.Fatalf("problem %v points outside the input (%d lines)", p, lines)
				}
			}
			return
		}
		if err := declare.ValidateTools(tools); err != nil {
			t.Fatalf("loaded tools do not validate: %v", err)
		}
		var buf bytes.Buffer
		for _, tl := range tools {
			b, err := json.Marshal(tl)
			if err != nil {
				t.Fatal(err)
			}
			buf.Write(b)
			buf.WriteByte('\n')
		}
		again, err := declare.LoadTools(&buf, "again.jsonl")
		if err != nil {
			t.Fatalf("written back, the tools do not load: %v\n%s", err, buf.Bytes())
		}
		if len(again) != len(tools) {
			t.Fatalf("%d tools became %d", len(tools), len(again))
		}
		for i := range again {
			if again[i].Name != tools[i].Name || again[i].Description != tools[i].Description || again[i].IsRequired() != tools[i].IsRequired() {
				t.Fatalf("tool %d changed: %+v became %+v", i, tools[i], again[i])
			}
		}
	})
}
