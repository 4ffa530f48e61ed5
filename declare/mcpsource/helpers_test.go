package mcpsource_test

import (
	"context"
	"maps"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"github.com/contextasm/contextasm/contextasm"
	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/declare/mcpsource"
	"github.com/contextasm/contextasm/outcome"
)

// testServerBin is the stdio test server, built once by TestMain.
var testServerBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "mcpsource-test")
	if err != nil {
		panic(err)
	}
	testServerBin = filepath.Join(dir, "testserver")
	out, err := exec.Command("go", "build", "-o", testServerBin, "./internal/testserver").CombinedOutput()
	if err != nil {
		os.RemoveAll(dir)
		panic("building the test server: " + err.Error() + "\n" + string(out))
	}
	// Every test must leave no goroutine behind: Close ends them all.
	goleak.VerifyTestMain(wrapM{m, dir})
}

// wrapM removes the build directory after the tests, before goleak checks.
type wrapM struct {
	m   *testing.M
	dir string
}

func (w wrapM) Run() int {
	code := w.m.Run()
	os.RemoveAll(w.dir)
	return code
}

// recSink is a real Engine that also records what the collector hands it.
type recSink struct {
	eng    *contextasm.Engine
	mu     sync.Mutex
	decls  map[string]declare.Declaration
	events map[string][]outcome.Event
	inputs map[string]string
}

func newSink(t *testing.T) *recSink {
	t.Helper()
	eng, err := contextasm.New(contextasm.Config{})
	if err != nil {
		t.Fatal(err)
	}
	return &recSink{eng: eng, decls: make(map[string]declare.Declaration), events: make(map[string][]outcome.Event),
		inputs: make(map[string]string)}
}

func (s *recSink) SetInput(name, sha string) {
	s.mu.Lock()
	s.inputs[name] = sha
	s.mu.Unlock()
	s.eng.SetInput(name, sha)
}

func (s *recSink) input(name string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.inputs[name]
}

func (s *recSink) Declare(decls ...declare.Declaration) error {
	if err := s.eng.Declare(decls...); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, d := range decls {
		s.decls[d.RequestID] = d
	}
	return nil
}

func (s *recSink) Forget(ids ...string) int {
	s.mu.Lock()
	for _, id := range ids {
		delete(s.decls, id)
	}
	s.mu.Unlock()
	return s.eng.Forget(ids...)
}

func (s *recSink) SetSourceEvents(source string, events []outcome.Event) {
	s.mu.Lock()
	if events == nil {
		delete(s.events, source)
	} else {
		s.events[source] = slices.Clone(events)
	}
	s.mu.Unlock()
	s.eng.SetSourceEvents(source, events)
}

func (s *recSink) decl(id string) (declare.Declaration, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, ok := s.decls[id]
	return d, ok
}

func (s *recSink) ids() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Sorted(maps.Keys(s.decls))
}

func (s *recSink) eventsOf(source string) []outcome.Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.events[source])
}

// hasEvent reports whether source reports reason for id.
func (s *recSink) hasEvent(source, id string, reason outcome.Reason) bool {
	for _, e := range s.eventsOf(source) {
		if e.RequestID == id && e.Reason == reason && e.Kind == outcome.KindSource {
			return true
		}
	}
	return false
}

// bounded is t.Context() bounded by a minute: a test that waits on the
// collector fails, naming what it waited for, rather than hang until the
// test binary's timeout.
func bounded(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// eventually polls cond until it holds or 10 s pass.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// start starts a collector and closes it when the test ends.
func start(t *testing.T, sink mcpsource.Sink, cfg mcpsource.Config) *mcpsource.Collector {
	t.Helper()
	col, err := mcpsource.Start(sink, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { col.Close() })
	return col
}

// inProcess serves srv over in-memory pipes: every connection attempt
// gets a fresh pipe. refuse makes attempts fail; drop closes the server's
// end of every open pipe (a crash, seen from the client: no goodbye).
type inProcess struct {
	srv      *mcp.Server
	mu       sync.Mutex
	refuse   bool
	pipes    []net.Conn // the server's ends
	attempts int
}

func serve(srv *mcp.Server) *inProcess { return &inProcess{srv: srv} }

func (p *inProcess) transport() (mcp.Transport, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.attempts++
	if p.refuse {
		return nil, net.ErrClosed
	}
	c, s := net.Pipe()
	if _, err := p.srv.Connect(context.Background(), &mcp.IOTransport{Reader: s, Writer: s}, nil); err != nil {
		return nil, err
	}
	p.pipes = append(p.pipes, s)
	return &mcp.IOTransport{Reader: c, Writer: c}, nil
}

func (p *inProcess) setRefuse(v bool) {
	p.mu.Lock()
	p.refuse = v
	p.mu.Unlock()
}

func (p *inProcess) drop() {
	p.mu.Lock()
	pipes := p.pipes
	p.pipes = nil
	p.mu.Unlock()
	for _, s := range pipes {
		s.Close()
	}
}

func (p *inProcess) attemptCount() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.attempts
}

// textResource adds a resource whose content is read from *text under mu.
type doc struct {
	mu   sync.Mutex
	text string
	err  error
}

func (d *doc) set(text string, err error) {
	d.mu.Lock()
	d.text, d.err = text, err
	d.mu.Unlock()
}

func (d *doc) handler(uri string) mcp.ResourceHandler {
	return func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		d.mu.Lock()
		defer d.mu.Unlock()
		if d.err != nil {
			return nil, d.err
		}
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, Text: d.text}}}, nil
	}
}

func addDoc(srv *mcp.Server, r *mcp.Resource, text string) *doc {
	d := &doc{text: text}
	srv.AddResource(r, d.handler(r.URI))
	return d
}

// fast shortens a server's timings for tests.
func fast(s mcpsource.Server) mcpsource.Server {
	if s.ConnectTimeout == 0 {
		s.ConnectTimeout = 5 * time.Second
	}
	if s.RequestTimeout == 0 {
		s.RequestTimeout = 5 * time.Second
	}
	if s.ListInterval == 0 {
		s.ListInterval = -1 // tests of notifications must not be rescued by a re-sync
	}
	s.MinBackoff, s.MaxBackoff = 10*time.Millisecond, 50*time.Millisecond
	s.TerminateDuration = 2 * time.Second
	return s
}

// memListener is a net.Listener whose connections are in-memory pipes, so
// that HTTP tests open no socket.
type memListener struct {
	conns  chan net.Conn
	closed chan struct{}
	once   sync.Once
}

func newMemListener() *memListener {
	return &memListener{conns: make(chan net.Conn), closed: make(chan struct{})}
}

func (l *memListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.closed:
		return nil, net.ErrClosed
	}
}

func (l *memListener) Close() error { l.once.Do(func() { close(l.closed) }); return nil }

func (l *memListener) Addr() net.Addr { return memAddr{} }

func (l *memListener) dial(ctx context.Context, _, _ string) (net.Conn, error) {
	c, s := net.Pipe()
	select {
	case l.conns <- s:
		return c, nil
	case <-l.closed:
		return nil, net.ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

type memAddr struct{}

func (memAddr) Network() string { return "mem" }
func (memAddr) String() string  { return "mem" }

// httpServer serves h over a memListener and returns a client that reaches
// it at any URL; both are shut down when the test ends.
func httpServer(t *testing.T, h http.Handler) *http.Client {
	l := newMemListener()
	hs := &http.Server{Handler: h}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = hs.Serve(l)
	}()
	tr := &http.Transport{DialContext: l.dial}
	t.Cleanup(func() {
		tr.CloseIdleConnections()
		_ = hs.Close()
		<-done
	})
	return &http.Client{Transport: tr}
}
