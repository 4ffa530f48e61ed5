package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/declare/mcpsource"
	"github.com/contextasm/contextasm/outcome"
)

// defaultSourceTimeout bounds how long render waits for its sources' first
// sync: long enough for a local server to start and list, short enough
// that a hanging one costs a few seconds at most.
const defaultSourceTimeout = 5 * time.Second

// sourceOptions are the flags of render (and any command that assembles)
// that add MCP servers and file roots as sources.
type sourceOptions struct {
	mcp, mcpURL, files stringsFlag
	timeout            time.Duration
	stderr             io.Writer // where unavailable sources and cuts are reported
}

func (s *sourceOptions) register(fs *flag.FlagSet) {
	fs.Var(&s.mcp, "mcp", "NAME=COMMAND: collect the resources of an MCP server started over stdio (COMMAND is split like a shell would, without expansions); repeatable")
	fs.Var(&s.mcpURL, "mcp-url", "NAME=URL: collect the resources of an MCP server over streamable HTTP; repeatable")
	fs.Var(&s.files, "files", "NAME=DIR: collect the text files under DIR (nothing outside it); repeatable")
	fs.DurationVar(&s.timeout, "source-timeout", defaultSourceTimeout, "how long to wait for the sources' first sync (and each MCP request); a source not done by then is reported unavailable")
}

// any reports whether a source flag was given.
func (s *sourceOptions) any() bool { return len(s.mcp)+len(s.mcpURL)+len(s.files) > 0 }

// config turns the flags into a collector configuration.
func (s *sourceOptions) config() (mcpsource.Config, error) {
	var cfg mcpsource.Config
	if s.timeout <= 0 {
		return cfg, usagef("--source-timeout must be positive (got %v)", s.timeout)
	}
	var errs []error
	pair := func(flagName, v string) (string, string, bool) {
		name, val, ok := strings.Cut(v, "=")
		if !ok || name == "" || val == "" {
			errs = append(errs, usagef("--%s %q: want NAME=VALUE", flagName, v))
			return "", "", false
		}
		return name, val, true
	}
	server := func(name string) mcpsource.Server {
		// A one-shot render: no periodic re-sync, and every request bounded
		// by the same timeout as the wait.
		return mcpsource.Server{Name: name, ConnectTimeout: s.timeout, RequestTimeout: s.timeout, ListInterval: -1}
	}
	for _, v := range s.mcp {
		if name, cmd, ok := pair("mcp", v); ok {
			argv, err := splitCommand(cmd)
			if err != nil {
				errs = append(errs, usagef("--mcp %s: %v", name, err))
				continue
			}
			srv := server(name)
			srv.Command = argv
			cfg.Servers = append(cfg.Servers, srv)
		}
	}
	for _, v := range s.mcpURL {
		if name, u, ok := pair("mcp-url", v); ok {
			srv := server(name)
			srv.URL = u
			cfg.Servers = append(cfg.Servers, srv)
		}
	}
	for _, v := range s.files {
		if name, dir, ok := pair("files", v); ok {
			cfg.Files = append(cfg.Files, mcpsource.Files{Name: name, Dir: dir, ScanInterval: -1})
		}
	}
	return cfg, errors.Join(errs...)
}

// start starts collecting into eng and waits, at most the source timeout,
// for every source's first sync. Sources that failed or are not done are
// reported on stderr (and, as source_unavailable events, in the result),
// and so is what a bound cut (MaxResources, MaxContentBytes, …: events
// too); rendering goes on without them. stop closes every source.
func (s *sourceOptions) start(ctx context.Context, sink mcpsource.Sink) (stop func(), err error) {
	cfg, err := s.config()
	if err != nil {
		return nil, err
	}
	col, err := mcpsource.Start(sink, cfg)
	if err != nil {
		if errors.Is(err, mcpsource.ErrConfig) {
			return nil, usagef("%v", err)
		}
		return nil, err
	}
	wctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	_ = col.WaitSynced(wctx) // a timeout is reported per source below
	if err := ctx.Err(); err != nil {
		col.Close()
		return nil, err
	}
	for _, st := range col.Status() {
		switch {
		case !st.Synced:
			fmt.Fprintf(s.stderr, "source %s unavailable: no answer within %v\n", st.Source, s.timeout)
		case st.State != mcpsource.Ready:
			fmt.Fprintf(s.stderr, "source %s unavailable: %v\n", st.Source, st.Err)
		}
		for _, cut := range st.Cuts { // nothing a bound cuts goes unsaid
			fmt.Fprintf(s.stderr, "source %s: %s\n", st.Source, cut)
		}
	}
	return func() { col.Close() }, nil
}

// collect runs the sources once (as start does) and returns what they
// declared, sorted by request_id: for commands that assemble many times
// from one collection, such as bench.
func (s *sourceOptions) collect(ctx context.Context) ([]declare.Declaration, error) {
	sink := &declSink{decls: make(map[string]declare.Declaration)}
	stop, err := s.start(ctx, sink)
	if err != nil {
		return nil, err
	}
	stop()
	sink.mu.Lock()
	defer sink.mu.Unlock()
	out := make([]declare.Declaration, 0, len(sink.decls))
	for _, id := range slices.Sorted(maps.Keys(sink.decls)) {
		out = append(out, sink.decls[id])
	}
	return out, nil
}

// declSink keeps the declarations sources hand it (the sources validate
// them) and drops their events.
type declSink struct {
	mu    sync.Mutex
	decls map[string]declare.Declaration
}

func (s *declSink) Declare(decls ...declare.Declaration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, d := range decls {
		s.decls[d.RequestID] = d
	}
	return nil
}

func (s *declSink) Forget(ids ...string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(s.decls)
	for _, id := range ids {
		delete(s.decls, id)
	}
	return n - len(s.decls)
}

func (s *declSink) SetSourceEvents(string, []outcome.Event) {}
