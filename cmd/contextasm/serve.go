package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/contextasm/contextasm/contextasm"
	"github.com/contextasm/contextasm/internal/server"
)

// keysEnv holds the keys document when --keys is not given: keys come
// from a file or the environment, never a flag's value (which every
// process on the machine can read).
const keysEnv = "CONTEXTASM_KEYS"

// tenantPlaceholder in --state is replaced by each tenant's name.
const tenantPlaceholder = "{tenant}"

// runServe is `contextasm serve`: the engine as an HTTP/JSON service
// (docs/server.md), until SIGINT or SIGTERM.
func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("serve", stdout)
	listen := fs.String("listen", server.DefaultAddr, "address: host:port, or unix:/path for a Unix socket")
	keysPath := fs.String("keys", "", "API keys file (JSON; see docs/server.md); without it, "+keysEnv+" holds the keys; with neither, no authentication (loopback or a socket only)")
	tplDir := fs.String("templates", "", "directory of templates (*.json) that requests name")
	statePath := fs.String("state", "", "learned state per tenant: a file or redis://[user:pass@]host:port/db?prefix=NAME, with {tenant} in it when there are keys")
	maxBody := fs.Int64("max-body", server.DefaultMaxBodyBytes, "largest request body, in bytes")
	maxConcurrent := fs.Int("max-concurrent", 0, "assemblies running at once (0: 4 × the CPUs)")
	timeout := fs.Duration("timeout", server.DefaultRequestTimeout, "deadline of each request")
	retain := fs.Int("retain", server.DefaultRetain, "assemblies kept per tenant, for feedback and GET /v1/assemblies/{id}")
	retainFor := fs.Duration("retain-for", server.DefaultRetainFor, "how long an assembly is kept")
	maxBlocks := fs.Int("max-blocks", contextasm.DefaultMaxBlocks, "blocks each tenant may hold")
	mcp := fs.Bool("mcp", false, "also serve the Model Context Protocol at /mcp (streamable HTTP)")
	if err := parse(fs, args, 0); err != nil {
		return err
	}
	keys, err := loadKeys(*keysPath)
	if err != nil {
		return err
	}
	cfg := server.Config{Keys: keys, MaxBodyBytes: *maxBody, MaxConcurrent: *maxConcurrent, RequestTimeout: *timeout,
		Retain: *retain, RetainFor: *retainFor, MCP: *mcp,
		Engine: contextasm.Config{MaxBlocks: *maxBlocks},
		Log:    slog.New(slog.NewTextHandler(stderr, nil))}
	if *tplDir != "" {
		if cfg.Templates, err = server.LoadTemplates(*tplDir); err != nil {
			return err
		}
	}
	if *statePath != "" {
		spec := *statePath
		if keys != nil && !strings.Contains(spec, tenantPlaceholder) {
			return usagef("serve: --state %q: with API keys each tenant keeps its own learned state: put %s in it (state-%s.json, redis://host:6379/0?prefix=agents-%s)",
				spec, tenantPlaceholder, tenantPlaceholder, tenantPlaceholder)
		}
		cfg.State = func(tenant string) (server.Store, error) {
			return openState(strings.ReplaceAll(spec, tenantPlaceholder, tenant))
		}
	}
	ln, err := server.Listen(*listen, keys == nil)
	if err != nil {
		if errors.Is(err, server.ErrExposed) || errors.Is(err, server.ErrAddress) {
			return usagef("serve: %v", err)
		}
		return err
	}
	srv, err := server.New(cfg)
	if err != nil {
		ln.Close()
		return err
	}
	where := "http://" + ln.Addr().String()
	if ln.Addr().Network() == "unix" {
		where = "unix:" + ln.Addr().String()
	}
	fmt.Fprintf(stderr, "contextasm serve: listening on %s (%d tenant(s), %d template(s))\n", where, len(keys.Tenants()), len(cfg.Templates))
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	start := time.Now()
	err = srv.Run(ctx, ln)
	fmt.Fprintf(stderr, "contextasm serve: stopped after %v\n", time.Since(start).Round(time.Millisecond))
	return err
}

// loadKeys reads the keys from --keys, else from the environment; nil
// when there are none.
func loadKeys(path string) (*server.Keys, error) {
	var data []byte
	switch {
	case path != "":
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("serve: --keys: %w", err)
		}
		data = b
	case os.Getenv(keysEnv) != "":
		data = []byte(os.Getenv(keysEnv))
	default:
		return nil, nil
	}
	keys, err := server.ParseKeys(data)
	if err != nil {
		return nil, usagef("serve: %v", err)
	}
	return keys, nil
}
