package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"maps"
	"slices"
	"text/tabwriter"

	"github.com/contextasm/contextasm/chat"

	"github.com/contextasm/contextasm/contextasm"
	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/template"
)

// exitRefused is authorize's exit code for a refused or unknown tool.
const exitRefused = 7

// toolsFlag is --tools: a tools file (JSONL, one tool a line; docs/tools.md).
type toolsFlag struct{ file string }

func (f *toolsFlag) register(fs *flag.FlagSet) {
	fs.StringVar(&f.file, "tools", "", "tools file (JSONL, one tool definition a line): a chat format's request carries those the request's roles may see, counted in the budget")
}

// load reads the tools file, none without --tools.
func (f *toolsFlag) load() ([]declare.Tool, error) {
	if f.file == "" {
		return nil, nil
	}
	return declare.LoadToolsFile(f.file)
}

func init() {
	commandHelp["authorize"] = struct{ synopsis, example string }{
		"contextasm authorize -t TEMPLATE.json --tools TOOLS.jsonl --tool NAME [--role R ...] [--session ID] [--user ID]",
		"contextasm authorize -t template.json --tools tools.jsonl --tool send_email --role viewer",
	}
}

// runAuthorize decides whether a request holding the given roles may
// call a tool now: exit 0 and "allowed", or exit 7 and the refusal, which
// names the request's roles and the roles the tool needs.
func runAuthorize(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var (
		req   requestFlags
		tools toolsFlag
		tpl   string
		name  string
	)
	fs := newFlags("authorize", stdout)
	fs.StringVar(&tpl, "t", "", "template file (JSON): its tools part may ask a role of destructive or open-world tools")
	tools.register(fs)
	fs.StringVar(&name, "tool", "", "the tool the model calls")
	req.register(fs)
	if err := parse(fs, args, 0); err != nil {
		return err
	}
	if tpl == "" || tools.file == "" || name == "" {
		return usagef("authorize: -t TEMPLATE, --tools FILE and --tool NAME are required")
	}
	t, err := template.LoadFile(tpl)
	if err != nil {
		return err
	}
	list, err := tools.load()
	if err != nil {
		return err
	}
	now, err := req.instant("authorize")
	if err != nil {
		return err
	}
	eng, err := contextasm.New(contextasm.Config{Encoding: engineEncoding(t)})
	if err != nil {
		return err
	}
	defer eng.Close()
	if err := eng.DeclareTools(list...); err != nil {
		return err
	}
	if err := eng.Authorize(ctx, req.request(t, now), name); err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "allowed: %s\n", name)
	return err
}

// demoToolList returns the demo's tools (demo/tools.jsonl).
func demoToolList() ([]declare.Tool, error) {
	f, err := demoFiles.Open("demo/tools.jsonl")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return declare.LoadTools(f, "demo/tools.jsonl")
}

// demoTools writes the tools part the demo's request carries in a chat
// format: the tools sent, those left out with why, and those hidden from
// the request's roles, counted and not named.
func demoTools(ctx context.Context, w io.Writer) error {
	res, err := demoResult(ctx, chat.FormatOpenAI)
	if err != nil {
		return err
	}
	writeTools(w, res.Tools)
	return nil
}

// writeTools writes a tools part in the demo's style.
func writeTools(w io.Writer, tr *contextasm.ToolsResult) {
	if tr == nil {
		return
	}
	approx := ""
	if tr.Approximate {
		approx = ", approximate"
	}
	fmt.Fprintf(w, "\n=== tools (--format openai: %d tokens of the budget, cap %d, %s%s) ===\n", tr.Tokens, tr.Cap, tr.Method, approx)
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', 0)
	for _, k := range tr.Kept {
		fmt.Fprintf(tw, "  sent\t%s\t%d tok\t%s\n", k.Name, k.Tokens, k.Source)
	}
	for _, l := range tr.LeftOut {
		fmt.Fprintf(tw, "  left out\t%s\t%d tok\t%s\n", l.Name, l.Tokens, l.Reason)
	}
	for _, r := range slices.Sorted(maps.Keys(tr.Hidden)) {
		fmt.Fprintf(tw, "  hidden\t%d not named\t\t%s: the request's roles do not include what the tool needs\n", tr.Hidden[r], r)
	}
	tw.Flush()
}
