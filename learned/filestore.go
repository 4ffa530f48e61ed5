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

// FileStore keeps a State in one JSON file, for one host or for processes
// sharing a file system (the file and its lock must be regular files, not
// symbolic links). Apply takes an exclusive lock on a sidecar file
// (PATH.lock: the state file itself is replaced, so a lock on it would not
// exclude a process that opened the new one), reads the file, applies the
// batch, and replaces the file atomically: a temporary file in the same
// directory is written, fsynced and given the old file's mode (0600 for a
// new file), then renamed over the old one, then the directory is fsynced.
// A crash at any point leaves the old file or the new one, never a torn
// one; temporary files a killed process left behind are removed by the
// next Apply, which holds the lock and so knows that no writer is using
// them.
//
// Readers do not lock: Changes reads whole files, and a rename is atomic.
// It rereads the file only when its identity (inode, size, modification
// time) changed since the last read.
type FileStore struct {
	path string
	// rename is os.Rename; tests replace it to inject a failure between
	// writing the temporary file and renaming it.
	rename func(oldpath, newpath string) error
	now    func() time.Time

	mu      sync.Mutex
	seen    fileID // the file Changes read last, and its version
	seenVer Version
	// The file this store's last Apply wrote, its version and the change
	// it made: a reader one version behind learns it without reading.
	wrote    fileID
	wroteVer Version
	wroteChg Change
}

// NewFileStore returns a store for the state file at path. The file is
// created by the first Apply.
func NewFileStore(path string) *FileStore {
	return &FileStore{path: path, rename: os.Rename, now: time.Now}
}

// Path returns the state file's path.
func (s *FileStore) Path() string { return s.path }

// Load reads the whole state. A missing file is an empty state (the first
// run); an unreadable, malformed or unknown-version file is an error.
func (s *FileStore) Load() (*State, error) {
	f, _, err := s.read()
	if err != nil {
		return nil, err
	}
	return f.State, nil
}

// Changes returns the whole state when the file's version is not since,
// and an empty Update when it is. A file cannot list the batches applied
// since a version; it is read again only when it was replaced, and not
// even then when the file is the one this store's last Apply wrote, one
// version after since: that change is returned instead.
func (s *FileStore) Changes(ctx context.Context, since Version, writer string) (*Update, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if fi, err := os.Stat(s.path); err == nil {
		id := identify(fi)
		if id == s.seen && s.seenVer == since {
			return &Update{Version: since}, nil
		}
		if id == s.wrote && s.wroteVer.Epoch == since.Epoch && s.wroteVer.N == since.N+1 {
			s.seen, s.seenVer = id, s.wroteVer
			return &Update{Version: s.wroteVer, Changes: []Change{s.wroteChg}}, nil
		}
	}
	f, id, err := s.read()
	if err != nil {
		return nil, err
	}
	v := f.version()
	s.seen, s.seenVer = id, v
	if v == since {
		return &Update{Version: v}, nil
	}
	return &Update{Version: v, Full: f.State, Acked: f.Writers[writer].Seq}, nil
}

// Apply applies b to the file under the lock (see FileStore), once: a
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
	removeStaleTemps(path)
	f, _, err := readFile(path, s.path)
	if err != nil {
		return Version{}, err
	}
	if f.Epoch == "" {
		f.Epoch = newEpoch()
	}
	last := f.Writers[b.Writer].Seq
	if b.Seq <= last {
		return f.version(), nil // applied before: acknowledge, don't apply again
	}
	if b.Seq != last+1 {
		return Version{}, &GapError{Writer: b.Writer, Last: last, Seq: b.Seq}
	}
	chg := f.State.Apply(b)
	f.Revision++
	chg.Version = f.Revision
	now := s.now().UTC()
	if f.Writers == nil {
		f.Writers = make(map[string]writerMark)
	}
	f.Writers[b.Writer] = writerMark{Seq: b.Seq, At: now}
	pruneWriters(f.Writers, now)
	if err := s.write(path, f); err != nil {
		return Version{}, err
	}
	if fi, err := os.Stat(s.path); err == nil {
		s.mu.Lock()
		s.wrote, s.wroteVer, s.wroteChg = identify(fi), f.version(), chg
		s.mu.Unlock()
	}
	return f.version(), nil
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

// write replaces the file at path with f, atomically, keeping its mode.
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
