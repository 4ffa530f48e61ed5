package fingerprint_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/contextasm/contextasm/fingerprint"
)

func TestCanonical(t *testing.T) {
	type inner struct {
		Z string `json:"z"`
		A int    `json:"a"`
	}
	type outer struct {
		Zeta  []inner        `json:"zeta"`
		Alpha map[string]any `json:"alpha"`
		Mid   string         `json:"mid"`
	}
	tests := []struct {
		name string
		in   any
		want string
	}{
		{"empty object", map[string]int{}, `{}`},
		{"scalars", []any{1, 2.5, "s", true, nil}, `[1,2.5,"s",true,null]`},
		{
			"struct fields sorted, not declaration order",
			inner{Z: "z", A: 1},
			`{"a":1,"z":"z"}`,
		},
		{
			"keys sorted at every depth",
			outer{
				Zeta:  []inner{{Z: "y", A: 2}},
				Alpha: map[string]any{"b": map[string]any{"d": 1, "c": []any{map[string]int{"y": 1, "x": 2}}}, "a": 0},
				Mid:   "m",
			},
			`{"alpha":{"a":0,"b":{"c":[{"x":2,"y":1}],"d":1}},"mid":"m","zeta":[{"a":2,"z":"y"}]}`,
		},
		{
			"HTML characters not escaped",
			map[string]string{"render": `<doc id="{request_id}">{content}</doc> & more`},
			`{"render":"<doc id=\"{request_id}\">{content}</doc> & more"}`,
		},
		{"unicode kept as is", map[string]string{"r": "【硬性规则】{content}"}, `{"r":"【硬性规则】{content}"}`},
		{"control characters escaped", map[string]string{"sep": "\n\t"}, `{"sep":"\n\t"}`},
		{"large integers exact", map[string]int64{"n": 9007199254740993}, `{"n":9007199254740993}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := fingerprint.Canonical(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("Canonical = %s\nwant        %s", got, tt.want)
			}
			again, err := fingerprint.Canonical(tt.in)
			if err != nil || string(again) != string(got) {
				t.Errorf("Canonical is not stable: %s then %s (%v)", got, again, err)
			}
		})
	}
}

func TestCanonicalError(t *testing.T) {
	_, err := fingerprint.Canonical(make(chan int))
	if err == nil || !strings.HasPrefix(err.Error(), "fingerprint: ") {
		t.Errorf("Canonical(chan) error = %v, want one prefixed %q", err, "fingerprint: ")
	}
	if _, err := fingerprint.Of(func() {}); err == nil {
		t.Error("Of(func) = nil error")
	}
}

// TestSumKnownAnswers pins Sum. The values are the first 16 hex digits of
// SHA-256 as printed by `printf '%s' INPUT | sha256sum`, computed outside Go.
// Changing Sum changes every fingerprint and breaks every deployed header.
func TestSumKnownAnswers(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"", "sha256:e3b0c44298fc1c14"},
		{`{}`, "sha256:44136fa355b3678a"},
		{`{"a":1,"b":[true,null]}`, "sha256:1cc69c7fa23616ca"},
		{`{"template_version":"1.2"}`, "sha256:945bbb806a3e36c6"},
		{"【硬性规则】", "sha256:0f9f19df637b3d33"},
	}
	for _, tt := range tests {
		if got := fingerprint.Sum([]byte(tt.in)); got != tt.want {
			t.Errorf("Sum(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

func TestOf(t *testing.T) {
	// Of hashes the canonical form: field order and map order do not count.
	a, err := fingerprint.Of(map[string]any{"b": []int{1, 2}, "a": true, "template_version": "1.2"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := fingerprint.Of(struct {
		Version string `json:"template_version"`
		A       bool   `json:"a"`
		B       []int  `json:"b"`
	}{"1.2", true, []int{1, 2}})
	if err != nil {
		t.Fatal(err)
	}
	if a != b {
		t.Errorf("Of(map) = %s, Of(struct) = %s, want equal", a, b)
	}
	c, _ := fingerprint.Canonical(map[string]any{"a": true, "b": []int{1, 2}, "template_version": "1.2"})
	if want := fingerprint.Sum(c); a != want {
		t.Errorf("Of = %s, Sum(Canonical) = %s", a, want)
	}
	if d, _ := fingerprint.Of(map[string]any{"b": []int{2, 1}, "a": true, "template_version": "1.2"}); d == a {
		t.Error("Of ignores array order")
	}
}

const fp = "sha256:0123456789abcdef"

func TestHeader(t *testing.T) {
	if got, want := fingerprint.Header(fp), "[MODEL_CONTEXT_PROTOCOL v1.2 | fp:sha256:0123456789abcdef]"; got != want {
		t.Errorf("Header = %q, want %q", got, want)
	}
	if !strings.HasPrefix(fingerprint.Header(fp), fingerprint.HeaderPrefix) {
		t.Error("Header does not start with HeaderPrefix")
	}
}

func TestParseHeaderRoundTrip(t *testing.T) {
	fps := []string{fp, fingerprint.Sum(nil), fingerprint.Sum([]byte("x")), "sha256:ffffffffffffffff", "sha256:0000000000000000"}
	tails := []string{"", "\n", "\nbody [MODEL_CONTEXT_PROTOCOL v9 | fp:x]", "\r\n", "\r\nbody\r\n"}
	for _, f := range fps {
		for _, tail := range tails {
			text := fingerprint.Header(f) + tail
			v, got, err := fingerprint.ParseHeader(text)
			if err != nil || v != fingerprint.ProtocolVersion || got != f {
				t.Errorf("ParseHeader(%q) = %q, %q, %v; want %q, %q, nil", text, v, got, err, fingerprint.ProtocolVersion, f)
			}
			if err := fingerprint.Verify(text, f); err != nil {
				t.Errorf("Verify(%q, %q) = %v", text, f, err)
			}
		}
	}
}

func TestVerifyMismatch(t *testing.T) {
	tests := []struct {
		name, text, want string
		wantErr          fingerprint.MismatchError
		msg              string
	}{
		{
			"other fingerprint",
			fingerprint.Header("sha256:ffffffffffffffff") + "\nbody", fp,
			fingerprint.MismatchError{Version: "1.2", WantVersion: "1.2", Fingerprint: "sha256:ffffffffffffffff", WantFingerprint: fp},
			"the template changed",
		},
		{
			"other version",
			"[MODEL_CONTEXT_PROTOCOL v1.3 | fp:" + fp + "]\nbody", fp,
			fingerprint.MismatchError{Version: "1.3", WantVersion: "1.2", Fingerprint: fp, WantFingerprint: fp},
			`protocol version "1.3", want "1.2"`,
		},
		{
			"other version and fingerprint",
			"[MODEL_CONTEXT_PROTOCOL v2 | fp:sha256:ffffffffffffffff]", fp,
			fingerprint.MismatchError{Version: "2", WantVersion: "1.2", Fingerprint: "sha256:ffffffffffffffff", WantFingerprint: fp},
			`protocol version "2"`,
		},
		{
			"want not well formed",
			fingerprint.Header(fp), "sha256:0123",
			fingerprint.MismatchError{Version: "1.2", WantVersion: "1.2", Fingerprint: fp, WantFingerprint: "sha256:0123"},
			"want sha256:0123",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := fingerprint.Verify(tt.text, tt.want)
			if !errors.Is(err, fingerprint.ErrProtocolMismatch) {
				t.Fatalf("Verify = %v, want ErrProtocolMismatch", err)
			}
			if errors.Is(err, fingerprint.ErrNoHeader) {
				t.Error("a mismatch also reports ErrNoHeader")
			}
			var me *fingerprint.MismatchError
			if !errors.As(err, &me) {
				t.Fatalf("Verify = %T, want *MismatchError", err)
			}
			if *me != tt.wantErr {
				t.Errorf("MismatchError = %+v, want %+v", *me, tt.wantErr)
			}
			if msg := err.Error(); !strings.HasPrefix(msg, "fingerprint: ") || !strings.Contains(msg, tt.msg) {
				t.Errorf("Error() = %q, want the package prefix and %q", msg, tt.msg)
			}
		})
	}
}

func TestParseHeaderMalformed(t *testing.T) {
	good := fingerprint.Header(fp)
	tests := []struct{ name, text string }{
		{"empty text", ""},
		{"missing opening bracket", strings.TrimPrefix(good, "[")},
		{"missing closing bracket", strings.TrimSuffix(good, "]")},
		{"uppercase hex", "[MODEL_CONTEXT_PROTOCOL v1.2 | fp:sha256:0123456789ABCDEF]"},
		{"15 hex digits", "[MODEL_CONTEXT_PROTOCOL v1.2 | fp:sha256:0123456789abcde]"},
		{"17 hex digits", "[MODEL_CONTEXT_PROTOCOL v1.2 | fp:sha256:0123456789abcdef0]"},
		{"64 hex digits", "[MODEL_CONTEXT_PROTOCOL v1.2 | fp:sha256:" + strings.Repeat("ab", 32) + "]"},
		{"non-hex digit", "[MODEL_CONTEXT_PROTOCOL v1.2 | fp:sha256:0123456789abcdeg]"},
		{"no fp:", "[MODEL_CONTEXT_PROTOCOL v1.2 | sha256:0123456789abcdef]"},
		{"no algorithm", "[MODEL_CONTEXT_PROTOCOL v1.2 | fp:0123456789abcdef]"},
		{"other algorithm", "[MODEL_CONTEXT_PROTOCOL v1.2 | fp:sha512:0123456789abcdef]"},
		{"no version", "[MODEL_CONTEXT_PROTOCOL v | fp:sha256:0123456789abcdef]"},
		{"no v", "[MODEL_CONTEXT_PROTOCOL 1.2 | fp:sha256:0123456789abcdef]"},
		{"space in version", "[MODEL_CONTEXT_PROTOCOL v1 2 | fp:sha256:0123456789abcdef]"},
		{"text after the bracket", good + " trailing"},
		{"leading space", " " + good},
		{"lowercase protocol name", strings.ToLower(good)},
		{"header not on the first line", "preamble\n" + good},
		{"header after a blank line", "\n" + good},
		{"two fingerprints", "[MODEL_CONTEXT_PROTOCOL v1.2 | fp:" + fp + " | fp:" + fp + "]"},
		{"bare carriage return ends nothing", good + "\rbody"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, got, err := fingerprint.ParseHeader(tt.text)
			if !errors.Is(err, fingerprint.ErrNoHeader) {
				t.Fatalf("ParseHeader(%q) = %q, %q, %v; want ErrNoHeader", tt.text, v, got, err)
			}
			if v != "" || got != "" {
				t.Errorf("ParseHeader(%q) returned %q, %q with an error", tt.text, v, got)
			}
			if err := fingerprint.Verify(tt.text, fp); !errors.Is(err, fingerprint.ErrNoHeader) || errors.Is(err, fingerprint.ErrProtocolMismatch) {
				t.Errorf("Verify(%q) = %v, want ErrNoHeader only", tt.text, err)
			}
		})
	}
}

func FuzzParseHeader(f *testing.F) {
	for _, s := range []string{
		"", fingerprint.Header(fp), fingerprint.Header(fp) + "\r\nx", "[MODEL_CONTEXT_PROTOCOL v1.3 | fp:" + fp + "]",
		"[MODEL_CONTEXT_PROTOCOL v | fp:]", "[MODEL_CONTEXT_PROTOCOL v1.2 | fp:sha256:0123456789abcdeF]\n",
		"[MODEL_CONTEXT_PROTOCOL v1.2 | fp:sha256:0123456789abcdef | fp:sha256:0123456789abcdef]",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		v, got, err := fingerprint.ParseHeader(text)
		if err != nil {
			if !errors.Is(err, fingerprint.ErrNoHeader) {
				t.Fatalf("ParseHeader(%q) error %v does not wrap ErrNoHeader", text, err)
			}
			return
		}
		if v == "" || strings.ContainsAny(v, " |]\n") {
			t.Fatalf("ParseHeader(%q) version = %q", text, v)
		}
		line, _, _ := strings.Cut(text, "\n")
		if !strings.HasPrefix(line, fingerprint.HeaderPrefix+" v"+v+" | fp:"+got+"]") {
			t.Fatalf("ParseHeader(%q) = %q, %q: not what the first line says", text, v, got)
		}
		// A fingerprint read back is one Header writes and ParseHeader reads.
		h := fingerprint.Header(got)
		v2, got2, err := fingerprint.ParseHeader(h)
		if err != nil || v2 != fingerprint.ProtocolVersion || got2 != got {
			t.Fatalf("ParseHeader(Header(%q)) = %q, %q, %v", got, v2, got2, err)
		}
		if err := fingerprint.Verify(h+"\n"+text, got); err != nil {
			t.Fatalf("Verify(Header(%q)) = %v", got, err)
		}
	})
}

func FuzzVerify(f *testing.F) {
	f.Add(fingerprint.Header(fp)+"\nbody", fp)
	f.Add("[MODEL_CONTEXT_PROTOCOL v1.3 | fp:"+fp+"]", fp)
	f.Add(fingerprint.Header(fp), "sha256:ffffffffffffffff")
	f.Add("no header", "")
	f.Fuzz(func(t *testing.T, text, want string) {
		err := fingerprint.Verify(text, want)
		v, got, perr := fingerprint.ParseHeader(text)
		switch {
		case perr != nil:
			if !errors.Is(err, fingerprint.ErrNoHeader) {
				t.Fatalf("Verify(%q, %q) = %v, want ErrNoHeader (ParseHeader: %v)", text, want, err, perr)
			}
		case v == fingerprint.ProtocolVersion && got == want:
			if err != nil {
				t.Fatalf("Verify(%q, %q) = %v, want nil", text, want, err)
			}
		default:
			var me *fingerprint.MismatchError
			if !errors.Is(err, fingerprint.ErrProtocolMismatch) || !errors.As(err, &me) {
				t.Fatalf("Verify(%q, %q) = %v, want a *MismatchError", text, want, err)
			}
			if me.Version != v || me.Fingerprint != got || me.WantFingerprint != want || me.WantVersion != fingerprint.ProtocolVersion {
				t.Fatalf("MismatchError = %+v for version %q fingerprint %q want %q", *me, v, got, want)
			}
		}
	})
}

func ExampleHeader() {
	canonical, _ := fingerprint.Canonical(map[string]any{"template_version": "1.2"})
	fmt.Println(string(canonical))
	fmt.Println(fingerprint.Header(fingerprint.Sum(canonical)))
	// Output:
	// {"template_version":"1.2"}
	// [MODEL_CONTEXT_PROTOCOL v1.2 | fp:sha256:945bbb806a3e36c6]
}

func ExampleVerify() {
	rendered := "[MODEL_CONTEXT_PROTOCOL v1.2 | fp:sha256:945bbb806a3e36c6]\n【硬性规则】…"
	fmt.Println(fingerprint.Verify(rendered, "sha256:945bbb806a3e36c6"))
	err := fingerprint.Verify(rendered, "sha256:0123456789abcdef")
	fmt.Println(errors.Is(err, fingerprint.ErrProtocolMismatch))
	fmt.Println(err)
	// Output:
	// <nil>
	// true
	// fingerprint: fingerprint sha256:945bbb806a3e36c6, want sha256:0123456789abcdef (the template changed)
}
