package mcpsource_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/contextasm/contextasm/declare/mcpsource"
	"github.com/contextasm/contextasm/outcome"
)

// hasCut reports whether a status names a cut containing every word.
func hasCut(st mcpsource.SourceStatus, words ...string) bool {
	return slices.ContainsFunc(st.Cuts, func(c string) bool {
		for _, w := range words {
			if !strings.Contains(c, w) {
				return false
			}
		}
		return true
	})
}

// TestCutsAreHeard checks that every bound that cuts a source's input is
// said: a source_cut event for a listing cut at MaxResources, at MaxPages
// or by a cursor that repeats, or a scan cut at MaxFiles; a
// source_unavailable one for a block over MaxContentBytes; and, for each, a
// line in the status naming the bound (which the command line prints).
// The listings used to be cut with a log line only, and the CLI passes no
// logger.
func TestCutsAreHeard(t *testing.T) {
	srv := newServer("", &mcp.ServerOptions{PageSize: 2})
	for i := range 9 {
		addDoc(srv, &mcp.Resource{URI: fmt.Sprintf("test://r%d", i), Name: "r"}, "x")
	}
	addDoc(srv, &mcp.Resource{URI: "test://zbig", Name: "big"}, strings.Repeat("big ", 100))
	// A server whose cursor never changes: an endless listing.
	loop := newServer("", nil)
	loop.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "resources/list" {
				return &mcp.ListResourcesResult{Resources: []*mcp.Resource{{URI: "test://same", Name: "s"}}, NextCursor: "again"}, nil
			}
			return next(ctx, method, req)
		}
	})
	addDoc(loop, &mcp.Resource{URI: "test://same", Name: "s"}, "same")
	for _, tc := range []struct {
		srv   *mcp.Server
		cfg   mcpsource.Server
		event outcome.Event
		words []string
	}{
		{srv, mcpsource.Server{MaxResources: 3}, outcome.Event{RequestID: "mcp:c", Reason: outcome.ReasonSourceCut}, []string{"MaxResources (3)"}},
		{srv, mcpsource.Server{MaxPages: 2}, outcome.Event{RequestID: "mcp:c", Reason: outcome.ReasonSourceCut}, []string{"MaxPages (2)"}},
		{loop, mcpsource.Server{}, outcome.Event{RequestID: "mcp:c", Reason: outcome.ReasonSourceCut}, []string{"repeated a cursor"}},
		{srv, mcpsource.Server{MaxContentBytes: 100}, outcome.Event{RequestID: "mcp:c:test://zbig", Reason: outcome.ReasonSourceUnavailable}, []string{"mcp:c:test://zbig: ", "MaxContentBytes (100 bytes)"}},
	} {
		sink := newSink(t)
		tc.cfg.Name, tc.cfg.Transport = "c", serve(tc.srv).transport
		col := start(t, sink, mcpsource.Config{Servers: []mcpsource.Server{fast(tc.cfg)}})
		if err := col.WaitSynced(bounded(t)); err != nil {
			t.Fatal(err)
		}
		if !sink.hasEvent("mcp:c", tc.event.RequestID, tc.event.Reason) {
			t.Errorf("%+v: events %+v, want %s %s", tc.cfg, sink.eventsOf("mcp:c"), tc.event.RequestID, tc.event.Reason)
		}
		if st := col.Status()[0]; !hasCut(st, tc.words...) {
			t.Errorf("%+v: cuts %q, want one with %q", tc.cfg, st.Cuts, tc.words)
		}
		col.Close()
	}
	// Uncut, a source says nothing.
	sink := newSink(t)
	col := start(t, sink, mcpsource.Config{Servers: []mcpsource.Server{fast(mcpsource.Server{Name: "c", Transport: serve(srv).transport})}})
	if err := col.WaitSynced(bounded(t)); err != nil {
		t.Fatal(err)
	}
	if st := col.Status()[0]; len(st.Cuts) != 0 || len(sink.eventsOf("mcp:c")) != 0 {
		t.Errorf("an uncut source: cuts %q, events %+v", st.Cuts, sink.eventsOf("mcp:c"))
	}
	col.Close()
}

// TestFilesCutsAreHeard: a root with more files than MaxFiles, and one
// file over MaxContentBytes.
func TestFilesCutsAreHeard(t *testing.T) {
	dir := t.TempDir()
	for i := range 5 {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%d.txt", i)), []byte("file"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "a-big.txt"), []byte(strings.Repeat("b", 200)), 0o644); err != nil {
		t.Fatal(err)
	}
	sink := newSink(t)
	col := start(t, sink, mcpsource.Config{Files: []mcpsource.Files{{Name: "d", Dir: dir, ScanInterval: -1, MaxFiles: 3, MaxContentBytes: 100}}})
	if err := col.WaitSynced(bounded(t)); err != nil {
		t.Fatal(err)
	}
	st := col.Status()[0]
	if !sink.hasEvent("file:d", "file:d", outcome.ReasonSourceCut) || !hasCut(st, "MaxFiles (3)") {
		t.Errorf("MaxFiles: events %+v, cuts %q", sink.eventsOf("file:d"), st.Cuts)
	}
	if !sink.hasEvent("file:d", "file:d:a-big.txt", outcome.ReasonSourceUnavailable) || !hasCut(st, "file:d:a-big.txt: ", "MaxContentBytes (100 bytes)") {
		t.Errorf("MaxContentBytes: events %+v, cuts %q", sink.eventsOf("file:d"), st.Cuts)
	}
}
