package mcpsource

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"mime"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/outcome"
)

// Root reads the regular text files under one directory as blocks, always
// through an [os.Root]: nothing outside the directory is ever opened, even
// through a symlink. It is the synchronous form of a [Files] source. A
// Root holds no open file between calls and is safe for concurrent use.
//
// A text file is valid UTF-8 without a NUL byte; any other file is binary.
// An empty file offers nothing: it is skipped, neither block nor event.
type Root struct {
	cfg Files
	dir string // absolute, cleaned
}

// NewRoot returns the Root cfg describes. Dir need not exist yet: reading
// reports it.
func NewRoot(cfg Files) (*Root, error) {
	if err := (&Config{Files: []Files{cfg}}).validate(); err != nil {
		return nil, err
	}
	return newRoot(cfg.withDefaults()), nil
}

func newRoot(cfg Files) *Root {
	dir, err := filepath.Abs(cfg.Dir)
	if err != nil { // only when the working directory is gone: keep the path as given
		dir = filepath.Clean(cfg.Dir)
	}
	return &Root{cfg: cfg, dir: dir}
}

// Read reads one file as a block. ref is a slash-separated path relative to
// the root ("notes/a.md"), taken literally, or a file:// URI (percent-
// decoded) naming a file under the root's directory. A ref with a ".."
// element, an absolute path, or a symlink leading out of the root is
// refused with an error wrapping ErrOutsideRoot; a malformed one wraps
// fs.ErrInvalid. Binary, empty and oversized files wrap ErrBinary, ErrEmpty
// and ErrTooLarge.
func (r *Root) Read(ref string) (declare.Declaration, error) {
	rel, err := r.resolve(ref)
	if err != nil {
		return declare.Declaration{}, err
	}
	root, err := os.OpenRoot(r.dir)
	if err != nil {
		return declare.Declaration{}, fmt.Errorf("mcpsource: file root %s: %w", r.cfg.Name, err)
	}
	defer root.Close()
	return r.readFile(root, rel)
}

// resolve turns a ref into a slash-separated path relative to the root.
func (r *Root) resolve(ref string) (string, error) {
	p := ref
	if strings.HasPrefix(ref, "file:") {
		u, err := url.Parse(ref)
		if err != nil || u.Opaque != "" || (u.Host != "" && u.Host != "localhost") || u.RawQuery != "" || u.Fragment != "" {
			return "", fmt.Errorf("mcpsource: %q is not a local file URI: %w", ref, fs.ErrInvalid)
		}
		if hasDotDot(u.Path) {
			return "", fmt.Errorf("mcpsource: %q has a \"..\" element: %w", ref, ErrOutsideRoot)
		}
		rel, err := filepath.Rel(r.dir, filepath.FromSlash(u.Path))
		if err != nil || !filepath.IsLocal(rel) {
			return "", fmt.Errorf("mcpsource: %q is not under %s: %w", ref, r.dir, ErrOutsideRoot)
		}
		p = filepath.ToSlash(rel)
	} else {
		switch {
		case path.IsAbs(p) || filepath.IsAbs(p) || filepath.VolumeName(p) != "" || strings.HasPrefix(p, `\`):
			return "", fmt.Errorf("mcpsource: %q is an absolute path: %w", ref, ErrOutsideRoot)
		case hasDotDot(p):
			return "", fmt.Errorf("mcpsource: %q has a \"..\" element: %w", ref, ErrOutsideRoot)
		}
	}
	if p == "." || !fs.ValidPath(p) {
		return "", fmt.Errorf("mcpsource: %q does not name a file in the root: %w", ref, fs.ErrInvalid)
	}
	if _, err := filepath.Localize(p); err != nil {
		return "", fmt.Errorf("mcpsource: %q: %w", ref, fs.ErrInvalid)
	}
	return p, nil
}

// hasDotDot reports whether a slash- or backslash-separated path has a ".."
// element.
func hasDotDot(p string) bool {
	return slices.Contains(strings.FieldsFunc(p, func(c rune) bool { return c == '/' || c == '\\' }), "..")
}

// escapes reports whether err is os.Root refusing a path that leaves it
// (through ".." or a symlink). The os package does not export that error,
// so it is recognised by its text.
func escapes(err error) bool {
	var pe *os.PathError
	return errors.As(err, &pe) && pe.Err != nil && pe.Err.Error() == "path escapes from parent"
}

// readFile reads rel (slash-separated, checked) through root.
func (r *Root) readFile(root *os.Root, rel string) (declare.Declaration, error) {
	var d declare.Declaration
	name, err := filepath.Localize(rel)
	if err != nil {
		return d, fmt.Errorf("mcpsource: %q: %w", rel, fs.ErrInvalid)
	}
	// O_NONBLOCK: a FIFO swapped in for a file must not block the scan.
	f, err := root.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		if escapes(err) {
			return d, fmt.Errorf("mcpsource: %s leads out of the root: %w", rel, ErrOutsideRoot)
		}
		return d, fmt.Errorf("mcpsource: %w", err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return d, fmt.Errorf("mcpsource: %w", err)
	}
	if !info.Mode().IsRegular() {
		return d, fmt.Errorf("mcpsource: %s is not a regular file: %w", rel, fs.ErrInvalid)
	}
	limit := r.cfg.MaxContentBytes
	if info.Size() > int64(limit) {
		return d, fmt.Errorf("%w: %s is %d bytes, more than the limit of %d", ErrTooLarge, rel, info.Size(), limit)
	}
	data, err := io.ReadAll(io.LimitReader(f, int64(limit)+1))
	switch {
	case err != nil:
		return d, fmt.Errorf("mcpsource: %w", err)
	case len(data) > limit:
		return d, fmt.Errorf("%w: %s grew past the limit of %d bytes", ErrTooLarge, rel, limit)
	case len(data) == 0:
		return d, fmt.Errorf("%w: %s", ErrEmpty, rel)
	case !utf8.Valid(data) || bytes.IndexByte(data, 0) >= 0:
		return d, fmt.Errorf("%w: %s", ErrBinary, rel)
	}
	format := mime.TypeByExtension(path.Ext(rel))
	if format == "" {
		format = "text/plain"
	}
	mtime := info.ModTime().UTC()
	d = declare.Declaration{
		RequestID:    FileRequestID(r.cfg.Name, rel),
		MemoryType:   r.cfg.MemoryType,
		Scope:        declare.ScopeGlobal,
		Content:      string(data),
		LastModified: &mtime,
		Roles:        slices.Clone(r.cfg.Roles),
		Provenance: declare.Provenance{SourceID: r.cfg.Name, SourceFormat: format, SourceLocation: rel,
			URI: (&url.URL{Scheme: "file", Path: filepath.ToSlash(filepath.Join(r.dir, name))}).String()},
		Untrusted: !r.cfg.Trusted,
	}
	if err := (declare.Config{MaxContentBytes: limit}).Validate(&d); err != nil {
		return declare.Declaration{}, fmt.Errorf("mcpsource: %s: %w", rel, err)
	}
	return d, nil
}

// Scan reads every regular text file under the root, in lexical walk
// order, up to MaxFiles files and MaxSourceBytes of content. It returns
// their blocks and the events of the files it could not take: outside_root
// (a symlink leading out of the root), binary, source_unavailable (too
// large, past MaxSourceBytes, unreadable); and, when it stopped at
// MaxFiles, a source_cut event for the root ("file:NAME"). Names starting
// with "." (hidden files and directories) are skipped, and so are empty
// files, non-regular files, and symlinks to directories inside the root
// (their files are read under their own path; following them could loop).
// The error is for the root itself (a missing directory).
func (r *Root) Scan() ([]declare.Declaration, []outcome.Event, error) {
	decls, events, _, err := r.scan()
	return decls, events, err
}

// scan is Scan, and says what each bound left out, by request_id (or the
// source's key for MaxFiles).
func (r *Root) scan() ([]declare.Declaration, []outcome.Event, map[string]string, error) {
	root, err := os.OpenRoot(r.dir)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("mcpsource: file root %s: %w", r.cfg.Name, err)
	}
	defer root.Close()
	var (
		decls  []declare.Declaration
		events []outcome.Event
		files  int
		held   int // content bytes in decls
		cuts   = make(map[string]string)
	)
	event := func(rel string, reason outcome.Reason) {
		events = append(events, outcome.Event{Kind: outcome.KindSource, RequestID: FileRequestID(r.cfg.Name, rel), Reason: reason})
	}
	err = fs.WalkDir(root.FS(), ".", func(rel string, de fs.DirEntry, err error) error {
		if rel == "." {
			return err
		}
		if strings.HasPrefix(de.Name(), ".") {
			if de.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if err != nil { // an unreadable directory
			event(rel, outcome.ReasonSourceUnavailable)
			return nil
		}
		switch t := de.Type(); {
		case t.IsDir():
			return nil
		case t&fs.ModeSymlink != 0:
			info, err := root.Stat(filepath.FromSlash(rel))
			switch {
			case escapes(err):
				event(rel, outcome.ReasonOutsideRoot)
				return nil
			case err != nil, !info.Mode().IsRegular(): // dangling, a directory, a device
				return nil
			}
		case !t.IsRegular():
			return nil
		}
		if files == r.cfg.MaxFiles {
			key := "file:" + r.cfg.Name
			events = append(events, outcome.Event{Kind: outcome.KindSource, RequestID: key, Reason: outcome.ReasonSourceCut})
			cuts[key] = fmt.Sprintf("more than MaxFiles (%d) files: the scan stops there, files past it are not collected", r.cfg.MaxFiles)
			return fs.SkipAll
		}
		files++
		d, err := r.readFile(root, rel)
		switch {
		case err == nil && held+len(d.Content) > r.cfg.MaxSourceBytes:
			event(rel, outcome.ReasonSourceUnavailable) // the root holds its MaxSourceBytes already
			cuts[FileRequestID(r.cfg.Name, rel)] = fmt.Sprintf("content of %d bytes would take the root past MaxSourceBytes (%d): not collected", len(d.Content), r.cfg.MaxSourceBytes)
		case err == nil:
			decls = append(decls, d)
			held += len(d.Content)
		case errors.Is(err, ErrEmpty), errors.Is(err, fs.ErrInvalid):
		case errors.Is(err, ErrOutsideRoot):
			event(rel, outcome.ReasonOutsideRoot)
		case errors.Is(err, ErrBinary):
			event(rel, outcome.ReasonBinary)
		case errors.Is(err, ErrTooLarge):
			event(rel, outcome.ReasonSourceUnavailable)
			cuts[FileRequestID(r.cfg.Name, rel)] = fmt.Sprintf("over MaxContentBytes (%d bytes): not collected", r.cfg.MaxContentBytes)
		default:
			event(rel, outcome.ReasonSourceUnavailable)
		}
		return nil
	})
	if err != nil {
		return nil, nil, nil, fmt.Errorf("mcpsource: file root %s: %w", r.cfg.Name, err)
	}
	return decls, events, cuts, nil
}

// filesSource is a Files source: it scans its root now and every
// ScanInterval.
type filesSource struct {
	root *Root
	st   *status
	log  *slog.Logger
}

func (s *filesSource) run(ctx context.Context) {
	led := s.st.led
	for {
		decls, events, cuts, err := s.root.scan()
		if err != nil {
			s.log.Warn("file root unavailable", "error", err)
			s.st.report(s.log, Unavailable, err, "")
		} else {
			now := time.Now()
			seen := make(map[string]bool, len(decls))
			for _, d := range decls {
				seen[d.RequestID] = true
				led.put(d, now)
			}
			for _, id := range led.ids() {
				if !seen[id] {
					led.drop(id)
				}
			}
			led.clearProblems()
			for _, e := range events {
				if what, ok := cuts[e.RequestID]; ok {
					led.cut(e.RequestID, e.Reason, what)
				} else {
					led.problem(e.RequestID, e.Reason)
				}
			}
			s.st.report(s.log, Ready, nil, "")
		}
		s.st.settleFirst()
		if s.root.cfg.ScanInterval < 0 {
			return
		}
		t := time.NewTimer(s.root.cfg.ScanInterval)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}
