package declare_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/contextasm/contextasm/declare"
)

// writeLines writes a JSONL file of n context declarations named
// prefix-0 ... and returns its path.
func writeLines(t *testing.T, dir, prefix string, n int, extra ...string) string {
	t.Helper()
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, `{"request_id":"%s-%d","memory_type":"context","scope":"global","content":"fact %d"}`+"\n", prefix, i, i)
	}
	for _, l := range extra {
		b.WriteString(l + "\n")
	}
	p := filepath.Join(dir, prefix+".jsonl")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// collect streams names in batches of n and returns the batches' sizes
// and their declarations joined.
func collect(names []string, n int) ([]int, []declare.Declaration, error) {
	var sizes []int
	var all []declare.Declaration
	err := declare.Config{}.StreamFiles(names, n, func(d []declare.Declaration) error {
		sizes = append(sizes, len(d))
		all = append(all, d...)
		return nil
	})
	return sizes, all, err
}

// StreamFiles hands on what LoadFiles returns, in order, batch at a time.
func TestStreamFilesEqualsLoadFiles(t *testing.T) {
	dir := t.TempDir()
	names := []string{writeLines(t, dir, "a", 5), writeLines(t, dir, "b", 0), writeLines(t, dir, "c", 4)}
	want, err := declare.LoadFiles(names...)
	if err != nil {
		t.Fatal(err)
	}
	sizes, got, err := collect(names, 2)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("streamed %d declarations, not LoadFiles' %d", len(got), len(want))
	}
	if fmt.Sprint(sizes) != "[2 2 2 2 1]" {
		t.Errorf("batches %v, want [2 2 2 2 1]", sizes)
	}
}

// A problem anywhere is reported as LoadFiles reports it, and fn gets no
// batch once it is found; a reference stops with ErrReferences; fn's
// error stops reading.
func TestStreamFilesStops(t *testing.T) {
	dir := t.TempDir()
	dup := writeLines(t, dir, "dup", 5, `{"request_id":"dup-1","memory_type":"context","scope":"global","content":"again"}`)
	_, want := declare.LoadFiles(dup)
	sizes, _, err := collect([]string{dup}, 2)
	var ve *declare.ValidationError
	if !errors.As(err, &ve) || want == nil || err.Error() != want.Error() {
		t.Errorf("a duplicate: %v, want LoadFiles' %v", err, want)
	}
	if fmt.Sprint(sizes) != "[2 2]" {
		t.Errorf("batches before the problem %v, want [2 2] and none after", sizes)
	}

	ref := writeLines(t, dir, "ref", 3, `{"request_id":"new","memory_type":"context","scope":"global","content":"newer","supersedes":["ref-0"]}`)
	if _, _, err := collect([]string{ref}, 10); !errors.Is(err, declare.ErrReferences) {
		t.Errorf("supersedes: %v, want ErrReferences", err)
	}

	boom := errors.New("boom")
	calls := 0
	err = declare.Config{}.StreamFiles([]string{writeLines(t, dir, "ok", 7)}, 2, func([]declare.Declaration) error {
		calls++
		return boom
	})
	if !errors.Is(err, boom) || calls != 1 {
		t.Errorf("fn's error: %v after %d calls, want boom after 1", err, calls)
	}
}
