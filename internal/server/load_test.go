package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/contextasm/contextasm/bench"
	"github.com/contextasm/contextasm/contextasm"
	"github.com/contextasm/contextasm/feedback"
	"github.com/contextasm/contextasm/learned"
	"github.com/contextasm/contextasm/template"
)

// timed is an Instrumented engine that records the engine's own time per
// assembly, so a benchmark can tell the server's cost from the engine's.
type timed struct {
	*contextasm.Engine
	mu   sync.Mutex
	last time.Duration
}

func (e *timed) Assemble(ctx context.Context, req contextasm.Request) (*contextasm.Result, error) {
	start := time.Now()
	res, err := e.Engine.Assemble(ctx, req)
	d := time.Since(start)
	e.mu.Lock()
	e.last = d
	e.mu.Unlock()
	return res, err
}

// benchServer is a server of one tenant (no keys) holding the 2,000-block
// workload, its engine timed.
func benchServer(b *testing.B, blocks int) (*testServer, *timed) {
	b.Helper()
	tpl, err := template.Parse(bench.TemplateJSON(8192), "workload")
	if err != nil {
		b.Fatal(err)
	}
	var eng *timed
	keys, _ := ParseKeys([]byte(`{"keys":[{"key":"bench-key-000000001","tenant":"t","roles":["*"]}]}`))
	ts := serve(b, Config{Keys: keys, Templates: map[string]*template.Template{"workload": tpl},
		Instrument: func(_ string, e *contextasm.Engine) (Instrumented, error) { eng = &timed{Engine: e}; return eng, nil }}, false)
	if err := eng.Declare(bench.Generate(blocks, 1)...); err != nil {
		b.Fatal(err)
	}
	return ts, eng
}

// BenchmarkRoundTrip measures what a loopback round trip of POST
// /v1/assemble adds to the engine's own time, at 2,000 blocks: each
// iteration declares a new turn of the session (untimed) and assembles
// over HTTP; the added cost is the client's round trip less the time the
// engine took inside it. Reported: its p50 and p99 (added-p50-µs,
// added-p99-µs), the engine's p50 (engine-p50-µs), and the baseline of the
// same run: a bare net/http handler on loopback answering the same bytes,
// called right after each assembly (bare-p50-µs, bare-p99-µs), so that
// what the machine's load and HTTP itself cost can be told from the
// server's own work. Run with -benchtime 2000x for stable percentiles.
func BenchmarkRoundTrip(b *testing.B) {
	for _, turn := range []bool{true, false} {
		name := "turn"
		if !turn {
			name = "repeat" // the same request again: the engine's memo answers
		}
		b.Run(name, func(b *testing.B) {
			ts, eng := benchServer(b, 2000)
			body, _ := json.Marshal(map[string]any{"template": "workload", "session": bench.Session, "now": bench.Epoch.Format(time.RFC3339)})
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
			var canned atomic.Pointer[[]byte]
			bare := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.Copy(io.Discard, r.Body)
				w.Header().Set("Content-Type", "application/json")
				w.Write(*canned.Load())
			}))
			defer bare.Close()
			// The client's buffers are reused: its garbage, in this
			// process, would be the server's to collect (a real client
			// is another process).
			var answer, bareAnswer bytes.Buffer
			added := make([]time.Duration, 0, b.N)
			engine := make([]time.Duration, 0, b.N)
			baseline := make([]time.Duration, 0, b.N)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if turn {
					b.StopTimer()
					if err := eng.Declare(bench.Turn(i)); err != nil {
						b.Fatal(err)
					}
					i++
					b.StartTimer()
				}
				req, _ := http.NewRequest("POST", ts.url+"/v1/assemble", bytes.NewReader(body))
				req.Header.Set("Authorization", "Bearer bench-key-000000001")
				rt, out := timedPost(b, client, req, &answer)
				eng.mu.Lock()
				e := eng.last
				eng.mu.Unlock()
				added = append(added, rt-e)
				engine = append(engine, e)
				canned.Store(&out)
				req, _ = http.NewRequest("POST", bare.URL+"/v1/assemble", bytes.NewReader(body))
				bt, _ := timedPost(b, client, req, &bareAnswer)
				baseline = append(baseline, bt)
			}
			b.ReportMetric(percentile(added, 50), "added-p50-µs")
			b.ReportMetric(percentile(added, 99), "added-p99-µs")
			b.ReportMetric(percentile(engine, 50), "engine-p50-µs")
			b.ReportMetric(percentile(baseline, 50), "bare-p50-µs")
			b.ReportMetric(percentile(baseline, 99), "bare-p99-µs")
		})
	}
}

// timedPost sends req and reads the whole answer, which must be a 200:
// the time it took and the body.
func timedPost(b *testing.B, client *http.Client, req *http.Request, buf *bytes.Buffer) (time.Duration, []byte) {
	start := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	buf.Reset()
	_, err = buf.ReadFrom(resp.Body)
	resp.Body.Close()
	took := time.Since(start)
	if err != nil || resp.StatusCode != 200 {
		b.Fatalf("status %d, %v", resp.StatusCode, err)
	}
	return took, buf.Bytes()
}

// percentile returns the p-th percentile of ds, in µs.
func percentile(ds []time.Duration, p int) float64 {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return float64(s[min(len(s)-1, len(s)*p/100)]) / float64(time.Microsecond)
}

// TestConcurrentClients: 16 clients, each assembling and feeding back
// CONTEXTASM_SERVER_CALLS times (50 by default, 1,000 for the target:
// CONTEXTASM_SERVER_CALLS=1000 go test -run TestConcurrentClients
// ./internal/server), against one tenant: no request fails, every
// citation is counted (the trust each block ends at is its declared trust
// plus exactly its citations' gains), the retained assemblies stay within
// Retain, and the heap after the run is no larger than a bound that does
// not grow with the calls.
func TestConcurrentClients(t *testing.T) {
	calls := 50
	if v := os.Getenv("CONTEXTASM_SERVER_CALLS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			t.Fatal(err)
		}
		calls = n
	}
	const clients, blocks = 16, 8
	gain := 0.0001 // small, so 2,000 citations of a block stay below the ceiling
	ts := start(t, Config{Retain: 256, MaxConcurrent: 32, Engine: contextasm.Config{Policy: feedback.Policy{StartGain: gain}}})
	eng, _ := ts.Engine("acme")
	var decls bytes.Buffer
	for i := range blocks {
		fmt.Fprintf(&decls, `{"request_id":"fact-%d","memory_type":"context","scope":"global","trust_score":0.5,"content":"Fact number %d."}`+"\n", i, i)
	}
	ts.must(200, "POST", "/v1/declarations", keyAcmeSupport, decls.String())
	var failures atomic.Int64
	var mid runtime.MemStats
	var midOnce sync.Once
	var midRSS string
	var wg sync.WaitGroup
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients}}
	post := func(path string, body any) (map[string]any, error) {
		b, _ := json.Marshal(body)
		req, _ := http.NewRequest("POST", ts.url+path, bytes.NewReader(b))
		req.Header.Set("Authorization", "Bearer "+keyAcmeSupport)
		resp, err := client.Do(req)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		var out map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
			return nil, err
		}
		if resp.StatusCode != 200 {
			return nil, fmt.Errorf("%s: %d %v", path, resp.StatusCode, out)
		}
		return out, nil
	}
	for c := range clients {
		wg.Go(func() {
			for i := range calls {
				if c == 0 && i == calls/4 {
					midOnce.Do(func() { runtime.GC(); runtime.ReadMemStats(&mid); midRSS = rss() })
				}
				a, err := post("/v1/assemble", map[string]any{"template": "chat", "session": fmt.Sprintf("s-%d", c), "now": testNow})
				if err == nil {
					_, err = post("/v1/feedback", map[string]any{"assembly_id": a["assembly_id"],
						"response": fmt.Sprintf(`<memory_ref id="fact-%d"/>`, (c+i)%blocks)})
				}
				if err != nil {
					failures.Add(1)
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if failures.Load() > 0 {
		t.Fatalf("%d clients failed", failures.Load())
	}
	want := map[string]int{}
	for c := range clients {
		for i := range calls {
			want[fmt.Sprintf("fact-%d", (c+i)%blocks)]++
		}
	}
	st := eng.State()
	for id, n := range want {
		if got, exp := learned.TrustUnits(st.Trust[id]), learned.TrustUnits(0.5)+int64(n)*learned.TrustUnits(gain); got != exp {
			t.Errorf("%s: trust %v after %d citations, want %v", id, st.Trust[id], n, learned.TrustFromUnits(exp))
		}
	}
	if n := ts.tenants["acme"].asm.cache.Len(); n > 256 {
		t.Errorf("%d assemblies retained, more than Retain (256)", n)
	}
	var end runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&end)
	t.Logf("%d clients × %d calls: heap %.1f MiB after a quarter, %.1f MiB at the end; RSS %s, then %s", clients, calls,
		float64(mid.HeapAlloc)/(1<<20), float64(end.HeapAlloc)/(1<<20), midRSS, rss())
	if calls >= 200 && end.HeapAlloc > 2*mid.HeapAlloc+32<<20 {
		t.Errorf("the heap grew from %d to %d bytes from a quarter of the run to its end: something is kept per call", mid.HeapAlloc, end.HeapAlloc)
	}
}

// rss is the process's resident set as /proc says it (Linux), for the log.
func rss() string {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return "unknown"
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}
