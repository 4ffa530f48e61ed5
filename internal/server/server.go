package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/contextasm/contextasm/contextasm"
	"github.com/contextasm/contextasm/feedback"
	"github.com/contextasm/contextasm/learned"
	"github.com/contextasm/contextasm/template"
)

// Defaults of Config.
const (
	DefaultMaxBodyBytes   = 8 << 20
	DefaultQueueWait      = 250 * time.Millisecond
	DefaultRequestTimeout = 30 * time.Second
	DefaultRetain         = 1024
	DefaultRetainFor      = 15 * time.Minute
	DefaultFlushTimeout   = 2 * time.Second
	DefaultShutdownGrace  = 10 * time.Second
)

// Store is a tenant's learned-state store: what contextasm.Config.State
// takes, and its Close.
type Store interface {
	learned.Store
	Close() error
}

// Config configures a Server. Its zero value means the documented
// defaults: no keys (one tenant, every role), no templates by name,
// learned state in memory.
type Config struct {
	// Keys are the API keys accepted; nil or empty means no
	// authentication (serve then listens only on loopback or a Unix
	// socket).
	Keys *Keys
	// Templates are the templates requests name, by name.
	Templates map[string]*template.Template
	// Engine configures every tenant's Engine; its State is set per
	// tenant from State.
	Engine contextasm.Config
	// State opens a tenant's learned-state store; nil keeps learned state
	// in memory.
	State func(tenant string) (Store, error)
	// MaxBodyBytes bounds a request's body (DefaultMaxBodyBytes).
	MaxBodyBytes int64
	// MaxConcurrent bounds the assemblies running at once, all tenants
	// together (4 × GOMAXPROCS). A request that finds no room within
	// QueueWait is refused with 503 overloaded.
	MaxConcurrent int
	// QueueWait is how long a request waits for room (DefaultQueueWait).
	QueueWait time.Duration
	// RequestTimeout bounds each request (DefaultRequestTimeout).
	RequestTimeout time.Duration
	// Retain is how many assemblies each tenant keeps for feedback and
	// GET /v1/assemblies/{id} (DefaultRetain); RetainFor how long
	// (DefaultRetainFor).
	Retain    int
	RetainFor time.Duration
	// FlushTimeout bounds how long feedback and a session's end wait for
	// the learned-state store to acknowledge them (DefaultFlushTimeout).
	FlushTimeout time.Duration
	// ShutdownGrace bounds how long Run waits for requests in flight at
	// shutdown (DefaultShutdownGrace).
	ShutdownGrace time.Duration
	// MCP also serves the Model Context Protocol at /mcp (streamable
	// HTTP): a tool and a prompt that return a session's context.
	MCP bool
	// Instrument, when set, wraps each tenant's Engine for the calls the
	// server makes on it (assembly and feedback): oteladapter.New's
	// *Engine fits, and gives the server its spans and metrics.
	Instrument func(tenant string, eng *contextasm.Engine) (Instrumented, error)
	// Log receives a line per failed request and per shutdown step; nil
	// discards them.
	Log *slog.Logger
	// Clock is the server's clock, for a request without "now" and for
	// retention (time.Now).
	Clock func() time.Time
}

// Instrumented is what the server calls to assemble and learn: a
// *contextasm.Engine, or one that observes it.
type Instrumented interface {
	Assemble(ctx context.Context, req contextasm.Request) (*contextasm.Result, error)
	FeedbackResponse(ctx context.Context, res *contextasm.Result, r contextasm.Response) (*feedback.Result, error)
}

// Server serves the API. It holds one Engine per tenant.
type Server struct {
	cfg     Config
	tenants map[string]*tenant
	slots   chan struct{} // MaxConcurrent assemblies
	tpls    *templates
	metrics *metrics
	handler http.Handler
	ready   atomic.Bool
	closed  atomic.Bool
}

// New makes every tenant's Engine (opening its store) and returns the
// server, ready.
func New(cfg Config) (*Server, error) {
	if err := cfg.normal(); err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, tenants: make(map[string]*tenant), slots: make(chan struct{}, cfg.MaxConcurrent)}
	var err error
	if s.tpls, err = newTemplates(cfg.Templates); err != nil {
		return nil, err
	}
	s.metrics = newMetrics(s)
	for _, name := range cfg.Keys.Tenants() {
		t, err := s.openTenant(name)
		if err != nil {
			s.Close()
			return nil, err
		}
		s.tenants[name] = t
	}
	s.handler = s.routes()
	s.ready.Store(true)
	return s, nil
}

func (c *Config) normal() error {
	for _, f := range []struct {
		name string
		v    int64
	}{{"MaxBodyBytes", c.MaxBodyBytes}, {"MaxConcurrent", int64(c.MaxConcurrent)}, {"QueueWait", int64(c.QueueWait)},
		{"RequestTimeout", int64(c.RequestTimeout)}, {"Retain", int64(c.Retain)}, {"RetainFor", int64(c.RetainFor)},
		{"FlushTimeout", int64(c.FlushTimeout)}, {"ShutdownGrace", int64(c.ShutdownGrace)}} {
		if f.v < 0 {
			return fmt.Errorf("%w: server: Config.%s is negative (0 means the default)", contextasm.ErrInvalid, f.name)
		}
	}
	orDefault(&c.MaxBodyBytes, DefaultMaxBodyBytes)
	orDefault(&c.MaxConcurrent, 4*runtime.GOMAXPROCS(0))
	orDefault(&c.Retain, DefaultRetain)
	for _, d := range []struct {
		v   *time.Duration
		def time.Duration
	}{{&c.QueueWait, DefaultQueueWait}, {&c.RequestTimeout, DefaultRequestTimeout},
		{&c.RetainFor, DefaultRetainFor}, {&c.FlushTimeout, DefaultFlushTimeout}, {&c.ShutdownGrace, DefaultShutdownGrace}} {
		orDefault(d.v, d.def)
	}
	if c.Clock == nil {
		c.Clock = time.Now
	}
	if c.Log == nil {
		c.Log = slog.New(slog.DiscardHandler)
	}
	if c.Engine.State != nil {
		return fmt.Errorf("%w: server: Config.Engine.State is set; give Config.State, which opens one store per tenant", contextasm.ErrInvalid)
	}
	return nil
}

// orDefault sets a zero field to its default.
func orDefault[T int | int64 | time.Duration](v *T, def T) {
	if *v == 0 {
		*v = def
	}
}

// openTenant makes a tenant's Engine on its own store.
func (s *Server) openTenant(name string) (*tenant, error) {
	cfg := s.cfg.Engine
	var store Store
	if s.cfg.State != nil {
		var err error
		if store, err = s.cfg.State(name); err != nil {
			return nil, fmt.Errorf("server: tenant %s: the learned-state store: %w", name, err)
		}
		cfg.State = store
	}
	eng, err := contextasm.New(cfg)
	if err != nil {
		if store != nil {
			store.Close()
		}
		return nil, fmt.Errorf("server: tenant %s: %w", name, err)
	}
	t := &tenant{name: name, eng: eng, calls: eng, store: store}
	if t.asm, err = newRetained(s.cfg.Retain, s.cfg.RetainFor); err != nil {
		t.close()
		return nil, err
	}
	if s.cfg.Instrument != nil {
		if t.calls, err = s.cfg.Instrument(name, eng); err != nil {
			t.close()
			return nil, fmt.Errorf("server: tenant %s: %w", name, err)
		}
	}
	return t, nil
}

// Handler returns the server's HTTP handler.
func (s *Server) Handler() http.Handler { return s.handler }

// Engine returns a tenant's Engine, for tests and embedding hosts.
func (s *Server) Engine(tenant string) (*contextasm.Engine, bool) {
	t, ok := s.tenants[tenant]
	if !ok {
		return nil, false
	}
	return t.eng, true
}

// Close flushes every tenant's learned state to its store (waiting at
// most the Engine's StateOptions.Timeout each) and closes the stores.
// It returns what could not be stored. Requests after Close are refused
// (503 shutting_down).
func (s *Server) Close() error {
	s.ready.Store(false)
	if s.closed.Swap(true) {
		return nil
	}
	var errs []error
	for _, t := range s.tenants {
		if err := t.close(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// flush waits until t's store acknowledged what was queued: true when it
// did, false without a store or when it did not in time.
func (s *Server) flush(ctx context.Context, t *tenant) bool {
	if t.store == nil {
		return false
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.FlushTimeout)
	defer cancel()
	if err := t.eng.Flush(ctx); err != nil {
		s.cfg.Log.Warn("learned state not yet stored", "tenant", t.name, "err", err)
		return false
	}
	return true
}
