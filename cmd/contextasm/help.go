package main

import (
	"flag"
	"fmt"
	"io"
	"runtime/debug"
	"strings"
)

// commandHelp is each command's synopsis (with its positional arguments)
// and one example, for `contextasm COMMAND --help`.
var commandHelp = map[string]struct{ synopsis, example string }{
	"demo": {
		"contextasm demo [--format text|json|report|html|openai|anthropic] [-o FILE]",
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
	"serve": {
		"contextasm serve [--listen ADDR] [--keys KEYS.json] [--templates DIR] [--state S.json|redis://…] [flags]",
		"contextasm serve --templates templates/ --state redis://127.0.0.1:6379/0?prefix=agents-{tenant} --keys keys.json",
	},
	"bench": {
		"contextasm bench -t TEMPLATE.json -m MEMORIES.jsonl [-m ...] [flags]",
		"contextasm bench -t template.json -m memories.jsonl --budgets 1024,4096 --runs 5",
	},
}

// newFlags returns a flag set for command name whose --help (and -h)
// writes the command's synopsis, its flags and an example to stdout, and
// whose parse errors go through run's error path (parse).
func newFlags(name string, stdout io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are reported by parse, help by Usage
	fs.Usage = func() {
		h := commandHelp[name]
		fmt.Fprintf(stdout, "Usage: %s\n\nFlags:\n", h.synopsis)
		fs.SetOutput(stdout)
		fs.PrintDefaults()
		fs.SetOutput(io.Discard)
		fmt.Fprintf(stdout, "\nExample:\n  %s\n", h.example)
	}
	return fs
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
