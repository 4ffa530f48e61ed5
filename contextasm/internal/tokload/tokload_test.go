package tokload

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/rangetable"

	"github.com/contextasm/contextasm/internal/bpe"
	"github.com/contextasm/contextasm/internal/tokfile"
	"github.com/contextasm/contextasm/truncate"
)

// hftokRef is internal/hftok's reference data, from this package's
// directory.
var hftokRef = filepath.Join("..", "..", "..", "internal", "hftok", "testdata", "ref")

// refDir is where internal/hftok's reference packages are installed.
func refDir() string {
	if d := os.Getenv("CONTEXTASM_HF_MODULES"); d != "" {
		return d
	}
	return filepath.Join(hftokRef, "node_modules")
}

func llama3File(t *testing.T) string {
	t.Helper()
	p := filepath.Join(refDir(), "@lenml", "tokenizer-llama3", "models", "tokenizer.json")
	if _, err := os.Stat(p); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("Llama 3 tokenizer file missing in CI: %v", err)
		}
		t.Skipf("SKIP: Llama 3 tokenizer file absent (npm ci in internal/hftok/testdata/ref): %v", err)
	}
	return p
}

// byteLevel maps GPT-2's byte-level characters back to bytes.
func byteLevel() map[rune]byte {
	m := make(map[rune]byte, 256)
	n := 0
	for b := range 256 {
		if ('!' <= b && b <= '~') || (0xA1 <= b && b <= 0xAC) || (0xAE <= b && b <= 0xFF) {
			m[rune(b)] = byte(b)
		} else {
			m[rune(256+n)] = byte(b)
			n++
		}
	}
	return m
}

// toTiktoken converts a byte-level tokenizer.json's vocabulary to a
// tiktoken rank file (what Llama 3's tokenizer.model is) and returns the
// added tokens' texts.
func toTiktoken(t *testing.T, src, dst string) []string {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Added []struct {
			Content string `json:"content"`
		} `json:"added_tokens"`
		Model struct {
			Vocab map[string]int `json:"vocab"`
		} `json:"model"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatal(err)
	}
	bl := byteLevel()
	var b strings.Builder
	for tok, id := range f.Model.Vocab {
		raw := make([]byte, 0, len(tok))
		for _, r := range tok {
			raw = append(raw, bl[r])
		}
		fmt.Fprintf(&b, "%s %d\n", base64.StdEncoding.EncodeToString(raw), id)
	}
	if err := os.WriteFile(dst, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	var added []string
	for _, a := range f.Added {
		added = append(added, a.Content)
	}
	return added
}

// llama3Spec converts Llama 3's vocabulary to a rank file and writes a spec
// naming it; it returns the spec's path and Llama 3's added tokens.
func llama3Spec(t *testing.T) (string, []string) {
	t.Helper()
	src := llama3File(t)
	dir := t.TempDir()
	added := toTiktoken(t, src, filepath.Join(dir, "tokenizer.model"))
	spec := filepath.Join(dir, "llama3.tiktoken.json")
	if err := os.WriteFile(spec, []byte(`{"format": "tiktoken", "ranks": "tokenizer.model", "pattern": "cl100k_base"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	return spec, added
}

// TestRankFileLineAdditive checks line additivity on the rank file path:
// lines that start cleanly count, with their newlines, as the whole text.
func TestRankFileLineAdditive(t *testing.T) {
	spec, _ := llama3Spec(t)
	tok, err := Load(spec)
	if err != nil {
		t.Fatal(err)
	}
	if !tok.LineAdditive() {
		t.Fatal("LineAdditive() = false")
	}
	pieces := []string{"hello", " world", "。", "中文", "/p", " ", "\t", "\n", "\r\n", "}", "123", "4567", "'s", "é", "!!", "...", "  ", "\u00a0", "😀", "—", "\u3000"}
	r := rand.New(rand.NewPCG(3, 5))
	clean := 0
	for range 4000 {
		lines := make([]string, 1+r.IntN(4))
		for i := range lines {
			var b strings.Builder
			for range 1 + r.IntN(8) {
				b.WriteString(pieces[r.IntN(len(pieces))])
			}
			lines[i] = b.String()
		}
		ok := true
		for _, l := range lines[1:] {
			ok = ok && truncate.StartsLineCleanly(l)
		}
		if !ok {
			continue
		}
		clean++
		sum := 0
		for _, l := range lines {
			sum += tok.Count(l + "\n")
		}
		if whole := tok.Count(strings.Join(lines, "\n") + "\n"); whole != sum {
			t.Fatalf("%q counts %d whole but %d by lines", lines, whole, sum)
		}
	}
	if clean < 1000 {
		t.Errorf("only %d clean cases", clean)
	}
}

// TestRankFileMatchesReference converts Llama 3's vocabulary to the
// tiktoken format, loads it through a spec (the bpe core) and checks that
// its counts equal the Rust library's on the corpus and the sample — but
// for texts holding Llama 3's special tokens, which a rank file does not
// know (it counts them as ordinary text).
func TestRankFileMatchesReference(t *testing.T) {
	spec, added := llama3Spec(t)
	dir := filepath.Dir(spec)
	tok, err := Load(spec)
	if err != nil {
		t.Fatal(err)
	}
	if tok.Kind != tokfile.KindTiktoken || !strings.HasPrefix(tok.ID, "sha256:") {
		t.Fatalf("kind %v id %q", tok.Kind, tok.ID)
	}
	checked := 0
	for _, set := range []string{"ids.json", "sample.json"} {
		data, err := os.ReadFile(filepath.Join(hftokRef, set))
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Texts []struct {
				Name string `json:"name"`
				Text string `json:"text"`
			} `json:"texts"`
			Families map[string]struct {
				IDs map[string][]int `json:"ids"`
			} `json:"families"`
		}
		if err := json.Unmarshal(data, &doc); err != nil {
			t.Fatal(err)
		}
		texts := doc.Texts
		if texts == nil {
			data, err := os.ReadFile(filepath.Join(hftokRef, "corpus.json"))
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(data, &texts); err != nil {
				t.Fatal(err)
			}
		}
	next:
		for _, c := range texts {
			for _, a := range added {
				if strings.Contains(c.Text, a) {
					continue next
				}
			}
			want := len(doc.Families["llama3"].IDs[c.Name])
			got := tok.Count(c.Text)
			if hostile(c.Text) || newerThanGo(c.Text) {
				// The bpe core counts a piece longer than
				// bpe.MaxPieceBytes one token per byte, and the
				// stretch around a character newer than Go's
				// tables too: never under.
				if got < want {
					t.Errorf("%s %s: %d tokens, under the reference's %d", set, c.Name, got, want)
				}
				continue
			}
			if got != want {
				t.Errorf("%s %s: %d tokens, want %d", set, c.Name, got, want)
			}
			checked++
		}
	}
	if checked < 350 {
		t.Errorf("only %d texts checked", checked)
	}
	// The same file under another path is the same tokenizer.
	other := filepath.Join(t.TempDir(), "moved.json")
	if err := os.WriteFile(other, []byte(`{"format":"tiktoken","ranks":"`+filepath.Join(dir, "tokenizer.model")+`","pattern":"cl100k_base"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if id, err := tokfile.Identity(other); err != nil || id != tok.ID {
		t.Errorf("moved spec: identity %q, %v; want %q", id, err, tok.ID)
	}
}

// hostile reports whether text has a run of one character class longer
// than bpe.MaxPieceBytes (the runs the corpus has: one letter, one
// punctuation mark).
// newerThanGo reports whether text holds a character Go's Unicode tables
// do not assign, or U+0295 (whose category Unicode 16.0 changed): the bpe
// core counts the stretch around it as a bound.
func newerThanGo(text string) bool {
	assigned := rangetable.Assigned(unicode.Version)
	for _, r := range text {
		if r == 0x295 || !unicode.Is(assigned, r) {
			return true
		}
	}
	return false
}

func hostile(text string) bool {
	run, prev := 0, rune(-1)
	for _, r := range text {
		if r == prev {
			run += utf8.RuneLen(r)
		} else {
			run, prev = utf8.RuneLen(r), r
		}
		if run > bpe.MaxPieceBytes {
			return true
		}
	}
	return false
}

func TestSpecErrors(t *testing.T) {
	dir := t.TempDir()
	cases := map[string]string{
		`{"format":"tiktoken","ranks":"r","pattern":"qwen"}`:             `pattern: must be cl100k_base or o200k_base (got "qwen")`,
		`{"format":"tiktoken","pattern":"cl100k_base"}`:                  `ranks: the rank file is required`,
		`{"format":"tiktoken","ranks":"r","pattern":"o200k_base","x":1}`: `unknown field "x"`,
	}
	for body, want := range cases {
		p := filepath.Join(dir, "spec.json")
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Load(p)
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), p) {
			t.Errorf("%s: got %v, want an error naming the file and %q", body, err, want)
		}
	}
	// A rank file with a bad line names it.
	if err := os.WriteFile(filepath.Join(dir, "r"), []byte("YQ== 0\nnot-base64! 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "spec.json")
	os.WriteFile(p, []byte(`{"format":"tiktoken","ranks":"r","pattern":"cl100k_base"}`), 0o644)
	if _, err := Load(p); err == nil || !strings.Contains(err.Error(), "r:2: token") {
		t.Errorf("bad rank line: got %v", err)
	}
}

// TestChangedFileRefused checks that a tokenizer file changed after its
// identity was taken (a template compiled, then the file replaced) is
// refused rather than counted with tokens the fingerprint does not cover.
func TestChangedFileRefused(t *testing.T) {
	p := filepath.Join(t.TempDir(), "tok.json")
	tiny := `{"model":{"type":"BPE","vocab":{"a":0,"b":1},"merges":[]},"pre_tokenizer":{"type":"ByteLevel"}}`
	if err := os.WriteFile(p, []byte(tiny), 0o644); err != nil {
		t.Fatal(err)
	}
	id, err := tokfile.Identity(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(strings.Replace(tiny, `"b":1`, `"b":2`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadAs(p, id); err == nil || !strings.Contains(err.Error(), "changed since") {
		t.Fatalf("got %v, want a refusal", err)
	}
	tok, err := Load(p)
	if err != nil || tok.ID == id || tok.Kind != tokfile.KindHF {
		t.Fatalf("the new file: %v, %+v", err, tok)
	}
	if n := tok.Count("ab"); n != 2 {
		t.Errorf("Count(ab) = %d, want 2", n)
	}
}
