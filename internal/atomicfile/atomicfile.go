package atomicfile

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// Options say how a file is replaced.
type Options struct {
	// Perm is the mode of a new file, before the umask.
	Perm fs.FileMode
	// Old, when set, is the file being replaced: its mode (exactly, not
	// narrowed by the umask) carries over, and its owner and group where
	// the process may set them.
	Old fs.FileInfo
	// SyncDir fsyncs the directory after the rename, so that the
	// replacement is on disk when Replace returns.
	SyncDir bool
	// Rename is os.Rename when nil; tests inject a failure with it.
	Rename func(oldpath, newpath string) error
}

// TempPrefix is how the temporary files of name begin: "." and name's
// base, then ".tmp-". A writer holding a lock on name may remove the ones
// a killed process left.
func TempPrefix(name string) string { return "." + filepath.Base(name) + ".tmp-" }

// Replace writes data to a new file beside name, fsyncs it, and renames it
// over name. On an error nothing is left behind and name is unchanged.
func Replace(name string, data []byte, o Options) (err error) {
	perm := o.Perm
	if o.Old != nil {
		perm = o.Old.Mode().Perm()
	}
	dir := filepath.Dir(name)
	var tmp *os.File
	for range 100 {
		var suffix [8]byte
		rand.Read(suffix[:])
		tmp, err = os.OpenFile(filepath.Join(dir, TempPrefix(name)+hex.EncodeToString(suffix[:])), os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
		if !errors.Is(err, fs.ErrExist) {
			break
		}
	}
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if o.Old != nil {
		if err := tmp.Chmod(perm); err != nil {
			return err
		}
		keepOwner(tmp, o.Old)
	}
	if _, err := tmp.Write(data); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	rename := o.Rename
	if rename == nil {
		rename = os.Rename
	}
	if err := rename(tmp.Name(), name); err != nil {
		return err
	}
	if o.SyncDir {
		// The rename is durable only once the directory entry is on disk.
		d, err := os.Open(dir)
		if err != nil {
			return nil // replaced; a directory that cannot be opened cannot be synced
		}
		defer d.Close()
		return d.Sync()
	}
	return nil
}
