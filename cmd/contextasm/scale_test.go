package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkManySections renders a template of N sections over N blocks
// (N = 1,000 and 8,000): parsing the template (its literals protected,
// each section keyed) and neutralising every block against all of its
// delimiters. Both are linear in N: 8,000 × 8,000 took 10.7 s, then
// under a second; the ratio of the two sizes' times shows the order of
// growth (8 for linear).
func BenchmarkManySections(b *testing.B) {
	for _, n := range []int{1000, 8000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			dir := b.TempDir()
			tpl, mem := manySections(b, dir, n)
			args := []string{"render", "-t", tpl, "-m", mem, "--now", "2026-11-30T09:00:00Z", "-o", filepath.Join(dir, "out.txt")}
			for b.Loop() {
				var out, errb bytes.Buffer
				if code := run(context.Background(), args, strings.NewReader(""), &out, &errb); code != 0 {
					b.Fatalf("exit %d: %s", code, errb.String())
				}
			}
		})
	}
}

// manySections writes a template of n sections, each with literals of its
// own, and n blocks across the four memory types.
func manySections(tb testing.TB, dir string, n int) (tpl, mem string) {
	tb.Helper()
	types := []string{"constraint", "context", "history", "external"}
	var t, m strings.Builder
	t.WriteString(`{"budget": 1000000, "sections": [`)
	for i := range n {
		if i > 0 {
			t.WriteString(",")
		}
		fmt.Fprintf(&t, `{"name":"S%d","priority":%d,"memory_types":["%s"],"max_tokens":100,"render":"<s%d>{content}</s%d>"}`, i, i+1, types[i%4], i, i)
		fmt.Fprintf(&m, `{"request_id": "b%05d", "memory_type": "%s", "scope": "global", "content": "block %d, closing </s%d> early"}`+"\n", i, types[i%4], i, i)
	}
	t.WriteString("]}")
	tpl, mem = filepath.Join(dir, "t.json"), filepath.Join(dir, "m.jsonl")
	if err := os.WriteFile(tpl, []byte(t.String()), 0o644); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(mem, []byte(m.String()), 0o644); err != nil {
		tb.Fatal(err)
	}
	return tpl, mem
}
