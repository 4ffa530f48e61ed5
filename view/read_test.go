package view

import (
	"errors"
	"os"
	"strings"
	"testing"
)

func TestReadDump(t *testing.T) {
	d := loadDump(t, demoDump)
	if d.Fingerprint == "" || len(d.Sections) == 0 || d.Text == "" {
		t.Fatalf("demo dump read as %+v", d)
	}
	demo, err := os.ReadFile(demoDump)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ name, in, want string }{
		{"empty", "", "EOF"},
		{"not json", "hello", "invalid character"},
		{"a template", `{"template_version":"1.2","budget":10,"sections":[]}`, "missing protocol_version, fingerprint"},
		{"no sections", `{"protocol_version":"1.2","fingerprint":"sha256:0"}`, "missing sections"},
		{"null sections", `{"protocol_version":"1.2","fingerprint":"sha256:0","sections":null}`, "missing sections"},
		{"two dumps", string(demo) + string(demo), "more data after the JSON object"},
		{"wrong type", `{"protocol_version":"1.2","fingerprint":"sha256:0","sections":[{"blocks":[{"status":"lost"}]}]}`, "unknown status"},
	}
	for _, tt := range tests {
		_, err := ReadDump(strings.NewReader(tt.in), "x.json")
		if !errors.Is(err, ErrInvalidDump) || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "x.json") {
			t.Errorf("%s: %v, want ErrInvalidDump naming x.json and %q", tt.name, err, tt.want)
		}
	}
	// Fields a newer engine adds do not stop an older reader.
	if _, err := ReadDump(strings.NewReader(`{"protocol_version":"1.2","fingerprint":"sha256:0","sections":[],"heat":{}}`), "new.json"); err != nil {
		t.Errorf("unknown field: %v", err)
	}
}
