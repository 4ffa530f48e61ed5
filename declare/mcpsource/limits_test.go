package mcpsource_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/contextasm/contextasm/declare/mcpsource"
	"github.com/contextasm/contextasm/outcome"
)

// loopback serves h on a loopback port and returns a client of its own,
// both closed when the test ends.
func loopback(t *testing.T, h http.Handler) (*http.Client, string) {
	t.Helper()
	ts := httptest.NewServer(h)
	tr := &http.Transport{}
	t.Cleanup(func() {
		tr.CloseIdleConnections()
		ts.Close()
	})
	return &http.Client{Transport: tr}, ts.URL
}

// countWrites counts the bytes h writes into its responses that reach the
// connection.
func countWrites(h http.Handler, n *atomic.Int64) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(countingWriter{w, n}, r)
	})
}

type countingWriter struct {
	http.ResponseWriter
	n *atomic.Int64
}

func (w countingWriter) Write(p []byte) (int, error) {
	k, err := w.ResponseWriter.Write(p)
	w.n.Add(int64(k))
	return k, err
}

func (w countingWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter } // for Flush

// within polls cond until it holds or d passes.
func within(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// logBuffer collects a source's log lines.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// A server over streamable HTTP that answers a read with 48 MiB is cut at
// MaxResponseBytes: the process does not read the body (the server cannot
// write most of it), the error names the limit, the resource keeps its
// last good content, and the other resources carry on. Before, the SDK
// read every byte (a case that held 6 GB).
func TestHTTPResponseTooLarge(t *testing.T) {
	const (
		limit = 256 << 10
		huge  = 48 << 20
	)
	for _, mode := range []struct {
		name string
		json bool
	}{{"JSON responses", true}, {"event-stream responses", false}} {
		t.Run(mode.name, func(t *testing.T) {
			srv := subscribable("2025-11-25")
			big := &doc{text: "v1"}
			var hugeReads atomic.Int32
			read := big.handler("test://big")
			srv.AddResource(&mcp.Resource{URI: "test://big", Name: "big"}, func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				r, err := read(ctx, req)
				if err == nil && len(r.Contents[0].Text) > limit {
					hugeReads.Add(1)
				}
				return r, err
			})
			addDoc(srv, &mcp.Resource{URI: "test://other", Name: "other"}, "other")
			var written atomic.Int64
			client, url := loopback(t, countWrites(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
				&mcp.StreamableHTTPOptions{JSONResponse: mode.json}), &written))
			logs := &logBuffer{}
			sink := newSink(t)
			col := start(t, sink, mcpsource.Config{
				Logger: slog.New(slog.NewTextHandler(logs, nil)),
				Servers: []mcpsource.Server{fast(mcpsource.Server{Name: "h", URL: url + "/mcp", HTTPClient: client,
					MaxResponseBytes: limit, MaxContentBytes: 2 * huge, RequestTimeout: time.Minute})},
			})
			if err := col.WaitSynced(bounded(t)); err != nil {
				t.Fatal(err)
			}
			if content(sink, "mcp:h:test://big") != "v1" || content(sink, "mcp:h:test://other") != "other" {
				t.Fatalf("first sync: %q", sink.ids())
			}
			before := written.Load()

			big.set(strings.Repeat("x", huge), nil)
			// Until the server is asked for the huge content: a notification
			// sent before the client's event stream is open is lost.
			var notified time.Time
			// A machine shared with other jobs may take a while to encode
			// 48 MiB: wait longer than eventually does.
			within(t, time.Minute, "the response cut", func() bool {
				if hugeReads.Load() == 0 && time.Since(notified) > 200*time.Millisecond {
					_ = srv.ResourceUpdated(t.Context(), &mcp.ResourceUpdatedNotificationParams{URI: "test://big"})
					notified = time.Now()
				}
				return strings.Contains(logs.String(), "response too large") &&
					sink.hasEvent("mcp:h", "mcp:h:test://big", outcome.ReasonSourceUnavailable)
			})
			if w := written.Load() - before; w > huge/2 {
				t.Errorf("the server wrote %d MiB of its %d MiB response: the client kept reading", w>>20, huge>>20)
			}
			if !strings.Contains(logs.String(), fmt.Sprintf("max_response_bytes=%d", limit)) {
				t.Errorf("the log does not name the limit:\n%s", logs)
			}
			d, _ := sink.decl("mcp:h:test://big")
			if d.Content != "v1" || d.ValidUntil == nil {
				t.Errorf("big: content %.20q, valid_until %v; want the last good content, held", d.Content, d.ValidUntil)
			}
			// The session failed on the cut response; the next one skips
			// the resource and serves the rest.
			eventually(t, "the source back", func() bool {
				st := col.Status()[0]
				return st.State == mcpsource.Ready && content(sink, "mcp:h:test://other") == "other"
			})
			// Once the resource is small again and its update is notified,
			// it is read again.
			big.set("v3", nil)
			eventually(t, "the resource read again", func() bool {
				_ = srv.ResourceUpdated(t.Context(), &mcp.ResourceUpdatedNotificationParams{URI: "test://big"})
				return content(sink, "mcp:h:test://big") == "v3"
			})
			if sink.hasEvent("mcp:h", "mcp:h:test://big", outcome.ReasonSourceUnavailable) {
				t.Error("the event outlived the problem")
			}
		})
	}
}

// The list itself too large ends the session with an error naming the
// limit.
func TestHTTPListTooLarge(t *testing.T) {
	srv := newServer("", nil)
	for i := range 200 {
		addDoc(srv, &mcp.Resource{URI: fmt.Sprintf("test://%03d", i), Name: "r", Description: strings.Repeat("d", 2000)}, "x")
	}
	client, url := loopback(t, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{JSONResponse: true}))
	sink := newSink(t)
	col := start(t, sink, mcpsource.Config{Servers: []mcpsource.Server{fast(mcpsource.Server{Name: "h", URL: url + "/mcp", HTTPClient: client, MaxResponseBytes: 64 << 10})}})
	if err := col.WaitSynced(bounded(t)); err != nil {
		t.Fatal(err)
	}
	st := col.Status()[0]
	if st.State != mcpsource.Unavailable || st.Err == nil || !strings.Contains(st.Err.Error(), "resources/list: response larger than Server.MaxResponseBytes (65536 bytes)") {
		t.Errorf("status = %+v", st)
	}
}

// A source holds at most MaxSourceBytes of content: a read past it keeps
// the block's last good content, with an event.
func TestMaxSourceBytes(t *testing.T) {
	srv := subscribable("2025-11-25")
	a := addDoc(srv, &mcp.Resource{URI: "test://a", Name: "a"}, strings.Repeat("a", 400))
	addDoc(srv, &mcp.Resource{URI: "test://b", Name: "b"}, strings.Repeat("b", 400))
	logs := &logBuffer{}
	sink := newSink(t)
	col := start(t, sink, mcpsource.Config{Logger: slog.New(slog.NewTextHandler(logs, nil)),
		Servers: []mcpsource.Server{fast(mcpsource.Server{Name: "s", Transport: serve(srv).transport, MaxSourceBytes: 1000})}})
	if err := col.WaitSynced(bounded(t)); err != nil {
		t.Fatal(err)
	}
	if len(content(sink, "mcp:s:test://a")) != 400 || len(content(sink, "mcp:s:test://b")) != 400 {
		t.Fatalf("blocks %q", sink.ids())
	}
	a.set(strings.Repeat("A", 700), nil) // 700 + 400 > 1000
	_ = srv.ResourceUpdated(t.Context(), &mcp.ResourceUpdatedNotificationParams{URI: "test://a"})
	eventually(t, "the bound", func() bool {
		return sink.hasEvent("mcp:s", "mcp:s:test://a", outcome.ReasonSourceUnavailable)
	})
	if d, _ := sink.decl("mcp:s:test://a"); d.Content != strings.Repeat("a", 400) || d.ValidUntil == nil {
		t.Errorf("a: %.10q… valid_until %v; want the last good content, held", d.Content, d.ValidUntil)
	}
	if !strings.Contains(logs.String(), "max_source_bytes=1000") {
		t.Errorf("the log does not name the limit:\n%s", logs)
	}
	a.set(strings.Repeat("A", 600), nil) // 600 + 400 = 1000: fits
	eventually(t, "the update within the bound", func() bool {
		_ = srv.ResourceUpdated(t.Context(), &mcp.ResourceUpdatedNotificationParams{URI: "test://a"})
		return content(sink, "mcp:s:test://a") == strings.Repeat("A", 600)
	})
}

// A file root takes files up to MaxSourceBytes, in walk order; the rest
// get events.
func TestFilesMaxSourceBytes(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"a.txt", "b.txt", "c.txt"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(strings.Repeat(name[:1], 400)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	root, err := mcpsource.NewRoot(mcpsource.Files{Name: "n", Dir: dir, MaxSourceBytes: 1000})
	if err != nil {
		t.Fatal(err)
	}
	decls, events, err := root.Scan()
	if err != nil || len(decls) != 2 || decls[1].RequestID != "file:n:b.txt" {
		t.Fatalf("Scan = %d blocks, %v", len(decls), err)
	}
	if len(events) != 1 || events[0].RequestID != "file:n:c.txt" || events[0].Reason != outcome.ReasonSourceUnavailable {
		t.Errorf("events = %+v", events)
	}
}

// A flood of resources/updated notifications with unique URIs, arriving
// while the collector is busy, is coalesced into one full re-read instead
// of growing a set of every URI (793 MB in 5 s, before the bound).
func TestNotificationFlood(t *testing.T) {
	const (
		floodN   = 20000
		uriBytes = 8 << 10
	)
	srv := subscribable("2025-11-25")
	a := addDoc(srv, &mcp.Resource{URI: "test://a", Name: "a"}, "v1")
	release := make(chan struct{})
	var slowReads atomic.Int32
	srv.AddResource(&mcp.Resource{URI: "test://slow", Name: "slow"}, func(ctx context.Context, _ *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		if slowReads.Add(1) == 2 { // the read the flood asks for: keep the collector busy
			select {
			case <-release:
			case <-ctx.Done():
			}
		}
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "test://slow", Text: "slow"}}}, nil
	})
	// One notification of test://slow becomes a flood: that one first,
	// then floodN updates of unique URIs no listing has.
	var flooding atomic.Bool
	srv.AddSendingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			r, ok := req.(*mcp.ServerRequest[*mcp.ResourceUpdatedNotificationParams])
			if !ok || !flooding.CompareAndSwap(true, false) {
				return next(ctx, method, req)
			}
			if _, err := next(ctx, method, req); err != nil {
				return nil, err
			}
			pad := strings.Repeat("p", uriBytes)
			for i := range floodN {
				u := &mcp.ServerRequest[*mcp.ResourceUpdatedNotificationParams]{Session: r.Session,
					Params: &mcp.ResourceUpdatedNotificationParams{URI: fmt.Sprintf("test://flood/%d/%s", i, pad)}}
				if _, err := next(ctx, method, u); err != nil {
					return nil, err
				}
			}
			return nil, nil
		}
	})
	sink := newSink(t)
	col := start(t, sink, mcpsource.Config{Servers: []mcpsource.Server{fast(mcpsource.Server{Name: "s", Transport: serve(srv).transport,
		RequestTimeout: time.Minute})}})
	if err := col.WaitSynced(bounded(t)); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	flooding.Store(true)
	if err := srv.ResourceUpdated(t.Context(), &mcp.ResourceUpdatedNotificationParams{URI: "test://slow"}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the collector busy", func() bool { return slowReads.Load() >= 2 })
	time.Sleep(100 * time.Millisecond) // the last notifications of the flood in flight
	runtime.GC()
	runtime.ReadMemStats(&after)
	a.set("v2", nil) // never notified: only a full re-read sees it
	close(release)
	if grew := int64(after.HeapAlloc) - int64(before.HeapAlloc); grew > 32<<20 {
		t.Errorf("the heap grew %d MiB under a flood of %d MiB of URIs", grew>>20, floodN*uriBytes>>20)
	}
	eventually(t, "the coalesced full re-read", func() bool { return content(sink, "mcp:s:test://a") == "v2" })
	if st := col.Status()[0]; st.State != mcpsource.Ready {
		t.Errorf("status after the flood: %+v", st)
	}
}
