package mcpsource

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"reflect"
	"slices"
	"sync"
	"time"

	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/outcome"
)

// Sink receives what the sources collect. *contextasm.Engine implements
// it; the collector calls it from its goroutines, so it must be safe for
// concurrent use.
type Sink interface {
	// Declare adds or replaces blocks (all or none).
	Declare(decls ...declare.Declaration) error
	// Forget removes blocks by request_id.
	Forget(ids ...string) int
	// SetSourceEvents replaces what source reports about blocks it could
	// not deliver; nil clears it.
	SetSourceEvents(source string, events []outcome.Event)
}

// InputRecorder is a Sink that records which version of each source's
// blocks it holds, for its audit records (*contextasm.Engine's SetInput).
// After every change the collector gives it "source:" and the source's key
// ("source:mcp:docs") and the hex SHA-256 of the source's blocks (see
// docs/sources.md).
type InputRecorder interface {
	SetInput(name, sha256 string)
}

// State is where a source stands.
type State int

// The states.
const (
	// Connecting: the source has not completed its first sync yet.
	Connecting State = iota
	// Ready: the last sync succeeded.
	Ready
	// Unavailable: the source failed; it is retried with backoff, and its
	// blocks' last good content is kept until their validity ends.
	Unavailable
)

// String returns "connecting", "ready" or "unavailable".
func (s State) String() string {
	switch s {
	case Ready:
		return "ready"
	case Unavailable:
		return "unavailable"
	}
	return "connecting"
}

// SourceStatus is a snapshot of one source.
type SourceStatus struct {
	// Source is "mcp:<name>" or "file:<name>": the key of its events, and
	// the request_id of its source-wide source_unavailable event.
	Source string
	// State is where the source stands: Connecting, Ready or Unavailable.
	State State
	// Synced reports whether the first sync attempt has ended, in success
	// or failure.
	Synced bool
	// Blocks is the number of blocks the source has declared.
	Blocks int
	// Err is why the source is not Ready (nil when it is).
	Err error
	// Protocol is the MCP protocol revision negotiated ("" for files).
	Protocol string
	// Cuts says what the source's last sync or scan left out at a bound,
	// one line each: "BLOCK: what" for a block, "what" for the source's
	// listing; each names the bound and has an event (source_unavailable
	// for a block, source_cut for a listing). The command line prints them
	// on stderr.
	Cuts []string
}

// Collector runs sources and feeds what they collect into a Sink. Each
// source has one goroutine of its own, so a failing, hanging or slow source
// never holds up another, and assembly, which reads the Sink's store, never
// waits for any. Close stops them all.
type Collector struct {
	cancel    context.CancelFunc
	wg        sync.WaitGroup
	sources   []*status
	synced    chan struct{}
	mu        sync.Mutex
	unsettled int
	closeOnce sync.Once
}

// Start validates cfg and starts collecting into sink. Every source begins
// Connecting, reported to sink as one source_unavailable event until its
// first sync succeeds.
func Start(sink Sink, cfg Config) (*Collector, error) {
	if sink == nil {
		return nil, fmt.Errorf("%w: nil Sink", ErrConfig)
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	ctx, cancel := context.WithCancel(context.Background())
	c := &Collector{cancel: cancel, synced: make(chan struct{})}
	var runs []func(context.Context)
	for _, s := range cfg.Servers {
		s = s.withDefaults()
		st := c.newStatus("mcp:"+s.Name, sink, s.KeepFor)
		m := &mcpSource{cfg: s, st: st, log: log.With("source", st.key), entries: make(map[string]*entry),
			wake: make(chan struct{}, 1)}
		runs = append(runs, m.run)
	}
	for _, f := range cfg.Files {
		f = f.withDefaults()
		st := c.newStatus("file:"+f.Name, sink, 0)
		fsrc := &filesSource{root: newRoot(f), st: st, log: log.With("source", st.key)}
		runs = append(runs, fsrc.run)
	}
	c.unsettled = len(c.sources)
	if c.unsettled == 0 {
		close(c.synced)
	}
	for i, run := range runs {
		st := c.sources[i]
		st.led.publish()
		c.wg.Go(func() {
			defer st.settleFirst()
			run(ctx)
		})
	}
	return c, nil
}

func (c *Collector) newStatus(key string, sink Sink, keepFor time.Duration) *status {
	st := &status{key: key, c: c, led: newLedger(sink, key, keepFor)}
	c.sources = append(c.sources, st)
	return st
}

// WaitSynced blocks until every source has ended its first sync attempt,
// in success or failure, or ctx ends (its error is returned).
func (c *Collector) WaitSynced(ctx context.Context) error {
	select {
	case <-c.synced:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Status returns a snapshot of every source, in configuration order
// (servers, then file roots).
func (c *Collector) Status() []SourceStatus {
	out := make([]SourceStatus, len(c.sources))
	for i, st := range c.sources {
		st.mu.Lock()
		out[i] = st.s
		out[i].Source = st.key
		st.mu.Unlock()
	}
	return out
}

// Close stops every source and waits for its goroutines to end, closing
// MCP sessions (a stdio server gets TerminateDuration to exit once its
// stdin is closed, then SIGTERM, then SIGKILL). Blocks and events already
// handed to the Sink stay there. Close is idempotent.
func (c *Collector) Close() error {
	c.closeOnce.Do(func() {
		c.cancel()
		c.wg.Wait()
	})
	return nil
}

// settleFirst marks the source's first sync attempt as over; later calls
// do nothing.
func (st *status) settleFirst() {
	c := st.c
	st.mu.Lock()
	first := !st.s.Synced
	st.s.Synced = true
	st.mu.Unlock()
	if !first {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.unsettled--
	if c.unsettled == 0 {
		close(c.synced)
	}
}

// status holds one source's SourceStatus and its ledger.
type status struct {
	key string
	c   *Collector
	led *ledger // used by the source's goroutine only
	mu  sync.Mutex
	s   SourceStatus
}

// report flushes the ledger, marking the whole source down unless state
// is Ready, and records the new status. Only the source's goroutine calls it.
func (st *status) report(log *slog.Logger, state State, err error, protocol string) {
	st.led.down = state != Ready
	st.led.flush(log)
	st.mu.Lock()
	defer st.mu.Unlock()
	st.s.State, st.s.Err = state, err
	if protocol != "" {
		st.s.Protocol = protocol
	}
	st.s.Blocks = len(st.led.declared)
	st.s.Cuts = st.led.cutLines()
}

// ledger is one source's account of what it has handed to the Sink: the
// blocks declared, the problems reported, and whether the whole source is
// down. Changes are staged and pushed by flush. It belongs to the source's
// goroutine (and to Start before that goroutine runs).
type ledger struct {
	sink    Sink
	key     string
	keepFor time.Duration // negative: drop at once

	declared map[string]declare.Declaration
	goodAt   map[string]time.Time // when each block's content was last read
	size     map[string]int       // content bytes of each block declared or staged
	total    int                  // their sum
	problems map[string]outcome.Reason
	cuts     map[string]string // of the problems, those at a bound: what was cut
	down     bool

	stage  map[string]declare.Declaration
	forget map[string]bool
	events []outcome.Event // last published
	pubbed bool

	// rec, when the Sink is an InputRecorder, is told the snapshot's hash
	// after every change; hashes holds each declared block's.
	rec      InputRecorder
	hashes   map[string][sha256.Size]byte
	recorded bool
}

func newLedger(sink Sink, key string, keepFor time.Duration) *ledger {
	rec, _ := sink.(InputRecorder)
	return &ledger{sink: sink, key: key, keepFor: keepFor, down: true,
		declared: make(map[string]declare.Declaration), goodAt: make(map[string]time.Time),
		problems: make(map[string]outcome.Reason), cuts: make(map[string]string), size: make(map[string]int),
		stage: make(map[string]declare.Declaration), forget: make(map[string]bool),
		rec: rec, hashes: make(map[string][sha256.Size]byte)}
}

// put stages fresh content for d's block, read at readAt.
func (l *ledger) put(d declare.Declaration, readAt time.Time) {
	l.goodAt[d.RequestID] = readAt
	l.stageDecl(d)
}

// fits reports whether content of n bytes for block id keeps the source
// within max bytes.
func (l *ledger) fits(id string, n, max int) bool {
	return l.total-l.size[id]+n <= max
}

// setSize records the content bytes held for id (0: none).
func (l *ledger) setSize(id string, n int) {
	l.total += n - l.size[id]
	if n == 0 {
		delete(l.size, id)
	} else {
		l.size[id] = n
	}
}

func (l *ledger) stageDecl(d declare.Declaration) {
	l.setSize(d.RequestID, len(d.Content))
	delete(l.forget, d.RequestID)
	if old, ok := l.declared[d.RequestID]; ok && reflect.DeepEqual(old, d) {
		delete(l.stage, d.RequestID)
		return
	}
	l.stage[d.RequestID] = d
}

// drop stages the removal of a block.
func (l *ledger) drop(id string) {
	l.setSize(id, 0)
	delete(l.stage, id)
	delete(l.goodAt, id)
	if _, ok := l.declared[id]; ok {
		l.forget[id] = true
	}
}

// hold keeps a block's last good content after a transient failure, until
// its last good read plus keepFor.
func (l *ledger) hold(id string) {
	if l.keepFor < 0 {
		l.drop(id)
		return
	}
	d, ok := l.stage[id]
	if !ok {
		if d, ok = l.declared[id]; !ok {
			return
		}
	}
	until := l.goodAt[id].Add(l.keepFor)
	if d.ValidUntil != nil && !until.Before(d.ValidUntil.Time) {
		return
	}
	d.ValidUntil = &declare.Time{Time: until}
	l.stageDecl(d)
}

// holdAll holds every block.
func (l *ledger) holdAll() {
	for _, id := range l.ids() {
		l.hold(id)
	}
}

// ids returns the ids declared or staged, sorted.
func (l *ledger) ids() []string {
	ids := make([]string, 0, len(l.declared)+len(l.stage))
	for id := range l.declared {
		ids = append(ids, id)
	}
	for id := range l.stage {
		if _, ok := l.declared[id]; !ok {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}

func (l *ledger) problem(id string, r outcome.Reason) {
	delete(l.cuts, id)
	if r == "" {
		delete(l.problems, id)
		return
	}
	l.problems[id] = r
}

// cut records a problem of block (or source) id at a bound, and what the
// bound left out.
func (l *ledger) cut(id string, r outcome.Reason, what string) {
	l.problem(id, r)
	l.cuts[id] = what
}

// clearProblems forgets every problem (a scan reports them all anew).
func (l *ledger) clearProblems() {
	clear(l.problems)
	clear(l.cuts)
}

// cutLines returns the cuts as lines, sorted: "what" for the source's
// own, "id: what" for a block's.
func (l *ledger) cutLines() []string {
	if len(l.cuts) == 0 {
		return nil
	}
	out := make([]string, 0, len(l.cuts))
	for _, id := range slices.Sorted(maps.Keys(l.cuts)) {
		if id == l.key {
			out = append(out, l.cuts[id])
		} else {
			out = append(out, id+": "+l.cuts[id])
		}
	}
	return out
}

// flush hands the staged changes to the Sink and publishes the events. A
// declaration the Sink refuses (its limits may be stricter than the
// source's) is reported as source_unavailable instead.
func (l *ledger) flush(log *slog.Logger) {
	changed := len(l.stage) > 0 || len(l.forget) > 0
	if len(l.stage) > 0 {
		decls := make([]declare.Declaration, 0, len(l.stage))
		for _, d := range l.stage {
			decls = append(decls, d)
		}
		slices.SortFunc(decls, func(a, b declare.Declaration) int { return cmp.Compare(a.RequestID, b.RequestID) })
		if err := l.sink.Declare(decls...); err == nil {
			for _, d := range decls {
				l.declared[d.RequestID] = d
				delete(l.hashes, d.RequestID)
			}
		} else {
			for _, d := range decls {
				if err := l.sink.Declare(d); err != nil {
					log.Warn("block refused", "request_id", d.RequestID, "error", err)
					l.problems[d.RequestID] = outcome.ReasonSourceUnavailable
					l.setSize(d.RequestID, 0)
					if _, ok := l.declared[d.RequestID]; ok {
						l.forget[d.RequestID] = true
					}
					continue
				}
				l.declared[d.RequestID] = d
				delete(l.hashes, d.RequestID)
			}
		}
		clear(l.stage)
	}
	if len(l.forget) > 0 {
		ids := make([]string, 0, len(l.forget))
		for id := range l.forget {
			ids = append(ids, id)
			delete(l.declared, id)
			delete(l.hashes, id)
		}
		slices.Sort(ids)
		l.sink.Forget(ids...)
		clear(l.forget)
	}
	if l.rec != nil && (changed || !l.recorded) {
		l.record(log)
	}
	l.publish()
}

// record tells the InputRecorder the hash of the source's blocks: SHA-256
// over the blocks in request_id order, each as its id's length (8 bytes,
// big-endian), the id, and the SHA-256 of its declaration's JSON.
func (l *ledger) record(log *slog.Logger) {
	h := sha256.New()
	var n [8]byte
	for _, id := range slices.Sorted(maps.Keys(l.declared)) {
		sum, ok := l.hashes[id]
		if !ok {
			b, err := json.Marshal(l.declared[id])
			if err != nil { // a Declaration always encodes; say so if not
				log.Error("hashing a block for the audit record", "request_id", id, "error", err)
			}
			sum = sha256.Sum256(b)
			l.hashes[id] = sum
		}
		binary.BigEndian.PutUint64(n[:], uint64(len(id)))
		h.Write(n[:])
		h.Write([]byte(id))
		h.Write(sum[:])
	}
	l.rec.SetInput("source:"+l.key, hex.EncodeToString(h.Sum(nil)))
	l.recorded = true
}

// publish sends the current events to the Sink when they changed.
func (l *ledger) publish() {
	var evs []outcome.Event
	if l.down {
		evs = append(evs, outcome.Event{Kind: outcome.KindSource, RequestID: l.key, Reason: outcome.ReasonSourceUnavailable})
	}
	ids := make([]string, 0, len(l.problems))
	for id := range l.problems {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		evs = append(evs, outcome.Event{Kind: outcome.KindSource, RequestID: id, Reason: l.problems[id]})
	}
	if l.pubbed && slices.Equal(evs, l.events) {
		return
	}
	l.events, l.pubbed = evs, true
	l.sink.SetSourceEvents(l.key, evs)
}

// errClosed reports a session that ended without an error of its own.
var errClosed = errors.New("connection closed by the server")
