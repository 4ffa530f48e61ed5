package mcpsource_test

import (
	"errors"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/declare/mcpsource"
)

func ptr[T any](v T) *T { return &v }

func text(uri, s string) *mcp.ReadResourceResult {
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, Text: s}}}
}

// Annotations become priority, audience and last_modified; a priority of 0
// and a missing one both mean the default; untrusted servers never make a
// block required.
func TestIngestAnnotations(t *testing.T) {
	lm := time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)
	tests := []struct {
		name      string
		srv       mcpsource.Server
		ann       *mcp.Annotations
		priority  *float64
		audience  []string
		modified  *time.Time
		required  bool
		untrusted bool
	}{
		{name: "none", ann: nil, untrusted: true},
		{name: "priority 0 is the default", ann: &mcp.Annotations{Priority: 0}, untrusted: true},
		{name: "priority 0.8", ann: &mcp.Annotations{Priority: 0.8}, priority: ptr(0.8), untrusted: true},
		{name: "default priority, missing", srv: mcpsource.Server{DefaultPriority: ptr(0.3)}, priority: ptr(0.3), untrusted: true},
		{name: "default priority, zero", srv: mcpsource.Server{DefaultPriority: ptr(0.3)}, ann: &mcp.Annotations{Priority: 0}, priority: ptr(0.3), untrusted: true},
		{name: "clamped", ann: &mcp.Annotations{Priority: 1.7}, priority: ptr(1.0), untrusted: true},
		{name: "negative clamped", ann: &mcp.Annotations{Priority: -0.5}, priority: ptr(0.0), untrusted: true},
		{name: "untrusted priority 1", ann: &mcp.Annotations{Priority: 1}, priority: ptr(1.0), untrusted: true},
		{name: "trusted priority 1", srv: mcpsource.Server{Trusted: true}, ann: &mcp.Annotations{Priority: 1}, priority: ptr(1.0), required: true},
		{name: "audience", ann: &mcp.Annotations{Audience: []mcp.Role{"assistant", "user", "assistant"}}, audience: []string{"assistant", "user"}, untrusted: true},
		{name: "unknown audience is not the assistant", ann: &mcp.Annotations{Audience: []mcp.Role{"robot"}}, audience: []string{"user"}, untrusted: true},
		{name: "last modified", ann: &mcp.Annotations{LastModified: "2026-11-01T11:00:00+01:00"}, modified: &lm, untrusted: true},
		{name: "bad last modified ignored", ann: &mcp.Annotations{LastModified: "yesterday"}, untrusted: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.srv.Name = "s1"
			r := &mcp.Resource{URI: "docs://a", Name: "a", MIMEType: "text/markdown", Annotations: tt.ann}
			d, blobs, err := mcpsource.Ingest(tt.srv, r, text("docs://a", "hello"))
			if err != nil || blobs != 0 {
				t.Fatalf("Ingest: %v, %d blobs", err, blobs)
			}
			if (d.Priority == nil) != (tt.priority == nil) || (d.Priority != nil && *d.Priority != *tt.priority) {
				t.Errorf("priority = %v, want %v", fmtPtr(d.Priority), fmtPtr(tt.priority))
			}
			if strings.Join(d.Audience, ",") != strings.Join(tt.audience, ",") {
				t.Errorf("audience = %q, want %q", d.Audience, tt.audience)
			}
			if (d.LastModified == nil) != (tt.modified == nil) || (d.LastModified != nil && !d.LastModified.Equal(*tt.modified)) {
				t.Errorf("last_modified = %v, want %v", d.LastModified, tt.modified)
			}
			if d.IsRequired() != tt.required || d.Untrusted != tt.untrusted {
				t.Errorf("required %v untrusted %v, want %v %v", d.IsRequired(), d.Untrusted, tt.required, tt.untrusted)
			}
			want := declare.Declaration{RequestID: "mcp:s1:docs://a", MemoryType: declare.External, Scope: declare.ScopeGlobal, Content: "hello",
				Provenance: declare.Provenance{SourceID: "s1", SourceFormat: "text/markdown", URI: "docs://a"}}
			if d.RequestID != want.RequestID || d.MemoryType != want.MemoryType || d.Scope != want.Scope || d.Content != want.Content || d.Provenance != want.Provenance {
				t.Errorf("declaration = %+v\nwant %+v", d, want)
			}
			if err := declare.Validate(&d); err != nil {
				t.Error(err)
			}
		})
	}
}

func fmtPtr(p *float64) any {
	if p == nil {
		return "none"
	}
	return *p
}

// Contents: text joined, blobs skipped, empty is an error, too large too;
// the server's memory type and roles apply.
func TestIngestContents(t *testing.T) {
	srv := mcpsource.Server{Name: "s", MemoryType: declare.Context, Roles: []string{"analyst"}, MaxContentBytes: 20}
	r := &mcp.Resource{URI: "x://r", Name: "r", MIMEType: "text/plain"}
	res := func(cs ...*mcp.ResourceContents) *mcp.ReadResourceResult {
		return &mcp.ReadResourceResult{Contents: cs}
	}

	d, blobs, err := mcpsource.Ingest(srv, r, res(
		&mcp.ResourceContents{URI: "x://r#1", MIMEType: "text/csv", Text: "a,b"},
		&mcp.ResourceContents{URI: "x://r#2", Blob: []byte{0xff, 0}},
		&mcp.ResourceContents{URI: "x://r#3", Text: "c,d"}))
	if err != nil || blobs != 1 || d.Content != "a,b\nc,d" || d.Provenance.SourceFormat != "text/csv" ||
		d.MemoryType != declare.Context || len(d.Roles) != 1 || d.Roles[0] != "analyst" {
		t.Errorf("mixed contents: %+v, %d blobs, %v", d, blobs, err)
	}
	for name, tc := range map[string]struct {
		rr   *mcp.ReadResourceResult
		want error
	}{
		"blob only":  {res(&mcp.ResourceContents{URI: "x://r", Blob: []byte("GIF89a")}), mcpsource.ErrBinary},
		"no content": {res(), mcpsource.ErrEmpty},
		"empty text": {res(&mcp.ResourceContents{URI: "x://r", Text: ""}), mcpsource.ErrEmpty},
		"nil entry":  {res(nil), mcpsource.ErrEmpty},
		"too large":  {res(&mcp.ResourceContents{URI: "x://r", Text: strings.Repeat("z", 21)}), mcpsource.ErrTooLarge},
	} {
		if _, _, err := mcpsource.Ingest(srv, r, tc.rr); !errors.Is(err, tc.want) {
			t.Errorf("%s: err = %v, want %v", name, err, tc.want)
		}
	}
}

// Request ids embed the URI, escape what a request_id cannot hold, and stay
// within 512 characters, unique, for long URIs.
func TestRequestID(t *testing.T) {
	if got := mcpsource.RequestID("s", "file:///a b\tc"); got != "mcp:s:file:///a%20b%09c" {
		t.Errorf("escaped id = %q", got)
	}
	if got := mcpsource.FileRequestID("docs", "notes/ä.md"); got != "file:docs:notes/ä.md" {
		t.Errorf("file id = %q", got)
	}
	long := "https://example.com/" + strings.Repeat("ü", 600)
	a, b := mcpsource.RequestID("s", long+"1"), mcpsource.RequestID("s", long+"2")
	if a == b {
		t.Error("two long URIs share an id")
	}
	for _, id := range []string{a, b} {
		if n := utf8.RuneCountInString(id); n != declare.MaxRequestIDLen {
			t.Errorf("long id has %d characters, want %d", n, declare.MaxRequestIDLen)
		}
		if !strings.HasPrefix(id, "mcp:s:https://example.com/üü") {
			t.Errorf("long id lost its start: %q", id[:40])
		}
		d := declare.Declaration{RequestID: id, MemoryType: declare.External, Scope: declare.ScopeGlobal, Content: "x"}
		if err := declare.Validate(&d); err != nil {
			t.Error(err)
		}
	}
	if mcpsource.RequestID("s", long+"1") != a {
		t.Error("RequestID is not deterministic")
	}
}

// Start refuses bad configurations with every problem.
func TestConfigValidation(t *testing.T) {
	sink := newSink(t)
	_, err := mcpsource.Start(sink, mcpsource.Config{
		Servers: []mcpsource.Server{
			{Name: "a:b", Command: []string{"x"}},
			{Name: "ok"},
			{Name: "ok", URL: "ftp://x"},
			{Name: "mt", Command: []string{"x"}, MemoryType: "note", DefaultPriority: ptr(2.0)},
		},
		Files: []mcpsource.Files{{Name: "f"}},
	})
	if !errors.Is(err, mcpsource.ErrConfig) {
		t.Fatalf("err = %v", err)
	}
	for _, want := range []string{"Servers[0]", "exactly one of", "used twice", "not an http", "MemoryType", "DefaultPriority", "Dir is empty"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
}
