package mcpsource_test

import (
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/declare/mcpsource"
	"github.com/contextasm/contextasm/outcome"
)

const secret = "TOP SECRET outside the root"

// corpus lays out a root with traps around it:
//
//	outside/secret.txt, outside/dir/secret.txt   never to be read
//	root/a.txt, root/sub/b.md                    text
//	root/link-in.txt -> sub/b.md                 symlink inside the root
//	root/link-out.txt -> ../outside/secret.txt   symlink leading out
//	root/link-abs.txt -> /abs/outside/secret.txt absolute symlink
//	root/dir-out -> ../outside/dir               symlinked directory leading out
//	root/dir-in -> sub                           symlinked directory inside
//	root/%2e%2e/x.txt                            a directory literally named "%2e%2e"
//	root/bin.dat, root/nul.txt                   binary
//	root/empty.txt, root/big.txt                 empty; over the limit
//	root/.hidden.txt, root/.git/config           hidden
func corpus(t *testing.T) (root, outside string) {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("the corpus uses symlinks")
	}
	base := t.TempDir()
	root, outside = filepath.Join(base, "root"), filepath.Join(base, "outside")
	write := func(p, s string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	link := func(target, name string) {
		t.Helper()
		if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(outside, "secret.txt"), secret)
	write(filepath.Join(outside, "dir", "secret.txt"), secret)
	write(filepath.Join(root, "a.txt"), "alpha")
	write(filepath.Join(root, "sub", "b.md"), "# beta")
	write(filepath.Join(root, "%2e%2e", "x.txt"), "literal percent name")
	write(filepath.Join(root, "bin.dat"), "\xff\xfe\x00binary")
	write(filepath.Join(root, "nul.txt"), "text with a \x00 byte")
	write(filepath.Join(root, "empty.txt"), "")
	write(filepath.Join(root, "big.txt"), strings.Repeat("x", 200))
	write(filepath.Join(root, ".hidden.txt"), "hidden")
	write(filepath.Join(root, ".git", "config"), "hidden dir")
	link("sub/b.md", "link-in.txt")
	link("../outside/secret.txt", "link-out.txt")
	link(filepath.Join(outside, "secret.txt"), "link-abs.txt")
	link("../outside/dir", "dir-out")
	link("sub", "dir-in")
	mtime := time.Date(2026, 10, 5, 8, 30, 0, 0, time.UTC)
	if err := os.Chtimes(filepath.Join(root, "a.txt"), mtime, mtime); err != nil {
		t.Fatal(err)
	}
	return root, outside
}

func fileURI(p string) string { return (&url.URL{Scheme: "file", Path: filepath.ToSlash(p)}).String() }

// Read refuses "..", encoded "..", absolute paths and symlinks that leave
// the root, and reads what is inside.
func TestRootReadTraversal(t *testing.T) {
	root, outside := corpus(t)
	r, err := mcpsource.NewRoot(mcpsource.Files{Name: "docs", Dir: root, MaxContentBytes: 100})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		ref     string
		want    error  // nil: read
		content string // when read
	}{
		{"a.txt", nil, "alpha"},
		{"sub/b.md", nil, "# beta"},
		{"link-in.txt", nil, "# beta"},
		{"dir-in/b.md", nil, "# beta"},
		{"%2e%2e/x.txt", nil, "literal percent name"}, // a plain path is literal
		{fileURI(filepath.Join(root, "sub", "b.md")), nil, "# beta"},
		{"../outside/secret.txt", mcpsource.ErrOutsideRoot, ""},
		{"sub/../../outside/secret.txt", mcpsource.ErrOutsideRoot, ""},
		{"sub/../a.txt", mcpsource.ErrOutsideRoot, ""}, // ".." is refused even when it would stay inside
		{`..\outside\secret.txt`, mcpsource.ErrOutsideRoot, ""},
		{"/etc/passwd", mcpsource.ErrOutsideRoot, ""},
		{filepath.Join(outside, "secret.txt"), mcpsource.ErrOutsideRoot, ""},
		{fileURI(filepath.Join(outside, "secret.txt")), mcpsource.ErrOutsideRoot, ""},
		{fileURI(root) + "/%2e%2e/outside/secret.txt", mcpsource.ErrOutsideRoot, ""},
		{fileURI(root) + "/sub/%2E%2E/%2e%2e/outside/secret.txt", mcpsource.ErrOutsideRoot, ""},
		{fileURI(root) + "/..%2foutside%2fsecret.txt", mcpsource.ErrOutsideRoot, ""},
		{"link-out.txt", mcpsource.ErrOutsideRoot, ""},
		{"link-abs.txt", mcpsource.ErrOutsideRoot, ""},
		{"dir-out/secret.txt", mcpsource.ErrOutsideRoot, ""},
		{"file://otherhost" + filepath.ToSlash(filepath.Join(root, "a.txt")), fs.ErrInvalid, ""},
		{"", fs.ErrInvalid, ""},
		{".", fs.ErrInvalid, ""},
		{"sub", fs.ErrInvalid, ""},
		{"sub//b.md", fs.ErrInvalid, ""},
		{"bin.dat", mcpsource.ErrBinary, ""},
		{"nul.txt", mcpsource.ErrBinary, ""},
		{"empty.txt", mcpsource.ErrEmpty, ""},
		{"big.txt", mcpsource.ErrTooLarge, ""},
		{"missing.txt", fs.ErrNotExist, ""},
	}
	for _, tt := range tests {
		d, err := r.Read(tt.ref)
		if tt.want == nil {
			if err != nil || d.Content != tt.content {
				t.Errorf("Read(%q) = %q, %v; want %q", tt.ref, d.Content, err, tt.content)
			}
			continue
		}
		if !errors.Is(err, tt.want) {
			t.Errorf("Read(%q) error = %v, want %v", tt.ref, err, tt.want)
		}
		if strings.Contains(d.Content, secret) {
			t.Errorf("Read(%q) read the secret", tt.ref)
		}
	}
}

// A block from a file: request_id, last_modified from the mtime,
// provenance, and valid for declare.
func TestRootDeclaration(t *testing.T) {
	root, _ := corpus(t)
	r, err := mcpsource.NewRoot(mcpsource.Files{Name: "docs", Dir: root, MemoryType: declare.Context, Roles: []string{"ops"}})
	if err != nil {
		t.Fatal(err)
	}
	d, err := r.Read("a.txt")
	if err != nil {
		t.Fatal(err)
	}
	want := declare.Provenance{SourceID: "docs", SourceFormat: "text/plain; charset=utf-8", SourceLocation: "a.txt", URI: fileURI(filepath.Join(root, "a.txt"))}
	if d.RequestID != "file:docs:a.txt" || d.MemoryType != declare.Context || d.LastModified == nil ||
		!d.LastModified.Equal(time.Date(2026, 10, 5, 8, 30, 0, 0, time.UTC)) || d.Provenance != want || !d.Untrusted || d.Roles[0] != "ops" {
		t.Errorf("declaration %+v\nwant provenance %+v", d, want)
	}
	if err := declare.Validate(&d); err != nil {
		t.Error(err)
	}
}

// Scan reads the text files once each and reports what it refused.
func TestRootScan(t *testing.T) {
	root, _ := corpus(t)
	r, err := mcpsource.NewRoot(mcpsource.Files{Name: "docs", Dir: root, MaxContentBytes: 100})
	if err != nil {
		t.Fatal(err)
	}
	decls, events, err := r.Scan()
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, d := range decls {
		ids = append(ids, d.RequestID)
		if strings.Contains(d.Content, secret) {
			t.Errorf("%s holds the secret", d.RequestID)
		}
	}
	wantIDs := "file:docs:%2e%2e/x.txt file:docs:a.txt file:docs:link-in.txt file:docs:sub/b.md"
	if got := strings.Join(ids, " "); got != wantIDs {
		t.Errorf("ids = %s\nwant  %s", got, wantIDs)
	}
	wantEvents := []outcome.Event{
		{Kind: outcome.KindSource, RequestID: "file:docs:big.txt", Reason: outcome.ReasonSourceUnavailable},
		{Kind: outcome.KindSource, RequestID: "file:docs:bin.dat", Reason: outcome.ReasonBinary},
		{Kind: outcome.KindSource, RequestID: "file:docs:dir-out", Reason: outcome.ReasonOutsideRoot},
		{Kind: outcome.KindSource, RequestID: "file:docs:link-abs.txt", Reason: outcome.ReasonOutsideRoot},
		{Kind: outcome.KindSource, RequestID: "file:docs:link-out.txt", Reason: outcome.ReasonOutsideRoot},
		{Kind: outcome.KindSource, RequestID: "file:docs:nul.txt", Reason: outcome.ReasonBinary},
	}
	if fmt.Sprint(events) != fmt.Sprint(wantEvents) {
		t.Errorf("events = %+v\nwant %+v", events, wantEvents)
	}
	if _, _, err := (mustRoot(t, filepath.Join(root, "nonexistent"))).Scan(); err == nil {
		t.Error("scanning a missing directory: no error")
	}
}

func mustRoot(t *testing.T, dir string) *mcpsource.Root {
	r, err := mcpsource.NewRoot(mcpsource.Files{Name: "x", Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// A Files source feeds the engine and follows changes on rescan.
func TestFilesSource(t *testing.T) {
	root, _ := corpus(t)
	sink := newSink(t)
	col := start(t, sink, mcpsource.Config{Files: []mcpsource.Files{{Name: "docs", Dir: root, ScanInterval: 20 * time.Millisecond, MaxContentBytes: 100}}})
	if err := col.WaitSynced(bounded(t)); err != nil {
		t.Fatal(err)
	}
	if st := col.Status()[0]; st.State != mcpsource.Ready || st.Blocks != 4 || st.Source != "file:docs" {
		t.Fatalf("status %+v", st)
	}
	if !sink.hasEvent("file:docs", "file:docs:link-out.txt", outcome.ReasonOutsideRoot) {
		t.Errorf("events %+v", sink.eventsOf("file:docs"))
	}
	if err := os.WriteFile(filepath.Join(root, "new.txt"), []byte("fresh"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(root, "a.txt")); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the rescan", func() bool {
		_, gone := sink.decl("file:docs:a.txt")
		return content(sink, "file:docs:new.txt") == "fresh" && !gone
	})
}
