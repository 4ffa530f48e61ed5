package declare_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/contextasm/contextasm/declare"
)

// utf16LE encodes s as UTF-16LE, with the byte-order mark when bom.
func utf16LE(s string, bom bool) []byte {
	var b []byte
	if bom {
		b = append(b, 0xFF, 0xFE)
	}
	for _, u := range utf16.Encode([]rune(s)) {
		b = append(b, byte(u), byte(u>>8))
	}
	return b
}

func utf16BE(s string) []byte {
	b := []byte{0xFE, 0xFF}
	for _, u := range utf16.Encode([]rune(s)) {
		b = append(b, byte(u>>8), byte(u))
	}
	return b
}

// A UTF-8 byte-order mark is accepted; a UTF-16 or UTF-32 file is named
// as such, once, instead of one "invalid character" a line.
func TestLoadTextEncodings(t *testing.T) {
	a, b := line(`"request_id":"a"`), line(`"request_id":"b"`)
	text := a + "\n" + b + "\n"
	if decls, err := declare.Load(strings.NewReader("\xEF\xBB\xBF"+text), "m.jsonl"); err != nil || len(decls) != 2 {
		t.Errorf("UTF-8 with a byte-order mark: %d declarations, %v", len(decls), err)
	}
	if decls, err := declare.Load(strings.NewReader("\xEF\xBB\xBF# comment\r\n"+a), "m.jsonl"); err != nil || len(decls) != 1 {
		t.Errorf("a byte-order mark before a comment: %d declarations, %v", len(decls), err)
	}
	for _, tt := range []struct {
		name string
		in   []byte
		want string
	}{
		{"UTF-16LE with BOM", utf16LE(text, true), "UTF-16LE (byte-order mark FF FE)"},
		{"UTF-16LE without BOM", utf16LE(text, false), "UTF-16LE, without a byte-order mark"},
		{"UTF-16BE with BOM", utf16BE(text), "UTF-16BE (byte-order mark FE FF)"},
		{"UTF-32LE with BOM", append([]byte{0xFF, 0xFE, 0, 0}, '{', 0, 0, 0), "UTF-32LE"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := declare.Load(bytes.NewReader(tt.in), "m.jsonl")
			probs := problemsOf(t, err)
			if len(probs) != 1 || probs[0].Line != 1 || !strings.Contains(probs[0].Message, "the file is "+tt.want) ||
				!strings.Contains(probs[0].Message, "must be UTF-8") {
				t.Errorf("want one problem naming %s on line 1, got:\n%v", tt.want, err)
			}
		})
	}
}

// A line over the reader's limit names its block when its first or last
// bytes show the request_id, and says what the real limit is: the
// content's, not the line's.
func TestLoadLongLineNamesTheBlock(t *testing.T) {
	c := declare.Config{MaxContentBytes: 1000}
	big := strings.Repeat("x", 100_000) // the line limit is 6*1000 + 64 KiB
	in := strings.Join([]string{
		`{"request_id":"first","memory_type":"context","scope":"global","content":"` + big + `"}`,
		`{"memory_type":"context","scope":"global","content":"` + big + `","request_id":"last"}`,
		// A request_id spelt inside the content is not the block's.
		`{"memory_type":"context","content":"` + big + `\",\"request_id\":\"fake\"","scope":"global"}`,
		`{"content":"` + big + `"}`,
	}, "\n")
	_, err := c.Load(strings.NewReader(in), "m.jsonl")
	probs := problemsOf(t, err)
	want := []struct {
		line int
		id   string
	}{{1, "first"}, {2, "last"}, {3, ""}, {4, ""}}
	if len(probs) != len(want) {
		t.Fatalf("want %d problems, got:\n%v", len(want), err)
	}
	for i, w := range want {
		p := probs[i]
		if p.Line != w.line || p.RequestID != w.id || !strings.Contains(p.Message, "content is limited to 1000 bytes (Config.MaxContentBytes)") {
			t.Errorf("problem %d = %s; want line %d, request_id %q and the content limit", i, p, w.line, w.id)
		}
	}
	if n := len(probs[0].Message); !strings.Contains(probs[0].Message, fmt.Sprintf("line is %d bytes", len(in[:strings.IndexByte(in, '\n')]))) {
		t.Errorf("the message should give the line's length: %q (%d)", probs[0].Message, n)
	}
}

// countingReader yields n valid declaration lines and counts the bytes
// read from it.
type countingReader struct {
	n, i int
	buf  []byte
	read int
}

func (r *countingReader) Read(p []byte) (int, error) {
	for len(r.buf) == 0 {
		if r.i == r.n {
			return 0, io.EOF
		}
		r.buf = fmt.Appendf(nil, `{"request_id":"b%07d","memory_type":"context","scope":"global","content":"x"}`+"\n", r.i)
		r.i++
	}
	k := copy(p, r.buf)
	r.buf = r.buf[k:]
	r.read += k
	return k, nil
}

// The loader streams: at the first declaration past MaxBlocks it stops
// reading and fails, having decoded and kept no more than the limit, and
// returns nothing. Before, it decoded the whole input first (96 MB of 1.2
// million tiny blocks took 2 GB before the engine's cap refused them).
func TestLoadStopsAtMaxBlocks(t *testing.T) {
	const limit, lines = 1000, 1_000_000
	r := &countingReader{n: lines}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	decls, err := declare.Config{MaxBlocks: limit}.Load(r, "big.jsonl")
	runtime.ReadMemStats(&after)
	if decls != nil {
		t.Errorf("got %d declarations with an error", len(decls))
	}
	probs := problemsOf(t, err)
	if len(probs) != 1 || probs[0].Line != limit+1 || !strings.Contains(probs[0].Message, "more than 1000 declarations") ||
		!strings.Contains(probs[0].Message, "Config.MaxBlocks") {
		t.Errorf("want one problem on line %d naming the limit, got:\n%v", limit+1, err)
	}
	// One line is 78 bytes; the reader's buffer is 64 KiB.
	if max := (limit+1)*80 + 64<<10; r.read > max {
		t.Errorf("read %d bytes of the input, want at most %d: the loader must stop at the limit", r.read, max)
	}
	if !raceEnabled {
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 8<<20 {
			t.Errorf("allocated %d KiB to refuse a file at %d declarations", alloc>>10, limit)
		}
	}

	// At the limit exactly, everything loads.
	decls, err = declare.Config{MaxBlocks: limit}.Load(&countingReader{n: limit}, "ok.jsonl")
	if err != nil || len(decls) != limit {
		t.Errorf("exactly MaxBlocks declarations: %d, %v", len(decls), err)
	}
}

func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestLoadFilesAsOneSet(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"a.jsonl":   line(`"request_id":"a"`) + "\n" + line(`"request_id":"shared"`) + "\n",
		"b.jsonl":   "# b\n" + line(`"request_id":"b"`) + "\n\n" + line(`"request_id":"shared"`) + "\n",
		"bad.jsonl": `{"request_id":"x","SCOPE":"global"}` + "\n",
		"ok.jsonl":  line(`"request_id":"ok"`) + "\n",
	})
	p := func(name string) string { return filepath.Join(dir, name) }

	decls, err := declare.LoadFiles(p("a.jsonl"), p("ok.jsonl"))
	if err != nil || len(decls) != 3 || decls[0].RequestID != "a" || decls[2].RequestID != "ok" {
		t.Fatalf("LoadFiles = %v, %v", ids(decls), err)
	}

	// A request_id in two files names both places.
	_, err = declare.LoadFiles(p("a.jsonl"), p("b.jsonl"))
	checkProblems(t, problemsOf(t, err), p("b.jsonl"), []wantProblem{
		{4, "shared", "request_id", "also declared in " + p("a.jsonl") + ":2"},
	})

	// The same file twice is said once, not once a declaration; another
	// spelling of its path is the same file.
	other := filepath.Join(dir, ".", "a.jsonl")
	_, err = declare.LoadFiles(p("a.jsonl"), p("ok.jsonl"), other)
	probs := problemsOf(t, err)
	if len(probs) != 1 || probs[0].File != other || probs[0].Line != 0 ||
		!strings.Contains(probs[0].Message, "the same file as "+p("a.jsonl")+", given twice") {
		t.Errorf("want one problem saying the file is given twice, got:\n%v", err)
	}

	// Every file's problems, and a missing file, are all reported; nothing
	// loads.
	decls, err = declare.LoadFiles(p("bad.jsonl"), p("missing.jsonl"), p("a.jsonl"), p("b.jsonl"))
	if decls != nil {
		t.Errorf("got %d declarations with an error", len(decls))
	}
	if !errors.Is(err, os.ErrNotExist) || !errors.Is(err, declare.ErrInvalid) {
		t.Errorf("err = %v; want both the missing file and the invalid ones", err)
	}
	for _, want := range []string{
		p("bad.jsonl") + `:1: request_id "x": SCOPE: unknown field: field names are case-sensitive (did you mean "scope"?)`,
		p("b.jsonl") + `:4: request_id "shared": request_id: also declared in ` + p("a.jsonl") + ":2",
		"missing.jsonl",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}

	// MaxBlocks counts the declarations of all the files together.
	_, err = declare.Config{MaxBlocks: 3}.LoadFiles(p("a.jsonl"), p("b.jsonl"))
	probs = problemsOf(t, err)
	if last := probs[len(probs)-1]; last.File != p("b.jsonl") || last.Line != 4 || !strings.Contains(last.Message, "more than 3 declarations") {
		t.Errorf("want the limit reached on b.jsonl:4, got:\n%v", err)
	}
}

// Violation patterns are bounded in count, length and compiled size: a
// pattern's matching costs a step per instruction per byte of response,
// and five patterns of a thousand instructions took 75 s on a 1 MB
// response.
func TestViolationPatternBounds(t *testing.T) {
	rule := func(patterns ...string) declare.Declaration {
		d := base()
		d.BreakOnViolation, d.ViolationPatterns = true, patterns
		return d
	}
	many := make([]string, declare.MaxViolationPatterns+1)
	for i := range many {
		many[i] = fmt.Sprintf("word%d", i)
	}
	long := strings.Repeat("a", declare.MaxPatternBytes+1)
	longest := "[" + strings.Repeat("a", declare.MaxPatternBytes-2) + "]" // a class: one instruction
	tests := []struct {
		name string
		d    declare.Declaration
		want []wantProblem
	}{
		{"at the limits", rule(append(many[:declare.MaxViolationPatterns-2:declare.MaxViolationPatterns-2], longest, `[a-z ]{997}x`)...), nil},
		{"too many", rule(many...), []wantProblem{{0, "policy-kyc", "violation_patterns", "has 17 patterns, more than the limit of 16"}}},
		{"too long", rule("ok", long), []wantProblem{{0, "policy-kyc", "violation_patterns[1]", "is 1025 bytes, more than the limit of 1024"}}},
		{"too large compiled", rule(`[a-z ]{1000}x`), []wantProblem{{0, "policy-kyc", "violation_patterns[0]", "compiles to 1003 instructions, more than the limit of 1000"}}},
		{"nested repetition", rule(`(?:[a-z ]{100}){10}x`), []wantProblem{{0, "policy-kyc", "violation_patterns[0]", "more than the limit of 1000"}}},
		{"invalid is reported once", rule(`(`), []wantProblem{{0, "policy-kyc", "violation_patterns[0]", "invalid RE2"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := declare.Validate(&tt.d)
			if tt.want == nil {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			checkProblems(t, problemsOf(t, err), "", tt.want)
		})
	}
}
