package main

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/contextasm/contextasm/contextasm"
	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/internal/strictjson"
)

// benchBatch bounds the declarations bench decodes at once while it
// streams a memories file into an Engine: lines, and bytes.
const (
	benchBatchLines = 4096
	benchBatchBytes = 8 << 20
)

// benchMemories is what bench declares into each run's fresh Engine. A
// run reads the memories files again, a batch of lines at a time, and
// declares each batch as it is decoded, so no run holds the decoded
// declarations beside its Engine (at 200,000 blocks they are more than
// the Engine itself). Declaring in batches makes the store one Declare of
// the whole set makes when no declaration refers to another (tool calls
// and results, supersedes, replaces: a reference may point to a later
// line, which a batch would not see); a set with references, or with
// any problem, is loaded whole once, as render loads it, and held.
type benchMemories struct {
	paths []string
	sums  [][sha256.Size]byte // each file's hash when it was validated
	whole bool                // held: the set loaded whole
	held  []declare.Declaration
	n     int                   // declarations in the files
	extra []declare.Declaration // collected from sources, declared last
}

// loadBenchMemories validates the memories files as one set: streamed
// when that is the same as loading them whole, else loaded whole (with
// LoadFiles' report of any problem).
func loadBenchMemories(paths []string) (*benchMemories, error) {
	m := &benchMemories{paths: paths}
	ok, err := m.stream(nil)
	if err != nil {
		return nil, err
	}
	if !ok {
		m.sums, m.whole = nil, true
		if m.held, err = (declare.Config{MaxBlocks: contextasm.DefaultMaxBlocks}).LoadFiles(paths...); err != nil {
			return nil, err
		}
		m.n = len(m.held)
	}
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
	ok, err := m.stream(eng)
	if err != nil {
		return err
	}
	if !ok {
		return errors.New("bench: a memories file changed while measuring")
	}
	return eng.Declare(m.extra...)
}

// stream reads every file a batch at a time, decoding each batch as
// declare.Config.Load does and declaring it into eng when eng is not nil.
// The first time (eng nil) it notes each file's hash; later it checks
// them. It reports false when streaming would not be the same as loading
// the set whole (a problem, a duplicate request_id, a reference, a file
// given twice, more blocks than the bound), or when a file changed since.
func (m *benchMemories) stream(eng *contextasm.Engine) (bool, error) {
	cfg := declare.Config{MaxBlocks: contextasm.DefaultMaxBlocks}
	var (
		ids   = map[string]bool{}
		stats []os.FileInfo
		total int
	)
	first := eng == nil
	if first {
		m.sums = make([][sha256.Size]byte, len(m.paths))
		defer func() { m.n = total }()
	}
	for fi, p := range m.paths {
		f, err := os.Open(p)
		if err != nil {
			return false, fmt.Errorf("declare: %w", err)
		}
		st, err := f.Stat()
		if err != nil {
			f.Close()
			return false, fmt.Errorf("declare: %w", err)
		}
		for _, o := range stats {
			if os.SameFile(o, st) {
				f.Close()
				return false, nil
			}
		}
		stats = append(stats, st)
		h := sha256.New()
		br := bufio.NewReaderSize(io.TeeReader(f, h), 64<<10)
		var batch []byte
		lines, start := 0, true
		flush := func() (bool, error) {
			if len(batch) == 0 {
				return true, nil
			}
			if !start {
				// Only a file's head may carry a byte-order mark or
				// announce another encoding: Load looks at its reader's.
				if skip, foreign := strictjson.Text(batch[:min(len(batch), 4)]); skip > 0 || foreign != "" {
					return false, nil
				}
			}
			decls, err := cfg.Load(bytes.NewReader(batch), p)
			if err != nil {
				var ve *declare.ValidationError
				if errors.As(err, &ve) {
					return false, nil
				}
				return false, err
			}
			for i := range decls {
				d := &decls[i]
				if ids[d.RequestID] || len(d.ToolCalls) > 0 || d.ToolCallID != "" || len(d.Supersedes) > 0 || len(d.Replaces) > 0 {
					return false, nil
				}
				if first {
					ids[d.RequestID] = true
				}
			}
			if total += len(decls); total > contextasm.DefaultMaxBlocks {
				return false, nil
			}
			if eng != nil {
				if err := eng.Declare(decls...); err != nil {
					return false, err
				}
			}
			batch, lines, start = batch[:0], 0, false
			return true, nil
		}
		for {
			line, rerr := br.ReadSlice('\n')
			batch = append(batch, line...)
			if rerr == bufio.ErrBufferFull {
				if len(batch) > benchBatchBytes+declare.DefaultMaxContentBytes*6+64<<10 {
					f.Close()
					return false, nil // a line too long: Load's report
				}
				continue
			}
			if rerr != nil && rerr != io.EOF {
				f.Close()
				return false, fmt.Errorf("declare: reading %s: %w", p, rerr)
			}
			if lines++; lines >= benchBatchLines || len(batch) >= benchBatchBytes || rerr == io.EOF {
				if ok, err := flush(); !ok || err != nil {
					f.Close()
					return ok, err
				}
			}
			if rerr == io.EOF {
				break
			}
		}
		f.Close()
		var sum [sha256.Size]byte
		h.Sum(sum[:0])
		if first {
			m.sums[fi] = sum
		} else if sum != m.sums[fi] {
			return false, nil
		}
	}
	return true, nil
}
