package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"text/tabwriter"

	"github.com/contextasm/contextasm/contextasm"
	"github.com/contextasm/contextasm/feedback"
	"github.com/contextasm/contextasm/learned"
)

func runFeedback(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("feedback", stdout)
	statePath := fs.String("state", "", "learned state (trust, heat): a file (created if missing), or redis://[user:pass@]host:port/db?prefix=NAME")
	renderPath := fs.String("render", "", "the render's JSON dump (render --format json)")
	responsePath := fs.String("response", "", "the model's response, as text")
	format := fs.String("format", "text", "output format: text or json")
	inputTokens := fs.Int("input-tokens", 0, "the input tokens the provider reported for the call that sent the render (an approx: encoding learns its margin from it; needs --usage)")
	usagePath := fs.String("usage", "", "usage file (JSON): what approx: encodings learned from reported usage; created if missing")
	if err := parse(fs, args, 0); err != nil {
		return err
	}
	switch {
	case *renderPath == "" || (*responsePath == "" && *inputTokens == 0):
		return usagef("feedback: --state, --render and --response are required (or --render, --usage and --input-tokens)")
	case *responsePath != "" && *statePath == "":
		return usagef("feedback: --response needs --state")
	case *inputTokens != 0 && *usagePath == "":
		return usagef("feedback: --input-tokens needs --usage")
	}
	if *format != "text" && *format != "json" {
		return usagef("feedback: --format must be text or json (got %q)", *format)
	}
	dump, err := readDumpFile("feedback: --render", *renderPath)
	if err != nil {
		return err
	}
	if *inputTokens != 0 {
		if err := reportUsage(*usagePath, dump, *inputTokens, stdout); err != nil {
			return err
		}
		if *responsePath == "" {
			return nil
		}
	}
	response, err := os.ReadFile(*responsePath)
	if err != nil {
		return fmt.Errorf("feedback: %w", err)
	}
	store, err := openState(*statePath)
	if err != nil {
		return err
	}
	defer store.Close()
	// The current trust only names the change in the report; the store
	// adds the deltas to whatever it holds when they arrive.
	st, lerr := loadState(ctx, store)
	if lerr != nil && !errors.Is(lerr, learned.ErrUnavailable) {
		return lerr
	}
	fb, batch, verr := contextasm.FeedbackDeltas(st, dump, string(response), feedback.Policy{})
	if fb == nil {
		return verr
	}
	if verr != nil && len(fb.Violations) > 0 {
		// The output lists each violation; the error only says so.
		verr = &withMessage{fmt.Sprintf("feedback: CONSTRAINT_VIOLATION: the response broke %d constraint(s), listed on stdout", len(fb.Violations)), verr}
	}
	// Learn even from a response that broke a rule: its citations count.
	n := batch.Len()
	serr := storeBatch(ctx, store, batch)
	if err := writeFeedback(stdout, fb, *format); err != nil {
		return err
	}
	if serr != nil {
		return errors.Join(notStored("feedback", n, serr), verr)
	}
	return verr
}

func writeFeedback(w io.Writer, fb *feedback.Result, format string) error {
	if format == "json" {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		return enc.Encode(fb)
	}
	fmt.Fprintf(w, "response %s\n", fb.ModelResponseHash)
	trust := make(map[string]feedback.TrustChange, len(fb.TrustChanges))
	for _, c := range fb.TrustChanges {
		trust[c.RequestID] = c
	}
	fmt.Fprintf(w, "cited %d block(s):\n", len(fb.Refs))
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', 0)
	if len(fb.Refs) > 0 {
		fmt.Fprintf(tw, "  block\tfirst cited\ttype\ttrust\n")
	}
	for _, r := range fb.Refs {
		change := "unchanged"
		if c, ok := trust[r.RequestID]; ok {
			change = fmt.Sprintf("%.2f -> %.2f", c.From, c.To)
		}
		typ := r.Type
		if typ == "" {
			typ = "-"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", r.RequestID, r.Position, typ, change)
	}
	tw.Flush()
	if len(fb.UnknownRefs) > 0 {
		fmt.Fprintln(w, "cited but not in the context:")
		for _, id := range fb.UnknownRefs {
			fmt.Fprintf(w, "  %s\n", id)
		}
	}
	if len(fb.Violations) > 0 {
		fmt.Fprintf(w, "CONSTRAINT_VIOLATION: the response matches %d block(s)' violation patterns:\n", len(fb.Violations))
		tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', 0)
		fmt.Fprintf(tw, "  block\tpattern\n")
		for _, v := range fb.Violations {
			fmt.Fprintf(tw, "  %s\t%q\n", v.RequestID, v.Pattern)
		}
		tw.Flush()
	}
	return nil
}

// heatRow is one line of `heat --format json` (see docs/feedback.md).
type heatRow struct {
	RequestID    string `json:"request_id"`
	Included     int64  `json:"included"`
	Dropped      int64  `json:"dropped"`
	Cut          int64  `json:"cut"`
	Refs         int64  `json:"refs"`
	StartRefs    int64  `json:"start_refs"`
	HotTruncated bool   `json:"hot_truncated"`
}

func runHeat(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("heat", stdout)
	statePath := fs.String("state", "", "learned state: a file, or redis://[user:pass@]host:port/db?prefix=NAME")
	format := fs.String("format", "text", "output format: text or json")
	if err := parse(fs, args, 0); err != nil {
		return err
	}
	if *statePath == "" {
		return usagef("heat: --state is required")
	}
	if *format != "text" && *format != "json" {
		return usagef("heat: --format must be text or json (got %q)", *format)
	}
	store, err := openState(*statePath)
	if err != nil {
		return err
	}
	defer store.Close()
	if fs, ok := store.(fileStore); ok {
		if _, err := os.Stat(fs.Path()); errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("heat: %w", err)
		}
	}
	st, err := loadState(ctx, store)
	if err != nil {
		return fmt.Errorf("heat: %w", err)
	}
	ids := make([]string, 0, len(st.Heat))
	for id := range st.Heat {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	rows := make([]heatRow, len(ids))
	for i, id := range ids {
		h := st.Heat[id]
		rows[i] = heatRow{id, h.Included, h.Dropped, h.Cut, h.Refs, h.StartRefs, h.HotTruncated()}
	}
	if *format == "json" {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		return enc.Encode(rows)
	}
	tw := tabwriter.NewWriter(stdout, 2, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "request_id\tincluded\tdropped\tcut\trefs\tstart\ttrust\t")
	for _, r := range rows {
		trust := "-"
		if t, ok := st.Trust[r.RequestID]; ok {
			trust = fmt.Sprintf("%.2f", t)
		}
		flag := ""
		if r.HotTruncated {
			flag = "HOT+TRUNCATED: consider a larger cap"
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%s\t%s\n", r.RequestID, r.Included, r.Dropped, r.Cut, r.Refs, r.StartRefs, trust, flag)
	}
	return tw.Flush()
}
