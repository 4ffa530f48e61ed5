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
	var (
		errs  []error
		stats = make([]os.FileInfo, len(names))
	)
	for i, name := range names {
		if l.full {
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
	decls, err := l.result()
	if err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return decls, nil
}
