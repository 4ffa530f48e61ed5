package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/contextasm/contextasm/internal/bpe"
	"github.com/contextasm/contextasm/internal/hftok"
)

// llama3File is the Llama 3 tokenizer.json of internal/hftok's reference
// tests: skipped when absent locally, a failure in CI.
func llama3File(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("CONTEXTASM_HF_MODULES")
	if dir == "" {
		dir = filepath.Join("..", "..", "internal", "hftok", "testdata", "ref", "node_modules")
	}
	p := filepath.Join(dir, "@lenml", "tokenizer-llama3", "models", "tokenizer.json")
	if _, err := os.Stat(p); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("Llama 3 tokenizer file missing in CI: %v", err)
		}
		t.Skipf("SKIP: Llama 3 tokenizer file absent (npm ci in internal/hftok/testdata/ref): %v", err)
	}
	return p
}

func runWithStdin(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

func TestCount(t *testing.T) {
	text := "Hello, world! 你好，世界。 It's 2026.\n"
	o200k, err := bpe.Load(bpe.O200kBase)
	if err != nil {
		t.Fatal(err)
	}
	code, out, stderr := runWithStdin(t, text, "count")
	if code != exitOK || strings.TrimSpace(out) != strconv.Itoa(o200k.Count(text)) {
		t.Fatalf("count (stdin): exit %d, %q %s; want %d", code, out, stderr, o200k.Count(text))
	}

	file := llama3File(t)
	ref, err := hftok.LoadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.txt"), filepath.Join(dir, "b.txt")
	os.WriteFile(a, []byte(text), 0o644)
	os.WriteFile(b, []byte("<|begin_of_text|>def f(x):\n    return x  # 42\n"), 0o644)
	code, out, stderr = runWithStdin(t, "", "count", "--tokenizer", file, "--format", "json", a, b)
	if code != exitOK {
		t.Fatalf("count --tokenizer: exit %d: %s", code, stderr)
	}
	var lines []countLine
	dec := json.NewDecoder(strings.NewReader(out))
	for dec.More() {
		var l countLine
		if err := dec.Decode(&l); err != nil {
			t.Fatal(err)
		}
		lines = append(lines, l)
	}
	if len(lines) != 2 {
		t.Fatalf("want one line per file, got %q", out)
	}
	for i, p := range []string{a, b} {
		data, _ := os.ReadFile(p)
		if lines[i].File != p || lines[i].Tokens != ref.Count(string(data)) || !strings.HasPrefix(lines[i].Encoding, "sha256:") {
			t.Errorf("line %d: %+v, want %s with %d tokens", i, lines[i], p, ref.Count(string(data)))
		}
	}

	if code, _, stderr := runWithStdin(t, "", "count", "--encoding", "cl100k_base", "--tokenizer", file); code != exitUsage || !strings.Contains(stderr, "not both") {
		t.Errorf("both flags: exit %d, %s", code, stderr)
	}
	if code, _, stderr := runWithStdin(t, "", "count", "--tokenizer", filepath.Join(dir, "missing.json")); code == exitOK || !strings.Contains(stderr, "missing.json") {
		t.Errorf("missing file: exit %d, %s", code, stderr)
	}
}

// TestApproxThroughCLI renders with an approximate encoding, reports the
// provider's usage with feedback --input-tokens, and renders again with
// the learned margin.
func TestApproxThroughCLI(t *testing.T) {
	dir := t.TempDir()
	tpl := filepath.Join(dir, "t.json")
	data, err := os.ReadFile("demo/template.json")
	if err != nil {
		t.Fatal(err)
	}
	var def map[string]any
	json.Unmarshal(data, &def)
	def["encoding"] = "approx:claude"
	def["budget"] = 6000
	for _, s := range def["sections"].([]any) {
		s.(map[string]any)["max_tokens"] = s.(map[string]any)["max_tokens"].(float64) * 8
	}
	data, _ = json.Marshal(def)
	os.WriteFile(tpl, data, 0o644)
	usage := filepath.Join(dir, "usage.json")
	args := []string{"render", "-t", tpl, "-m", "demo/memories.jsonl", "--session", "sess-4711", "--user", "u-ana",
		"--role", "loan-agent", "--now", "2026-11-30T09:00:00Z", "--usage", usage, "--format", "json"}
	r1 := filepath.Join(dir, "r1.json")
	if code, _, stderr := runCLI(t, append(args, "-o", r1)...); code != exitOK {
		t.Fatalf("render: exit %d: %s", code, stderr)
	}
	d1, err := readDumpFile("test", r1)
	if err != nil {
		t.Fatal(err)
	}
	if d1.Approximate == nil || d1.Approximate.Basis != "bytes" || d1.TotalTokens != len(d1.Text) {
		t.Fatalf("first render: %+v, %d tokens for %d bytes", d1.Approximate, d1.TotalTokens, len(d1.Text))
	}
	o200k, _ := bpe.Load(bpe.O200kBase)
	n := o200k.Count(d1.Text) * 6 / 5
	code, out, stderr := runCLI(t, "feedback", "--render", r1, "--input-tokens", strconv.Itoa(n), "--usage", usage)
	if code != exitOK || !strings.Contains(out, "approx:claude: o200k_base x 1.") {
		t.Fatalf("feedback --input-tokens: exit %d, %q %s", code, out, stderr)
	}
	r2 := filepath.Join(dir, "r2.json")
	if code, _, stderr := runCLI(t, append(args, "-o", r2)...); code != exitOK {
		t.Fatalf("render: exit %d: %s", code, stderr)
	}
	d2, _ := readDumpFile("test", r2)
	if d2.Approximate == nil || d2.Approximate.Basis != "o200k_base" || d2.Approximate.Reports != 1 {
		t.Fatalf("second render: %+v", d2.Approximate)
	}
	if code, _, stderr := runCLI(t, "feedback", "--render", r1, "--input-tokens", "10"); code != exitUsage || !strings.Contains(stderr, "--usage") {
		t.Errorf("--input-tokens without --usage: exit %d, %s", code, stderr)
	}
}

func TestBenchRefusesTokenizerFile(t *testing.T) {
	dir := t.TempDir()
	tpl := filepath.Join(dir, "t.json")
	os.WriteFile(tpl, []byte(`{"budget": 100, "encoding": "approx:claude", "sections": [{"name": "s", "priority": 1, "memory_types": ["context"], "max_tokens": 50, "render": "{content}"}]}`), 0o644)
	code, _, stderr := runCLI(t, "bench", "-t", tpl, "-m", "demo/memories.jsonl", "--runs", "1")
	if code != exitUsage || !strings.Contains(stderr, "built-in encodings") {
		t.Errorf("exit %d, %s", code, stderr)
	}
}
