package learned

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/contextasm/contextasm/internal/atomicfile"
)

// DedupWindow is how long a store remembers the last batch of each writer:
// a batch resent within it is acknowledged without being applied again.
const DedupWindow = 24 * time.Hour

// maxWriters bounds the writers a state file remembers (the newest first),
// so that many one-shot writers (CLI calls) do not grow it without end.
const maxWriters = 10_000

// writerMark is the last batch a writer had applied, and when.
type writerMark struct {
	Seq uint64    `json:"seq"`
	At  time.Time `json:"at"`
}

// stateFile is a state file: the state, and the store's bookkeeping.
type stateFile struct {
	*State
	// Revision counts the batches applied to the file; with Epoch it is
	// the store's Version.
	Revision uint64 `json:"revision,omitempty"`
	// Epoch is drawn at random when the file is created, so that a reader
	// can tell a new file from the one it read.
	Epoch   string                `json:"epoch,omitempty"`
	Writers map[string]writerMark `json:"writers,omitempty"`
}

func (f *stateFile) version() Version { return Version{Epoch: f.Epoch, N: f.Revision} }

// FileStore keeps a State in a JSON file (the snapshot) and an append log
// beside it (PATH.log), for one host or for processes sharing a file
// system (the files and the lock must be regular files, not symbolic
// links). Apply takes an exclusive lock on a sidecar file (PATH.lock: the
// snapshot is replaced, so a lock on it would not exclude a process that
// opened the new one), brings the state it holds up to the files (reading
// only what was appended since it last read them), applies the batch, and
// appends it to the log as one record, fsynced before Apply returns: a
// line holding the batch and a checksum. A crash leaves a log whose last
// record is whole or torn; a torn one is the unacknowledged batch, which
// readers skip and the next Apply cuts off.
//
// When the log grows past LogFactor times the snapshot (and 64 KiB), Apply
// compacts: the whole state is written as a new snapshot (a temporary file
// in the same directory, fsynced, given the old file's mode, 0600 for a
// new one, renamed over the old one, the directory fsynced), then the log
// is removed. Records carry the revision they make, so a crash between the
// two replays nothing twice. Temporary files a killed process left behind
// are removed by the next compaction and by a store's first Apply, which
// hold the lock and so know that no writer is using them.
//
// Readers do not lock: Changes reads what was appended to the log since it
// last read (the batches, as changes), and the whole state only when the
// snapshot was replaced or the reader is further behind than that.
type FileStore struct {
	path string
	// rename is os.Rename; tests replace it to inject a failure between
	// writing the temporary file and renaming it.
	rename func(oldpath, newpath string) error
	now    func() time.Time
	// compactAlways makes every Apply compact (tests of the snapshot's
	// replacement).
	compactAlways bool

	mu sync.Mutex
	// swept is set once this store's first Apply removed the temporary
	// files killed writers left; compact removes those of later ones.
	swept bool
	// cache is the state as of the files this store last read, with the
	// changes its log's records made (for Changes), nil before the first
	// read.
	cache *fileCache
}

// LogFactor bounds a FileStore's log: past LogFactor times the size of
// the snapshot (and 64 KiB), the next Apply compacts it into the snapshot,
// so the files hold at most about LogFactor+1 times the live state.
const LogFactor = 4

// minLog is the log size below which a FileStore never compacts.
const minLog = 64 << 10

// maxRecentChanges bounds the changes a FileStore keeps for readers a few
// versions behind.
const maxRecentChanges = 256

// fileCache is the state as of one snapshot and a prefix of its log.
type fileCache struct {
	f        *stateFile
	snap     fileID // the snapshot read
	snapSize int64
	log      fileID // the log read (dev and inode), and
	off      int64  // the bytes of it read: whole records
	recent   []Change
}

// NewFileStore returns a store for the state file at path. The file is
// created by the first Apply.
func NewFileStore(path string) *FileStore {
	return &FileStore{path: path, rename: os.Rename, now: time.Now}
}

// Path returns the state file's path.
func (s *FileStore) Path() string { return s.path }

// Load reads the whole state: the snapshot and its log. A missing file is
// an empty state (the first run); an unreadable, malformed or
// unknown-version file is an error.
func (s *FileStore) Load() (*State, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, err := s.refresh(false)
	if err != nil {
		return nil, err
	}
	return c.f.State.Clone(), nil
}

// Changes returns the batches applied since since, as changes, when this
// store read them (from the log, or its own Apply), the whole state when
// it did not (the snapshot was replaced, or since is further behind), and
// an empty Update when nothing changed.
func (s *FileStore) Changes(ctx context.Context, since Version, writer string) (*Update, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c, err := s.refresh(false)
	if err != nil {
		return nil, err
	}
	v := c.f.version()
	if v == since {
		return &Update{Version: v}, nil
	}
	if since.Epoch == v.Epoch && since.N < v.N && len(c.recent) > 0 && c.recent[0].Version <= since.N+1 {
		i := int(since.N + 1 - c.recent[0].Version)
		return &Update{Version: v, Changes: slices.Clone(c.recent[i:])}, nil
	}
	return &Update{Version: v, Full: c.f.State.Clone(), Acked: c.f.Writers[writer].Seq}, nil
}

// Apply applies b to the state under the lock (see FileStore), once: a
// batch whose writer had a batch of the same or a later Seq applied within
// DedupWindow is acknowledged without being applied, and one that skips a
// Seq is refused with a *GapError. ctx bounds the wait
// for the lock; a lock not had in time is ErrUnavailable.
func (s *FileStore) Apply(ctx context.Context, b *Batch) (Version, error) {
	if err := b.Validate(); err != nil {
		return Version{}, err
	}
	path, err := s.target()
	if err != nil {
		return Version{}, err
	}
	unlock, err := lockFile(ctx, path+".lock")
	if err != nil {
		return Version{}, err
	}
	defer unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.swept {
		removeStaleTemps(path)
		s.swept = true
	}
	c, err := s.refresh(true)
	if err != nil {
		return Version{}, err
	}
	f := c.f
	last := f.Writers[b.Writer].Seq
	if b.Seq <= last {
		return f.version(), nil // applied before: acknowledge, don't apply again
	}
	if b.Seq != last+1 {
		return Version{}, &GapError{Writer: b.Writer, Last: last, Seq: b.Seq}
	}
	// From here the cached state changes before the files do: a failure
	// drops it, and the next call reads the files again.
	s.cache = nil
	fresh := f.Epoch == ""
	if fresh {
		f.Epoch = newEpoch()
	}
	chg := f.State.Apply(b)
	f.Revision++
	chg.Version = f.Revision
	now := s.now().UTC()
	if f.Writers == nil {
		f.Writers = make(map[string]writerMark)
	}
	f.Writers[b.Writer] = writerMark{Seq: b.Seq, At: now}
	rec, err := encodeRecord(record{Rev: f.Revision, Epoch: f.Epoch, At: now, Batch: b})
	if err != nil {
		return Version{}, err
	}
	if fresh || s.compactAlways || c.off+int64(len(rec)) > max(LogFactor*c.snapSize, minLog) {
		pruneWriters(f.Writers, now)
		if err := s.compact(path, c); err != nil {
			return Version{}, err
		}
	} else if c.log, err = appendRecord(path+".log", rec, c.log, path); err != nil {
		return Version{}, err
	} else {
		c.off += int64(len(rec))
	}
	c.recent = append(c.recent, chg)
	if len(c.recent) > maxRecentChanges {
		c.recent = slices.Delete(c.recent, 0, len(c.recent)-maxRecentChanges)
	}
	s.cache = c
	return f.version(), nil
}

// Compact folds the log into the snapshot now, so that the state file
// holds the whole state (a process that writes a few batches and exits,
// such as the CLI, leaves a file that reads as the state). Nothing happens
// when there is no log. ctx bounds the wait for the lock.
func (s *FileStore) Compact(ctx context.Context) error {
	path, err := s.target()
	if err != nil {
		return err
	}
	if _, err := os.Lstat(path + ".log"); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	unlock, err := lockFile(ctx, path+".lock")
	if err != nil {
		return err
	}
	defer unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	c, err := s.refresh(true)
	if err != nil || c.log == (fileID{}) {
		return err
	}
	s.cache = nil
	pruneWriters(c.f.Writers, s.now().UTC())
	if c.f.Epoch == "" {
		return nil // a log without a snapshot holds nothing of this state
	}
	if err := s.compact(path, c); err != nil {
		return err
	}
	s.cache = c
	return nil
}

// compact writes c's state as the snapshot and removes the log, whose
// records it holds; c's identities follow.
func (s *FileStore) compact(path string, c *fileCache) error {
	removeStaleTemps(path)
	if err := s.write(path, c.f); err != nil {
		return err
	}
	if err := os.Remove(path + ".log"); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("learned: compacting state: %w", err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("learned: saving state: %w", err)
	}
	c.snap, c.snapSize, c.log, c.off = identify(fi), fi.Size(), fileID{}, 0
	return nil
}

// refresh brings the cache up to the files: the snapshot again when it was
// replaced, else the records appended to the log since it was read. With
// repair (the caller holds the lock), a torn record at the log's end (a
// writer was killed while appending) is cut off. The caller holds s.mu.
func (s *FileStore) refresh(repair bool) (*fileCache, error) {
	c := s.cache
	fi, err := os.Stat(s.path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if c == nil || c.snap != (fileID{}) {
			c = &fileCache{f: &stateFile{State: NewState()}}
		}
	case err != nil:
		return nil, fmt.Errorf("learned: reading state: %w", err)
	case c == nil || identify(fi) != c.snap:
		f, id, err := readFile(s.path, s.path)
		if err != nil {
			return nil, err
		}
		c = &fileCache{f: f, snap: id, snapSize: fi.Size()}
	}
	s.cache = nil // until the log is read
	if err := c.readLog(s.path+".log", repair); err != nil {
		return nil, err
	}
	s.cache = c
	return c, nil
}

// target returns the file to write, the state path, refusing anything but
// a regular file or nothing: a symbolic link is refused, naming its target,
// as for the CLI's -o (whoever made the link would choose what is
// replaced), and so are devices, FIFOs and directories.
func (s *FileStore) target() (string, error) {
	fi, err := os.Lstat(s.path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return s.path, nil
	case err != nil:
		return "", fmt.Errorf("learned: state %s: %w", s.path, err)
	case fi.Mode()&fs.ModeSymlink != 0:
		dest, _ := os.Readlink(s.path)
		return "", fmt.Errorf("learned: state %s is a symbolic link (to %s): give the file itself", s.path, dest)
	case !fi.Mode().IsRegular():
		return "", fmt.Errorf("learned: state %s is not a regular file (%v)", s.path, fi.Mode().Type())
	}
	return s.path, nil
}

func (s *FileStore) read() (*stateFile, fileID, error) { return readFile(s.path, s.path) }

// readFile reads and decodes the state file at path (named name in
// errors), with the identity of the file it read. A missing file is an
// empty state at version zero.
func readFile(path, name string) (*stateFile, fileID, error) {
	fh, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &stateFile{State: NewState()}, fileID{}, nil
	}
	if err != nil {
		return nil, fileID{}, fmt.Errorf("learned: reading state: %w", err)
	}
	defer fh.Close()
	fi, err := fh.Stat()
	if err != nil {
		return nil, fileID{}, fmt.Errorf("learned: reading state: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fileID{}, fmt.Errorf("learned: state %s is not a regular file (%v)", name, fi.Mode().Type())
	}
	data, err := io.ReadAll(fh)
	if err != nil {
		return nil, fileID{}, fmt.Errorf("learned: reading state %s: %w", name, err)
	}
	f, err := decodeFile(data, name)
	if err != nil {
		return nil, fileID{}, err
	}
	return f, identify(fi), nil
}

// write replaces the snapshot at path with f, atomically, keeping its
// mode.
func (s *FileStore) write(path string, f *stateFile) error {
	data, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return fmt.Errorf("learned: encoding state: %w", err)
	}
	data = append(data, '\n')
	// A new file is private: learned state holds conversations' decisions.
	o := atomicfile.Options{Perm: 0o600, SyncDir: true, Rename: s.rename}
	if old, err := os.Stat(path); err == nil {
		o.Old = old
	}
	if err := atomicfile.Replace(path, data, o); err != nil {
		return fmt.Errorf("learned: saving state: %w", err)
	}
	return nil
}

// removeStaleTemps removes the temporary files of earlier writes to path
// that did not finish (the process was killed). The caller holds the lock,
// so no live writer owns one.
func removeStaleTemps(path string) {
	dir, prefix := filepath.Dir(path), atomicfile.TempPrefix(path)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), prefix) && e.Type().IsRegular() {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}

// pruneWriters forgets writers idle for longer than DedupWindow, and all
// but the newest maxWriters.
func pruneWriters(w map[string]writerMark, now time.Time) {
	for id, m := range w {
		if now.Sub(m.At) > DedupWindow {
			delete(w, id)
		}
	}
	if len(w) <= maxWriters {
		return
	}
	ids := make([]string, 0, len(w))
	for id := range w {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, func(a, b string) int { return w[b].At.Compare(w[a].At) })
	for _, id := range ids[maxWriters:] {
		delete(w, id)
	}
}

// newEpoch returns a random epoch name.
func newEpoch() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// fileID tells one version of a file from another without reading it.
type fileID struct {
	dev, ino uint64
	size     int64
	mtime    int64
}

// lockWait is how long a waiter sleeps between tries of a held lock, at
// most.
const lockWait = 10 * time.Millisecond

// lockFile takes an exclusive lock on the file at path (created if
// missing), trying until ctx is done, and returns its release.
func lockFile(ctx context.Context, path string) (func(), error) {
	fh, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|noFollow, 0o600)
	if err != nil {
		if fh, err = os.OpenFile(path, os.O_RDONLY|noFollow, 0); err != nil {
			return nil, fmt.Errorf("learned: locking state: %w", err)
		}
	}
	wait := 100 * time.Microsecond
	for {
		ok, err := tryLock(fh)
		if err != nil {
			fh.Close()
			return nil, fmt.Errorf("learned: locking state: %s: %w", path, err)
		}
		if ok {
			return func() { unlock(fh); fh.Close() }, nil
		}
		select {
		case <-ctx.Done():
			fh.Close()
			return nil, fmt.Errorf("%w: state lock %s held by another process: %w", ErrUnavailable, path, ctx.Err())
		case <-time.After(wait):
		}
		wait = min(2*wait, lockWait)
	}
}
