package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/contextasm/contextasm/contextasm"
)

// runEndSession is `contextasm end-session`: it releases what the learned
// state keeps of a session, the decisions its conversations follow, as
// Engine.EndSession does for an engine (the CLI keeps the blocks
// themselves in the files the host gives render, which the host deletes).
func runEndSession(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("end-session", stdout)
	statePath := fs.String("state", "", "learned state: a file, or redis://[user:pass@]host:port/db?prefix=NAME")
	session := fs.String("session", "", "the session to end")
	format := fs.String("format", "text", "output format: text or json")
	if err := parse(fs, args, 0); err != nil {
		return err
	}
	if *statePath == "" || *session == "" {
		return usagef("end-session: --state and --session are required")
	}
	if *format != "text" && *format != "json" {
		return usagef("end-session: --format must be text or json (got %q)", *format)
	}
	store, err := openState(*statePath)
	if err != nil {
		return err
	}
	defer store.Close()
	eng, err := contextasm.New(contextasm.Config{State: store,
		StateOptions: contextasm.StateOptions{LocalGlobal: true, Timeout: stateTimeout}})
	if err != nil {
		return err
	}
	end, err := eng.EndSession(*session)
	if cerr := eng.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("end-session: %w", err)
	}
	if *format == "json" {
		return json.NewEncoder(stdout).Encode(struct {
			Session   string `json:"session"`
			Decisions int    `json:"decisions"`
		}{*session, end.Decisions})
	}
	_, err = fmt.Fprintf(stdout, "session %s ended: %d conversation(s) released\n", *session, end.Decisions)
	return err
}
