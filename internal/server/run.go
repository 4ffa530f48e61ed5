package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"time"
)

// DefaultAddr is where serve listens without --listen: loopback only.
const DefaultAddr = "127.0.0.1:7411"

// ErrExposed means a server without API keys was asked to listen beyond
// loopback: anyone who reached it would hold every tenant's authority.
var ErrExposed = errors.New("server: no API keys, and the address is not loopback")

// ErrAddress is wrapped by the errors about a listen address that is
// not one.
var ErrAddress = errors.New("server: invalid listen address")

// Listen opens addr: host:port, or unix:/path for a Unix socket (created
// 0600: the socket's permissions are its authentication). open says the
// server has no keys; it may then listen only on loopback or a socket.
func Listen(addr string, open bool) (net.Listener, error) {
	if path, ok := strings.CutPrefix(addr, "unix:"); ok {
		path = strings.TrimPrefix(path, "//")
		if path == "" {
			return nil, fmt.Errorf("%w: --listen unix: needs a path (unix:/run/contextasm.sock)", ErrAddress)
		}
		// A socket left by a server that died is in the way; anything
		// else at the path is not ours to remove.
		if fi, err := os.Lstat(path); err == nil && fi.Mode()&os.ModeSocket != 0 {
			if c, err := net.Dial("unix", path); err == nil {
				c.Close()
				return nil, fmt.Errorf("server: %s: a server is listening there already", path)
			}
			os.Remove(path)
		}
		ln, err := net.Listen("unix", path)
		if err != nil {
			return nil, fmt.Errorf("server: %w", err)
		}
		if err := os.Chmod(path, 0o600); err != nil {
			ln.Close()
			return nil, fmt.Errorf("server: %w", err)
		}
		return ln, nil
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("%w: --listen %q: want host:port or unix:/path: %v", ErrAddress, addr, err)
	}
	if open && !loopback(host) {
		return nil, fmt.Errorf("%w: %q (give --keys FILE or CONTEXTASM_KEYS, or listen on 127.0.0.1 or a Unix socket)", ErrExposed, addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	return ln, nil
}

// loopback reports whether host names only this machine.
func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Run serves on ln until ctx is done, then shuts down gracefully: it stops
// accepting, answers the requests in flight (for at most ShutdownGrace),
// flushes every tenant's learned state to its store and closes the
// stores. It returns what could not be flushed.
func (s *Server) Run(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{
		Handler:           s.handler,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       s.cfg.RequestTimeout,
		WriteTimeout:      s.cfg.RequestTimeout + 5*time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          nil,
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	var err error
	select {
	case err = <-served:
	case <-ctx.Done():
		s.ready.Store(false)
		s.cfg.Log.Info("shutting down: answering the requests in flight")
		grace, cancel := context.WithTimeout(context.Background(), s.cfg.ShutdownGrace)
		err = srv.Shutdown(grace)
		cancel()
		<-served
	}
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	s.cfg.Log.Info("shutting down: flushing the learned state")
	return errors.Join(err, s.Close())
}
