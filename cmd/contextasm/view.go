package main

import (
	"bytes"
	"io"
	"os"

	"github.com/contextasm/contextasm/contextasm"
	"github.com/contextasm/contextasm/view"
)

// validFormat reports whether format is one render and demo write.
func validFormat(format string) bool {
	switch format {
	case "text", "json", "report", "html", "openai", "anthropic", "responses":
		return true
	}
	return false
}

// runView shows a saved render dump: `view DUMP.json [--format
// report|html] [-o FILE]`, the report or the page render would have
// written for it.
func runView(args []string, stdout io.Writer) error {
	fs := newFlags("view", stdout)
	format := fs.String("format", "report", "report (why each block is in or out, for a terminal) or html (the same as one page)")
	output := fs.String("o", "", "write to FILE instead of stdout")
	files, err := parseAnywhere(fs, args)
	if err != nil {
		return err
	}
	if len(files) != 1 {
		return usagef("view: want one render dump (render --format json), got %d file(s); see contextasm view --help", len(files))
	}
	if *format != "report" && *format != "html" {
		return usagef("view: --format must be report or html (got %q)", *format)
	}
	d, err := readDumpFile("view:", files[0])
	if err != nil {
		return err
	}
	var out bytes.Buffer
	if err := writeDump(&out, d, *format, toStdout(*output) && useColor(stdout)); err != nil {
		return err
	}
	return writeOutput(stdout, *output, out.Bytes())
}

// writeView writes res as a report (for a terminal, in colour if color)
// or as an HTML page.
func writeView(w io.Writer, res *contextasm.Result, format string, color bool) error {
	d := res.Dump()
	return writeDump(w, &d, format, color)
}

// writeDump writes a dump as a report or an HTML page.
func writeDump(w io.Writer, d *contextasm.Dump, format string, color bool) error {
	if format == "html" {
		return view.WriteHTML(w, d)
	}
	return view.WriteReport(w, d, view.ReportOptions{Color: color})
}

// useColor reports whether a report written to w may use colour: w must
// be a terminal (a character device, which needs no dependency to tell),
// and NO_COLOR must be unset or empty (https://no-color.org).
func useColor(w io.Writer) bool {
	if os.Getenv("NO_COLOR") != "" {
		return false
	}
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
