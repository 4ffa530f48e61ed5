package mcpsource_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"github.com/contextasm/contextasm/contextasm"
	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/declare/mcpsource"
	"github.com/contextasm/contextasm/outcome"
	"github.com/contextasm/contextasm/template"
)

var revisions = []string{"2025-11-25", "2026-07-28"}

func newServer(version string, opts *mcp.ServerOptions) *mcp.Server {
	if opts == nil {
		opts = &mcp.ServerOptions{}
	}
	if version != "" {
		opts.SupportedProtocolVersions = []string{version}
	}
	return mcp.NewServer(&mcp.Implementation{Name: "in-process", Version: "1"}, opts)
}

func subscribable(version string) *mcp.Server {
	return newServer(version, &mcp.ServerOptions{
		SubscribeHandler:   func(context.Context, *mcp.SubscribeRequest) error { return nil },
		UnsubscribeHandler: func(context.Context, *mcp.UnsubscribeRequest) error { return nil },
	})
}

func content(s *recSink, id string) string {
	d, _ := s.decl(id)
	return d.Content
}

// Both protocol revisions: the collector negotiates each, collects, and
// follows resources/updated (subscribe is mapped to each revision's form).
func TestRevisionsAndUpdates(t *testing.T) {
	for _, v := range revisions {
		t.Run(v, func(t *testing.T) {
			srv := subscribable(v)
			a := addDoc(srv, &mcp.Resource{URI: "test://a", Name: "a"}, "v1")
			p := serve(srv)
			sink := newSink(t)
			col := start(t, sink, mcpsource.Config{Servers: []mcpsource.Server{fast(mcpsource.Server{Name: "s", Transport: p.transport})}})
			if err := col.WaitSynced(bounded(t)); err != nil {
				t.Fatal(err)
			}
			st := col.Status()[0]
			if st.State != mcpsource.Ready || st.Protocol != v || st.Blocks != 1 {
				t.Fatalf("status = %+v", st)
			}
			if got := content(sink, "mcp:s:test://a"); got != "v1" {
				t.Fatalf("content = %q", got)
			}
			if evs := sink.eventsOf("mcp:s"); len(evs) != 0 {
				t.Errorf("events of a healthy server: %+v", evs)
			}
			// The subscription may be registered after Subscribe returned
			// (2026-07-28); updates are sent until one is seen.
			a.set("v2", nil)
			deadline := time.Now().Add(10 * time.Second)
			for content(sink, "mcp:s:test://a") != "v2" {
				if time.Now().After(deadline) {
					t.Fatal("update not followed")
				}
				_ = srv.ResourceUpdated(t.Context(), &mcp.ResourceUpdatedNotificationParams{URI: "test://a"})
				time.Sleep(20 * time.Millisecond)
			}
		})
	}
}

// A change made while a subscription is being registered, and never
// notified, is still seen: the collector reads after subscribing, and
// under 2026-07-28 again once the server acknowledges the subscription.
func TestReadAfterSubscribe(t *testing.T) {
	for _, v := range revisions {
		t.Run(v, func(t *testing.T) {
			var a *doc
			srv := newServer(v, &mcp.ServerOptions{
				SubscribeHandler: func(context.Context, *mcp.SubscribeRequest) error {
					// Under 2026-07-28 this runs after Subscribe has returned
					// and the first read may be done: change silently, late.
					time.Sleep(50 * time.Millisecond)
					a.set("changed while subscribing", nil)
					return nil
				},
				UnsubscribeHandler: func(context.Context, *mcp.UnsubscribeRequest) error { return nil },
			})
			a = addDoc(srv, &mcp.Resource{URI: "test://a", Name: "a"}, "before")
			sink := newSink(t)
			start(t, sink, mcpsource.Config{Servers: []mcpsource.Server{fast(mcpsource.Server{Name: "s", Transport: serve(srv).transport})}})
			eventually(t, "the change made while subscribing", func() bool {
				return content(sink, "mcp:s:test://a") == "changed while subscribing"
			})
		})
	}
}

// Pagination: a listing of three pages and more is read whole.
func TestPagination(t *testing.T) {
	srv := newServer("", &mcp.ServerOptions{PageSize: 2})
	for i := range 7 {
		addDoc(srv, &mcp.Resource{URI: fmt.Sprintf("test://r%d", i), Name: "r"}, fmt.Sprintf("resource %d", i))
	}
	var lists atomic.Int32
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "resources/list" {
				lists.Add(1)
			}
			return next(ctx, method, req)
		}
	})
	sink := newSink(t)
	col := start(t, sink, mcpsource.Config{Servers: []mcpsource.Server{fast(mcpsource.Server{Name: "p", Transport: serve(srv).transport})}})
	if err := col.WaitSynced(bounded(t)); err != nil {
		t.Fatal(err)
	}
	if ids := sink.ids(); len(ids) != 7 {
		t.Errorf("collected %d resources, want 7: %q", len(ids), ids)
	}
	if n := lists.Load(); n < 4 {
		t.Errorf("%d list requests, want 4 pages", n)
	}
}

// MaxResources and MaxPages bound a listing.
func TestListingCaps(t *testing.T) {
	srv := newServer("", &mcp.ServerOptions{PageSize: 2})
	for i := range 9 {
		addDoc(srv, &mcp.Resource{URI: fmt.Sprintf("test://r%d", i), Name: "r"}, "x")
	}
	for _, tc := range []struct {
		cfg  mcpsource.Server
		want int
	}{
		{mcpsource.Server{MaxResources: 3}, 3},
		{mcpsource.Server{MaxPages: 2}, 4},
	} {
		sink := newSink(t)
		tc.cfg.Name, tc.cfg.Transport = "c", serve(srv).transport
		col := start(t, sink, mcpsource.Config{Servers: []mcpsource.Server{fast(tc.cfg)}})
		if err := col.WaitSynced(bounded(t)); err != nil {
			t.Fatal(err)
		}
		if n := len(sink.ids()); n != tc.want {
			t.Errorf("%+v: %d blocks, want %d", tc.cfg, n, tc.want)
		}
		col.Close()
	}
}

// Annotations reach the engine: a priority of 0 and a missing one both
// carry no priority; an untrusted server's priority 1 is not required.
func TestAnnotationsEndToEnd(t *testing.T) {
	srv := newServer("", nil)
	addDoc(srv, &mcp.Resource{URI: "test://none", Name: "n"}, "no annotations")
	addDoc(srv, &mcp.Resource{URI: "test://zero", Name: "z", Annotations: &mcp.Annotations{Priority: 0}}, "priority zero")
	addDoc(srv, &mcp.Resource{URI: "test://high", Name: "h", Annotations: &mcp.Annotations{Priority: 1, Audience: []mcp.Role{"assistant"},
		LastModified: "2026-11-01T10:00:00Z"}}, "priority one")
	addDoc(srv, &mcp.Resource{URI: "test://user", Name: "u", Annotations: &mcp.Annotations{Audience: []mcp.Role{"user"}}}, "for the user")
	sink := newSink(t)
	col := start(t, sink, mcpsource.Config{Servers: []mcpsource.Server{fast(mcpsource.Server{Name: "a", Transport: serve(srv).transport})}})
	if err := col.WaitSynced(bounded(t)); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"mcp:a:test://none", "mcp:a:test://zero"} {
		if d, ok := sink.decl(id); !ok || d.Priority != nil {
			t.Errorf("%s: declared %v, priority %v; want declared without priority", id, ok, fmtPtr(d.Priority))
		}
	}
	high, _ := sink.decl("mcp:a:test://high")
	if high.Priority == nil || *high.Priority != 1 || high.IsRequired() || high.LastModified == nil || high.Audience[0] != "assistant" {
		t.Errorf("high: %+v", high)
	}

	tpl, err := template.Parse([]byte(`{"budget": 200, "sections": [{"name": "S", "priority": 1, "memory_types": ["external"], "max_tokens": 150, "render": "{content}"}]}`), "test")
	if err != nil {
		t.Fatal(err)
	}
	// Listing hidden exclusions (a debugging mode) names the user-only block.
	res, err := sink.eng.Assemble(t.Context(), contextasm.Request{Template: tpl, Now: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), ListHidden: true})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Text, "priority one") || strings.Contains(res.Text, "for the user") {
		t.Errorf("text:\n%s", res.Text)
	}
	found := false
	for _, e := range res.Events() {
		found = found || (e.RequestID == "mcp:a:test://user" && e.Reason == outcome.ReasonAudience)
	}
	if !found {
		t.Errorf("no audience event: %+v", res.Events())
	}
}

// list_changed re-lists: added resources are read, removed ones forgotten.
func TestListChanged(t *testing.T) {
	for _, v := range revisions {
		t.Run(v, func(t *testing.T) {
			srv := newServer(v, nil)
			addDoc(srv, &mcp.Resource{URI: "test://a", Name: "a"}, "a")
			sink := newSink(t)
			col := start(t, sink, mcpsource.Config{Servers: []mcpsource.Server{fast(mcpsource.Server{Name: "l", Transport: serve(srv).transport})}})
			if err := col.WaitSynced(bounded(t)); err != nil {
				t.Fatal(err)
			}
			addDoc(srv, &mcp.Resource{URI: "test://b", Name: "b"}, "b")
			eventually(t, "the new resource", func() bool { return content(sink, "mcp:l:test://b") == "b" })
			srv.RemoveResources("test://a")
			eventually(t, "the removed resource to go", func() bool { _, ok := sink.decl("mcp:l:test://a"); return !ok })
		})
	}
}

// Without notifications the periodic re-sync still finds changes.
func TestPeriodicResync(t *testing.T) {
	srv := newServer("", &mcp.ServerOptions{Capabilities: &mcp.ServerCapabilities{Resources: &mcp.ResourceCapabilities{}}})
	a := addDoc(srv, &mcp.Resource{URI: "test://a", Name: "a"}, "v1")
	sink := newSink(t)
	col := start(t, sink, mcpsource.Config{Servers: []mcpsource.Server{fast(mcpsource.Server{Name: "p", Transport: serve(srv).transport,
		ListInterval: 50 * time.Millisecond})}})
	if err := col.WaitSynced(bounded(t)); err != nil {
		t.Fatal(err)
	}
	a.set("v2", nil)
	addDoc(srv, &mcp.Resource{URI: "test://b", Name: "b"}, "b") // no list_changed: the capability says so
	eventually(t, "the silent change", func() bool { return content(sink, "mcp:p:test://a") == "v2" })
	eventually(t, "the silent addition", func() bool { return content(sink, "mcp:p:test://b") == "b" })
}

// A missing resource (-32602, or -32002 of older revisions) is gone: no
// block, an event; a resource that goes missing is forgotten.
func TestMissingResource(t *testing.T) {
	srv := subscribable("")
	srv.AddResource(&mcp.Resource{URI: "test://never", Name: "n"}, func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return nil, mcp.ResourceNotFoundError(req.Params.URI)
	})
	old := addDoc(srv, &mcp.Resource{URI: "test://old", Name: "o"}, "still here")
	sink := newSink(t)
	col := start(t, sink, mcpsource.Config{Servers: []mcpsource.Server{fast(mcpsource.Server{Name: "m", Transport: serve(srv).transport})}})
	if err := col.WaitSynced(bounded(t)); err != nil {
		t.Fatal(err)
	}
	if _, ok := sink.decl("mcp:m:test://never"); ok || !sink.hasEvent("mcp:m", "mcp:m:test://never", outcome.ReasonSourceUnavailable) {
		t.Errorf("missing resource: declared %v, events %+v", ok, sink.eventsOf("mcp:m"))
	}
	if content(sink, "mcp:m:test://old") != "still here" {
		t.Fatal("old resource not collected")
	}
	old.set("", &jsonrpc.Error{Code: -32002, Message: "Resource not found"})
	eventually(t, "the vanished resource to go", func() bool {
		_ = srv.ResourceUpdated(t.Context(), &mcp.ResourceUpdatedNotificationParams{URI: "test://old"})
		_, ok := sink.decl("mcp:m:test://old")
		return !ok && sink.hasEvent("mcp:m", "mcp:m:test://old", outcome.ReasonSourceUnavailable)
	})
	if st := col.Status()[0]; st.State != mcpsource.Ready {
		t.Errorf("a missing resource made the server %v", st.State)
	}
}

// -32603 is transient: the last good content is kept, valid until its last
// good read plus KeepFor, with an event; a later good read clears both.
func TestInternalErrorKeepsLastGood(t *testing.T) {
	srv := subscribable("")
	a := addDoc(srv, &mcp.Resource{URI: "test://a", Name: "a"}, "good")
	sink := newSink(t)
	t0 := time.Now()
	col := start(t, sink, mcpsource.Config{Servers: []mcpsource.Server{fast(mcpsource.Server{Name: "i", Transport: serve(srv).transport, KeepFor: time.Hour})}})
	if err := col.WaitSynced(bounded(t)); err != nil {
		t.Fatal(err)
	}
	a.set("", &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "backend down"})
	eventually(t, "the transient failure", func() bool {
		_ = srv.ResourceUpdated(t.Context(), &mcp.ResourceUpdatedNotificationParams{URI: "test://a"})
		return sink.hasEvent("mcp:i", "mcp:i:test://a", outcome.ReasonSourceUnavailable)
	})
	t1 := time.Now()
	d, ok := sink.decl("mcp:i:test://a")
	if !ok || d.Content != "good" || d.ValidUntil == nil || d.ValidUntil.Before(t0.Add(time.Hour)) || d.ValidUntil.After(t1.Add(time.Hour)) {
		t.Fatalf("held block: %v %+v", ok, d)
	}
	if st := col.Status()[0]; st.State != mcpsource.Ready {
		t.Errorf("-32603 made the server %v", st.State)
	}
	a.set("good again", nil)
	eventually(t, "recovery", func() bool {
		_ = srv.ResourceUpdated(t.Context(), &mcp.ResourceUpdatedNotificationParams{URI: "test://a"})
		d, _ := sink.decl("mcp:i:test://a")
		return d.Content == "good again" && d.ValidUntil == nil && len(sink.eventsOf("mcp:i")) == 0
	})
}

// Empty contents are an error for that resource, never an empty block;
// blobs are skipped with a binary event; a resource over the content
// limit gets an event; the rest of the server is collected.
func TestBadContents(t *testing.T) {
	srv := newServer("", nil)
	srv.AddResource(&mcp.Resource{URI: "test://empty", Name: "e"}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{}}, nil
	})
	srv.AddResource(&mcp.Resource{URI: "test://blob", Name: "b"}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "test://blob", MIMEType: "image/png", Blob: []byte{0x89, 'P', 'N', 'G'}}}}, nil
	})
	addDoc(srv, &mcp.Resource{URI: "test://big", Name: "g"}, strings.Repeat("big ", 100))
	addDoc(srv, &mcp.Resource{URI: "test://fine", Name: "f"}, "fine")
	sink := newSink(t)
	col := start(t, sink, mcpsource.Config{Servers: []mcpsource.Server{fast(mcpsource.Server{Name: "b", Transport: serve(srv).transport, MaxContentBytes: 100})}})
	if err := col.WaitSynced(bounded(t)); err != nil {
		t.Fatal(err)
	}
	if ids := sink.ids(); len(ids) != 1 || ids[0] != "mcp:b:test://fine" {
		t.Errorf("declared %q, want only the fine one", ids)
	}
	want := []outcome.Event{
		{Kind: outcome.KindSource, RequestID: "mcp:b:test://big", Reason: outcome.ReasonSourceUnavailable},
		{Kind: outcome.KindSource, RequestID: "mcp:b:test://blob", Reason: outcome.ReasonBinary},
		{Kind: outcome.KindSource, RequestID: "mcp:b:test://empty", Reason: outcome.ReasonSourceUnavailable},
	}
	if got := sink.eventsOf("mcp:b"); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("events = %+v\nwant %+v", got, want)
	}
}

// A server that drops the connection is unavailable: its blocks are held
// (valid until last good read plus KeepFor), one source-wide event says so,
// and it is reconnected with backoff; on reconnection all is fresh again.
func TestConnectionLossAndReconnect(t *testing.T) {
	srv := newServer("", nil)
	addDoc(srv, &mcp.Resource{URI: "test://a", Name: "a"}, "a")
	p := serve(srv)
	sink := newSink(t)
	col := start(t, sink, mcpsource.Config{Servers: []mcpsource.Server{fast(mcpsource.Server{Name: "r", Transport: p.transport, KeepFor: time.Hour})}})
	if err := col.WaitSynced(bounded(t)); err != nil {
		t.Fatal(err)
	}
	p.setRefuse(true)
	p.drop()
	eventually(t, "unavailability", func() bool { return col.Status()[0].State == mcpsource.Unavailable })
	if !sink.hasEvent("mcp:r", "mcp:r", outcome.ReasonSourceUnavailable) {
		t.Errorf("events = %+v", sink.eventsOf("mcp:r"))
	}
	d, ok := sink.decl("mcp:r:test://a")
	if !ok || d.ValidUntil == nil {
		t.Fatalf("block not held: %v %+v", ok, d)
	}
	n := p.attemptCount()
	eventually(t, "reconnection attempts", func() bool { return p.attemptCount() >= n+2 })
	p.setRefuse(false)
	eventually(t, "recovery", func() bool {
		d, _ := sink.decl("mcp:r:test://a")
		return col.Status()[0].State == mcpsource.Ready && d.ValidUntil == nil && len(sink.eventsOf("mcp:r")) == 0
	})
}

// KeepFor < 0 drops a failed server's blocks at once.
func TestKeepForNegative(t *testing.T) {
	srv := newServer("", nil)
	addDoc(srv, &mcp.Resource{URI: "test://a", Name: "a"}, "a")
	p := serve(srv)
	sink := newSink(t)
	col := start(t, sink, mcpsource.Config{Servers: []mcpsource.Server{fast(mcpsource.Server{Name: "k", Transport: p.transport, KeepFor: -1})}})
	if err := col.WaitSynced(bounded(t)); err != nil {
		t.Fatal(err)
	}
	p.setRefuse(true)
	p.drop()
	eventually(t, "the blocks to go", func() bool { return len(sink.ids()) == 0 })
}

// A hanging server does not hold up a healthy one, WaitSynced, or assembly.
func TestIsolation(t *testing.T) {
	hung := newServer("", nil)
	release := make(chan struct{})
	hung.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "resources/list" {
				select {
				case <-release:
				case <-ctx.Done():
				}
			}
			return next(ctx, method, req)
		}
	})
	addDoc(hung, &mcp.Resource{URI: "test://h", Name: "h"}, "h")
	defer close(release)
	good := newServer("", nil)
	addDoc(good, &mcp.Resource{URI: "test://g", Name: "g"}, "healthy content")
	sink := newSink(t)
	t0 := time.Now()
	col := start(t, sink, mcpsource.Config{Servers: []mcpsource.Server{
		fast(mcpsource.Server{Name: "hung", Transport: serve(hung).transport, RequestTimeout: 400 * time.Millisecond}),
		fast(mcpsource.Server{Name: "good", Transport: serve(good).transport}),
	}})
	eventually(t, "the healthy server", func() bool { return content(sink, "mcp:good:test://g") != "" })
	if d := time.Since(t0); d > 300*time.Millisecond {
		t.Logf("healthy server collected after %v", d) // measured, not asserted: machines vary
	}
	if st := col.Status()[0]; st.Synced {
		t.Fatalf("hung server synced: %+v", st)
	}
	// Assembly reads the store: it returns at once while a server hangs.
	tpl, err := template.Parse([]byte(`{"budget": 100, "sections": [{"name": "S", "priority": 1, "memory_types": ["external"], "max_tokens": 80, "render": "{content}"}]}`), "test")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	res, err := sink.eng.Assemble(ctx, contextasm.Request{Template: tpl, Now: time.Now()})
	if err != nil || !strings.Contains(res.Text, "healthy content") {
		t.Fatalf("assembly: %v\n%v", err, res)
	}
	if !sink.hasEvent("mcp:hung", "mcp:hung", outcome.ReasonSourceUnavailable) {
		t.Errorf("a server not synced yet is not reported: %+v", res.Events())
	}
	if err := col.WaitSynced(ctx); err != nil {
		t.Fatalf("WaitSynced with a hanging server: %v", err)
	}
	if st := col.Status()[0]; st.State != mcpsource.Unavailable || st.Err == nil {
		t.Errorf("hung server: %+v", st)
	}
}

// Streamable HTTP: collection and updates over the SDK's HTTP transport
// (served in memory: no socket is opened).
func TestStreamableHTTP(t *testing.T) {
	for _, v := range revisions {
		t.Run(v, func(t *testing.T) {
			srv := subscribable(v)
			a := addDoc(srv, &mcp.Resource{URI: "test://a", Name: "a"}, "over http")
			// 2026-07-28 is served by stateless HTTP servers only.
			opts := &mcp.StreamableHTTPOptions{Stateless: v >= "2026-07-28"}
			client := httpServer(t, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, opts))
			sink := newSink(t)
			col := start(t, sink, mcpsource.Config{Servers: []mcpsource.Server{fast(mcpsource.Server{Name: "h", URL: "http://mcp.invalid/mcp", HTTPClient: client})}})
			if err := col.WaitSynced(bounded(t)); err != nil {
				t.Fatal(err)
			}
			if st := col.Status()[0]; st.State != mcpsource.Ready || st.Protocol != v || content(sink, "mcp:h:test://a") != "over http" {
				t.Fatalf("status %+v, blocks %q", st, sink.ids())
			}
			a.set("updated over http", nil)
			eventually(t, "the update", func() bool {
				_ = srv.ResourceUpdated(t.Context(), &mcp.ResourceUpdatedNotificationParams{URI: "test://a"})
				return content(sink, "mcp:h:test://a") == "updated over http"
			})
		})
	}
}

// Close ends every goroutine the collector started, whatever state its
// sources are in (TestMain also checks after all tests).
func TestCloseLeavesNoGoroutine(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	hung := newServer("", nil)
	hung.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "resources/read" {
				<-ctx.Done()
			}
			return next(ctx, method, req)
		}
	})
	addDoc(hung, &mcp.Resource{URI: "test://h", Name: "h"}, "h")
	good := subscribable("2026-07-28")
	addDoc(good, &mcp.Resource{URI: "test://g", Name: "g"}, "g")
	refused := serve(newServer("", nil))
	refused.setRefuse(true)
	sink := newSink(t)
	col, err := mcpsource.Start(sink, mcpsource.Config{
		Servers: []mcpsource.Server{
			fast(mcpsource.Server{Name: "hung", Transport: serve(hung).transport}),
			fast(mcpsource.Server{Name: "good", Transport: serve(good).transport, ListInterval: 10 * time.Millisecond}),
			fast(mcpsource.Server{Name: "refused", Transport: refused.transport}),
			fast(mcpsource.Server{Name: "stdio", Command: []string{testServerBin, "-name", "stdio"}}),
		},
		Files: []mcpsource.Files{{Name: "f", Dir: t.TempDir(), ScanInterval: 10 * time.Millisecond}},
	})
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "the good servers", func() bool {
		_, g := sink.decl("mcp:good:test://g")
		_, s := sink.decl("mcp:stdio:test://stdio/doc/1")
		return g && s
	})
	t0 := time.Now()
	col.Close()
	col.Close() // idempotent
	t.Logf("Close took %v", time.Since(t0))
}

// A block the Sink refuses (its limits are stricter than the source's) is
// reported, and the others of the same sync are declared.
func TestSinkRefusal(t *testing.T) {
	eng, err := contextasm.New(contextasm.Config{MaxContentBytes: 10})
	if err != nil {
		t.Fatal(err)
	}
	sink := &recSink{eng: eng, decls: map[string]declare.Declaration{}, events: map[string][]outcome.Event{}, inputs: map[string]string{}}
	srv := newServer("", nil)
	addDoc(srv, &mcp.Resource{URI: "test://long", Name: "l"}, "longer than ten bytes")
	addDoc(srv, &mcp.Resource{URI: "test://short", Name: "s"}, "short")
	col := start(t, sink, mcpsource.Config{Servers: []mcpsource.Server{fast(mcpsource.Server{Name: "r", Transport: serve(srv).transport})}})
	if err := col.WaitSynced(bounded(t)); err != nil {
		t.Fatal(err)
	}
	if ids := sink.ids(); len(ids) != 1 || ids[0] != "mcp:r:test://short" || eng.Len() != 1 {
		t.Errorf("declared %q", ids)
	}
	if !sink.hasEvent("mcp:r", "mcp:r:test://long", outcome.ReasonSourceUnavailable) {
		t.Errorf("events %+v", sink.eventsOf("mcp:r"))
	}
}
