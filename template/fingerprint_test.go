package template_test

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/contextasm/contextasm/fingerprint"
	"github.com/contextasm/contextasm/template"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// kats are the templates whose fingerprints are pinned.
var kats = []struct {
	file, fingerprint string
}{
	{"spec_example.json", "sha256:202b3a6140944f65"}, // a history section without fill: skip (docs/decisions.md)
	{"minimal.json", "sha256:725d01646715620c"},
	{"markup.json", "sha256:90eb852d30a22a1f"},
	// A tokenizer file enters by its SHA-256 (docs/tokenizers.md).
	{"tokenizer_file.json", "sha256:8980b816145d7098"},
}

// TestFingerprintKnownAnswers pins the fingerprints of fixed templates. A
// fingerprint is a compatibility promise: every rendered context carries it
// in its header and hosts verify it. If this test fails, the canonical JSON
// or its hashing changed, and every header already deployed stops verifying.
// Do not update these values; fix the change (the golden canonical files
// beside the templates show what moved).
func TestFingerprintKnownAnswers(t *testing.T) {
	for _, k := range kats {
		tpl := mustLoad(t, k.file)
		if got := tpl.Fingerprint(); got != k.fingerprint {
			t.Errorf("%s: Fingerprint() = %s, want %s", k.file, got, k.fingerprint)
		}
		if got, want := tpl.Header(), "[MODEL_CONTEXT_PROTOCOL v1.2 | fp:"+k.fingerprint+"]"; got != want {
			t.Errorf("%s: Header() = %q, want %q", k.file, got, want)
		}
	}
}

// TestCanonicalGolden compares each template's canonical JSON with
// testdata/<name>.canonical.golden; run with -update to rewrite them.
func TestCanonicalGolden(t *testing.T) {
	for _, k := range kats {
		tpl := mustLoad(t, k.file)
		got := tpl.Canonical()
		if fingerprint.Sum(got) != tpl.Fingerprint() {
			t.Errorf("%s: Fingerprint() is not the Sum of Canonical()", k.file)
		}
		golden := filepath.Join("testdata", strings.TrimSuffix(k.file, ".json")+".canonical.golden")
		if *update {
			if err := os.WriteFile(golden, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatalf("%v (run go test -update)", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: Canonical() =\n%s\nwant (%s)\n%s", k.file, got, golden, want)
		}
	}
}

var fpPattern = regexp.MustCompile(`^sha256:[0-9a-f]{16}$`)

// Key order, whitespace and spelling out the defaults do not change what a
// template means, nor its fingerprint.
func TestFingerprintInvariance(t *testing.T) {
	spec := mustLoad(t, "spec_example.json")
	variants := map[string]string{
		"keys reordered, no whitespace": `{"sections":[{"render":"【硬性规则】{content}【/硬性规则】","max_tokens":512,"memory_types":["constraint"],"priority":1,"name":"CORE_CONSTRAINTS"},{"fill":"skip","render":"【用户背景】{content}【/用户背景】","max_tokens":1024,"memory_types":["context","external"],"priority":2,"name":"USER_CONTEXT"},{"partial":true,"order":"time","render":"{content}","max_tokens":2048,"memory_types":["history"],"priority":3,"name":"HISTORY"}],"encoding":"o200k_base","budget":4096,"template_version":"1.2"}`,
		"defaults left out": `{
			"budget": 4096,
			"sections": [
				{"name": "CORE_CONSTRAINTS", "priority": 1, "memory_types": ["constraint"], "max_tokens": 512, "render": "【硬性规则】{content}【/硬性规则】"},
				{"name": "USER_CONTEXT", "priority": 2, "memory_types": ["context", "external"], "max_tokens": 1024, "render": "【用户背景】{content}【/用户背景】", "fill": "skip"},
				{"name": "HISTORY", "priority": 3, "memory_types": ["history"], "max_tokens": 2048, "render": "{content}", "order": "time", "partial": true}
			]
		}`,
		"defaults spelled out": `{
			"template_version": "1.2", "budget": 4096, "encoding": "o200k_base",
			"sections": [
				{"name": "CORE_CONSTRAINTS", "priority": 1, "memory_types": ["constraint"], "max_tokens": 512, "render": "【硬性规则】{content}【/硬性规则】",
				 "separator": "\n", "fill": "stop", "order": "rank", "partial": false, "min_partial_tokens": 32},
				{"name": "USER_CONTEXT", "priority": 2, "memory_types": ["context", "external"], "max_tokens": 1024, "render": "【用户背景】{content}【/用户背景】",
				 "separator": "\n", "fill": "skip", "order": "rank", "partial": false, "min_partial_tokens": 32},
				{"name": "HISTORY", "priority": 3, "memory_types": ["history"], "max_tokens": 2048, "render": "{content}",
				 "separator": "\n", "fill": "skip", "order": "time", "partial": true, "min_partial_tokens": 32}
			]
		}`,
		"escapes in strings": `{"template_version":"\u0031.2","budget":4096,"sections":[
			{"name":"CORE_CONSTRAINTS","priority":1,"memory_types":["constraint"],"max_tokens":512,"render":"\u3010硬性规则\u3011{content}【/硬性规则】","separator":"\u000a"},
			{"name":"USER_CONTEXT","priority":2,"memory_types":["context","external"],"max_tokens":1024,"render":"【用户背景】{content}【/用户背景】","fill":"skip"},
			{"name":"HISTORY","priority":3,"memory_types":["history"],"max_tokens":2048,"render":"{content}","order":"time","partial":true}]}`,
		"canonical form": string(spec.Canonical()),
	}
	for name, src := range variants {
		tpl := mustParse(t, src)
		if got := tpl.Fingerprint(); got != spec.Fingerprint() {
			t.Errorf("%s: Fingerprint() = %s, want %s", name, got, spec.Fingerprint())
		}
		if !bytes.Equal(tpl.Canonical(), spec.Canonical()) {
			t.Errorf("%s: Canonical() = %s", name, tpl.Canonical())
		}
	}
	if !fpPattern.MatchString(spec.Fingerprint()) {
		t.Errorf("Fingerprint() = %q is not sha256: and 16 lowercase hex digits", spec.Fingerprint())
	}
}

// Every change of what a template means changes its fingerprint, and no two
// of these changes collide.
func TestFingerprintChanges(t *testing.T) {
	specBase := func() map[string]any {
		var m map[string]any
		if err := jsonUnmarshal(mustRead(t, "spec_example.json"), &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	baseFP := mustParse(t, string(encode(t, specBase()))).Fingerprint()
	changes := []struct {
		name   string
		change func(m map[string]any)
	}{
		{"budget", func(m map[string]any) { m["budget"] = 4097 }},
		{"encoding", func(m map[string]any) { m["encoding"] = "cl100k_base" }},
		{"cache_ttl", func(m map[string]any) { m["cache_ttl"] = "1h" }},
		{"section cap", func(m map[string]any) { sec(m, 0)["max_tokens"] = 511 }},
		{"another section cap", func(m map[string]any) { sec(m, 2)["max_tokens"] = 2049 }},
		{"render", func(m map[string]any) { sec(m, 0)["render"] = "【硬性规则】 {content}【/硬性规则】" }},
		{"render placeholder", func(m map[string]any) { sec(m, 2)["render"] = "{request_id}: {content}" }},
		{"priority", func(m map[string]any) { sec(m, 1)["priority"] = 4 }},
		{"fill", func(m map[string]any) { sec(m, 0)["fill"] = "skip" }},
		{"fill back to default", func(m map[string]any) { sec(m, 1)["fill"] = "stop" }},
		{"order", func(m map[string]any) { sec(m, 0)["order"] = "declared" }},
		{"partial", func(m map[string]any) { sec(m, 2)["partial"] = false }},
		{"min_partial_tokens", func(m map[string]any) { sec(m, 2)["min_partial_tokens"] = 33 }},
		{"tool_result_max_tokens", func(m map[string]any) { sec(m, 2)["tool_result_max_tokens"] = 200 }},
		{"clear_tool_results", func(m map[string]any) { sec(m, 2)["clear_tool_results"] = map[string]any{"keep": 0} }},
		{"separator empty", func(m map[string]any) { sec(m, 0)["separator"] = "" }},
		{"separator space", func(m map[string]any) { sec(m, 0)["separator"] = " " }},
		{"separator CRLF", func(m map[string]any) { sec(m, 0)["separator"] = "\r\n" }},
		{"name", func(m map[string]any) { sec(m, 1)["name"] = "USER" }},
		{"memory type moved", func(m map[string]any) {
			sec(m, 1)["memory_types"] = []any{"context"}
			sec(m, 2)["memory_types"] = []any{"history", "external"}
		}},
		{"section order", func(m map[string]any) {
			s := m["sections"].([]any)
			s[0], s[1] = s[1], s[0]
		}},
	}
	seen := map[string]string{baseFP: "the example template"}
	for _, c := range changes {
		m := specBase()
		c.change(m)
		fp := mustParse(t, string(encode(t, m))).Fingerprint()
		if other, dup := seen[fp]; dup {
			t.Errorf("%s: fingerprint %s, same as %s", c.name, fp, other)
		}
		seen[fp] = c.name
	}
}

// cache_ttl "5m" is the default's meaning, and the default's fingerprint;
// "1h" moves it (TestFingerprintChanges); any other value is refused.
func TestCacheTTL(t *testing.T) {
	base := mustLoad(t, "spec_example.json")
	for ttl, want := range map[string]string{"5m": "", "1h": "1h"} {
		var m map[string]any
		if err := jsonUnmarshal(mustRead(t, "spec_example.json"), &m); err != nil {
			t.Fatal(err)
		}
		m["cache_ttl"] = ttl
		tpl := mustParse(t, string(encode(t, m)))
		if tpl.CacheTTL() != want {
			t.Errorf("cache_ttl %q: CacheTTL() = %q, want %q", ttl, tpl.CacheTTL(), want)
		}
		if (tpl.Fingerprint() == base.Fingerprint()) != (want == "") {
			t.Errorf("cache_ttl %q: fingerprint %s, the default's %s", ttl, tpl.Fingerprint(), base.Fingerprint())
		}
	}
	_, err := template.Parse([]byte(`{"budget":10,"cache_ttl":"2h","sections":[{"name":"A","priority":1,"memory_types":["context"],"max_tokens":5,"render":"{content}"}]}`), "t.json")
	if err == nil || !strings.Contains(err.Error(), `t.json:1: cache_ttl: must be "5m" or "1h" (got "2h")`) {
		t.Errorf("cache_ttl 2h: %v", err)
	}
}

func TestWithBudget(t *testing.T) {
	tpl := mustLoad(t, "spec_example.json")
	smaller, err := tpl.WithBudget(1000)
	if err != nil {
		t.Fatal(err)
	}
	if smaller.Budget() != 1000 || tpl.Budget() != 4096 {
		t.Errorf("budgets = %d (copy), %d (original)", smaller.Budget(), tpl.Budget())
	}
	if smaller.Fingerprint() == tpl.Fingerprint() {
		t.Error("WithBudget kept the fingerprint")
	}
	if smaller.Header() == tpl.Header() {
		t.Error("WithBudget kept the header")
	}
	m := map[string]any{}
	if err := jsonUnmarshal(mustRead(t, "spec_example.json"), &m); err != nil {
		t.Fatal(err)
	}
	m["budget"] = 1000
	if want := mustParse(t, string(encode(t, m))).Fingerprint(); smaller.Fingerprint() != want {
		t.Errorf("WithBudget(1000) fingerprint %s, the same template with budget 1000 in its file has %s", smaller.Fingerprint(), want)
	}
	same, err := tpl.WithBudget(4096)
	if err != nil || same.Fingerprint() != tpl.Fingerprint() {
		t.Errorf("WithBudget(own budget) = %v, %v; want the same fingerprint", same, err)
	}
	for i := range tpl.NumSections() {
		if smaller.Section(i).Name() != tpl.Section(i).Name() || smaller.Section(i).Separator() != tpl.Section(i).Separator() {
			t.Errorf("WithBudget changed section %d", i)
		}
	}
	for _, b := range []int{0, -1} {
		if _, err := tpl.WithBudget(b); !errors.Is(err, template.ErrInvalid) {
			t.Errorf("WithBudget(%d) = %v, want ErrInvalid", b, err)
		}
	}
}

func TestHeaderVerifies(t *testing.T) {
	tpl := mustLoad(t, "markup.json")
	rendered := tpl.Header() + "\n<rule id=\"r\" src=\"s\">x</rule>"
	if err := fingerprint.Verify(rendered, tpl.Fingerprint()); err != nil {
		t.Errorf("Verify(own header) = %v", err)
	}
	other := mustLoad(t, "minimal.json")
	if err := fingerprint.Verify(rendered, other.Fingerprint()); !errors.Is(err, fingerprint.ErrProtocolMismatch) {
		t.Errorf("Verify(another template's fingerprint) = %v, want ErrProtocolMismatch", err)
	}
}

func mustRead(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}
