package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/contextasm/contextasm/contextasm"
	"github.com/contextasm/contextasm/view"
)

// runDiff compares two render dumps: `diff A.json B.json [--format
// text|json]`. Flags may come before or after the two files.
func runDiff(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("diff", stdout)
	format := fs.String("format", "text", "output format: text or json")
	files, err := parseAnywhere(fs, args)
	if err != nil {
		return err
	}
	if len(files) != 2 {
		return usagef("diff: want two render dumps (render --format json), A.json and B.json; got %d file(s)", len(files))
	}
	if *format != "text" && *format != "json" {
		return usagef("diff: --format must be text or json (got %q)", *format)
	}
	var dumps [2]*contextasm.Dump
	for i, name := range files {
		d, err := readDumpFile("diff:", name)
		if err != nil {
			return err
		}
		dumps[i] = d
	}
	r := view.Diff(dumps[0], dumps[1])
	if *format == "json" {
		enc := json.NewEncoder(stdout)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	}
	return view.WriteDiff(stdout, r)
}

// parseAnywhere parses args whose flags may come before or after the
// positional arguments, which it returns.
func parseAnywhere(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, parseError(fs, err)
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

// readDumpFile reads a render dump for cmd, the command and flag that name
// it ("feedback: --render", "diff:"): errors say them and the file. A file
// that cannot be read is a usage error (exit 2), like one that is not a
// dump.
func readDumpFile(cmd, name string) (*contextasm.Dump, error) {
	data, err := os.ReadFile(name)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, usagef("%s %s: %v", cmd, name, err)
	}
	d, err := view.ReadDump(bytes.NewReader(data), name)
	if err != nil {
		return nil, &withMessage{cmd + " " + strings.TrimPrefix(err.Error(), "view: "), err}
	}
	return d, nil
}
