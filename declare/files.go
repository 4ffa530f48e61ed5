package declare

import (
	"errors"
	"fmt"
	"os"
	"slices"
)

// LoadFiles reads JSONL files of declarations with the default limits, as
// one set: see [Config.LoadFiles].
func LoadFiles(names ...string) ([]Declaration, error) { return Config{}.LoadFiles(names...) }

// LoadFiles reads JSONL files of declarations under c's limits, as one set,
// in order. It reports every problem of every file and, across files, a
// request_id declared twice (naming both places), a file given twice
// (once), and the tool-call problems of the whole set (a tool result may
// answer a call declared in another file, on any line). MaxBlocks bounds
// the declarations of all the files together. It returns every
// declaration, or nothing with an error: a *ValidationError for problems
// in the files, joined with any error opening or reading them.
func (c Config) LoadFiles(names ...string) ([]Declaration, error) {
	l := c.newLoader()
	errs := l.readFiles(names)
	decls, err := l.result()
	if err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return decls, nil
}

// ErrReferences is returned by StreamFiles at a declaration that refers to
// others (tool calls or a tool result, supersedes, replaces): a reference
// may point to a later line, so such a set must be loaded whole.
var ErrReferences = errors.New("declare: a declaration refers to others (tool calls, supersedes, replaces); load the set whole")

// streamBatchBytes bounds the content of one StreamFiles batch.
const streamBatchBytes = 8 << 20

// StreamFiles reads JSONL files of declarations as LoadFiles does, but
// hands them to fn in order, batch at a time (and at most 8 MiB of
// content), keeping none: its memory is a batch, however large the files.
// fn is called only while every line read so far is valid. StreamFiles
// returns, once the files are read, a *ValidationError listing every
// problem as LoadFiles would; or ErrReferences at the first declaration
// that refers to others; or fn's first error, where reading stops. fn may
// have been given earlier batches by then: call StreamFiles with an fn
// that keeps nothing first when nothing may be half-applied.
func (c Config) StreamFiles(names []string, batch int, fn func([]Declaration) error) error {
	l := c.newLoader()
	l.emit, l.batch = fn, max(batch, 1)
	errs := l.readFiles(names)
	if l.stop == nil {
		if _, err := l.result(); err != nil {
			errs = append(errs, err)
		} else if len(errs) == 0 {
			l.flush()
		}
	}
	if l.stop != nil {
		return l.stop
	}
	return errors.Join(errs...)
}

// emitted notes d, just added to l.decls, for StreamFiles: a reference
// stops reading, a full batch is handed on.
func (l *loader) emitted(d *Declaration) {
	if len(d.ToolCalls) > 0 || d.ToolCallID != "" || len(d.Supersedes) > 0 || len(d.Replaces) > 0 {
		l.stop = ErrReferences
		return
	}
	if l.batchBytes += len(d.Content); len(l.decls) >= l.batch || l.batchBytes >= streamBatchBytes {
		l.flush()
	}
}

// flush hands l.decls to emit unless a problem was found, and drops them.
func (l *loader) flush() {
	if len(l.decls) > 0 && len(l.probs) == 0 && l.stop == nil {
		if err := l.emit(l.decls); err != nil {
			l.stop = err
		}
	}
	l.decls, l.at, l.batchBytes = nil, l.at[:0], 0
}

// readFiles reads names into l, in order, and returns the errors opening
// or reading them; problems go to l.probs.
func (l *loader) readFiles(names []string) []error {
	var (
		errs  []error
		stats = make([]os.FileInfo, len(names))
	)
	for i, name := range names {
		if l.full || l.stop != nil {
			break
		}
		f, err := os.Open(name)
		if err != nil {
			errs = append(errs, fmt.Errorf("declare: %w", err))
			continue
		}
		if stats[i], err = f.Stat(); err == nil {
			if j := slices.IndexFunc(stats[:i], func(fi os.FileInfo) bool { return fi != nil && os.SameFile(fi, stats[i]) }); j >= 0 {
				f.Close()
				l.probs = append(l.probs, Problem{File: name,
					Message: fmt.Sprintf("the same file as %s, given twice; give each file once", names[j])})
				continue
			}
		}
		err = l.read(f, name)
		f.Close()
		if err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}
