package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"os"

	"github.com/contextasm/contextasm/contextasm"
	"github.com/contextasm/contextasm/view"
)

// runDiff compares two render dumps: `diff A.json B.json [--format
// text|json]`. Flags may come before or after the two files.
func runDiff(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("diff", stdout)
	format := fs.String("format", "text", "output format: text or json")
	var files []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return err
			}
			return usagef("diff: %v", err)
		}
		if fs.NArg() == 0 {
			break
		}
		files = append(files, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if len(files) != 2 {
		return usagef("diff: want two render dumps (render --format json), A.json and B.json; got %d file(s)", len(files))
	}
	if *format != "text" && *format != "json" {
		return usagef("diff: --format must be text or json (got %q)", *format)
	}
	var dumps [2]*contextasm.Dump
	for i, name := range files {
		d, err := readDumpFile(name)
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

// readDumpFile reads a render dump. A file that cannot be read is a usage
// error (exit 2), like one that is not a dump.
func readDumpFile(name string) (*contextasm.Dump, error) {
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, usagef("%v", err)
	}
	return view.ReadDump(bytes.NewReader(data), name)
}
