package mcpsource

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math/rand/v2"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/contextasm/contextasm/outcome"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// codeResourceNotFound is the "resource not found" code of MCP revisions up
// to 2025-11-25; 2026-07-28 uses -32602 (jsonrpc.CodeInvalidParams).
const codeResourceNotFound = -32002

// methodSubscriptionsAck is the notification a 2026-07-28 server sends once
// it has registered a subscriptions/listen stream.
const methodSubscriptionsAck = "notifications/subscriptions/acknowledged"

// mcpSource collects one MCP server's resources. run is its goroutine;
// everything but the notification queue belongs to it.
type mcpSource struct {
	cfg Server
	st  *status
	log *slog.Logger

	entries map[string]*entry // by URI, across sessions
	// per session
	subscribe    bool // the server offers resources/subscribe
	hasResources bool // the server offers resources at all
	protocol     string

	// trips counts HTTP responses cut at MaxResponseBytes (limitClient).
	trips atomic.Int64
	// raw is the current session's connection, closed under the SDK when
	// a request or the session's end is stuck (guard.go).
	raw *rawConn

	// The notification queue, filled by the SDK's goroutines. It is
	// bounded: past maxPending URIs (or maxPendingBytes of them) the
	// updates are coalesced into one full re-read (resync), so a server
	// flooding notifications with unique URIs cannot grow it.
	mu           sync.Mutex
	updated      map[string]bool
	updatedBytes int
	relist       bool
	resync       bool
	relistTools  bool          // notifications/tools/list_changed (tools.go)
	wake         chan struct{} // capacity 1

	tools    []string // the names of the tools declared (tools.go)
	hasTools bool     // the server offers tools
}

// maxPendingBytes bounds the URIs of queued updates, with Server.MaxResources
// bounding their number.
const maxPendingBytes = 1 << 20

// entry is one listed resource.
type entry struct {
	res        *mcp.Resource
	id         string
	subscribed bool
	// tooLarge: the last read's response passed MaxResponseBytes. It is
	// not read again until its listing changes or an update is notified.
	tooLarge bool
}

// run connects, syncs and serves the server until ctx ends, reconnecting
// with backoff after every failure.
func (m *mcpSource) run(ctx context.Context) {
	backoff := m.cfg.MinBackoff
	for {
		up, err := m.session(ctx)
		if ctx.Err() != nil {
			return
		}
		m.log.Warn("MCP server unavailable", "error", err)
		m.forgetTools()
		m.st.led.holdAll()
		m.st.report(m.log, Unavailable, err, "")
		m.st.settleFirst()
		if up {
			backoff = m.cfg.MinBackoff
		}
		wait := backoff + rand.N(backoff/4+1) // jitter, so servers restarted together are not hit together
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		backoff = min(2*backoff, m.cfg.MaxBackoff)
	}
}

// session runs one connection: connect, full sync, then serve notifications
// and periodic re-syncs until the connection fails or ctx ends. up reports
// whether it got as far as a first successful sync.
func (m *mcpSource) session(ctx context.Context) (up bool, err error) {
	m.mu.Lock()
	m.updated, m.updatedBytes, m.relist, m.resync, m.relistTools = nil, 0, false, false, false
	m.mu.Unlock()

	t, cmd, stderr, err := m.transport()
	if err != nil {
		return false, fmt.Errorf("mcpsource: %s: %w", m.st.key, err)
	}
	defer killGroup(cmd) // after the session is closed (deferred below)
	client := mcp.NewClient(&mcp.Implementation{Name: "contextasm", Version: "1.2"}, &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{},
		ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
			if req.Params != nil { // the SDK accepts the notification without params
				m.notifyUpdated(req.Params.URI)
			}
		},
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { m.notifyRelist() },
		ToolListChangedHandler:     func(context.Context, *mcp.ToolListChangedRequest) { m.notifyTools() },
	})
	client.AddReceivingMiddleware(m.ackMiddleware)
	m.raw = &rawConn{}
	cctx, cancel := bound(ctx, m.cfg.ConnectTimeout, m.raw)
	cs, err := client.Connect(cctx, keepingTransport{t, m.raw}, nil)
	cancel()
	if err != nil {
		m.raw.close()
		return false, m.failure("connect", err, stderr)
	}
	dead := make(chan struct{})
	go func() {
		_ = cs.Wait()
		close(dead)
	}()
	defer closeSession(cs, m.raw, dead, m.cfg.RequestTimeout)

	ir := cs.InitializeResult()
	m.protocol = ir.ProtocolVersion
	caps := ir.Capabilities
	m.hasResources = caps != nil && caps.Resources != nil
	m.subscribe = m.hasResources && caps.Resources.Subscribe
	for _, e := range m.entries {
		e.subscribed = false
	}
	m.hasTools = caps != nil && caps.Tools != nil
	if err := m.sync(ctx, cs, true); err != nil {
		return false, m.failure("sync", err, stderr)
	}
	if err := m.syncTools(ctx, cs, m.hasTools); err != nil {
		return false, m.failure("sync", err, stderr)
	}
	m.st.report(m.log, Ready, nil, m.protocol)
	m.st.settleFirst()

	var tick <-chan time.Time
	if m.cfg.ListInterval > 0 {
		tk := time.NewTicker(m.cfg.ListInterval)
		defer tk.Stop()
		tick = tk.C
	}
	for {
		select {
		case <-ctx.Done():
			return true, ctx.Err()
		case <-dead:
			return true, m.failure("session", errClosed, stderr)
		case <-tick:
			if err = m.sync(ctx, cs, true); err == nil {
				err = m.syncTools(ctx, cs, m.hasTools)
			}
		case <-m.wake:
			err = m.drain(ctx, cs)
		}
		if err != nil {
			return true, m.failure("sync", err, stderr)
		}
		m.st.report(m.log, Ready, nil, m.protocol)
	}
}

// failure wraps a session-ending error, with the tail of a subprocess's
// stderr when there is one (it often says why a server died).
func (m *mcpSource) failure(op string, err error, stderr *tailBuffer) error {
	if tail := stderr.String(); tail != "" {
		return fmt.Errorf("mcpsource: %s: %s: %w (stderr: %s)", m.st.key, op, err, tail)
	}
	return fmt.Errorf("mcpsource: %s: %s: %w", m.st.key, op, err)
}

// transport makes the transport of one connection attempt, and for a
// Command the command and a tail of its stderr.
func (m *mcpSource) transport() (mcp.Transport, *exec.Cmd, *tailBuffer, error) {
	s := &m.cfg
	switch {
	case s.Transport != nil:
		t, err := s.Transport()
		return t, nil, nil, err
	case s.URL != "":
		// Never wrapped in mcp.LoggingTransport: with the SDK's logging
		// transport around it, the standalone notification stream never
		// opens.
		return &mcp.StreamableClientTransport{Endpoint: s.URL, MaxEventSize: s.MaxResponseBytes,
			HTTPClient: limitClient(s.HTTPClient, int64(s.MaxResponseBytes), &m.trips)}, nil, nil, nil
	}
	tail := &tailBuffer{}
	cmd := exec.Command(s.Command[0], s.Command[1:]...) // not CommandContext: the connect timeout must not kill a live server
	cmd.Env = s.Env
	cmd.Stderr = tail
	cmd.WaitDelay = s.TerminateDuration // a grandchild holding stderr open must not hold up Close
	ownProcessGroup(cmd)
	return &commandTransport{cmd: cmd, terminate: s.TerminateDuration, maxMessage: s.MaxResponseBytes}, cmd, tail, nil
}

// sync lists the resources and reads those that are new, changed in the
// listing or, with readAll, every one; resources no longer listed are
// forgotten. It stages into the ledger; the caller reports.
func (m *mcpSource) sync(ctx context.Context, cs *mcp.ClientSession, readAll bool) error {
	led := m.st.led
	if !m.hasResources {
		for uri, e := range m.entries {
			led.drop(e.id)
			led.problem(e.id, "")
			delete(m.entries, uri)
		}
		return nil
	}
	listed, cut, err := m.list(ctx, cs)
	if err != nil {
		return err
	}
	if cut != "" {
		led.cut(m.st.key, outcome.ReasonSourceCut, cut)
	} else {
		led.problem(m.st.key, "")
	}
	keep := make(map[string]bool, len(listed))
	for _, r := range listed {
		keep[r.URI] = true
		e, ok := m.entries[r.URI]
		changed := !ok || !sameListing(e.res, r)
		if !ok {
			e = &entry{id: RequestID(m.cfg.Name, r.URI)}
			m.entries[r.URI] = e
		}
		e.res = r
		if m.subscribe && !e.subscribed {
			if err := m.subscribeTo(ctx, cs, e); err != nil {
				return err
			}
		}
		if changed {
			e.tooLarge = false
		}
		if (readAll || changed) && !e.tooLarge {
			if err := m.read(ctx, cs, e); err != nil {
				return err
			}
		}
	}
	for uri, e := range m.entries {
		if keep[uri] {
			continue
		}
		led.drop(e.id)
		led.problem(e.id, "")
		if e.subscribed {
			rctx, cancel := bound(ctx, m.cfg.RequestTimeout, m.raw)
			_ = cs.Unsubscribe(rctx, &mcp.UnsubscribeParams{URI: uri}) // best effort
			cancel()
		}
		delete(m.entries, uri)
	}
	return nil
}

// list reads every page of resources/list, up to MaxPages pages and
// MaxResources resources. Resources without a URI, and repeats (by
// request_id), are skipped. cut says what a bound left out, if any.
func (m *mcpSource) list(ctx context.Context, cs *mcp.ClientSession) (_ []*mcp.Resource, cut string, _ error) {
	var out []*mcp.Resource
	seen := make(map[string]bool)
	cursors := make(map[string]bool)
	params := &mcp.ListResourcesParams{}
	for page := 1; ; page++ {
		rctx, cancel := bound(ctx, m.cfg.RequestTimeout, m.raw)
		trips := m.trips.Load()
		res, err := cs.ListResources(rctx, params)
		cancel()
		if err != nil {
			if m.trips.Load() != trips || frameTooLarge(err) {
				return nil, "", fmt.Errorf("resources/list: %w (%d bytes): %w", errResponseTooLarge, m.cfg.MaxResponseBytes, err)
			}
			return nil, "", fmt.Errorf("resources/list: %w", err)
		}
		for _, r := range res.Resources {
			if r == nil || r.URI == "" {
				continue
			}
			id := RequestID(m.cfg.Name, r.URI)
			if seen[id] {
				continue
			}
			seen[id] = true
			if len(out) == m.cfg.MaxResources {
				m.log.Warn("resource list cut", "max_resources", m.cfg.MaxResources)
				return out, fmt.Sprintf("resources/list holds more than MaxResources (%d) resources: those past it are not collected", m.cfg.MaxResources), nil
			}
			out = append(out, r)
		}
		// The SDK cannot tell an absent nextCursor from an empty one (which
		// 2026-07-28 allows as a real cursor): both end the list here.
		next := res.NextCursor
		switch {
		case next == "":
			return out, "", nil
		case cursors[next]:
			m.log.Warn("resource list cursor repeats; list ends here", "pages", page)
			return out, fmt.Sprintf("resources/list repeated a cursor after %d pages: the list ends there, resources past it are not collected", page), nil
		case page == m.cfg.MaxPages:
			m.log.Warn("resource list cut", "max_pages", m.cfg.MaxPages)
			return out, fmt.Sprintf("resources/list has more than MaxPages (%d) pages: resources past them are not collected", m.cfg.MaxPages), nil
		}
		cursors[next] = true
		params = &mcp.ListResourcesParams{Cursor: next}
	}
}

// subscribeTo subscribes to e's resource. A refusal is logged and left to
// the periodic re-sync; a transport failure ends the session.
//
// Under 2025-11-25 the subscription is registered when Subscribe returns,
// so the read that follows it (sync always reads a resource after
// subscribing to it) sees every change that is not notified. Under
// 2026-07-28 Subscribe returns before the server registers it (the
// subscription is registered when the server acknowledges it on the
// subscriptions/listen stream): the acknowledgement queues a re-read
// (ackMiddleware).
func (m *mcpSource) subscribeTo(ctx context.Context, cs *mcp.ClientSession, e *entry) error {
	rctx, cancel := bound(ctx, m.cfg.RequestTimeout, m.raw)
	err := cs.Subscribe(rctx, &mcp.SubscribeParams{URI: e.res.URI})
	cancel()
	var werr *jsonrpc.Error
	switch {
	case err == nil:
		e.subscribed = true
	case errors.As(err, &werr):
		m.log.Info("subscribe refused", "uri", e.res.URI, "error", err)
	default:
		return fmt.Errorf("resources/subscribe %s: %w", e.res.URI, err)
	}
	return nil
}

// read reads e's resource and stages the outcome: a block, or a problem.
// Only a transport failure is returned (it ends the session): -32602 and
// -32002 mean the resource is gone (its block is dropped), other JSON-RPC
// errors and empty contents are transient (the last good content is held).
func (m *mcpSource) read(ctx context.Context, cs *mcp.ClientSession, e *entry) error {
	led := m.st.led
	rctx, cancel := bound(ctx, m.cfg.RequestTimeout, m.raw)
	trips := m.trips.Load()
	rr, err := cs.ReadResource(rctx, &mcp.ReadResourceParams{URI: e.res.URI})
	cancel()
	if m.trips.Load() != trips || frameTooLarge(err) {
		// The response was cut: the session is broken, and this resource
		// is not read again until it changes.
		m.log.Warn("response too large", "uri", e.res.URI, "max_response_bytes", m.cfg.MaxResponseBytes)
		e.tooLarge = true
		led.hold(e.id)
		led.cut(e.id, outcome.ReasonSourceUnavailable, fmt.Sprintf("the response to resources/read is over MaxResponseBytes (%d bytes): not read; the last good content is kept", m.cfg.MaxResponseBytes))
		return fmt.Errorf("resources/read %s: %w (%d bytes)", e.res.URI, errResponseTooLarge, m.cfg.MaxResponseBytes)
	}
	if err != nil {
		var werr *jsonrpc.Error
		if !errors.As(err, &werr) {
			return fmt.Errorf("resources/read %s: %w", e.res.URI, err)
		}
		m.log.Info("read failed", "uri", e.res.URI, "code", werr.Code, "error", werr.Message)
		if werr.Code == jsonrpc.CodeInvalidParams || werr.Code == codeResourceNotFound {
			led.drop(e.id)
		} else {
			led.hold(e.id)
		}
		led.problem(e.id, outcome.ReasonSourceUnavailable)
		return nil
	}
	d, blobs, err := Ingest(m.cfg, e.res, rr)
	switch {
	case err == nil && !led.fits(d.RequestID, len(d.Content), m.cfg.MaxSourceBytes):
		m.log.Warn("source over its byte bound; block not updated", "uri", e.res.URI,
			"bytes", len(d.Content), "max_source_bytes", m.cfg.MaxSourceBytes)
		led.hold(e.id)
		led.cut(e.id, outcome.ReasonSourceUnavailable, fmt.Sprintf("content of %d bytes would take the source past MaxSourceBytes (%d): not updated; the last good content is kept", len(d.Content), m.cfg.MaxSourceBytes))
	case err == nil:
		led.put(d, time.Now())
		if blobs > 0 {
			led.problem(e.id, outcome.ReasonBinary)
		} else {
			led.problem(e.id, "")
		}
	case errors.Is(err, ErrBinary):
		led.drop(e.id)
		led.problem(e.id, outcome.ReasonBinary)
	case errors.Is(err, ErrEmpty):
		m.log.Info("read returned empty contents", "uri", e.res.URI)
		led.hold(e.id)
		led.problem(e.id, outcome.ReasonSourceUnavailable)
	case errors.Is(err, ErrTooLarge):
		m.log.Warn("resource not declared", "uri", e.res.URI, "error", err)
		led.drop(e.id)
		led.cut(e.id, outcome.ReasonSourceUnavailable, fmt.Sprintf("content over MaxContentBytes (%d bytes): not collected", m.cfg.MaxContentBytes))
	default: // not a valid block
		m.log.Info("resource not declared", "uri", e.res.URI, "error", err)
		led.drop(e.id)
		led.problem(e.id, outcome.ReasonSourceUnavailable)
	}
	return nil
}

// drain handles the queued notifications: a list change re-syncs (reading
// what is new or changed), an update re-reads the resource. Updates of URIs
// not listed are ignored: a list change announces new resources.
func (m *mcpSource) drain(ctx context.Context, cs *mcp.ClientSession) error {
	m.mu.Lock()
	updated, relist, resync, tools := m.updated, m.relist, m.resync, m.relistTools
	m.updated, m.updatedBytes, m.relist, m.resync, m.relistTools = nil, 0, false, false, false
	m.mu.Unlock()
	if tools {
		if err := m.syncTools(ctx, cs, m.hasTools); err != nil {
			return err
		}
	}
	if resync {
		// Too many updates to track one by one: read everything.
		for _, e := range m.entries {
			e.tooLarge = false
		}
		return m.sync(ctx, cs, true)
	}
	if relist {
		if err := m.sync(ctx, cs, false); err != nil {
			return err
		}
	}
	for _, uri := range slices.Sorted(maps.Keys(updated)) {
		if e, ok := m.entries[uri]; ok {
			e.tooLarge = false
			if err := m.read(ctx, cs, e); err != nil {
				return err
			}
		}
	}
	return nil
}

// notifyUpdated queues a re-read of uri. Past MaxResources URIs or
// maxPendingBytes of them, it drops the queue for one full re-read: an
// update of a URI never listed is ignored anyway, and a flood of them
// must not grow memory.
func (m *mcpSource) notifyUpdated(uri string) {
	m.mu.Lock()
	switch {
	case m.resync, m.updated[uri]:
	case len(m.updated) >= m.cfg.MaxResources || m.updatedBytes+len(uri) > maxPendingBytes:
		m.updated, m.updatedBytes, m.resync = nil, 0, true
	default:
		if m.updated == nil {
			m.updated = make(map[string]bool)
		}
		m.updated[uri] = true
		m.updatedBytes += len(uri)
	}
	m.mu.Unlock()
	m.poke()
}

func (m *mcpSource) notifyRelist() {
	m.mu.Lock()
	m.relist = true
	m.mu.Unlock()
	m.poke()
}

// poke wakes run without ever blocking the SDK's goroutine.
func (m *mcpSource) poke() {
	select {
	case m.wake <- struct{}{}:
	default:
	}
}

// ackMiddleware queues a re-read of the resources a 2026-07-28 server
// acknowledges subscriptions to: only from then on are updates notified.
func (m *mcpSource) ackMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method == methodSubscriptionsAck {
			if p, ok := req.GetParams().(*mcp.SubscriptionsAcknowledgedParams); ok {
				for _, uri := range p.Notifications.ResourceSubscriptions {
					m.notifyUpdated(uri)
				}
			}
		}
		return next(ctx, method, req)
	}
}

// sameListing reports whether two list entries would make the same block.
func sameListing(a, b *mcp.Resource) bool {
	if a.MIMEType != b.MIMEType {
		return false
	}
	if (a.Annotations == nil) != (b.Annotations == nil) {
		return false
	}
	if a.Annotations == nil {
		return true
	}
	x, y := a.Annotations, b.Annotations
	if x.Priority != y.Priority || x.LastModified != y.LastModified || len(x.Audience) != len(y.Audience) {
		return false
	}
	for i := range x.Audience {
		if x.Audience[i] != y.Audience[i] {
			return false
		}
	}
	return true
}

// tailBuffer keeps the last line of what a subprocess writes to stderr,
// at most tailMax bytes. A nil *tailBuffer is empty.
type tailBuffer struct {
	mu  sync.Mutex
	buf []byte
}

const tailMax = 512

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > 4*tailMax {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-tailMax:]...)
	}
	return len(p), nil
}

// String returns the last non-empty line, trimmed to tailMax bytes.
func (t *tailBuffer) String() string {
	if t == nil {
		return ""
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	s := strings.TrimSpace(string(t.buf))
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = strings.TrimSpace(s[i+1:])
	}
	if len(s) > tailMax {
		s = s[len(s)-tailMax:]
	}
	return strings.ToValidUTF8(s, "")
}
