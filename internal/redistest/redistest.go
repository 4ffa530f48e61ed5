//go:build unix

package redistest

import (
	"bufio"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// Options configure a server.
type Options struct {
	// Durable turns on the append-only file with an fsync per write, so
	// that a write the server acknowledged survives kill -9.
	Durable bool
	// Args are more configuration, as redis-server flags.
	Args []string
	// TLS also listens with TLS on a port of its own (Server.TLSAddr),
	// with a certificate for 127.0.0.1 from a CA of the test's own
	// (Server.CAs). Clients need no certificate.
	TLS bool
}

// Server is a redis-server of a test's own.
type Server struct {
	t testing.TB
	// Addr is the server's plain (not TLS) address, 127.0.0.1:Port.
	Addr string
	// Port is the port of Addr.
	Port int
	// TLSAddr and CAs are set with Options.TLS.
	TLSAddr string
	// CAs holds the test's own CA, which signed the TLS certificate: the
	// RootCAs for a client of TLSAddr.
	CAs  *x509.CertPool
	dir  string
	args []string
	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
}

var skipOnce sync.Once

// Binary returns the path of redis-server, or skips t (fails it under
// CI=true) when there is none.
func Binary(t testing.TB) string {
	t.Helper()
	path, err := exec.LookPath("redis-server")
	if err == nil {
		return path
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("redis-server not found (%v): CI runs the Redis tests against a real server; .ci/run installs it", err)
	}
	skipOnce.Do(func() {
		fmt.Fprintln(os.Stderr, "\n*** redis-server not found: the Redis tests are SKIPPED. Install it (apt-get install -y redis-server) to run them. ***")
	})
	t.Skip("redis-server not found: Redis tests skipped")
	return ""
}

// Start starts a server and stops it when the test ends.
func Start(t testing.TB, opts Options) *Server {
	t.Helper()
	bin := Binary(t)
	s := &Server{t: t, dir: t.TempDir()}
	var err error
	for range 5 { // another process may take the free port first
		if s.Port, err = freePort(); err != nil {
			t.Fatal(err)
		}
		s.Addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(s.Port))
		s.args = []string{"--port", strconv.Itoa(s.Port), "--bind", "127.0.0.1", "--dir", s.dir,
			"--save", "", "--daemonize", "no", "--logfile", filepath.Join(s.dir, "redis.log"),
			"--enable-debug-command", "local"}
		if opts.Durable {
			s.args = append(s.args, "--appendonly", "yes", "--appendfsync", "always")
		} else {
			s.args = append(s.args, "--appendonly", "no")
		}
		if opts.TLS {
			tlsArgs, err := s.tls()
			if err != nil {
				t.Fatal(err)
			}
			s.args = append(s.args, tlsArgs...)
		}
		s.args = append(s.args, opts.Args...)
		if err = s.start(bin); err == nil {
			t.Cleanup(s.stop)
			return s
		}
	}
	t.Fatalf("redis-server did not start: %v\n%s", err, s.log())
	return nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func (s *Server) start(bin string) error {
	cmd := exec.Command(bin, s.args...)
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	s.mu.Lock()
	s.cmd, s.done = cmd, done
	s.mu.Unlock()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-done:
			return fmt.Errorf("redis-server exited: %v", cmd.ProcessState)
		default:
		}
		if ping(s.Addr) {
			return nil
		}
		time.Sleep(10 * time.Millisecond)
	}
	cmd.Process.Kill()
	<-done
	return fmt.Errorf("redis-server on %s did not answer PING", s.Addr)
}

// ping reports whether a server answers PING on addr.
func ping(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
	if err != nil {
		return false
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(500 * time.Millisecond))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return false
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	// A server that wants a password first answers too.
	return err == nil && (strings.HasPrefix(line, "+PONG") || strings.HasPrefix(line, "-NOAUTH"))
}

// URL returns redis://127.0.0.1:PORT/0 with the query, if any.
func (s *Server) URL(query string) string {
	u := "redis://" + s.Addr + "/0"
	if query != "" {
		u += "?" + query
	}
	return u
}

// Pid returns the server's process id.
func (s *Server) Pid() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cmd.Process.Pid
}

// Kill kills the server with SIGKILL and waits for it to be gone.
func (s *Server) Kill() {
	s.mu.Lock()
	cmd, done := s.cmd, s.done
	s.mu.Unlock()
	cmd.Process.Signal(syscall.SIGCONT) // a paused server dies too
	cmd.Process.Kill()
	<-done
}

// Restart starts the server again on the same port, with the same
// directory (so a durable server reloads what it had).
func (s *Server) Restart() {
	s.t.Helper()
	bin := Binary(s.t)
	var err error
	for range 50 { // the port may take a moment to be free again
		if err = s.start(bin); err == nil {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	s.t.Fatalf("redis-server did not restart on %s: %v\n%s", s.Addr, err, s.log())
}

// Pause stops the server's process (SIGSTOP): connections are accepted by
// the kernel but nothing is answered, as with a server stuck.
func (s *Server) Pause() { s.signal(syscall.SIGSTOP) }

// Resume continues a paused server (SIGCONT).
func (s *Server) Resume() { s.signal(syscall.SIGCONT) }

func (s *Server) signal(sig os.Signal) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cmd.Process.Signal(sig)
}

func (s *Server) stop() {
	s.mu.Lock()
	cmd, done := s.cmd, s.done
	s.mu.Unlock()
	select {
	case <-done:
		return
	default:
	}
	cmd.Process.Signal(syscall.SIGCONT)
	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		cmd.Process.Kill()
		<-done
	}
}

func (s *Server) log() string {
	b, _ := os.ReadFile(filepath.Join(s.dir, "redis.log"))
	return string(b)
}

// Proxy forwards connections to a server and can lose the replies to
// one command: the fault of an acknowledgement lost on the way (the server
// applied the command, the client never hears it), which a real server
// cannot be made to produce on demand.
type Proxy struct {
	// Addr is the proxy's address, for clients to dial in the server's
	// place (see URL).
	Addr string
	ln   net.Listener
	drop atomic.Pointer[string]
	mu   sync.Mutex
	open []net.Conn
}

// Proxy starts a proxy to the server, closed when the test ends.
func (s *Server) Proxy() *Proxy {
	s.t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		s.t.Fatal(err)
	}
	p := &Proxy{Addr: ln.Addr().String(), ln: ln}
	go p.serve(s.Addr)
	s.t.Cleanup(p.close)
	return p
}

// URL returns redis://PROXY/0 with the query, if any.
func (p *Proxy) URL(query string) string {
	u := "redis://" + p.Addr + "/0"
	if query != "" {
		u += "?" + query
	}
	return u
}

// DropReplies makes the proxy discard the server's replies on a
// connection whose last request holds command (as sent: "evalsha"); ""
// stops it.
func (p *Proxy) DropReplies(command string) { p.drop.Store(&command) }

func (p *Proxy) serve(target string) {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		up, err := net.Dial("tcp", target)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		p.open = append(p.open, c, up)
		p.mu.Unlock()
		var last atomic.Pointer[string]
		go func() {
			defer up.Close()
			buf := make([]byte, 32<<10)
			for {
				n, err := c.Read(buf)
				if n > 0 {
					req := string(buf[:n])
					last.Store(&req)
					up.Write(buf[:n])
				}
				if err != nil {
					return
				}
			}
		}()
		go func() {
			defer c.Close()
			buf := make([]byte, 32<<10)
			for {
				n, err := up.Read(buf)
				if n > 0 && !p.dropping(last.Load()) {
					c.Write(buf[:n])
				}
				if err != nil {
					return
				}
			}
		}()
	}
}

func (p *Proxy) dropping(req *string) bool {
	cmd := p.drop.Load()
	return cmd != nil && *cmd != "" && req != nil && strings.Contains(*req, *cmd)
}

func (p *Proxy) close() {
	p.ln.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.open {
		c.Close()
	}
}

// tls writes a CA and a server certificate for 127.0.0.1 into the
// server's directory and returns the flags that serve TLS with them.
func (s *Server) tls() ([]string, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	s.TLSAddr = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	ca := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "redistest CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	caCert, _ := x509.ParseCertificate(caDER)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	leaf := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	leafDER, err := x509.CreateCertificate(rand.Reader, leaf, caCert, &key.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, err
	}
	files := map[string]*pem.Block{
		"ca.pem":   {Type: "CERTIFICATE", Bytes: caDER},
		"cert.pem": {Type: "CERTIFICATE", Bytes: leafDER},
		"key.pem":  {Type: "EC PRIVATE KEY", Bytes: keyDER},
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(s.dir, name), pem.EncodeToMemory(b), 0o600); err != nil {
			return nil, err
		}
	}
	s.CAs = x509.NewCertPool()
	s.CAs.AddCert(caCert)
	return []string{"--tls-port", strconv.Itoa(port),
		"--tls-cert-file", filepath.Join(s.dir, "cert.pem"), "--tls-key-file", filepath.Join(s.dir, "key.pem"),
		"--tls-ca-cert-file", filepath.Join(s.dir, "ca.pem"), "--tls-auth-clients", "no"}, nil
}
