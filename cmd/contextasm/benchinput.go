package main

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/contextasm/contextasm/contextasm"
	"github.com/contextasm/contextasm/declare"
)

// benchBatchLines is how many declarations bench declares at a time while
// it streams the memories files into an Engine.
const benchBatchLines = 4096

// benchMemories is what bench declares into each run's fresh Engine. A
// run reads the memories files again (declare.Config.StreamFiles) and
// declares them a batch at a time, so no run holds the decoded
// declarations beside its Engine (at 200,000 blocks they are more than
// the Engine itself). Declaring in batches makes the store one Declare of
// the whole set makes when no declaration refers to another; a set with
// references, or with any problem, is loaded whole once, as render loads
// it, and held.
type benchMemories struct {
	paths []string
	sums  [][sha256.Size]byte // each file's hash when it was validated
	whole bool                // held: the set loaded whole
	held  []declare.Declaration
	n     int                   // declarations in the files
	extra []declare.Declaration // collected from sources, declared last
}

// benchDeclare is the configuration bench loads memories with.
func benchDeclare() declare.Config { return declare.Config{MaxBlocks: contextasm.DefaultMaxBlocks} }

// loadBenchMemories validates the memories files as one set: streamed
// when that is the same as loading them whole, else loaded whole (with
// LoadFiles' report of any problem).
func loadBenchMemories(paths []string) (*benchMemories, error) {
	m := &benchMemories{paths: paths}
	sums, err := hashFiles(paths)
	if err == nil {
		err = benchDeclare().StreamFiles(paths, benchBatchLines, func(d []declare.Declaration) error {
			m.n += len(d)
			return nil
		})
	}
	if err == nil {
		m.sums = sums
		return m, nil
	}
	m.n, m.whole = 0, true
	if m.held, err = benchDeclare().LoadFiles(paths...); err != nil {
		return nil, err
	}
	m.n = len(m.held)
	return m, nil
}

// len is the number of declarations: the files' and the collected.
func (m *benchMemories) len() int { return m.n + len(m.extra) }

// declare declares the memories into eng, in file order, then the
// collected ones.
func (m *benchMemories) declare(eng *contextasm.Engine) error {
	if m.whole {
		return eng.Declare(append(m.held[:len(m.held):len(m.held)], m.extra...)...)
	}
	sums, err := hashFiles(m.paths)
	if err != nil {
		return err
	}
	if !slices.Equal(sums, m.sums) {
		return errors.New("bench: a memories file changed while measuring")
	}
	if err := benchDeclare().StreamFiles(m.paths, benchBatchLines, func(d []declare.Declaration) error { return eng.Declare(d...) }); err != nil {
		return err
	}
	return eng.Declare(m.extra...)
}

// hashFiles returns each file's SHA-256.
func hashFiles(paths []string) ([][sha256.Size]byte, error) {
	sums := make([][sha256.Size]byte, len(paths))
	for i, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			return nil, fmt.Errorf("declare: %w", err)
		}
		h := sha256.New()
		_, err = io.Copy(h, f)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("declare: reading %s: %w", p, err)
		}
		h.Sum(sums[i][:0])
	}
	return sums, nil
}
