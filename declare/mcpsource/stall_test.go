package mcpsource_test

import (
	"context"
	"io"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/contextasm/contextasm/declare/mcpsource"
)

// stallingConn is the server's side of a connection that stops reading
// once stall is closed: a peer that no longer reads its input, which no
// real SDK server does on demand (it is the fault injected here). Its
// next message is still read (a Read in progress ends); the one after
// is taken off the pipe by the transport's reader, which then blocks, so
// the client's third write blocks with it.
type stallingConn struct {
	mcp.Connection
	stall  <-chan struct{}
	closed chan struct{}
	once   sync.Once
}

func (c *stallingConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case <-c.stall:
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-c.closed:
			return nil, io.EOF
		}
	default:
	}
	return c.Connection.Read(ctx)
}

func (c *stallingConn) Close() error {
	c.once.Do(func() { close(c.closed) })
	return c.Connection.Close()
}

// stallingTransport makes a stallingConn and keeps it in *conn, for the
// test to close: once stalled, it no longer sees the client go.
type stallingTransport struct {
	mcp.Transport
	stall <-chan struct{}
	conn  **stallingConn
}

func (t stallingTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	*t.conn = &stallingConn{Connection: c, stall: t.stall, closed: make(chan struct{})}
	return *t.conn, nil
}

// A server that stops reading its input blocks the collector's writes,
// which no request timeout can end (the SDK does not bound a write by its
// context), and the SDK's Close, which waits for them. The collector
// closes such a connection under the SDK: the session fails, the server
// is reported, the collector reconnects, and Close returns.
func TestServerStopsReading(t *testing.T) {
	srv := newServer("", nil)
	addDoc(srv, &mcp.Resource{URI: "test://a", Name: "a"}, "a")
	stall := make(chan struct{})
	var stalled *stallingConn // written by the first attempt, read after Close
	var attempts atomic.Int32
	transport := func() (mcp.Transport, error) {
		ct, st := mcp.NewInMemoryTransports()
		var server mcp.Transport = st
		if attempts.Add(1) == 1 { // only the first connection stalls
			server = stallingTransport{st, stall, &stalled}
		}
		if _, err := srv.Connect(context.Background(), server, nil); err != nil {
			return nil, err
		}
		return ct, nil
	}
	sink := newSink(t)
	col, err := mcpsource.Start(sink, mcpsource.Config{Servers: []mcpsource.Server{fast(mcpsource.Server{
		Name: "s", Transport: transport, RequestTimeout: 300 * time.Millisecond, ListInterval: 20 * time.Millisecond})}})
	if err != nil {
		t.Fatal(err)
	}
	closed := make(chan struct{})
	defer func() {
		go func() {
			col.Close()
			close(closed)
		}()
		select {
		case <-closed:
			stalled.Close()
		case <-time.After(20 * time.Second):
			t.Fatal("Close did not return: the collector is stuck on a server that stopped reading")
		}
	}()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if err := col.WaitSynced(ctx); err != nil {
		t.Fatal(err)
	}
	close(stall)
	eventually(t, "a second connection", func() bool { return attempts.Load() >= 2 })
	eventually(t, "recovery on the second connection", func() bool {
		return col.Status()[0].State == mcpsource.Ready && content(sink, "mcp:s:test://a") == "a"
	})
}
