package main

import (
	"io"
	"os"

	"github.com/contextasm/contextasm/contextasm"
	"github.com/contextasm/contextasm/view"
)

// validFormat reports whether format is one render and demo write.
func validFormat(format string) bool {
	switch format {
	case "text", "json", "report", "html", "openai", "anthropic":
		return true
	}
	return false
}

// writeView writes res as a report (for a terminal, in colour if color)
// or as an HTML page.
func writeView(w io.Writer, res *contextasm.Result, format string, color bool) error {
	d := res.Dump()
	if format == "html" {
		return view.WriteHTML(w, &d)
	}
	return view.WriteReport(w, &d, view.ReportOptions{Color: color})
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
