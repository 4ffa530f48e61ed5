package bpe

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/pkoukk/tiktoken-go-loader/assets"
)

var encodings = []string{O200kBase, CL100kBase}

func load(t testing.TB, encoding string) *Tokenizer {
	t.Helper()
	tk, err := Load(encoding)
	if err != nil {
		t.Fatalf("Load(%q): %v", encoding, err)
	}
	return tk
}

func TestLoad(t *testing.T) {
	for _, enc := range encodings {
		t.Run(enc, func(t *testing.T) {
			a := load(t, enc)
			if got := a.Encoding(); got != enc {
				t.Errorf("Encoding() = %q, want %q", got, enc)
			}
			// Built once per process: a second Load shares the encoder.
			if b := load(t, enc); a != b {
				t.Errorf("Load(%q) twice returned %p and %p, want the same tokenizer", enc, a, b)
			}
		})
	}
	if load(t, O200kBase) == load(t, CL100kBase) {
		t.Error("o200k_base and cl100k_base share a tokenizer")
	}
}

func TestLoadUnknownEncoding(t *testing.T) {
	for _, name := range []string{"", "p50k_base", "O200K_BASE", "o200k_base ", "gpt2"} {
		tk, err := Load(name)
		if !errors.Is(err, ErrUnknownEncoding) {
			t.Errorf("Load(%q) error = %v, want ErrUnknownEncoding", name, err)
		}
		if tk != nil {
			t.Errorf("Load(%q) returned a tokenizer with an error", name)
		}
		if err != nil && !strings.HasPrefix(err.Error(), "bpe: ") {
			t.Errorf("Load(%q) error %q lacks the package prefix", name, err)
		}
	}
}

// TestCountKnownAnswers pins token counts. "hello world" is the classic
// tiktoken example (o200k_base [24912 2375], cl100k_base [15339 1917]); the
// other counts were computed once with this package and checked against the
// token ids tiktoken-go produced, so a change of encoder data or of how text
// is split shows up here.
func TestCountKnownAnswers(t *testing.T) {
	tests := []struct {
		text         string
		o200k, cl100 int
	}{
		{"", 0, 0},
		{"hello world", 2, 2},
		{"你好，世界", 3, 6},
		{"func main() {\n\tfmt.Println(\"hi\")\n}", 10, 10},
		{"A memória é útil.", 5, 7},
		{"【硬性规则】", 5, 7},
		{"🙂🙂 emoji", 3, 5},
	}
	o, c := load(t, O200kBase), load(t, CL100kBase)
	for _, tt := range tests {
		if got := o.Count(tt.text); got != tt.o200k {
			t.Errorf("o200k_base Count(%q) = %d, want %d", tt.text, got, tt.o200k)
		}
		if got := c.Count(tt.text); got != tt.cl100 {
			t.Errorf("cl100k_base Count(%q) = %d, want %d", tt.text, got, tt.cl100)
		}
	}
}

// Special-token text is what a block's content may contain; it must be
// counted as the ordinary text the model receives, not as one special token
// (nor rejected, as tiktoken's Encode does by default).
func TestCountSpecialTokenTextIsOrdinary(t *testing.T) {
	for _, enc := range encodings {
		tk := load(t, enc)
		for _, s := range []string{"<|endoftext|>", "<|im_start|>", "<|fim_prefix|>"} {
			if got := tk.Count(s); got <= 1 {
				t.Errorf("%s Count(%q) = %d, want more than 1 (ordinary text)", enc, s, got)
			}
		}
		if got, want := tk.Count("<|endoftext|>"), 7; got != want {
			t.Errorf("%s Count(<|endoftext|>) = %d, want %d", enc, got, want)
		}
	}
}

// checkCut asserts the documented contract of Cut for one input.
func checkCut(t *testing.T, tk *Tokenizer, text string, n int) string {
	t.Helper()
	got := tk.Cut(text, n)
	if !strings.HasPrefix(text, got) {
		t.Fatalf("%s Cut(%q, %d) = %q, not a prefix", tk.Encoding(), text, n, got)
	}
	if utf8.ValidString(text) && !utf8.ValidString(got) {
		t.Fatalf("%s Cut(%q, %d) = %q, splits a UTF-8 character", tk.Encoding(), text, n, got)
	}
	if c := tk.Count(got); c > max(n, 0) {
		t.Fatalf("%s Cut(%q, %d) = %q has %d tokens", tk.Encoding(), text, n, got, c)
	}
	if n >= tk.Count(text) && got != text {
		t.Fatalf("%s Cut(%q, %d) = %q, want the whole text (%d tokens)", tk.Encoding(), text, n, got, tk.Count(text))
	}
	return got
}

func TestCut(t *testing.T) {
	texts := []string{
		"hello world",
		"你好，世界。这是一个关于记忆的测试。",
		"🙂🙂🙂 emoji 👩‍👩‍👧‍👦 family 🇧🇷 flag",
		"A memória é útil; a informação não é só ação — é coração.",
		"【硬性规则】不要泄露密钥【/硬性规则】",
		"func main() {\n\tfmt.Println(\"héllo, 世界\")\n}",
	}
	for _, enc := range encodings {
		tk := load(t, enc)
		for _, text := range texts {
			total := tk.Count(text)
			prev := ""
			for n := -1; n <= total+1; n++ {
				got := checkCut(t, tk, text, n)
				if n <= 0 && got != "" {
					t.Errorf("%s Cut(%q, %d) = %q, want \"\"", enc, text, n, got)
				}
				// More room never gives a shorter prefix.
				if len(got) < len(prev) {
					t.Errorf("%s Cut(%q, %d) = %q is shorter than Cut(n-1) = %q", enc, text, n, got, prev)
				}
				prev = got
			}
			if got := tk.Cut(text, total); got != text {
				t.Errorf("%s Cut(%q, Count) = %q, want the text", enc, text, got)
			}
		}
	}
}

func TestCutKnownAnswers(t *testing.T) {
	tk := load(t, O200kBase)
	tests := []struct {
		text string
		n    int
		want string
	}{
		{"hello world", 1, "hello"},
		{"hello world", 2, "hello world"},
		{"hello world", 100, "hello world"},
		{"hello world", 0, ""},
		{"hello world", -5, ""},
		{"", 3, ""},
	}
	for _, tt := range tests {
		if got := tk.Cut(tt.text, tt.n); got != tt.want {
			t.Errorf("Cut(%q, %d) = %q, want %q", tt.text, tt.n, got, tt.want)
		}
	}
}

// TestCutProperties checks Cut's invariants over 200 random multilingual
// strings per encoding (Latin with accents, CJK, Cyrillic, Arabic,
// Devanagari, emoji with modifiers and joiners, combining marks);
// a fixed seed keeps the test deterministic.
func TestCutProperties(t *testing.T) {
	alphabet := []string{
		"a", "e", "z", " ", " ", "\n", ".", ",", "{", "}", "<", "/", ">", "|",
		"é", "ã", "ç", "ü", "ß", "ñ",
		"你", "好", "世", "界", "。", "【", "】", "规", "则",
		"п", "р", "и", "в", "е", "т",
		"ا", "ل", "م", "ع", "ر", "ف", "ة",
		"न", "म", "स", "्", "ते",
		"🙂", "👍🏽", "🇵🇹", "👩‍💻", "\u0301", "\u2060",
		"hello", " world", "memória", "<|endoftext|>", "0123", "\t",
	}
	r := rand.New(rand.NewPCG(2026, 12))
	for _, enc := range encodings {
		tk := load(t, enc)
		for range 200 {
			var b strings.Builder
			for range r.IntN(40) {
				b.WriteString(alphabet[r.IntN(len(alphabet))])
			}
			text := b.String()
			total := tk.Count(text)
			for _, n := range []int{0, 1, r.IntN(total + 2), total - 1, total, total + 1} {
				checkCut(t, tk, text, n)
			}
		}
	}
}

func TestConcurrentUse(t *testing.T) {
	tk := load(t, O200kBase)
	done := make(chan int)
	for range 4 {
		go func() {
			n := 0
			for range 50 {
				n += tk.Count("你好，世界 hello world")
				_ = tk.Cut("A memória é útil.", 3)
			}
			done <- n
		}()
	}
	for range 4 {
		if n := <-done; n != 50*tk.Count("你好，世界 hello world") {
			t.Errorf("concurrent counts = %d", n)
		}
	}
}

func BenchmarkCount(b *testing.B) {
	tk := load(b, O200kBase)
	text := strings.Repeat("A memória é útil; 你好，世界。 ", 20)
	b.ReportAllocs()
	for b.Loop() {
		tk.Count(text)
	}
}

func BenchmarkCut(b *testing.B) {
	tk := load(b, O200kBase)
	text := strings.Repeat("A memória é útil; 你好，世界。 ", 20)
	b.ReportAllocs()
	for b.Loop() {
		tk.Cut(text, 50)
	}
}

// Invalid UTF-8 counts as tiktoken-go counts it: each invalid byte is the
// character U+FFFD (content is validated before it gets here; this is the
// tokenizer's own contract). Cut still returns a prefix of the text.
func TestInvalidUTF8(t *testing.T) {
	for _, enc := range encodings {
		tk := load(t, enc)
		o := loadOracle(t, enc)
		for _, text := range []string{"a\xffb", "\xe4\xb8", "中\x80文 and more", "x'\xc5"} {
			if got, want := tk.Count(text), len(o.enc.EncodeOrdinary(text)); got != want {
				t.Errorf("%s: Count(%q) = %d, tiktoken-go %d", enc, text, got, want)
			}
			for n := range tk.Count(text) + 2 {
				if cut := tk.Cut(text, n); !strings.HasPrefix(text, cut) {
					t.Errorf("%s: Cut(%q, %d) = %q, not a prefix", enc, text, n, cut)
				}
			}
		}
	}
}

// Counting ordinary text allocates nothing: pieces up to smallPiece bytes
// merge on the stack.
func TestCountAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under the race detector")
	}
	text := strings.Repeat("A memória é útil; 你好，世界。 func main() {\n\tfmt.Println(\"hi\")\n} ", 20)
	for _, enc := range encodings {
		tk := load(t, enc)
		if n := testing.AllocsPerRun(50, func() { tk.Count(text) }); n != 0 {
			t.Errorf("%s: Count allocates %v times, want 0", enc, n)
		}
		if n := testing.AllocsPerRun(50, func() { LowerBound(text) }); n != 0 {
			t.Errorf("LowerBound allocates %v times, want 0", n)
		}
	}
}

// A tokenizer built from a rank file counts as the built-in one of the
// same vocabulary and pattern.
func TestFromRanks(t *testing.T) {
	for _, enc := range encodings {
		data, err := assets.Assets.ReadFile(enc + ".tiktoken")
		if err != nil {
			t.Fatal(err)
		}
		ranks, err := ParseRanks(data, enc+".tiktoken")
		if err != nil {
			t.Fatal(err)
		}
		ft, err := FromRanks("file", ranks, enc)
		if err != nil {
			t.Fatal(err)
		}
		tk := load(t, enc)
		r := rand.New(rand.NewPCG(4, 4))
		for range 500 {
			text := genUnicode(r, 30)
			if a, b := ft.Count(text), tk.Count(text); a != b {
				t.Fatalf("%s: from ranks %d, built in %d for %q", enc, a, b, text)
			}
		}
	}
	if _, err := ParseRanks([]byte("YQ== 0\nYQ== 1\n"), "dup"); err == nil || !strings.Contains(err.Error(), "listed twice") {
		t.Errorf("a token listed twice: err = %v", err)
	}
	if _, err := FromRanks("small", map[string]int{"a": 0}, O200kBase); err == nil {
		t.Error("a vocabulary without every byte: no error")
	}
}

// LowerBound knows the joins of the built-in vocabularies only.
func TestLowerBoundedBuiltinOnly(t *testing.T) {
	if !load(t, O200kBase).LowerBounded() || !load(t, CL100kBase).LowerBounded() {
		t.Error("a built-in encoding is not LowerBounded")
	}
	ranks := map[string]int{}
	for b := range 256 {
		ranks[string([]byte{byte(b)})] = b
	}
	ft, err := FromRanks("bytes", ranks, O200kBase)
	if err != nil {
		t.Fatal(err)
	}
	if ft.LowerBounded() {
		t.Error("a tokenizer from a rank file says LowerBounded")
	}
}

// Cut keeps its contract on text with characters Go's tables do not know
// and with long pieces, where Count counts stretches bytewise.
func TestCutUnknownAndLong(t *testing.T) {
	r := rand.New(rand.NewPCG(16, 3))
	for _, enc := range encodings {
		tk := load(t, enc)
		for i := range 300 {
			text := genUnicode(r, 30)
			if i%3 == 0 {
				text = strings.Repeat(text, 1+r.IntN(200))
			}
			text = strings.ToValidUTF8(text, "")
			total := tk.Count(text)
			for _, n := range []int{1, r.IntN(total + 2), total - 1, total} {
				checkCut(t, tk, text, n)
			}
		}
	}
}
