package mcpsource

import (
	"context"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The SDK bounds a call's wait for its response by the call's context, but
// not the write of the request: over a pipe, a server that stops reading
// its input blocks the write for ever. Its Close waits for every call and
// notification in flight, so it blocks too (and with it Collector.Close).
// A session therefore keeps the connection its transport made, and closes
// it under the SDK when a request is stuck past its deadline or closing
// takes longer than RequestTimeout: the blocked write fails, and the
// session with it.

// stuckGrace is how long a request may outlive its deadline before it is
// taken to be stuck in a write. The SDK returns at the deadline otherwise.
const stuckGrace = 500 * time.Millisecond

// rawConn is the connection under one session, closed at most once.
type rawConn struct {
	mu     sync.Mutex
	conn   mcp.Connection
	closed bool // closed before the transport had made conn, or since
}

// keep records conn, closing it at once if the session gave up already.
func (r *rawConn) keep(conn mcp.Connection) {
	r.mu.Lock()
	r.conn = conn
	closed := r.closed
	r.mu.Unlock()
	if closed {
		_ = conn.Close()
	}
}

func (r *rawConn) close() {
	r.mu.Lock()
	conn := r.conn
	r.closed = true
	r.mu.Unlock()
	if conn != nil {
		_ = conn.Close()
	}
}

// keepingTransport hands the SDK the connection its transport makes,
// unchanged (the SDK looks for optional methods on it), and keeps it.
type keepingTransport struct {
	mcp.Transport
	raw *rawConn
}

func (t keepingTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	conn, err := t.Transport.Connect(ctx)
	if err == nil {
		t.raw.keep(conn)
	}
	return conn, err
}

// bound returns ctx with timeout d for one request or handshake; if the
// call has not returned stuckGrace after that context ends, raw is
// closed. The returned func must be called when the call returns.
func bound(ctx context.Context, d time.Duration, raw *rawConn) (context.Context, context.CancelFunc) {
	rctx, cancel := context.WithTimeout(ctx, d)
	returned := make(chan struct{})
	go func() {
		select {
		case <-returned:
			return
		case <-rctx.Done():
		}
		closeUnless(returned, stuckGrace, raw)
	}()
	var once sync.Once
	return rctx, func() {
		once.Do(func() {
			close(returned)
			cancel()
		})
	}
}

// closeSession closes cs, and raw under it if that takes longer than
// grace; then it waits for the session's end (dead).
func closeSession(cs *mcp.ClientSession, raw *rawConn, dead <-chan struct{}, grace time.Duration) {
	done := make(chan struct{})
	go func() {
		_ = cs.Close()
		close(done)
	}()
	closeUnless(done, grace, raw)
	<-done
	<-dead
}

// closeUnless closes raw unless done is closed within grace: the
// connection under a call the SDK does not end by itself.
func closeUnless(done <-chan struct{}, grace time.Duration, raw *rawConn) {
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		raw.close()
	}
}
