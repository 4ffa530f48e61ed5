package template_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/contextasm/contextasm/template"
)

// tinyTokenizer is a valid tokenizer.json of two tokens; its variants
// differ in one id.
func tinyTokenizer(id int) string {
	return `{"version":"1.0","added_tokens":[],"normalizer":null,"pre_tokenizer":{"type":"ByteLevel","add_prefix_space":false,"use_regex":true},` +
		`"model":{"type":"BPE","vocab":{"a":0,"b":` + string(rune('0'+id)) + `},"merges":[]}}`
}

func writeFile(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func templateWith(encoding string) string {
	return `{"budget": 100, "encoding": "` + encoding + `", "sections": [{"name": "s", "priority": 1, "memory_types": ["context"], "max_tokens": 50, "render": "{content}"}]}`
}

// TestEncodingFile checks that a template may name a tokenizer file
// relative to itself, and that the fingerprint covers the file's content,
// not where it lies.
func TestEncodingFile(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "a", "tok", "llama.json"), tinyTokenizer(1))
	writeFile(t, filepath.Join(dir, "b", "elsewhere.json"), tinyTokenizer(1)) // same bytes
	writeFile(t, filepath.Join(dir, "c", "tok.json"), tinyTokenizer(2))       // one id differs
	writeFile(t, filepath.Join(dir, "a", "t.json"), templateWith("tok/llama.json"))
	writeFile(t, filepath.Join(dir, "b", "t.json"), templateWith("elsewhere.json"))
	writeFile(t, filepath.Join(dir, "c", "t.json"), templateWith("tok.json"))
	load := func(p string) *template.Template {
		t.Helper()
		tpl, err := template.LoadFile(filepath.Join(dir, p))
		if err != nil {
			t.Fatal(err)
		}
		return tpl
	}
	a, b, c := load("a/t.json"), load("b/t.json"), load("c/t.json")
	if a.TokenizerFile() != filepath.Join(dir, "a", "tok", "llama.json") {
		t.Errorf("TokenizerFile() = %q", a.TokenizerFile())
	}
	if !strings.HasPrefix(a.Encoding(), "sha256:") || len(a.Encoding()) != len("sha256:")+64 {
		t.Errorf("Encoding() = %q, want the file's identity", a.Encoding())
	}
	if a.Fingerprint() != b.Fingerprint() || a.Encoding() != b.Encoding() {
		t.Errorf("same tokenizer bytes at two paths: fingerprints %s and %s differ", a.Fingerprint(), b.Fingerprint())
	}
	if a.Fingerprint() == c.Fingerprint() {
		t.Errorf("different tokenizer files give the same fingerprint %s", a.Fingerprint())
	}
	// WithBudget keeps the file, wherever the process runs.
	wb, err := a.WithBudget(200)
	if err != nil {
		t.Fatal(err)
	}
	if wb.Encoding() != a.Encoding() || wb.TokenizerFile() != a.TokenizerFile() {
		t.Errorf("WithBudget lost the tokenizer: %q %q", wb.Encoding(), wb.TokenizerFile())
	}
	// WithTokenizer swaps the encoding for a file (relative to the working
	// directory) and changes the fingerprint.
	builtin, err := template.Parse([]byte(templateWith("o200k_base")), "t.json")
	if err != nil {
		t.Fatal(err)
	}
	wt, err := builtin.WithTokenizer(filepath.Join(dir, "b", "elsewhere.json"))
	if err != nil {
		t.Fatal(err)
	}
	if wt.Encoding() != a.Encoding() || wt.Fingerprint() == builtin.Fingerprint() {
		t.Errorf("WithTokenizer: encoding %q fingerprint %s", wt.Encoding(), wt.Fingerprint())
	}
	if wt.Fingerprint() != a.Fingerprint() {
		t.Errorf("WithTokenizer: fingerprint %s, want the file template's %s", wt.Fingerprint(), a.Fingerprint())
	}
}

func TestApproximateEncoding(t *testing.T) {
	tpl, err := template.Parse([]byte(templateWith("approx:claude")), "t.json")
	if err != nil {
		t.Fatal(err)
	}
	if !tpl.Approximate() || tpl.Encoding() != "approx:claude" || tpl.TokenizerFile() != "" {
		t.Errorf("approx:claude: approximate %v, encoding %q, file %q", tpl.Approximate(), tpl.Encoding(), tpl.TokenizerFile())
	}
	for _, bad := range []string{"approx:", "approx:Claude", "approx:a b"} {
		_, err := template.Parse([]byte(templateWith(bad)), "t.json")
		if err == nil || !strings.Contains(err.Error(), "encoding: approximate encoding") {
			t.Errorf("%q: got %v", bad, err)
		}
	}
}
