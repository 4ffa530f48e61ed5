package learned

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/contextasm/contextasm/internal/jsonx"
)

// The log of a FileStore (PATH.log): one line per batch applied since the
// snapshot, "CRC JSON\n", where CRC is the CRC-32 (IEEE) of JSON in eight
// hex digits and JSON a record. A line without its newline is torn: a
// writer died appending it, before it acknowledged the batch.

// record is one batch of the log, with the revision it made.
type record struct {
	Rev   uint64    `json:"rev"`
	Epoch string    `json:"epoch"`
	At    time.Time `json:"at"`
	Batch *Batch    `json:"batch"`
}

// encodeRecord returns r as a line of the log. r's batch has passed
// Validate (Apply checks it first), so its session data is JSON.
func encodeRecord(r record) ([]byte, error) {
	line := make([]byte, 9, 9+recordSize(r.Batch))
	line, err := appendRecordJSON(line, r)
	if err != nil {
		return nil, fmt.Errorf("learned: encoding state: %w", err)
	}
	data := line[9:]
	sum := crc32.ChecksumIEEE(data)
	hex.Encode(line[:8], []byte{byte(sum >> 24), byte(sum >> 16), byte(sum >> 8), byte(sum)})
	line[8] = ' '
	return append(line, '\n'), nil
}

// recordSize is about the size of b's record.
func recordSize(b *Batch) int {
	if b == nil {
		return 96
	}
	n := 160 + len(b.Writer) + 96*len(b.Trust) + 112*len(b.Heat)
	for i := range b.Sessions {
		n += 96 + len(b.Sessions[i].Key) + len(b.Sessions[i].Data)
	}
	return n
}

// appendRecordJSON appends r as JSON: what encoding/json writes for it
// with HTML escaping off (TestRecordAsJSON), without reflection: a batch
// of a conversation's call holds its decision, which would be checked and
// compacted again. The session data is written as it is when it holds no
// white space (an engine's own records), else compacted.
func appendRecordJSON(dst []byte, r record) ([]byte, error) {
	var err error
	dst = append(dst, `{"rev":`...)
	dst = strconv.AppendUint(dst, r.Rev, 10)
	dst = append(dst, `,"epoch":`...)
	dst = jsonx.AppendString(dst, r.Epoch)
	if dst, err = jsonx.AppendTime(append(dst, `,"at":`...), r.At); err != nil {
		return nil, err
	}
	dst = append(dst, `,"batch":`...)
	b := r.Batch
	if b == nil {
		return append(dst, "null}"...), nil
	}
	dst = append(dst, `{"writer":`...)
	dst = jsonx.AppendString(dst, b.Writer)
	dst = append(dst, `,"seq":`...)
	dst = strconv.AppendUint(dst, b.Seq, 10)
	if len(b.Trust) > 0 {
		dst = append(dst, `,"trust":[`...)
		for i := range b.Trust {
			d := &b.Trust[i]
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, `{"id":`...)
			dst = jsonx.AppendString(dst, d.ID)
			for _, f := range [...]struct {
				key string
				v   float64
			}{{`,"base":`, d.Base}, {`,"add":`, d.Add}, {`,"floor":`, d.Floor}, {`,"ceiling":`, d.Ceiling}} {
				var ok bool
				if dst, ok = jsonx.AppendFloat(append(dst, f.key...), f.v); !ok {
					return nil, fmt.Errorf("trust[%d] (%q): %v is not a JSON number", i, d.ID, f.v)
				}
			}
			dst = append(dst, '}')
		}
		dst = append(dst, ']')
	}
	if len(b.Heat) > 0 {
		dst = append(dst, `,"heat":[`...)
		for i := range b.Heat {
			d := &b.Heat[i]
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, `{"id":`...)
			dst = jsonx.AppendString(dst, d.ID)
			dst = append(dst, `,"heat":{"included":`...)
			dst = strconv.AppendInt(dst, d.Heat.Included, 10)
			dst = append(dst, `,"dropped":`...)
			dst = strconv.AppendInt(dst, d.Heat.Dropped, 10)
			dst = append(dst, `,"cut":`...)
			dst = strconv.AppendInt(dst, d.Heat.Cut, 10)
			dst = append(dst, `,"refs":`...)
			dst = strconv.AppendInt(dst, d.Heat.Refs, 10)
			dst = append(dst, `,"start_refs":`...)
			dst = strconv.AppendInt(dst, d.Heat.StartRefs, 10)
			dst = append(dst, '}')
			if d.Delete {
				dst = append(dst, `,"delete":true`...)
			}
			dst = append(dst, '}')
		}
		dst = append(dst, ']')
	}
	if len(b.Sessions) > 0 {
		dst = append(dst, `,"sessions":[`...)
		for i := range b.Sessions {
			d := &b.Sessions[i]
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, `{"key":`...)
			dst = jsonx.AppendString(dst, d.Key)
			if d.Delete {
				dst = append(dst, `,"delete":true`...)
			}
			if d.Base != 0 {
				dst = append(dst, `,"base":`...)
				dst = strconv.AppendUint(dst, d.Base, 10)
			}
			if !d.Updated.IsZero() {
				if dst, err = jsonx.AppendTime(append(dst, `,"updated":`...), d.Updated); err != nil {
					return nil, err
				}
			}
			if len(d.Data) > 0 {
				dst = append(dst, `,"data":`...)
				if bytes.ContainsAny(d.Data, " \t\r\n") {
					var buf bytes.Buffer
					if err := json.Compact(&buf, d.Data); err != nil {
						return nil, fmt.Errorf("sessions[%d]: %w", i, err)
					}
					dst = append(dst, buf.Bytes()...)
				} else {
					dst = append(dst, d.Data...)
				}
			}
			dst = append(dst, '}')
		}
		dst = append(dst, ']')
	}
	return append(dst, "}}"...), nil
}

// decodeLine returns the record of one whole line (without its newline).
func decodeLine(line []byte) (record, error) {
	var r record
	if len(line) < 10 || line[8] != ' ' {
		return r, errors.New("not a record")
	}
	var sum [4]byte
	if _, err := hex.Decode(sum[:], line[:8]); err != nil {
		return r, errors.New("not a record")
	}
	data := line[9:]
	if crc32.ChecksumIEEE(data) != uint32(sum[0])<<24|uint32(sum[1])<<16|uint32(sum[2])<<8|uint32(sum[3]) {
		return r, errors.New("checksum mismatch")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return r, err
	}
	if r.Batch == nil || r.Rev == 0 {
		return r, errors.New("no batch")
	}
	if err := r.Batch.Validate(); err != nil {
		return r, err
	}
	return r, nil
}

// readLog applies the records appended to the log at path since c read
// it, in order, each once (a record of another epoch, or of a revision the
// state already has, is skipped; one that skips a revision ends the
// reading). A torn last record is left for its writer's retry, or, with
// repair (the caller holds the lock), cut off. A whole line that is not a
// record is an error naming the file and the line.
func (c *fileCache) readLog(path string, repair bool) error {
	fh, err := os.OpenFile(path, os.O_RDONLY|noFollow, 0)
	if errors.Is(err, fs.ErrNotExist) {
		c.log, c.off = fileID{}, 0
		return nil
	}
	if err != nil {
		return fmt.Errorf("learned: reading state log: %w", err)
	}
	defer fh.Close()
	fi, err := fh.Stat()
	if err != nil {
		return fmt.Errorf("learned: reading state log: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("learned: state log %s is not a regular file (%v)", path, fi.Mode().Type())
	}
	if id := logID(fi); id != c.log {
		c.log, c.off = id, 0 // another log: the revisions say what is new in it
	}
	if fi.Size() == c.off {
		return nil
	}
	if fi.Size() < c.off {
		c.off = 0
	}
	if _, err := fh.Seek(c.off, io.SeekStart); err != nil {
		return fmt.Errorf("learned: reading state log %s: %w", path, err)
	}
	data, err := io.ReadAll(fh)
	if err != nil {
		return fmt.Errorf("learned: reading state log %s: %w", path, err)
	}
	f := c.f
	for len(data) > 0 {
		nl := bytes.IndexByte(data, '\n')
		if nl < 0 {
			break // torn
		}
		r, err := decodeLine(data[:nl])
		if err != nil {
			return fmt.Errorf("%w: %s: the record at byte %d: %v", ErrInvalidState, path, c.off, err)
		}
		if r.Epoch == f.Epoch && r.Rev == f.Revision+1 {
			chg := f.State.Apply(r.Batch)
			f.Revision = r.Rev
			chg.Version = r.Rev
			if f.Writers == nil {
				f.Writers = make(map[string]writerMark)
			}
			f.Writers[r.Batch.Writer] = writerMark{Seq: r.Batch.Seq, At: r.At}
			c.recent = append(c.recent, chg)
		} else if r.Epoch == f.Epoch && r.Rev > f.Revision {
			break // a gap: nothing after it is read
		}
		c.off += int64(nl + 1)
		data = data[nl+1:]
	}
	if len(c.recent) > maxRecentChanges {
		c.recent = c.recent[len(c.recent)-maxRecentChanges:]
	}
	if len(data) > 0 && repair {
		if err := os.Truncate(path, c.off); err != nil {
			return fmt.Errorf("learned: cutting the torn record off %s: %w", path, err)
		}
	}
	return nil
}

// logID is the identity of a log: the file, not its size.
func logID(fi fs.FileInfo) fileID {
	id := identify(fi)
	id.size, id.mtime = 0, 0
	return id
}

// appendRecord appends rec to the log at path and fsyncs it (and, when it
// made the file, the directory), returning the log's identity. A new log
// takes the snapshot's mode, 0600 without one.
func appendRecord(path string, rec []byte, was fileID, snapshot string) (fileID, error) {
	perm := fs.FileMode(0o600)
	if fi, err := os.Stat(snapshot); err == nil {
		perm = fi.Mode().Perm()
	}
	fh, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE|noFollow, perm)
	if err != nil {
		return fileID{}, fmt.Errorf("learned: saving state: %w", err)
	}
	defer fh.Close()
	fi, err := fh.Stat()
	if err != nil {
		return fileID{}, fmt.Errorf("learned: saving state: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return fileID{}, fmt.Errorf("learned: state log %s is not a regular file (%v)", path, fi.Mode().Type())
	}
	if _, err := fh.Write(rec); err != nil {
		return fileID{}, fmt.Errorf("learned: saving state: %w", err)
	}
	if err := fh.Sync(); err != nil {
		return fileID{}, fmt.Errorf("learned: saving state: %w", err)
	}
	id := logID(fi)
	if id != was {
		if d, err := os.Open(filepath.Dir(path)); err == nil {
			d.Sync()
			d.Close()
		}
	}
	return id, nil
}
