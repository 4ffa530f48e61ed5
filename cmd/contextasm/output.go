package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/contextasm/contextasm/internal/atomicfile"
)

// toStdout reports whether an -o value means standard output: none, or "-".
func toStdout(name string) bool { return name == "" || name == "-" }

// writeOutput writes data where -o says, for every command that has -o
// (docs/cli.md, "Output files"):
//
//   - "" or "-": standard output.
//   - A path that does not exist: a new regular file, mode 0644 less the
//     umask, written to a temporary file beside it and renamed into place,
//     so a reader never sees half of it.
//   - An existing regular file: replaced the same way, keeping its mode
//     (and, where the process may, its owner and group). The rename makes
//     a new file: other hard links to the old one keep the old content.
//   - A device (/dev/null, /dev/stdout, a terminal), a FIFO or another
//     file that is not regular: written in place, never replaced: renaming
//     over /dev/null as root would put a regular file in its place.
//   - A symbolic link: refused, naming its target. Replacing it would
//     break the link; following it would let whoever made the link choose
//     what gets overwritten. Give the target instead.
//   - A directory: refused.
func writeOutput(stdout io.Writer, name string, data []byte) error {
	if toStdout(name) {
		_, err := stdout.Write(data)
		return err
	}
	fi, err := os.Lstat(name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return replaceFile(name, data, nil)
	case err != nil:
		return fmt.Errorf("-o: %w", err)
	case fi.Mode()&fs.ModeSymlink != 0:
		target, _ := os.Readlink(name)
		return usagef("-o %s: is a symbolic link (to %s); give the file itself", name, target)
	case fi.IsDir():
		return usagef("-o %s: is a directory", name)
	case fi.Mode().IsRegular():
		return replaceFile(name, data, fi)
	}
	return writeInPlace(name, data, fi)
}

// replaceFile writes data to a new file beside name and renames it over
// name. old, when set, is the file replaced: its mode, owner and group
// carry over.
func replaceFile(name string, data []byte, old fs.FileInfo) error {
	// The umask applies to a new file, as for any program.
	if err := atomicfile.Replace(name, data, atomicfile.Options{Perm: 0o644, Old: old}); err != nil {
		return outputError(name, err)
	}
	return nil
}

// outputError names the -o path in err, not the temporary file beside it
// that the write went through: a missing directory is the directory the
// user named.
func outputError(name string, err error) error {
	dir := filepath.Dir(name)
	if _, serr := os.Stat(dir); errors.Is(serr, fs.ErrNotExist) {
		return &withMessage{fmt.Sprintf("-o %s: the directory %s does not exist", name, dir), fs.ErrNotExist}
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("-o %s: %s: %w", name, pe.Op, pe.Err)
	}
	return fmt.Errorf("-o %s: %w", name, err)
}

// writeInPlace writes data into an existing file that is not regular, as
// `>` in a shell would, after checking that what it opened is still what
// was examined (not a regular file or a link put there since).
func writeInPlace(name string, data []byte, examined fs.FileInfo) error {
	f, err := os.OpenFile(name, os.O_WRONLY|openNoFollow, 0)
	if err != nil {
		return fmt.Errorf("-o: %w", err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !os.SameFile(fi, examined) {
		return fmt.Errorf("-o %s: the file changed while it was opened", name)
	}
	if _, err := f.Write(data); err != nil {
		return fmt.Errorf("-o: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("-o: %w", err)
	}
	return nil
}

// writeFileAtomic writes data to the file name by the rules of -o, for a
// file the command keeps (such as the usage log); "-" is a file name here,
// not standard output.
func writeFileAtomic(name string, data []byte) error {
	switch name {
	case "":
		return usagef("no file to write to")
	case "-":
		name = "./-"
	}
	return writeOutput(nil, name, data)
}
