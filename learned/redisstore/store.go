package redisstore

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/contextasm/contextasm/learned"
	"github.com/redis/go-redis/v9"
)

// DefaultPrefix is the key prefix when Config.Prefix is empty.
const DefaultPrefix = "contextasm"

// DefaultLogLength is how many changes the log keeps at least when
// Config.LogLength is zero: a host further behind than that reads the
// whole state once.
const DefaultLogLength = 100_000

// Config configures a Store. Each zero field means its default.
type Config struct {
	// Prefix starts every key, in braces so that all of them hash to one
	// slot of a Redis Cluster: {PREFIX}:v, {PREFIX}:trust, … (DefaultPrefix).
	// Hosts sharing learned state use one prefix; different prefixes in one
	// database are independent. Braces and the glob characters * ? [ ] \
	// are refused (ErrConfig): the prefix goes into ACL patterns.
	Prefix string
	// LogLength is how many changes the log keeps, at least
	// (DefaultLogLength).
	LogLength int64
	// DedupWindow is how long a writer's last batch is remembered, so that
	// a resend within it is not applied twice (learned.DedupWindow).
	DedupWindow time.Duration
	// GlobalCheck is how often a host watching global blocks checks that
	// it missed no announcement (a pub/sub message can be lost while a
	// connection is re-established); one small read (1 s).
	GlobalCheck time.Duration
}

// ErrConfig is wrapped by errors about a bad Config or URL.
var ErrConfig = errors.New("redisstore: invalid configuration")

// Store keeps learned state in Redis. It is safe for concurrent use.
type Store struct {
	client redis.UniversalClient
	owned  bool // Close closes the client
	cfg    Config
	k      keys
}

type keys struct {
	v, epoch, trust, sess, log, global, globalv string
	heat                                        [5]string
	writer                                      string // + writer name
	changed, globalCh                           string // channels
}

func newKeys(prefix string) keys {
	p := "{" + prefix + "}:"
	return keys{
		v: p + "v", epoch: p + "epoch", trust: p + "trust", sess: p + "sess", log: p + "log",
		global: p + "global", globalv: p + "globalv",
		heat:    [5]string{p + "heat:included", p + "heat:dropped", p + "heat:cut", p + "heat:refs", p + "heat:start_refs"},
		writer:  p + "w:",
		changed: p + "changed", globalCh: p + "global",
	}
}

// prefixRefused are the characters a prefix may not hold: braces, which
// would break the cluster hash tag, and the glob characters of Redis's
// ACL key and channel patterns, so that ~{PREFIX}:* grants one prefix's
// keys only (a prefix of "*" would grant every tenant's).
const prefixRefused = "{}*?[]\\"

func checkPrefix(p string) error {
	i := strings.IndexAny(p, prefixRefused)
	if i < 0 {
		return nil
	}
	what := "a glob character: the ACL pattern ~{PREFIX}:* would match other prefixes' keys"
	if p[i] == '{' || p[i] == '}' {
		what = "a brace: the keys would not share one cluster slot"
	}
	return fmt.Errorf("%w: prefix %q holds %q, %s (refused: %s)", ErrConfig, p, p[i], what, "{ } * ? [ ] \\")
}

// New returns a store on client, which the caller keeps and closes.
func New(client redis.UniversalClient, cfg Config) (*Store, error) {
	if cfg.Prefix == "" {
		cfg.Prefix = DefaultPrefix
	}
	if err := checkPrefix(cfg.Prefix); err != nil {
		return nil, err
	}
	if cfg.LogLength < 0 || cfg.DedupWindow < 0 || cfg.GlobalCheck < 0 {
		return nil, fmt.Errorf("%w: a negative Config field", ErrConfig)
	}
	if cfg.LogLength == 0 {
		cfg.LogLength = DefaultLogLength
	}
	if cfg.DedupWindow == 0 {
		cfg.DedupWindow = learned.DedupWindow
	}
	if cfg.DedupWindow < time.Second {
		return nil, fmt.Errorf("%w: DedupWindow %v is under a second", ErrConfig, cfg.DedupWindow)
	}
	if cfg.GlobalCheck == 0 {
		cfg.GlobalCheck = time.Second
	}
	return &Store{client: client, cfg: cfg, k: newKeys(cfg.Prefix)}, nil
}

// Open connects to the server a URL names,
// redis://[user:pass@]host:port/db?prefix=NAME (rediss:// for TLS), with
// go-redis's other URL options (dial_timeout=2s, skip_verify=true, …).
// The store owns its client: Close closes it. Connecting is lazy: a server
// out of reach shows in the first call, not here.
func Open(rawURL string) (*Store, error) {
	opts, cfg, err := ParseURL(rawURL)
	if err != nil {
		return nil, err
	}
	client := redis.NewClient(opts)
	s, err := New(client, cfg)
	if err != nil {
		client.Close()
		return nil, err
	}
	s.owned = true
	return s, nil
}

// ParseURL reads a URL as Open does: the client's options, and the
// store's Config from the query parameter prefix.
func ParseURL(rawURL string) (*redis.Options, Config, error) {
	var cfg Config
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, cfg, fmt.Errorf("%w: %s", ErrConfig, redacted(err, rawURL))
	}
	q := u.Query()
	cfg.Prefix = q.Get("prefix")
	q.Del("prefix")
	if err := checkPrefix(cfg.Prefix); err != nil {
		return nil, Config{}, err
	}
	u.RawQuery = q.Encode()
	opts, err := redis.ParseURL(u.String())
	if err != nil {
		return nil, cfg, fmt.Errorf("%w: %s", ErrConfig, redacted(err, rawURL))
	}
	opts.ContextTimeoutEnabled = true
	opts.DisableIdentity = true // no CLIENT SETINFO: servers before 7.2 answer it with an error
	return opts, cfg, nil
}

// redacted is err's text without the URL's password.
func redacted(err error, rawURL string) string {
	msg := err.Error()
	if u, perr := url.Parse(rawURL); perr == nil && u.User != nil {
		if p, ok := u.User.Password(); ok && p != "" {
			msg = strings.ReplaceAll(msg, p, "xxxxx")
		}
	}
	return msg
}

// Close closes the client when Open made it.
func (s *Store) Close() error {
	if !s.owned {
		return nil
	}
	return s.client.Close()
}

// String names the store without its password: the server and prefix.
func (s *Store) String() string {
	addr := "redis"
	if c, ok := s.client.(*redis.Client); ok {
		addr = c.Options().Addr
	}
	return fmt.Sprintf("redis %s prefix %q", addr, s.cfg.Prefix)
}

// wrap names the operation and marks errors that mean the server could
// not be reached (or is not serving yet) with learned.ErrUnavailable.
func wrap(op string, err error) error {
	if unavailable(err) {
		return fmt.Errorf("redisstore: %s: %w: %w", op, learned.ErrUnavailable, err)
	}
	return fmt.Errorf("redisstore: %s: %w", op, err)
}

func unavailable(err error) bool {
	var ne net.Error
	switch {
	case errors.As(err, &ne), errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, redis.ErrClosed),
		errors.Is(err, redis.ErrPoolTimeout), errors.Is(err, net.ErrClosed):
		return true
	}
	return redis.IsLoadingError(err) || redis.IsMasterDownError(err) || redis.IsTryAgainError(err) ||
		redis.IsClusterDownError(err) || redis.IsMaxClientsError(err) || redis.IsReadOnlyError(err) ||
		redis.HasErrorPrefix(err, "BUSY")
}

// Apply applies b by one script on the server: nothing of it, or all of it.
func (s *Store) Apply(ctx context.Context, b *learned.Batch) (learned.Version, error) {
	if err := b.Validate(); err != nil {
		return learned.Version{}, err
	}
	args := make([]any, 0, 9+5*b.Len())
	args = append(args, b.Writer, b.Seq, int64(s.cfg.DedupWindow/time.Second), s.cfg.LogLength, newEpoch(), s.k.changed,
		len(b.Trust), len(b.Heat), len(b.Sessions))
	for _, d := range b.Trust {
		lo := max(learned.TrustUnits(d.Floor), 0)
		hi := min(learned.TrustUnits(d.Ceiling), learned.TrustUnits(learned.MaxTrust))
		args = append(args, d.ID, learned.TrustUnits(d.Base), learned.TrustUnits(d.Add), lo, hi)
	}
	for _, d := range b.Heat {
		h := d.Heat
		if d.Delete {
			h = learned.Heat{Included: -1} // never a count: Validate refuses negative ones
		}
		args = append(args, d.ID, h.Included, h.Dropped, h.Cut, h.Refs, h.StartRefs)
	}
	for _, d := range b.Sessions {
		if d.Delete {
			args = append(args, d.Key, "d", 0, "", "")
			continue
		}
		args = append(args, d.Key, "p", d.Base, d.Updated.UTC().Format(time.RFC3339Nano), compact(d.Data))
	}
	k := s.k
	ks := []string{k.v, k.epoch, k.trust, k.heat[0], k.heat[1], k.heat[2], k.heat[3], k.heat[4], k.sess, k.writer + b.Writer, k.log}
	res, err := applyScript.Run(ctx, s.client, ks, args...).Slice()
	if err != nil {
		return learned.Version{}, wrap("apply", err)
	}
	status, n, epoch, ok := reply(res)
	switch {
	case !ok:
		return learned.Version{}, fmt.Errorf("redisstore: apply: unexpected reply %v", res)
	case status == -1:
		return learned.Version{}, &learned.GapError{Writer: b.Writer, Last: uint64(n), Seq: b.Seq}
	}
	return learned.Version{Epoch: epoch, N: uint64(n)}, nil
}

// reply reads the apply script's {status, number, epoch}.
func reply(res []any) (status, n int64, epoch string, ok bool) {
	if len(res) != 3 {
		return 0, 0, "", false
	}
	status, ok1 := res[0].(int64)
	n, ok2 := res[1].(int64)
	epoch, ok3 := res[2].(string)
	return status, n, epoch, ok1 && ok2 && ok3
}

// compact returns data (valid JSON, or empty) as compact JSON, the form
// stores keep.
func compact(data json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, data) != nil {
		return string(data)
	}
	return b.String()
}

// newEpoch returns a random epoch name, taken by the first write to an
// empty store.
func newEpoch() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Changes reads the version (one MGET); when it moved, the changes since
// from the log, or the whole state when the log does not reach back that
// far or the store started over (another epoch).
func (s *Store) Changes(ctx context.Context, since learned.Version, writer string) (*learned.Update, error) {
	vals, err := s.client.MGet(ctx, s.k.v, s.k.epoch).Result()
	if err != nil {
		return nil, wrap("changes", err)
	}
	n, _ := vals[0].(string)
	epoch, _ := vals[1].(string)
	cur := learned.Version{Epoch: epoch}
	if n != "" {
		if cur.N, err = strconv.ParseUint(n, 10, 64); err != nil {
			return nil, fmt.Errorf("redisstore: changes: version %q: %w", n, err)
		}
	}
	switch {
	case cur == since:
		return &learned.Update{Version: since}, nil
	case since.N == 0 || since.Epoch != cur.Epoch || since.N > cur.N:
		return s.full(ctx, writer)
	}
	u := &learned.Update{Version: since}
	for u.Version.N < cur.N {
		msgs, err := s.client.XRangeN(ctx, s.k.log, "("+strconv.FormatUint(u.Version.N, 10)+"-0", "+", 512).Result()
		if err != nil {
			return nil, wrap("changes", err)
		}
		if len(msgs) == 0 {
			return s.full(ctx, writer) // the log was removed
		}
		for _, m := range msgs {
			c, err := parseChange(m)
			if err != nil {
				return nil, err
			}
			if c.Version != u.Version.N+1 {
				return s.full(ctx, writer) // trimmed past since: read it all
			}
			u.Changes = append(u.Changes, c)
			u.Version.N = c.Version
		}
	}
	return u, nil
}

// full reads the whole state in one transaction.
func (s *Store) full(ctx context.Context, writer string) (*learned.Update, error) {
	k := s.k
	var (
		v, epoch, acked *redis.StringCmd
		trust, sess     *redis.MapStringStringCmd
		heat            [5]*redis.MapStringStringCmd
	)
	_, err := s.client.TxPipelined(ctx, func(p redis.Pipeliner) error {
		v, epoch = p.Get(ctx, k.v), p.Get(ctx, k.epoch)
		acked = p.Get(ctx, k.writer+writer)
		trust, sess = p.HGetAll(ctx, k.trust), p.HGetAll(ctx, k.sess)
		for i := range heat {
			heat[i] = p.HGetAll(ctx, k.heat[i])
		}
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return nil, wrap("reading the state", err)
	}
	u := &learned.Update{Full: learned.NewState()}
	u.Version.Epoch = epoch.Val()
	if u.Version.N, err = parseUint(v.Val()); err != nil {
		return nil, fmt.Errorf("redisstore: version %q: %w", v.Val(), err)
	}
	if u.Acked, err = parseUint(acked.Val()); err != nil {
		return nil, fmt.Errorf("redisstore: writer %q: %w", writer, err)
	}
	for id, val := range trust.Val() {
		units, err := strconv.ParseInt(val, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("redisstore: trust of %q is %q: %w", id, val, err)
		}
		u.Full.Trust[id] = learned.TrustFromUnits(units)
	}
	for i, cmd := range heat {
		for id, val := range cmd.Val() {
			n, err := strconv.ParseInt(val, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("redisstore: heat of %q is %q: %w", id, val, err)
			}
			h := u.Full.Heat[id]
			*[...]*int64{&h.Included, &h.Dropped, &h.Cut, &h.Refs, &h.StartRefs}[i] = n
			u.Full.Heat[id] = h
		}
	}
	for key, val := range sess.Val() {
		ss, err := parseSession(val)
		if err != nil {
			return nil, fmt.Errorf("redisstore: session %q: %w", key, err)
		}
		if u.Full.Sessions == nil {
			u.Full.Sessions = make(map[string]*learned.SessionState)
		}
		u.Full.Sessions[key] = ss
	}
	return u, nil
}

func parseUint(s string) (uint64, error) {
	if s == "" {
		return 0, nil
	}
	return strconv.ParseUint(s, 10, 64)
}

// parseSession reads a session's stored value: "VERSION UPDATED DATA".
func parseSession(val string) (*learned.SessionState, error) {
	ver, rest, ok1 := strings.Cut(val, " ")
	updated, data, ok2 := strings.Cut(rest, " ")
	if !ok1 || !ok2 {
		return nil, fmt.Errorf("malformed value %q", val)
	}
	n, err := strconv.ParseUint(ver, 10, 64)
	if err != nil {
		return nil, err
	}
	t, err := time.Parse(time.RFC3339Nano, updated)
	if err != nil {
		return nil, err
	}
	ss := &learned.SessionState{Version: n, Updated: t}
	if data != "" {
		ss.Data = json.RawMessage(data)
	}
	return ss, nil
}

// parseChange reads one log entry: its version (the entry's id), writer,
// sequence number and records (see the apply script).
func parseChange(m redis.XMessage) (learned.Change, error) {
	var c learned.Change
	ms, _, _ := strings.Cut(m.ID, "-")
	var err error
	if c.Version, err = strconv.ParseUint(ms, 10, 64); err != nil {
		return c, fmt.Errorf("redisstore: log entry %q: %w", m.ID, err)
	}
	c.Writer, _ = m.Values["w"].(string)
	seq, _ := m.Values["s"].(string)
	if c.Seq, err = strconv.ParseUint(seq, 10, 64); err != nil {
		return c, fmt.Errorf("redisstore: log entry %q: seq %q: %w", m.ID, seq, err)
	}
	rec, _ := m.Values["c"].(string)
	for len(rec) > 0 {
		kind := rec[0]
		rec = rec[1:]
		key, err := field(&rec)
		if err != nil {
			return c, fmt.Errorf("redisstore: log entry %q: %w", m.ID, err)
		}
		switch kind {
		case 't':
			val, err := field(&rec)
			if err != nil {
				return c, fmt.Errorf("redisstore: log entry %q: %w", m.ID, err)
			}
			units, err := strconv.ParseInt(val, 10, 64)
			if err != nil {
				return c, fmt.Errorf("redisstore: log entry %q: trust %q: %w", m.ID, val, err)
			}
			if c.Trust == nil {
				c.Trust = make(map[string]float64)
			}
			c.Trust[key] = learned.TrustFromUnits(units)
		case 's', 'd':
			if c.Sessions == nil {
				c.Sessions = make(map[string]*learned.SessionState)
			}
			if kind == 'd' {
				c.Sessions[key] = nil
				continue
			}
			val, err := field(&rec)
			if err != nil {
				return c, fmt.Errorf("redisstore: log entry %q: %w", m.ID, err)
			}
			if c.Sessions[key], err = parseSession(val); err != nil {
				return c, fmt.Errorf("redisstore: log entry %q: session %q: %w", m.ID, key, err)
			}
		default:
			return c, fmt.Errorf("redisstore: log entry %q: unknown record %q", m.ID, kind)
		}
	}
	return c, nil
}

// field takes one length-prefixed field ("LEN:BYTES") off the front of rec.
func field(rec *string) (string, error) {
	n, rest, ok := strings.Cut(*rec, ":")
	size, err := strconv.Atoi(n)
	if !ok || err != nil || size < 0 || size > len(rest) {
		return "", fmt.Errorf("malformed record at %q", truncate(*rec))
	}
	*rec = rest[size:]
	return rest[:size], nil
}

func truncate(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

// WatchState calls changed whenever a batch was applied (a message on
// {PREFIX}:changed), until ctx is done.
func (s *Store) WatchState(ctx context.Context, changed func()) error {
	sub := s.client.Subscribe(ctx, s.k.changed)
	defer sub.Close()
	ch := sub.Channel()
	for {
		select {
		case <-ctx.Done():
			return nil
		case _, ok := <-ch:
			if !ok {
				return nil
			}
			changed()
		}
	}
}
