package bpe

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The reference is OpenAI's tiktoken: its Rust core, compiled to
// WebAssembly in the npm package tiktoken (testdata/ref, locked). Two
// tests compare against it:
//
//   - TestReferenceKnownAnswers, on every run: counts the reference gave
//     for texts that broke this package before (pinned below);
//   - TestReferenceDifferential, when CONTEXTASM_TIKTOKEN_REF=1 and node
//     and the package are installed (`npm ci` in testdata/ref): random
//     text from all of Unicode, the newest planes included, counted by
//     both. Count must never be below the reference, and must equal it
//     when Go's tables know every character.

// refKnown are reference counts (o200k_base, cl100k_base) from
// testdata/ref/count.mjs.
var refKnown = []struct {
	text          string
	o200k, cl100k int
}{
	// U+10D40 is a digit since Unicode 16.0; Go's tables (15.0) do not
	// know it. Count used to say 3001.
	{strings.Repeat("9\U00010D409", 600), 3600, 3600},
	// 'ſ is the contraction 's to the reference (case folding); Count
	// used to say 1800 (o200k_base).
	{strings.Repeat("\u0308'ſ'lldd ", 300), 2100, 2400},
	{strings.Repeat("/\n/", 101), 53, 102},
	{"\n    \n", 1, 1},
	{"x'ſ", 3, 4},
	{"x'S", 2, 2},
	{"X'ſT", 4, 5},
	{"'ſ", 2, 3},
	{"it'ſ", 3, 4},
	{"don'T", 2, 2},
	{"WE'LL", 3, 3},
	{"'\u212a", 3, 3},
	{"x'\u212a", 4, 4},
	{"ʕa", 3, 3},
	{"aʕb", 4, 4},
	{"ʕʕ", 4, 4},
	{"Aʕ", 3, 3},
	{"\U00010D40\U00010D41", 8, 8},
	{"abc\U00010D40", 5, 5},
	{"\u0897a", 4, 4},
	{"a\u1c89b", 5, 5},
}

func TestReferenceKnownAnswers(t *testing.T) {
	o, c := load(t, O200kBase), load(t, CL100kBase)
	for _, tt := range refKnown {
		for _, x := range []struct {
			tk   *Tokenizer
			want int
		}{{o, tt.o200k}, {c, tt.cl100k}} {
			got := x.tk.Count(tt.text)
			short := tt.text
			if len(short) > 24 {
				short = short[:24] + "…"
			}
			if got < x.want {
				t.Errorf("%s: Count(%q) = %d, below the reference's %d", x.tk.Encoding(), short, got, x.want)
			}
			if known(tt.text) && got != x.want {
				t.Errorf("%s: Count(%q) = %d, the reference says %d", x.tk.Encoding(), short, got, x.want)
			}
		}
	}
}

// refCounter runs testdata/ref/count.mjs.
type refCounter struct {
	cmd *exec.Cmd
	in  *bufio.Writer
	out *bufio.Scanner
}

// startReference starts the reference counter, or skips (fails when CI is
// set) if it cannot.
func startReference(t *testing.T) *refCounter {
	t.Helper()
	if os.Getenv("CONTEXTASM_TIKTOKEN_REF") != "1" {
		t.Skip("set CONTEXTASM_TIKTOKEN_REF=1 (after `npm ci` in internal/bpe/testdata/ref) to compare with OpenAI's tiktoken")
	}
	unavailable := func(format string, args ...any) {
		t.Helper()
		msg := fmt.Sprintf(format, args...)
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip("SKIPPED: " + msg)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		unavailable("node is not installed: %v", err)
	}
	dir, err := filepath.Abs(filepath.Join("testdata", "ref"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "tiktoken")); err != nil {
		unavailable("the npm package tiktoken is not installed: run `npm ci` in %s", dir)
	}
	cmd := exec.Command(node, "count.mjs")
	cmd.Dir = dir
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	rc := &refCounter{cmd: cmd, in: bufio.NewWriter(stdin), out: bufio.NewScanner(stdout)}
	rc.out.Buffer(make([]byte, 1<<16), 1<<26)
	t.Cleanup(func() {
		stdin.Close()
		cmd.Wait()
	})
	return rc
}

// counts returns the reference's counts of texts in encoding.
func (rc *refCounter) counts(t *testing.T, encoding string, texts []string) []int {
	t.Helper()
	type req struct {
		Enc  string `json:"enc"`
		Text string `json:"text"`
	}
	go func() {
		enc := json.NewEncoder(rc.in)
		for _, s := range texts {
			enc.Encode(req{encoding, s})
		}
		rc.in.WriteString("{\"flush\": true}\n")
		rc.in.Flush()
	}()
	out := make([]int, len(texts))
	for i := range texts {
		if !rc.out.Scan() {
			t.Fatalf("reference counter stopped: %v", rc.out.Err())
		}
		n, err := strconv.Atoi(rc.out.Text())
		if err != nil {
			t.Fatalf("reference counter said %q", rc.out.Text())
		}
		out[i] = n
	}
	return out
}

// TestReferenceDifferential compares Count with the reference on random
// text. CONTEXTASM_TIKTOKEN_REF_N sets the number of texts per encoding
// (default 20,000).
func TestReferenceDifferential(t *testing.T) {
	rc := startReference(t)
	n := 20000
	if s := os.Getenv("CONTEXTASM_TIKTOKEN_REF_N"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil {
			t.Fatalf("CONTEXTASM_TIKTOKEN_REF_N=%q: %v", s, err)
		}
	}
	seed := uint64(16)
	if s := os.Getenv("CONTEXTASM_TIKTOKEN_REF_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	t.Logf("seed %d (CONTEXTASM_TIKTOKEN_REF_SEED), %d texts per encoding", seed, n)
	r := rand.New(rand.NewPCG(seed, 1))
	texts := make([]string, n)
	for i := range texts {
		switch i % 4 {
		case 0:
			texts[i] = genText(r, 40)
		case 1, 2:
			texts[i] = genUnicode(r, 40)
		default:
			// Long runs, to reach long pieces and the stretches around
			// unknown characters.
			texts[i] = strings.Repeat(genUnicode(r, 4), 1+r.IntN(60))
		}
		texts[i] = strings.ToValidUTF8(texts[i], "")
	}
	for _, enc := range encodings {
		tk := load(t, enc)
		want := rc.counts(t, enc, texts)
		over, unknown := 0, 0
		for i, text := range texts {
			got := tk.Count(text)
			exact := known(text) && !hasLongPiece(tk, text)
			if !known(text) {
				unknown++
			}
			switch {
			case got < want[i]:
				t.Errorf("%s: Count(%+q) = %d, below the reference's %d", enc, text, got, want[i])
			case exact && got != want[i]:
				t.Errorf("%s: Count(%+q) = %d, the reference says %d", enc, text, got, want[i])
			case got > want[i]:
				over++
			}
		}
		t.Logf("%s: %d texts, %d with characters Go's tables do not know, %d over-estimated", enc, len(texts), unknown, over)
	}
}

// hasLongPiece reports whether Count over-estimates text for a long piece.
func hasLongPiece(tk *Tokenizer, text string) bool {
	long := false
	tk.units(text, func(u string, bytewise bool) bool {
		long = long || bytewise
		return true
	})
	return long && known(text)
}
