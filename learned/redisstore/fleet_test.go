//go:build unix

package redisstore_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/contextasm/contextasm/contextasm"
	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/feedback"
	"github.com/contextasm/contextasm/internal/redistest"
	"github.com/contextasm/contextasm/learned"
	"github.com/contextasm/contextasm/learned/redisstore"
	"github.com/contextasm/contextasm/outcome"
	"github.com/contextasm/contextasm/template"
)

const fleetTemplate = `{"budget": 600, "sections": [
	{"name": "FACTS", "priority": 1, "memory_types": ["context"], "max_tokens": 500, "render": "<fact id=\"{request_id}\">{content}</fact>"}]}`

var now0 = time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)

func fleetTpl(t testing.TB) *template.Template {
	t.Helper()
	tpl, err := template.Parse([]byte(fleetTemplate), "fleet.json")
	if err != nil {
		t.Fatal(err)
	}
	return tpl
}

func fact(id string, trust float64) declare.Declaration {
	return declare.Declaration{RequestID: id, MemoryType: declare.Context, Scope: declare.ScopeGlobal,
		Content: "A fact for the fleet: " + id, TrustScore: &trust}
}

// replica is one agent host: its own client, store and engine.
func replica(t testing.TB, srv *redistest.Server, prefix string, opts contextasm.StateOptions, policy feedback.Policy, decls ...declare.Declaration) *contextasm.Engine {
	t.Helper()
	store, err := redisstore.Open(srv.URL("prefix=" + prefix))
	if err != nil {
		t.Fatal(err)
	}
	eng, err := contextasm.New(contextasm.Config{State: store, StateOptions: opts, Policy: policy})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close(); store.Close() })
	if len(decls) > 0 {
		if err := eng.Declare(decls...); err != nil {
			t.Fatal(err)
		}
	}
	return eng
}

func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func hasStateEvent(res *contextasm.Result) bool {
	return slices.ContainsFunc(res.Events(), func(e contextasm.Event) bool { return e.Reason == outcome.ReasonStateUnavailable })
}

func trustOf(res *contextasm.Result, id string) float64 {
	for _, s := range res.Sections() {
		for _, b := range s.Blocks {
			if b.RequestID == id {
				return b.Trust
			}
		}
	}
	return -1
}

// expected replays n start citations of each block under policy onto the
// declared trusts, as the stores apply them.
func expected(trusts map[string]float64, n int, p feedback.Policy) *learned.State {
	st := learned.NewState()
	floor, ceiling := p.Bounds()
	for id, base := range trusts {
		for range n {
			st.Apply(&learned.Batch{Trust: []learned.TrustDelta{{ID: id, Base: base, Add: p.Gain(feedback.Start), Floor: floor, Ceiling: ceiling}}})
		}
	}
	return st
}

// Three engines apply 3,000 citations of the same blocks at once: the
// store ends at exactly the sum of the gains (one block reaches the ceiling
// on the way), with 3,000 citations counted, and every engine's snapshot
// ends there too.
func TestNoLostUpdateThreeEngines(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	tpl := fleetTpl(t)
	policy := feedback.Policy{StartGain: 0.0001}
	trusts := map[string]float64{"fa": 0.5, "fb": 0.8}
	decls := []declare.Declaration{fact("fa", 0.5), fact("fb", 0.8)}
	opts := contextasm.StateOptions{Poll: 10 * time.Millisecond}
	engines := []*contextasm.Engine{
		replica(t, srv, "nolost", opts, policy, decls...),
		replica(t, srv, "nolost", opts, policy, decls...),
		replica(t, srv, "nolost", opts, policy, decls...),
	}
	const each = 1000
	var wg sync.WaitGroup
	errs := make(chan error, len(engines))
	for i, eng := range engines {
		wg.Go(func() {
			var res *contextasm.Result
			for j := range each {
				if j%50 == 0 { // assemble now and then: heat, and newer trust
					var err error
					if res, err = eng.Assemble(context.Background(), contextasm.Request{Template: tpl, Now: now0.Add(time.Duration(i*each+j) * time.Second)}); err != nil {
						errs <- err
						return
					}
				}
				if _, err := eng.Feedback(context.Background(), res, citeBoth); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for _, eng := range engines {
		if err := eng.Flush(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	want := expected(trusts, len(engines)*each, policy)
	if want.Trust["fa"] != 0.8 || want.Trust["fb"] != 0.99 {
		t.Fatalf("the replay itself: %v", want.Trust)
	}
	store, _ := redisstore.Open(srv.URL("prefix=nolost"))
	defer store.Close()
	u, err := store.Changes(context.Background(), learned.Version{}, "")
	if err != nil {
		t.Fatal(err)
	}
	got := u.Full
	for _, id := range []string{"fa", "fb"} {
		if got.Trust[id] != want.Trust[id] {
			t.Errorf("%s: store trust %v, want exactly %v", id, got.Trust[id], want.Trust[id])
		}
		if h := got.Heat[id]; h.Refs != len64(engines)*each || h.StartRefs != h.Refs || h.Included != len64(engines)*each/50 {
			t.Errorf("%s: heat %+v, want %d citations and %d renders", id, h, len(engines)*each, len(engines)*each/50)
		}
	}
	for i, eng := range engines {
		waitFor(t, fmt.Sprintf("engine %d to reach the store's trust", i), func() bool {
			st := eng.State()
			return st.Trust["fa"] == want.Trust["fa"] && st.Trust["fb"] == want.Trust["fb"]
		})
		// The trust can be whole before the last delta (another engine's
		// heat) has arrived: the version is waited for too.
		var res *contextasm.Result
		waitFor(t, fmt.Sprintf("engine %d to assemble at the store's version %d", i, u.Version.N), func() bool {
			var err error
			if res, err = eng.Assemble(context.Background(), contextasm.Request{Template: tpl, Now: now0}); err != nil {
				t.Fatal(err)
			}
			return res.StateVersion >= u.Version.N
		})
		if trustOf(res, "fa") != want.Trust["fa"] || res.StateVersion != u.Version.N {
			t.Errorf("engine %d ranks fa with %v at state version %d; want %v at %d", i, trustOf(res, "fa"), res.StateVersion, want.Trust["fa"], u.Version.N)
		}
	}
}

// citeBoth cites fa and fb in its first third: a start citation each.
var citeBoth = `<memory_ref id="fa"/> and <memory_ref id="fb"/> say so; ` + strings.Repeat("the rest of the answer. ", 20)

func len64[T any](s []T) int64 { return int64(len(s)) }

// The server is killed (-9) in the middle of a run and started again on
// its port. Assembly goes on meanwhile, saying state_unavailable; the
// deltas wait, and once the server is back every one of them is there
// exactly once: none lost, none doubled by a resend. The server persists
// every write before acknowledging it (appendfsync always), as a fleet that
// counts on acknowledged deltas must run it.
func TestKillAndRestart(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{Durable: true})
	tpl := fleetTpl(t)
	policy := feedback.Policy{StartGain: 0.0001}
	trusts := map[string]float64{"fa": 0.5, "fb": 0.8}
	decls := []declare.Declaration{fact("fa", 0.5), fact("fb", 0.8)}
	opts := contextasm.StateOptions{Poll: 5 * time.Millisecond, Timeout: 200 * time.Millisecond, HeatEvery: 10 * time.Millisecond}
	a := replica(t, srv, "kill", opts, policy, decls...)
	b := replica(t, srv, "kill", opts, policy, decls...)
	var (
		mu        sync.Mutex
		cited     int
		sawEvent  bool
		assembled int
	)
	run := func(eng *contextasm.Engine, n int) {
		for j := range n {
			res, err := eng.Assemble(context.Background(), contextasm.Request{Template: tpl, Now: now0.Add(time.Duration(j) * time.Second)})
			if err != nil {
				t.Error(err)
				return
			}
			if _, err := eng.Feedback(context.Background(), res, citeBoth); err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			cited++
			assembled++
			sawEvent = sawEvent || hasStateEvent(res)
			mu.Unlock()
			time.Sleep(time.Millisecond)
		}
	}
	var wg sync.WaitGroup
	wg.Go(func() { run(a, 300) })
	wg.Go(func() { run(b, 300) })
	time.Sleep(100 * time.Millisecond)
	srv.Kill()
	waitFor(t, "an assembly saying state_unavailable", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return sawEvent
	})
	time.Sleep(200 * time.Millisecond) // more deltas queue while it is down
	srv.Restart()
	wg.Wait()
	for _, eng := range []*contextasm.Engine{a, b} {
		if err := eng.Flush(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	store, _ := redisstore.Open(srv.URL("prefix=kill"))
	defer store.Close()
	u, err := store.Changes(context.Background(), learned.Version{}, "")
	if err != nil {
		t.Fatal(err)
	}
	want := expected(trusts, cited, policy)
	for _, id := range []string{"fa", "fb"} {
		if h := u.Full.Heat[id]; h.Refs != int64(cited) || h.Included != int64(assembled) {
			t.Errorf("%s: %d citations and %d renders stored, want exactly %d and %d", id, h.Refs, h.Included, cited, assembled)
		}
		if u.Full.Trust[id] != want.Trust[id] {
			t.Errorf("%s: trust %v, want exactly %v", id, u.Full.Trust[id], want.Trust[id])
		}
	}
	waitFor(t, "assemblies without the event", func() bool {
		res, _ := a.Assemble(context.Background(), contextasm.Request{Template: tpl, Now: now0})
		return !hasStateEvent(res)
	})
}

// A paused server (SIGSTOP) or a busy one (DEBUG SLEEP) delays no
// assembly: they finish while the store's goroutine waits for an answer.
// The bound checked is generous on purpose (it is not a measure of speed):
// the store's calls wait far longer than it.
func TestSlowServerDelaysNoAssembly(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	tpl := fleetTpl(t)
	opts := contextasm.StateOptions{Poll: 5 * time.Millisecond, Timeout: time.Minute}
	eng := replica(t, srv, "slow", opts, feedback.Policy{}, fact("fa", 0.5))
	assembleAll := func() <-chan struct{} {
		done := make(chan struct{})
		go func() {
			defer close(done)
			for j := range 100 {
				if _, err := eng.Assemble(context.Background(), contextasm.Request{Template: tpl, Now: now0.Add(time.Duration(j) * time.Second)}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
		return done
	}
	res, err := eng.Assemble(context.Background(), contextasm.Request{Template: tpl, Now: now0})
	if err != nil {
		t.Fatal(err)
	}
	for _, stall := range []string{"SIGSTOP", "DEBUG SLEEP"} {
		t.Run(stall, func(t *testing.T) {
			admin := redis.NewClient(&redis.Options{Addr: srv.Addr})
			defer admin.Close()
			admin.Ping(context.Background())
			slept := make(chan struct{})
			if stall == "SIGSTOP" {
				srv.Pause()
			} else {
				go func() { admin.Do(context.Background(), "DEBUG", "SLEEP", "3"); close(slept) }()
				time.Sleep(50 * time.Millisecond)
			}
			// A feedback the store's goroutine now tries to send, and waits.
			if _, err := eng.Feedback(context.Background(), res, `<memory_ref id="fa"/>`); err != nil {
				t.Fatal(err)
			}
			waitFor(t, "the delta to be in flight", func() bool { return eng.StateStatus().Queued > 0 })
			select {
			case <-assembleAll():
			case <-time.After(20 * time.Second):
				t.Fatal("assemblies waited for the stalled store")
			}
			if stall == "SIGSTOP" {
				srv.Resume()
			} else {
				<-slept
			}
			if err := eng.Flush(context.Background()); err != nil {
				t.Fatal(err)
			}
		})
	}
	if got := eng.State().Trust["fa"]; got != 0.6 {
		t.Errorf("trust after two citations: %v", got)
	}
}

// With a short timeout, a paused server makes assemblies say
// state_unavailable, and a store down when the engine starts does not
// stop it: it assembles from an empty state, says so, and loads the state
// once the server is back.
func TestStoreDownAtStart(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{Durable: true})
	tpl := fleetTpl(t)
	opts := contextasm.StateOptions{Poll: 5 * time.Millisecond, Timeout: 100 * time.Millisecond}
	first := replica(t, srv, "down", opts, feedback.Policy{}, fact("fa", 0.5))
	res, _ := first.Assemble(context.Background(), contextasm.Request{Template: tpl, Now: now0})
	if _, err := first.Feedback(context.Background(), res, `<memory_ref id="fa"/>`); err != nil {
		t.Fatal(err)
	}
	if err := first.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	srv.Kill()
	late := replica(t, srv, "down", opts, feedback.Policy{}, fact("fa", 0.5))
	res, err := late.Assemble(context.Background(), contextasm.Request{Template: tpl, Now: now0})
	if err != nil || !hasStateEvent(res) || trustOf(res, "fa") != 0.5 {
		t.Fatalf("assembly with the store down from the start: %v, event %v, trust %v", err, res != nil && hasStateEvent(res), trustOf(res, "fa"))
	}
	srv.Restart()
	waitFor(t, "the late engine to load the state", func() bool {
		res, _ := late.Assemble(context.Background(), contextasm.Request{Template: tpl, Now: now0})
		return trustOf(res, "fa") == 0.55 && !hasStateEvent(res)
	})
}

// A global block one replica declares, replaces or forgets reaches the
// others before their next assembly after they received it; session and
// user blocks stay with the replica that declared them; a replica started
// later gets the global blocks announced before.
func TestGlobalBlocksAnnounced(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	tpl := fleetTpl(t)
	opts := contextasm.StateOptions{Poll: 5 * time.Millisecond}
	a := replica(t, srv, "global", opts, feedback.Policy{})
	b := replica(t, srv, "global", opts, feedback.Policy{})
	applied := func(e *contextasm.Engine) uint64 { return e.StateStatus().GlobalApplied }
	contentIn := func(e *contextasm.Engine, id string) string {
		res, err := e.Assemble(context.Background(), contextasm.Request{Template: tpl, Now: now0, SessionID: "s1", UserID: "u1"})
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range res.Sections() {
			for _, blk := range s.Blocks {
				if blk.RequestID == id {
					i := strings.Index(res.Text[blk.Offset:blk.Offset+blk.Length], ">")
					return res.Text[blk.Offset+i+1 : blk.Offset+blk.Length-len("</fact>")]
				}
			}
		}
		return ""
	}
	step := func(what string, change func()) {
		t.Helper()
		before := applied(b)
		change()
		// b applies each announcement, a's echo included, on receipt: the
		// first assembly b starts after the count moved sees it.
		waitFor(t, what, func() bool { return applied(b) > before })
	}
	g := fact("g-policy", 0.7)
	step("b to receive g-policy", func() {
		if err := a.Declare(g); err != nil {
			t.Fatal(err)
		}
	})
	if got := contentIn(b, "g-policy"); got != g.Content {
		t.Fatalf("b renders g-policy as %q, want %q", got, g.Content)
	}
	g.Content = "A fact for the fleet, revised."
	step("b to receive the revision", func() {
		if err := a.Declare(g); err != nil {
			t.Fatal(err)
		}
	})
	if got := contentIn(b, "g-policy"); got != g.Content {
		t.Fatalf("b renders the revised g-policy as %q", got)
	}
	// Session and user blocks are not announced.
	sess := declare.Declaration{RequestID: "s-note", MemoryType: declare.Context, Scope: declare.ScopeSession, SessionID: "s1", Content: "session only"}
	user := declare.Declaration{RequestID: "u-note", MemoryType: declare.Context, Scope: declare.ScopeUser, UserID: "u1", Content: "user only"}
	if err := a.Declare(sess, user); err != nil {
		t.Fatal(err)
	}
	if contentIn(a, "s-note") == "" || contentIn(a, "u-note") == "" {
		t.Fatal("a lost its own session or user block")
	}
	// A replica started now gets what was announced before.
	c := replica(t, srv, "global", opts, feedback.Policy{})
	if got := contentIn(c, "g-policy"); got != g.Content {
		t.Errorf("a replica started later renders g-policy as %q", got)
	}
	step("b to receive the forget", func() {
		if n := a.Forget("g-policy"); n != 1 {
			t.Fatalf("Forget = %d", n)
		}
	})
	if b.Len() != 0 || contentIn(b, "g-policy") != "" {
		t.Errorf("b still holds %d blocks after the forget", b.Len())
	}
	waitFor(t, "c to forget g-policy", func() bool { return c.Len() == 0 })
	if b.Len() != 0 || c.Len() != 0 {
		t.Errorf("session or user blocks travelled: b %d, c %d blocks", b.Len(), c.Len())
	}
	if st := b.StateStatus(); st.GlobalRefused != 0 {
		t.Errorf("b refused %d announced declarations", st.GlobalRefused)
	}
}

// Nothing is half-applied when the queue is full: a Declare of global
// blocks that cannot be announced is refused whole.
func TestDeclareRefusedWhenQueueFull(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	opts := contextasm.StateOptions{Poll: 5 * time.Millisecond, Timeout: 100 * time.Millisecond, MaxQueued: 1}
	eng := replica(t, srv, "full", opts, feedback.Policy{})
	srv.Pause()
	defer srv.Resume()
	if err := eng.Declare(fact("g1", 0.5)); err != nil {
		t.Fatal(err)
	}
	if err := eng.Declare(fact("g2", 0.5)); !errors.Is(err, contextasm.ErrStateQueueFull) {
		t.Fatalf("Declare over the bound = %v, want ErrStateQueueFull", err)
	}
	if eng.Len() != 1 {
		t.Errorf("a refused Declare changed the store: %d blocks", eng.Len())
	}
}

// A batch resent after its acknowledgement was lost is applied once: each
// try reaches the server, its reply is lost on the way (a proxy drops the
// replies to the script), the call times out, and the engine sends the
// batch again; the store applies the first and acknowledges the others
// without applying them.
func TestResendAfterLostReplyAppliedOnce(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	proxy := srv.Proxy()
	tpl := fleetTpl(t)
	opts := contextasm.StateOptions{Poll: 10 * time.Millisecond, Timeout: 100 * time.Millisecond, LocalGlobal: true}
	store, err := redisstore.Open(proxy.URL("prefix=resend"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	eng, err := contextasm.New(contextasm.Config{State: store, StateOptions: opts})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	if err := eng.Declare(fact("fa", 0.5), fact("fb", 0.5)); err != nil {
		t.Fatal(err)
	}
	res, err := eng.Assemble(context.Background(), contextasm.Request{Template: tpl, Now: now0})
	if err != nil {
		t.Fatal(err)
	}
	if err := eng.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	admin := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer admin.Close()
	applied := func() int64 { return admin.XLen(context.Background(), "{resend}:log").Val() }
	before := applied()
	proxy.DropReplies("evalsha")
	if _, err := eng.Feedback(context.Background(), res, citeBoth); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the server to apply the first try", func() bool { return applied() == before+1 })
	waitFor(t, "the try to time out", func() bool { return eng.StateStatus().Err != nil })
	time.Sleep(300 * time.Millisecond) // more tries reach the server
	proxy.DropReplies("")
	if err := eng.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := applied(); n != before+1 {
		t.Errorf("%d batches applied for one feedback", n-before)
	}
	u, err := store.Changes(context.Background(), learned.Version{}, "")
	if err != nil {
		t.Fatal(err)
	}
	if h := u.Full.Heat["fa"]; h.Refs != 1 || u.Full.Trust["fa"] != 0.55 {
		t.Errorf("after the resend: refs %d, trust %v; want 1 and 0.55", h.Refs, u.Full.Trust["fa"])
	}
}
