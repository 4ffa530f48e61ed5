package declare

import (
	"fmt"
	"os"
	"slices"
)

// LoadFiles reads several JSONL files of declarations as one set, with the
// default limits; see [Config.LoadFiles].
func LoadFiles(names ...string) ([]Declaration, error) { return Config{}.LoadFiles(names...) }

// LoadFiles reads several JSONL files of declarations as one set, under c's
// limits: it reports every problem of every file, a request_id declared in
// two files, and the tool-call problems of the whole set (a tool result may
// answer a call declared in another file, on any line). It returns the
// declarations of all files in order, or a *ValidationError and none.
// A file that cannot be read is an error wrapping the os error.
func (c Config) LoadFiles(names ...string) ([]Declaration, error) {
	var (
		all   []Declaration
		files []string
		lines []int
		probs []Problem
		first = make(map[string]int) // request_id → index in all
	)
	for _, name := range names {
		f, err := os.Open(name)
		if err != nil {
			return nil, fmt.Errorf("declare: %w", err)
		}
		decls, at, fileProbs, err := c.load(f, name)
		f.Close()
		if err != nil {
			return nil, err
		}
		probs = append(probs, fileProbs...)
		for i := range decls {
			id := decls[i].RequestID
			if j, dup := first[id]; dup {
				probs = append(probs, Problem{File: name, Line: at[i], RequestID: id, Field: "request_id",
					Message: fmt.Sprintf("also declared in %s:%d", files[j], lines[j])})
				continue
			}
			first[id] = len(all)
			all, files, lines = append(all, decls[i]), append(files, name), append(lines, at[i])
		}
	}
	probs = checkCalls(probs, all, files, lines)
	if len(probs) > 0 {
		return nil, &ValidationError{Problems: probs}
	}
	return all, nil
}

// repeat returns n copies of s.
func repeat(s string, n int) []string { return slices.Repeat([]string{s}, n) }
