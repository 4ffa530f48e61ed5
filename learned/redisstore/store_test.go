//go:build unix

package redisstore_test

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/contextasm/contextasm/internal/redistest"
	"github.com/contextasm/contextasm/internal/storetest"
	"github.com/contextasm/contextasm/learned"
	"github.com/contextasm/contextasm/learned/redisstore"
)

var prefixes atomic.Int64

// open returns a store under a prefix of its own on srv.
func open(t testing.TB, srv *redistest.Server, query ...string) *redisstore.Store {
	t.Helper()
	q := fmt.Sprintf("prefix=t%d", prefixes.Add(1))
	if len(query) > 0 {
		q += "&" + strings.Join(query, "&")
	}
	s, err := redisstore.Open(srv.URL(q))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestConformance(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	storetest.Run(t, func(t *testing.T) learned.Store { return open(t, srv) })
}

// A reader further behind than the log reads the whole state; one in
// another epoch (the data was lost and written again) too.
func TestChangesFallBackToTheWholeState(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	s, err := redisstore.Open(srv.URL("prefix=short"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	batch := func(seq uint64) *learned.Batch {
		return &learned.Batch{Writer: "w", Seq: seq, Trust: []learned.TrustDelta{{ID: "a", Base: 0.1, Add: 0.001, Ceiling: 0.99}}}
	}
	v1, err := s.Apply(ctx, batch(1))
	if err != nil {
		t.Fatal(err)
	}
	// Trim the log by hand to one entry, as MAXLEN would after many writes.
	c := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer c.Close()
	for seq := uint64(2); seq <= 5; seq++ {
		if _, err := s.Apply(ctx, batch(seq)); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.XTrimMaxLen(ctx, "{short}:log", 1).Err(); err != nil {
		t.Fatal(err)
	}
	u, err := s.Changes(ctx, v1, "w")
	if err != nil || u.Full == nil || u.Acked != 5 || u.Full.Trust["a"] != 0.105 {
		t.Fatalf("Changes from behind the log = %+v, %v; want the whole state", u, err)
	}
	// The data is lost (FLUSHALL, as a restart without persistence) and
	// written again up to the same version number: another epoch.
	v5 := u.Version
	if err := c.FlushAll(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	for seq := uint64(1); seq <= 5; seq++ {
		if _, err := s.Apply(ctx, &learned.Batch{Writer: "w2", Seq: seq, Heat: []learned.HeatDelta{{ID: "b", Heat: learned.Heat{Refs: 1}}}}); err != nil {
			t.Fatal(err)
		}
	}
	u, err = s.Changes(ctx, v5, "w")
	if err != nil || u.Full == nil || u.Version.N != 5 || u.Version.Epoch == v5.Epoch || len(u.Full.Trust) != 0 || u.Full.Heat["b"].Refs != 5 {
		t.Fatalf("Changes across epochs = %+v, %v; want the new epoch's whole state", u, err)
	}
}

// A server out of reach is learned.ErrUnavailable, within the context's
// deadline; a wrong password is not (it is a mistake to report, not to
// wait out).
func TestUnavailableAndMisconfigured(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{Args: []string{"--requirepass", "s3cret"}})
	ctx := context.Background()
	b := &learned.Batch{Writer: "w", Seq: 1, Heat: []learned.HeatDelta{{ID: "a", Heat: learned.Heat{Refs: 1}}}}

	good, _ := redisstore.Open("redis://:s3cret@" + srv.Addr + "/0")
	defer good.Close()
	if _, err := good.Apply(ctx, b); err != nil {
		t.Fatalf("with the password: %v", err)
	}
	bad, _ := redisstore.Open("redis://:wrong@" + srv.Addr + "/0")
	defer bad.Close()
	_, err := bad.Apply(ctx, b)
	if err == nil || errors.Is(err, learned.ErrUnavailable) || strings.Contains(err.Error(), "wrong@") {
		t.Errorf("wrong password: %v; want an error that is not ErrUnavailable", err)
	}
	srv.Kill()
	down, _ := redisstore.Open("redis://:s3cret@" + srv.Addr + "/0")
	defer down.Close()
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	start := time.Now()
	if _, err := down.Changes(ctx, learned.Version{}, "w"); !errors.Is(err, learned.ErrUnavailable) {
		t.Errorf("server down: %v; want ErrUnavailable", err)
	}
	if time.Since(start) > 30*time.Second {
		t.Errorf("a refused connection took %v", time.Since(start))
	}
}

// An ACL user and TLS settings go to the client through the URL.
func TestACLUser(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	admin := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer admin.Close()
	if err := admin.Do(context.Background(), "ACL", "SETUSER", "agent", "on", ">pw", "~{fleet}:*", "&{fleet}:*", "+@all").Err(); err != nil {
		t.Fatal(err)
	}
	s, err := redisstore.Open("redis://agent:pw@" + srv.Addr + "/0?prefix=fleet")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	storetest.Full(t, s)
	if _, err := s.Apply(context.Background(), &learned.Batch{Writer: "w", Seq: 1, Heat: []learned.HeatDelta{{ID: "a", Heat: learned.Heat{Refs: 1}}}}); err != nil {
		t.Fatalf("ACL user on its own keys: %v", err)
	}
	other, _ := redisstore.Open("redis://agent:pw@" + srv.Addr + "/0?prefix=other")
	defer other.Close()
	if _, err := other.Apply(context.Background(), &learned.Batch{Writer: "w", Seq: 1, Heat: []learned.HeatDelta{{ID: "a", Heat: learned.Heat{Refs: 1}}}}); err == nil {
		t.Error("the ACL user wrote keys outside its pattern")
	}
}

// TLS passes through the client's options: a client trusting the test's
// CA stores and reads over TLS; rediss:// in a URL speaks TLS too (here
// with skip_verify, the test's CA not being the system's); a client that
// trusts nothing of it fails, and not as an outage.
func TestTLS(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{TLS: true})
	b := &learned.Batch{Writer: "w", Seq: 1, Heat: []learned.HeatDelta{{ID: "a", Heat: learned.Heat{Refs: 1}}}}
	client := redis.NewClient(&redis.Options{Addr: srv.TLSAddr, TLSConfig: &tls.Config{RootCAs: srv.CAs, MinVersion: tls.VersionTLS12}, ContextTimeoutEnabled: true})
	defer client.Close()
	s, err := redisstore.New(client, redisstore.Config{Prefix: "tls"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Apply(context.Background(), b); err != nil {
		t.Fatalf("over TLS: %v", err)
	}
	byURL, err := redisstore.Open("rediss://" + srv.TLSAddr + "/0?prefix=tls&skip_verify=true")
	if err != nil {
		t.Fatal(err)
	}
	defer byURL.Close()
	if st, _ := storetest.Full(t, byURL); st.Heat["a"].Refs != 1 {
		t.Errorf("rediss:// read %+v", st.Heat)
	}
	plain, _ := redisstore.Open("redis://" + srv.TLSAddr + "/0?prefix=tls")
	defer plain.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if _, err := plain.Changes(ctx, learned.Version{}, ""); err == nil {
		t.Error("a plain connection to the TLS port worked")
	}
	untrusting, _ := redisstore.Open("rediss://" + srv.TLSAddr + "/0?prefix=tls")
	defer untrusting.Close()
	// Its own context: the refusal must not be mistaken for an outage
	// because the plain attempt used up the time.
	ctx, cancel = context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := untrusting.Changes(ctx, learned.Version{}, ""); err == nil || errors.Is(err, learned.ErrUnavailable) {
		t.Errorf("a server certificate of an unknown CA: %v; want an error that is not an outage", err)
	}
}

func TestParseURL(t *testing.T) {
	opts, cfg, err := redisstore.ParseURL("rediss://u:p@example.test:6380/3?prefix=agents&dial_timeout=2s")
	if err != nil {
		t.Fatal(err)
	}
	if opts.Addr != "example.test:6380" || opts.Username != "u" || opts.Password != "p" || opts.DB != 3 ||
		opts.TLSConfig == nil || opts.TLSConfig.ServerName != "example.test" || opts.DialTimeout != 2*time.Second ||
		!opts.ContextTimeoutEnabled || cfg.Prefix != "agents" {
		t.Errorf("ParseURL: %+v, %+v", opts, cfg)
	}
	for _, bad := range []string{"redis://h:1/0?bogus=1", "http://h/0", "redis://h:1/x"} {
		if _, _, err := redisstore.ParseURL(bad); !errors.Is(err, redisstore.ErrConfig) {
			t.Errorf("ParseURL(%q) = %v, want ErrConfig", bad, err)
		}
	}
	if _, _, err := redisstore.ParseURL("redis://u:hunter2@h:1/0?bogus=1"); err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("error shows the password: %v", err)
	}
	if _, err := redisstore.New(nil, redisstore.Config{Prefix: "a{b}"}); !errors.Is(err, redisstore.ErrConfig) {
		t.Errorf("a prefix with braces: %v", err)
	}
}

// TestPrefixRefusesGlobs checks that a prefix holding a glob character is
// refused, by New and through a URL: the ACL recipe ~{PREFIX}:* would
// otherwise grant more than the prefix's keys (a prefix of "*" granted
// every tenant's).
func TestPrefixRefusesGlobs(t *testing.T) {
	for _, p := range []string{"*", "a*", "t?", "[ab]", "x]", `a\b`, "{x"} {
		_, err := redisstore.New(nil, redisstore.Config{Prefix: p})
		if !errors.Is(err, redisstore.ErrConfig) || !strings.Contains(err.Error(), strconv.Quote(p)) {
			t.Errorf("prefix %q: got %v, want ErrConfig naming it", p, err)
		}
	}
	if _, err := redisstore.Open("redis://127.0.0.1:1/0?prefix=" + url.QueryEscape("*")); !errors.Is(err, redisstore.ErrConfig) || !strings.Contains(err.Error(), "glob") {
		t.Errorf(`prefix "*" in a URL: got %v`, err)
	}
	if _, err := redisstore.New(nil, redisstore.Config{Prefix: "tenant-a.loans_2"}); err != nil {
		t.Errorf("a plain prefix: %v", err)
	}
}
