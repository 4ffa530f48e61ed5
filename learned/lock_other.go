//go:build !unix && !windows

package learned

import (
	"io/fs"
	"os"
)

// tryLock cannot lock on this platform: one process per state file.
func tryLock(*os.File) (bool, error) { return true, nil }

func unlock(*os.File) {}

func identify(fi fs.FileInfo) fileID {
	return fileID{size: fi.Size(), mtime: fi.ModTime().UnixNano()}
}

// noFollow makes opening the lock file fail on a symbolic link.
const noFollow = 0
