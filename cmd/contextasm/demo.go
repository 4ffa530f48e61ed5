package main

import (
	"bytes"
	"context"
	"embed"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/contextasm/contextasm/chat"
	"github.com/contextasm/contextasm/contextasm"
	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/outcome"
	"github.com/contextasm/contextasm/template"
	"github.com/contextasm/contextasm/view"
)

// The demo's inputs, embedded so that `go run ./cmd/contextasm demo` needs
// nothing else.
//
//go:embed demo/template.json demo/memories.jsonl demo/tools.jsonl
var demoFiles embed.FS

// The demo's request: a loan agent in session sess-4711 with user u-ana.
var demoRequest = struct {
	now     string
	session string
	user    string
	roles   []string
}{"2026-11-30T09:00:00Z", "sess-4711", "u-ana", []string{"loan-agent"}}

func runDemo(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("demo", stdout)
	format := fs.String("format", "text", "output format: text (rendering and explanation), json, report, html, openai, anthropic or responses")
	output := fs.String("o", "", "write the output to this file instead of stdout")
	if err := parse(fs, args, 0); err != nil {
		return err
	}
	if !validFormat(*format) {
		return usagef("demo: --format must be text, json, report, html, openai, anthropic or responses (got %q)", *format)
	}
	res, err := demoResult(ctx, chatFormat(*format))
	if err != nil {
		return err
	}
	var out bytes.Buffer
	if *format != "text" {
		if err := writeResult(&out, res, *format, toStdout(*output) && useColor(stdout)); err != nil {
			return err
		}
		return writeOutput(stdout, *output, out.Bytes())
	}
	fmt.Fprintf(&out, "contextasm demo: a loan-compliance agent, session %s, user %s, roles %s, now %s\n",
		demoRequest.session, demoRequest.user, strings.Join(demoRequest.roles, ","), demoRequest.now)
	fmt.Fprintf(&out, "inputs: cmd/contextasm/demo/template.json and memories.jsonl\n\n")
	fmt.Fprintf(&out, "=== rendered context (%d of %d tokens, %s) ===\n%s\n", res.TotalTokens, res.Budget, res.Encoding, res.Text)
	explain(&out, res)
	if err := demoTools(ctx, &out); err != nil {
		return err
	}
	return writeOutput(stdout, *output, out.Bytes())
}

// demoResult assembles the embedded example, for a chat format when
// format is set.
func demoResult(ctx context.Context, format chat.Format) (*contextasm.Result, error) {
	tplData, err := demoFiles.ReadFile("demo/template.json")
	if err != nil {
		return nil, err
	}
	tpl, err := template.Parse(tplData, "demo/template.json")
	if err != nil {
		return nil, err
	}
	memFile, err := demoFiles.Open("demo/memories.jsonl")
	if err != nil {
		return nil, err
	}
	defer memFile.Close()
	decls, err := declare.Load(memFile, "demo/memories.jsonl")
	if err != nil {
		return nil, err
	}
	now, err := time.Parse(time.RFC3339, demoRequest.now)
	if err != nil {
		return nil, err
	}
	tools, err := demoToolList()
	if err != nil {
		return nil, err
	}
	return assemble(ctx, contextasm.Config{Encoding: tpl.Encoding()}, &inputs{tpl: tpl, decls: decls, tools: tools}, contextasm.Request{
		Template: tpl, Now: now, SessionID: demoRequest.session, UserID: demoRequest.user, Roles: demoRequest.roles, Format: format,
	})
}

// explain writes, per section, what was kept, cut and dropped, then every
// other event: the answer to "why did the agent forget X?".
func explain(w io.Writer, res *contextasm.Result) {
	fmt.Fprintln(w, "=== decisions ===")
	for _, s := range res.Sections() {
		fmt.Fprintf(w, "%s (priority %d): %d of %d tokens\n", s.Name, s.Priority, s.UsedTokens, s.MaxTokens)
		tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', 0)
		for _, b := range s.Blocks {
			why := string(b.Reason)
			if b.Required {
				why = strings.TrimSpace(why + " required")
			}
			tokens := strconv.Itoa(b.Tokens) + " tok"
			if b.Tokens == 0 && b.Status == outcome.StatusDropped {
				tokens = "not counted" // it could not fit whatever its count
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\tscore %.4f\t%s\n", b.Status, b.RequestID, tokens, b.Score, why)
		}
		tw.Flush()
	}
	var other []contextasm.Event
	for _, e := range res.Events() {
		if e.Kind != "dropped" && e.Kind != "cut" {
			other = append(other, e)
		}
	}
	if len(other)+len(res.ExcludedCounts) > 0 {
		fmt.Fprintln(w, "\nnot eligible, or worth a look:")
		tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', 0)
		for _, r := range slices.Sorted(maps.Keys(res.ExcludedCounts)) {
			// Blocks hidden from this request are counted, never named.
			fmt.Fprintf(tw, "  %s\t%d not named\t%s\n", r, res.ExcludedCounts[r], view.ReasonHelp(r))
		}
		for _, e := range other {
			fmt.Fprintf(tw, "  %s\t%s\t%s\n", e.Reason, e.RequestID, view.ReasonHelp(e.Reason))
		}
		tw.Flush()
	}
}
