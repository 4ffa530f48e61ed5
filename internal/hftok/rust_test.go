package hftok

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
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
	"golang.org/x/text/unicode/rangetable"
)

// The differential tests run the Rust tokenizers library itself (its Node
// binding, testdata/ref/count.js) beside this package, on text Go's tables
// and the library's may see differently: characters Unicode assigned after
// Go's tables, and characters whose normalization the library's tables
// predate. They need node and `npm ci` in testdata/ref, as the reference
// tests do: without them they skip, and under CI=true they fail.

// rustRef is a running count.js.
type rustRef struct {
	in  *bufio.Writer
	out *bufio.Scanner
}

func startRust(t *testing.T) *rustRef {
	t.Helper()
	familyFile(t, "llama3") // skips, or fails in CI, without the packages
	node, err := exec.LookPath("node")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("node is not installed: %v", err)
		}
		t.Skipf("SKIP: node is not installed: %v", err)
	}
	dir, err := filepath.Abs(filepath.Join("testdata", "ref"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, "count.js")
	cmd.Dir = dir
	cmd.Stderr = os.Stderr
	if d := os.Getenv("CONTEXTASM_HF_MODULES"); d != "" {
		cmd.Env = append(os.Environ(), "NODE_PATH="+d)
	}
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
	t.Cleanup(func() {
		stdin.Close()
		cmd.Wait()
	})
	rr := &rustRef{in: bufio.NewWriter(stdin), out: bufio.NewScanner(stdout)}
	rr.out.Buffer(make([]byte, 1<<16), 1<<26)
	return rr
}

// ask sends one request per text to f (a family or a normal form) and
// returns the answers, in order.
func (rr *rustRef) ask(t *testing.T, f string, texts []string) []string {
	t.Helper()
	type req struct {
		F string `json:"f"`
		T string `json:"t"`
	}
	errc := make(chan error, 1)
	go func() {
		enc := json.NewEncoder(rr.in)
		for _, s := range texts {
			if err := enc.Encode(req{f, s}); err != nil {
				errc <- err
				return
			}
		}
		errc <- rr.in.Flush()
	}()
	out := make([]string, len(texts))
	for i := range texts {
		if !rr.out.Scan() {
			t.Fatalf("count.js stopped: %v", rr.out.Err())
		}
		out[i] = rr.out.Text()
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	return out
}

func (rr *rustRef) counts(t *testing.T, family string, texts []string) []int {
	t.Helper()
	ans := rr.ask(t, family, texts)
	out := make([]int, len(ans))
	for i, a := range ans {
		n, err := strconv.Atoi(a)
		if err != nil {
			t.Fatalf("count.js said %q", a)
		}
		out[i] = n
	}
	return out
}

// newer are the characters Unicode assigned after Go's tables, up to the
// newest version x/text knows: their classes Go cannot tell.
func newer() []rune {
	var out []rune
	rangetable.Visit(rangetable.Assigned(latestUnicode), func(r rune) {
		if !unicode.Is(assignedIn(unicode.Version), r) && !unicode.Is(unicode.Co, r) {
			out = append(out, r)
		}
	})
	return out
}

// latestUnicode is the newest Unicode version x/text's tables hold.
const latestUnicode = "17.0.0"

// diffAtoms are fragments of the classes the patterns tell apart and the
// families' added tokens.
var diffAtoms = []string{
	"a", "Z", "the", "Hello", " world", "'s", "'T", "'re", "'ſ", "n't", " ", "  ", "\t", "\n", "\r\n", "\n\n", " \n",
	"\u00a0", "\u3000", "0", "7", "12", "123", "4567", "٣", "½", ".", ",", "!", "...", "/", "\\", "'", "\"", "(", "}",
	"<", "#", "中", "文字", "ひら", "カタ", "한", "ال", "ñ", "é", "e\u0301", "ß", "😀", "👍🏽", "\u200d", "\ufe0f",
	"<|im_start|>", "<|begin_of_text|>", "<think>", "<b>", "<start_of_turn>", "<｜User｜>", "▁", "▁▁",
}

// newAtoms are fragments with characters of Unicode 15.1, 16.0 and 17.0
// (letters, digits, marks, symbols) and of 10.0 to 15.0 with normalizations
// the library's tables predate.
var newAtoms = []string{
	// Unicode 16.0: Garay digit and letters and a mark, Kirat Rai digit
	// and letter, Legacy Computing's outlined digit and a symbol, Tulu-
	// Tigalari, Todhri, Sunuwar digit, Gurung Khema, Ol Onal, Myanmar
	// Extended-C digit, Latin and Cyrillic letters, Arabic Pepet (a mark).
	"\U00010D40", "\U00010D40123", "\U00010D4A\U00010D4B", "a\U00010D69", "\U00016D70", "\U00016D43\U00016D44",
	"\U0001CCF0", "\U0001CCF012", "\U0001CC00", "\U00011380\U000113B8", "\U000105C0", "\U00011BF0", "\U00016100\U0001611E",
	"\U0001E5D0\U0001E5EE", "\U0001E5F1", "\U000116D0", "\uA7CB", "\uA7CD", "\u1C89", "x\u0897", "\u0897a",
	// Unicode 15.1: a CJK Extension I ideograph, ideographic description
	// characters.
	"\U0002EBF0", "\U0002EBF0\U0002EC00", "\u2FFC", "\u31EF",
	// Unicode 17.0: Sidetic, Tolong Siki, a CJK Extension J ideograph.
	"\U00010940", "\U00011DB0", "\U000323B0",
	// Unicode 10.0 to 15.0, normalizing: a composition (Dives Akuru), marks
	// with a combining class, compatibility forms.
	"\U00011935\U00011930", "e\u0898\u0301", "a\u1DFA\u0316", "\u32FF", "\uA7F2", "\U00010781", "\u1AC1",
}

// diffText returns a random text of atoms and, with newer, of newAtoms,
// characters of Unicode 15.1 and later and characters from anywhere.
func diffText(r *rand.Rand, newChars []rune, maxParts int, newer bool) string {
	var b strings.Builder
	for range 1 + r.IntN(maxParts) {
		switch k := r.IntN(8); {
		case !newer || k > 2:
			b.WriteString(diffAtoms[r.IntN(len(diffAtoms))])
		case k == 0:
			b.WriteString(newAtoms[r.IntN(len(newAtoms))])
		case k == 1:
			b.WriteRune(newChars[r.IntN(len(newChars))])
		default:
			if c := rune(r.IntN(0x40000)); utf8.ValidRune(c) {
				b.WriteRune(c)
			}
		}
	}
	return b.String()
}

// TestRustDifferential counts random text with the library and with each
// family: never below, and equal where the text holds no character the
// library may see otherwise. CONTEXTASM_HF_DIFF_N sets the number of texts
// (default 2000); CONTEXTASM_HF_DIFF_SEED the seed.
func TestRustDifferential(t *testing.T) {
	rr := startRust(t)
	n := 2000
	if testing.Short() || raceEnabled {
		n = 300
	}
	if s := os.Getenv("CONTEXTASM_HF_DIFF_N"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil {
			t.Fatalf("CONTEXTASM_HF_DIFF_N=%q: %v", s, err)
		}
	}
	seed := uint64(26)
	if s := os.Getenv("CONTEXTASM_HF_DIFF_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	t.Logf("seed %d (CONTEXTASM_HF_DIFF_SEED), %d texts", seed, n)
	r := rand.New(rand.NewPCG(seed, 16))
	newChars := newer()
	texts := make([]string, n)
	for i := range texts {
		switch i % 4 {
		case 0: // text Go's tables know, the control
			texts[i] = diffText(r, newChars, 24, false)
		case 3: // long runs: a block of one string repeated
			texts[i] = strings.Repeat(diffText(r, newChars, 4, true), 1+r.IntN(80))
		default:
			texts[i] = diffText(r, newChars, 24, true)
		}
	}
	for _, fam := range families {
		t.Run(fam, func(t *testing.T) {
			tok := loadFamily(t, fam)
			want := rr.counts(t, fam, texts)
			uncertain, over, bad := 0, 0, 0
			for i, text := range texts {
				got := tok.Count(text)
				exact := !hasUncertain(text, tok.uncertain)
				if !exact {
					uncertain++
				}
				switch {
				case got < want[i]:
					bad++
					if bad <= 10 {
						t.Errorf("Count(%+q) = %d, below the library's %d", trunc(text), got, want[i])
					}
				case exact && got != want[i]:
					bad++
					if bad <= 10 {
						t.Errorf("Count(%+q) = %d, the library says %d", trunc(text), got, want[i])
					}
				case got > want[i]:
					over++
				}
				if m := want[i] / 2; m > 0 {
					if c := tok.Count(tok.Cut(text, m)); c > m {
						t.Errorf("Cut(%+q, %d) counts %d", trunc(text), m, c)
					}
				}
			}
			t.Logf("%d texts, %d with characters the library may see otherwise, %d over-estimated", len(texts), uncertain, over)
		})
	}
}

// TestRustEveryCharacter counts every character Go's tables assign (but
// private use), and every one Unicode assigned after them, in three
// contexts — after a letter, before a digit, between spaces — with each
// family and with the library: equal where the chunk holds no character
// the library may see otherwise, never below anywhere.
func TestRustEveryCharacter(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("every character: not in -short or -race runs")
	}
	rr := startRust(t)
	var known []rune
	rangetable.Visit(assignedIn(unicode.Version), func(r rune) {
		if !unicode.Is(unicode.Co, r) && !unicode.Is(unicode.Cs, r) {
			known = append(known, r)
		}
	})
	chunks := func(chars []rune) []string {
		var out []string
		for i := 0; i < len(chars); i += 400 {
			var b strings.Builder
			for _, c := range chars[i:min(i+400, len(chars))] {
				fmt.Fprintf(&b, "a%c1 %c ", c, c)
			}
			out = append(out, b.String())
		}
		return out
	}
	texts := append(chunks(known), chunks(newer())...)
	for _, fam := range families {
		t.Run(fam, func(t *testing.T) {
			tok := loadFamily(t, fam)
			want := rr.counts(t, fam, texts)
			bad := 0
			for i, text := range texts {
				got := tok.Count(text)
				if got < want[i] || (!hasUncertain(text, tok.uncertain) && got != want[i]) {
					bad++
					if bad <= 5 {
						t.Errorf("chunk %d (%+q…): Count %d, the library %d", i, text[:40], got, want[i])
					}
				}
			}
		})
	}
}

// TestNormalizerTables checks what the uncertain flags of normalizers rest
// on: the library normalizes every character Unicode 9.0 assigned as Go's
// tables do (in probes that decompose, reorder and compose it), and every
// character it normalizes otherwise is flagged.
func TestNormalizerTables(t *testing.T) {
	rr := startRust(t)
	forms := []struct {
		name string
		form norm.Form
		flag uint8
	}{{"NFC", norm.NFC, uncCanon}, {"NFD", norm.NFD, uncCanon}, {"NFKC", norm.NFKC, uncCompat}, {"NFKD", norm.NFKD, uncCompat}}
	var chars []rune
	var probes []string
	rangetable.Visit(assignedIn(norm.Version), func(r rune) {
		s := string(r)
		for _, f := range forms {
			if normalizes(f.form, s) {
				chars = append(chars, r)
				probes = append(probes, s+s+"a"+s+"\u0316\u0301"+s+norm.NFD.String(s))
				return
			}
		}
	})
	old := rangetable.Assigned(refNormVersion)
	tab := uncertainChars()
	for _, f := range forms {
		got := rr.ask(t, f.name, probes)
		differ, unflagged := 0, 0
		for i, r := range chars {
			var lib string
			if err := json.Unmarshal([]byte(got[i]), &lib); err != nil {
				t.Fatal(err)
			}
			if lib == f.form.String(probes[i]) {
				continue
			}
			differ++
			if unicode.Is(old, r) {
				t.Errorf("%s of %U: the library's differs from Go's, but Unicode %s assigned it", f.name, r, refNormVersion)
			}
			if tab.of(r)&f.flag == 0 {
				unflagged++
				t.Errorf("%s of %U: the library's differs from Go's, and it is not flagged", f.name, r)
			}
		}
		t.Logf("%s: %d of %d characters normalize otherwise in the library", f.name, differ, len(chars))
	}
}
