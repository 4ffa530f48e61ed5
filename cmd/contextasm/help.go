package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"runtime/debug"
	"strings"

	"github.com/contextasm/contextasm/internal/strictjson"
)

// commandHelp is each command's synopsis (with its positional arguments)
// and one example, for `contextasm COMMAND --help`.
var commandHelp = map[string]struct{ synopsis, example string }{
	"demo": {
		"contextasm demo [--format text|json|report|html|openai|anthropic|responses] [-o FILE]",
		"contextasm demo --format report",
	},
	"render": {
		"contextasm render -t TEMPLATE.json -m MEMORIES.jsonl [-m ...] [flags]",
		"contextasm render -t template.json -m memories.jsonl --session sess-4711 --user u-ana --role loan-agent --now 2026-11-30T09:00:00Z",
	},
	"validate": {
		"contextasm validate [-t TEMPLATE.json] [-m MEMORIES.jsonl ...]",
		"contextasm validate -t template.json -m memories.jsonl",
	},
	"verify": {
		"contextasm verify -t TEMPLATE.json [--budget N] [RENDERED.txt | -]",
		"contextasm render -t template.json -m memories.jsonl | contextasm verify -t template.json",
	},
	"feedback": {
		"contextasm feedback --state STATE.json --render DUMP.json --response RESPONSE.txt [--format text|json]",
		"contextasm feedback --state state.json --render turn6.json --response answer.txt",
	},
	"heat": {
		"contextasm heat --state STATE.json [--format text|json]",
		"contextasm heat --state state.json",
	},
	"end-session": {
		"contextasm end-session --state STATE.json --session ID [--format text|json]",
		"contextasm end-session --state state.json --session sess-4711",
	},
	"count": {
		"contextasm count [--encoding E | --tokenizer FILE] [--usage U.json] [--format text|json] [FILE ... | -]",
		"contextasm count --encoding cl100k_base notes.txt",
	},
	"diff": {
		"contextasm diff [--format text|json] A.json B.json",
		"contextasm diff turn5.json turn6.json",
	},
	"view": {
		"contextasm view [--format report|html] [-o FILE] DUMP.json",
		"contextasm render -t template.json -m memories.jsonl --format json -o turn6.json && contextasm view turn6.json --format html -o turn6.html",
	},
	"serve": {
		"contextasm serve [--listen ADDR] [--keys KEYS.json] [--templates DIR] [--state S.json|redis://…] [flags]",
		"contextasm serve --templates templates/ --state redis://127.0.0.1:6379/0?prefix=agents-{tenant} --keys keys.json",
	},
	"bench": {
		"contextasm bench -t TEMPLATE.json -m MEMORIES.jsonl [-m ...] [flags]",
		"contextasm bench -t template.json -m memories.jsonl --budgets 1024,4096 --runs 5\n  contextasm bench -t template.json -m memories.jsonl --turns 100 --request-format openai --clear on --format json",
	},
}

// newFlags returns a flag set for command name whose --help (and -h)
// writes the command's synopsis, its flags and an example to stdout, and
// whose parse errors go through run's error path (parse): one line on
// stderr, with the nearest flag when one is close.
func newFlags(name string, stdout io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	// The flag package writes the help on every parse error; it goes to
	// a buffer that parseError hands to stdout for --help only.
	out := &helpOutput{stdout: stdout}
	fs.SetOutput(out)
	fs.Usage = func() {
		h := commandHelp[name]
		out.help.Reset()
		fmt.Fprintf(&out.help, "Usage: %s\n\nFlags:\n", h.synopsis)
		fs.SetOutput(&out.help)
		fs.PrintDefaults()
		fs.SetOutput(out)
		fmt.Fprintf(&out.help, "\nExample:\n  %s\n", h.example)
	}
	return fs
}

// helpOutput is a flag set's output: the help its Usage wrote, kept for
// parseError, and the error lines the flag package writes, dropped (the
// error is reported once, by run).
type helpOutput struct {
	stdout io.Writer
	help   bytes.Buffer
}

func (h *helpOutput) Write(p []byte) (int, error) { return len(p), nil }

// flagError is a flag parse error said in one line: the flag and, when
// one is close, the flag meant.
func flagError(fs *flag.FlagSet, err error) error {
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
		var names []string
		fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
		msg = "unknown flag " + dashes(name)
		if near := strictjson.Closest(name, names); near != "" {
			msg += " (did you mean " + dashes(near) + "?)"
		}
	}
	return usagef("%s: %s; see contextasm %s --help", fs.Name(), msg, fs.Name())
}

// dashes writes a flag as the docs do: -t, -m, -o, --budget.
func dashes(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

// writeVersion writes the program's module version and build information.
func writeVersion(w io.Writer) {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		fmt.Fprintln(w, "contextasm (no build information)")
		return
	}
	version := info.Main.Version
	if version == "" {
		version = "(devel)"
	}
	fmt.Fprintf(w, "contextasm %s %s\n", version, info.GoVersion)
	var vcs []string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision", "vcs.time", "vcs.modified", "GOOS", "GOARCH":
			vcs = append(vcs, s.Key+"="+s.Value)
		}
	}
	if len(vcs) > 0 {
		fmt.Fprintln(w, strings.Join(vcs, " "))
	}
}
