package contextasm_test

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/contextasm/contextasm/bench"
	"github.com/contextasm/contextasm/contextasm"
	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/learned"
	"github.com/contextasm/contextasm/template"
)

// Heat is kept for what is declared: forgetting a block deletes its heat,
// ending a session deletes the heat of its blocks, in the Engine's state
// and in the store's.
func TestHeatPrunedWithItsBlocks(t *testing.T) {
	tpl := parseTemplate(t, learnTemplate)
	path := filepath.Join(t.TempDir(), "state.json")
	decls := learnDecls()
	for _, id := range []string{"sess-a", "sess-b"} {
		d := global(id, declare.Context, "A fact of the session "+id)
		d.Scope, d.SessionID = declare.ScopeSession, "s1"
		decls = append(decls, d)
	}
	eng := newEngine(t, contextasm.Config{State: learned.NewFileStore(path), StateOptions: fastSync}, decls...)
	res := assemble(t, eng, contextasm.Request{Template: tpl, Now: demoNow, SessionID: "s1"})
	if _, err := eng.Feedback(t.Context(), res, `<memory_ref id="fact-a"/>`); err != nil {
		t.Fatal(err)
	}
	if err := eng.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	heatOf := func() (engine, file map[string]learned.Heat) {
		t.Helper()
		if err := eng.Flush(t.Context()); err != nil {
			t.Fatal(err)
		}
		st, err := learned.NewFileStore(path).Load()
		if err != nil {
			t.Fatal(err)
		}
		return eng.State().Heat, st.Heat
	}
	for _, h := range func() []map[string]learned.Heat { a, b := heatOf(); return []map[string]learned.Heat{a, b} }() {
		for _, id := range []string{"fact-a", "fact-b", "sess-a", "sess-b"} {
			if _, ok := h[id]; !ok {
				t.Fatalf("no heat of %s after a render: %v", id, h)
			}
		}
	}
	eng.Forget("fact-a")
	if _, err := eng.EndSession("s1"); err != nil {
		t.Fatal(err)
	}
	engine, file := heatOf()
	for what, h := range map[string]map[string]learned.Heat{"engine": engine, "file": file} {
		for _, id := range []string{"fact-a", "sess-a", "sess-b"} {
			if _, ok := h[id]; ok {
				t.Errorf("%s: heat of %s kept after it went: %v", what, id, h)
			}
		}
		if _, ok := h["fact-b"]; !ok {
			t.Errorf("%s: heat of fact-b, still declared, deleted: %v", what, h)
		}
	}
}

// At many blocks a render's heat is a delta per block, more than the
// queue holds: it has a bound of its own, so that a store that cannot
// keep up (here: its lock held) never refuses a Feedback for heat; the
// feedback's own deltas are what fills the queue.
func TestHeatNeverFillsTheQueue(t *testing.T) {
	tpl, err := template.Parse(bench.TemplateJSON(8192), "bench.json")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "state.json")
	opts := fastSync
	opts.MaxQueued = 100
	eng := newEngine(t, contextasm.Config{State: learned.NewFileStore(path), StateOptions: opts}, bench.Generate(2000, 1)...)
	release := holdLock(t, path)
	defer release()
	req := contextasm.Request{Template: tpl, Now: bench.Epoch, SessionID: bench.Session, UserID: bench.User}
	for turn := 1; turn <= 40; turn++ {
		if err := eng.Declare(bench.Turn(turn)); err != nil {
			t.Fatal(err)
		}
		res := assemble(t, eng, req)
		if turn%8 == 0 {
			eng.SaveState() // heat queued now, not only every HeatEvery (the store does not answer)
		}
		if _, err := eng.Feedback(t.Context(), res, fmt.Sprintf(`<memory_ref id="turn-%06d"/>`, turn)); err != nil {
			t.Fatalf("turn %d: %v (status %+v)", turn, err, eng.StateStatus())
		}
	}
	if st := eng.StateStatus(); st.Rejected != 0 || st.Queued < 2000 {
		t.Errorf("status %+v: want nothing rejected and the heat of 2,000 blocks queued", st)
	}
}

// Sessions started and ended leave nothing behind: after 3,000 of them
// (two turns each, an assembly, EndSession), with the default
// Config, the heap is within 3% of what it was after the first 200 (the
// target is 10%). Ending a session forgets the token counts of its texts
// too: before, the count cache filled with them towards its bound (8% more
// heap here, and 90% over 100,000 sessions of BenchmarkSessionChurn).
func TestSessionChurnReturnsMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("3,000 sessions")
	}
	tpl, err := template.Parse(bench.TemplateJSON(8192), "bench.json")
	if err != nil {
		t.Fatal(err)
	}
	eng := newEngine(t, contextasm.Config{}, bench.Generate(500, 1)...)
	session := func(i int) {
		s := fmt.Sprintf("churn-%07d", i)
		var decls []declare.Declaration
		for k := range 2 {
			d := bench.Turn(i*2 + k)
			d.RequestID, d.SessionID = fmt.Sprintf("%s-%d", s, k), s
			decls = append(decls, d)
		}
		if err := eng.Declare(decls...); err != nil {
			t.Fatal(err)
		}
		assemble(t, eng, contextasm.Request{Template: tpl, Now: bench.Epoch, SessionID: s, UserID: bench.User})
		if _, err := eng.EndSession(s); err != nil {
			t.Fatal(err)
		}
	}
	heap := func() uint64 {
		var m runtime.MemStats
		runtime.GC()
		runtime.GC()
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	for i := range 200 {
		session(i)
	}
	start := heap()
	for i := 200; i < 3200; i++ {
		session(i)
	}
	end := heap()
	t.Logf("heap %d B after 200 sessions, %d B after 3,200", start, end)
	if float64(end) > 1.03*float64(start) {
		t.Errorf("heap grew from %d B to %d B over 3,000 sessions started and ended: more than 3%%", start, end)
	}
	runtime.KeepAlive(eng)
}

// The heat sent every HeatEvery costs what the assemblies since rendered,
// not the store: a take looks at the cells the renders moved (their
// texts), and the drops counted lazily in the index reach the store in a
// settle made rarely, or on Flush. The heat is the same in the end as an
// in-memory Engine's, which counts everything at once.
func TestHeatTakeCostsWhatWasRendered(t *testing.T) {
	tpl, err := template.Parse(bench.TemplateJSON(8192), "bench.json")
	if err != nil {
		t.Fatal(err)
	}
	const blocks = 4000
	opts := fastSync
	opts.HeatEvery = time.Hour // the takes are the test's
	path := filepath.Join(t.TempDir(), "state.json")
	eng := newEngine(t, contextasm.Config{State: learned.NewFileStore(path), StateOptions: opts}, bench.Generate(blocks, 1)...)
	mem := newEngine(t, contextasm.Config{}, bench.Generate(blocks, 1)...)
	req := contextasm.Request{Template: tpl, Now: bench.Epoch, SessionID: bench.Session, UserID: bench.User}
	turn := func(i int) {
		for _, e := range []*contextasm.Engine{eng, mem} {
			if err := e.Declare(bench.Turn(i)); err != nil {
				t.Fatal(err)
			}
			assemble(t, e, req)
		}
	}
	turn(1) // the index built
	contextasm.HeatTake(eng)
	for i := 2; i <= 11; i++ {
		turn(i)
		deltas, visited := contextasm.HeatTake(eng)
		if deltas == 0 || visited > blocks/8 {
			t.Fatalf("turn %d: a take of %d deltas looked at %d cells of %d blocks: want some, and what one assembly rendered", i, deltas, visited, blocks)
		}
	}
	// A full assembly (ListHidden lists every block) counts every row at
	// once: the next take has them all, without a settle.
	full := req
	full.ListHidden = true
	for _, e := range []*contextasm.Engine{eng, mem} {
		assemble(t, e, full)
	}
	if deltas, _ := contextasm.HeatTake(eng); deltas < blocks/2 {
		t.Errorf("the take after a full assembly of %d blocks has %d deltas: want its rows'", blocks, deltas)
	}
	if err := eng.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	st, err := learned.NewFileStore(path).Load()
	if err != nil {
		t.Fatal(err)
	}
	want := mem.State().Heat
	for id, h := range want {
		if st.Heat[id] != h {
			t.Fatalf("heat of %s: the store holds %+v, the in-memory Engine %+v", id, st.Heat[id], h)
		}
	}
	if len(st.Heat) != len(want) {
		t.Fatalf("the store holds the heat of %d blocks; the in-memory Engine %d", len(st.Heat), len(want))
	}
}

// Over a 1,000-call conversation in sessions of 10 calls that end, the
// state holds what the live sessions hold: after the last call, the
// state file compacted is within 10% of its size after the first 200
// calls, and the files it is kept in (snapshot and log) within what the
// log's compaction allows, not growing with the calls.
func TestStateFileBoundedByLiveSessions(t *testing.T) {
	if testing.Short() {
		t.Skip("1,000 calls")
	}
	tpl, err := template.Parse(bench.TemplateJSON(8192), "bench.json")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "state.json")
	eng := newEngine(t, contextasm.Config{State: learned.NewFileStore(path), StateOptions: fastSync}, bench.Generate(500, 1)...)
	size := func(p string) int64 {
		fi, err := os.Stat(p)
		if err != nil {
			return 0
		}
		return fi.Size()
	}
	// files returns the size of the files as they are, and of the state
	// file compacted.
	files := func() (kept, compacted int64) {
		t.Helper()
		if err := eng.Flush(t.Context()); err != nil {
			t.Fatal(err)
		}
		kept = size(path) + size(path+".log")
		if err := learned.NewFileStore(path).Compact(t.Context()); err != nil {
			t.Fatal(err)
		}
		return kept, size(path)
	}
	var at200 int64
	for call := 1; call <= 1000; call++ {
		s := fmt.Sprintf("conv-%03d", (call-1)/10)
		d := bench.Turn(call)
		d.SessionID = s
		if err := eng.Declare(d); err != nil {
			t.Fatal(err)
		}
		res := assemble(t, eng, contextasm.Request{Template: tpl, Now: bench.Epoch.Add(time.Duration(call) * time.Second), SessionID: s, UserID: bench.User})
		if _, err := eng.Feedback(t.Context(), res, citing(res)); err != nil {
			t.Fatal(err)
		}
		if call%10 == 0 {
			if _, err := eng.EndSession(s); err != nil {
				t.Fatal(err)
			}
		}
		if call == 200 {
			_, at200 = files()
		}
	}
	kept, end := files()
	st, err := learned.NewFileStore(path).Load()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("state file compacted: %d B after 200 calls, %d B after 1,000 (%d B in the files before compacting); %d sessions, %d trust and %d heat entries",
		at200, end, kept, len(st.Sessions), len(st.Trust), len(st.Heat))
	if len(st.Sessions) != 0 || len(st.Heat) > 500 {
		t.Errorf("the state holds %d sessions and the heat of %d blocks after every session ended: want none, and at most the 500 shared blocks'", len(st.Sessions), len(st.Heat))
	}
	if float64(end) > 1.1*float64(at200) {
		t.Errorf("the state file compacted grew from %d B after 200 calls to %d B after 1,000", at200, end)
	}
	if bound := end + max(learned.LogFactor*end, 64<<10) + 64<<10; kept > bound {
		t.Errorf("the state files held %d B before compacting: more than the snapshot (%d B) and the log it compacts (%d B)", kept, end, bound-end)
	}
}

// citing returns a response citing the first block res kept.
func citing(res *contextasm.Result) string {
	id := ""
	if i := strings.Index(res.Text, `id="`); i >= 0 {
		rest := res.Text[i+len(`id="`):]
		id = rest[:strings.IndexByte(rest, '"')]
	}
	return fmt.Sprintf(`As the context says <memory_ref id=%q/>.`, id)
}
