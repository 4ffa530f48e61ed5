//go:build unix

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/contextasm/contextasm/feedback"
	"github.com/contextasm/contextasm/internal/redistest"
	"github.com/contextasm/contextasm/learned"
)

// The serve command as processes of its own, against a real
// redis-server: replicas learning together, a kill -9 losing nothing
// acknowledged, a graceful stop flushing.

const (
	serveKey  = "fleet-key-0123456789"
	serveKeys = `{"keys":[{"key":"` + serveKey + `","tenant":"acme","roles":["*"]}]}`
	// serveBlocks blocks are cited serveCites times each: 10 × 0.05 from a
	// declared trust of 0 ends at 0.5, below the ceiling, so the sum is
	// exact.
	serveBlocks = 60
	serveCites  = 10
)

// served is a serve process.
type served struct {
	cmd  *exec.Cmd
	url  string
	done chan struct{} // closed when the process exited, with err set
	err  error
	mu   sync.Mutex
	log  []string // its stderr
}

// wait waits for the process to exit and returns its error.
func (s *served) wait() error {
	<-s.done
	return s.err
}

// startServe starts `contextasm serve` with the tests' keys in the
// environment and returns it once it listens.
func startServe(t *testing.T, args ...string) *served {
	t.Helper()
	cmd := cliCommand(append([]string{"serve", "--listen", "127.0.0.1:0"}, args...)...)
	cmd.Env = append(cmd.Env, keysEnv+"="+serveKeys)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &served{cmd: cmd, done: make(chan struct{})}
	lines := bufio.NewScanner(stderr)
	addr := regexp.MustCompile(`listening on (http://\S+)`)
	found := make(chan string, 1)
	go func() {
		for lines.Scan() {
			s.mu.Lock()
			s.log = append(s.log, lines.Text())
			s.mu.Unlock()
			if m := addr.FindStringSubmatch(lines.Text()); m != nil {
				found <- m[1]
			}
		}
	}()
	go func() { s.err = cmd.Wait(); close(s.done) }()
	select {
	case s.url = <-found:
	case <-s.done:
		t.Fatalf("serve exited before listening: %v", s.err)
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		t.Fatal("serve did not say where it listens")
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		s.wait()
		s.mu.Lock()
		defer s.mu.Unlock()
		log := strings.Join(s.log, "\n")
		if strings.Contains(log, "DATA RACE") || t.Failed() {
			t.Errorf("serve's stderr:\n%s", log)
		}
	})
	return s
}

// call sends a request to a serve process.
func (s *served) call(t *testing.T, method, path string, body any) (int, map[string]any) {
	t.Helper()
	b, _ := json.Marshal(body)
	if str, ok := body.(string); ok {
		b = []byte(str)
	}
	req, err := http.NewRequest(method, s.url+path, bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+serveKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, map[string]any{"transport": err.Error()}
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out map[string]any
	json.Unmarshal(raw, &out)
	return resp.StatusCode, out
}

// serveDeclarations are the blocks the tests cite: serveBlocks global
// context blocks of trust 0, all within the template's budget.
func serveDeclarations() string {
	var b strings.Builder
	for i := range serveBlocks {
		fmt.Fprintf(&b, `{"request_id":"b-%02d","memory_type":"context","scope":"global","trust_score":0,"content":"Fact %d."}`+"\n", i, i)
	}
	return b.String()
}

const serveTemplate = `{"budget": 4000, "sections": [{"name": "FACTS", "priority": 1, "memory_types": ["context"], "max_tokens": 3000, "render": "{content}"}]}`

// templateDir writes the tests' template as facts.json.
func templateDir(t *testing.T) string {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "facts.json"), []byte(serveTemplate), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// cite assembles on s and feeds back a citation of block, returning
// whether the feedback was acknowledged as stored.
func (s *served) cite(t *testing.T, block string) (stored bool, err error) {
	code, a := s.call(t, "POST", "/v1/assemble", map[string]any{"template": "facts", "now": "2026-11-30T09:00:00Z"})
	if code != 200 {
		return false, fmt.Errorf("assemble: %d %v", code, a)
	}
	code, fb := s.call(t, "POST", "/v1/feedback", map[string]any{"assembly_id": a["assembly_id"], "response": "Cited.",
		"cited": []map[string]any{{"id": block, "offset": 0}}})
	if code != 200 {
		return false, fmt.Errorf("feedback: %d %v", code, fb)
	}
	if len(fb["trust_changes"].([]any)) != 1 {
		return false, fmt.Errorf("feedback learned no trust change from a citation of a block in the context: %v", fb)
	}
	return fb["stored"] == true, nil
}

// storedTrust reads the tenant's learned trust straight from the store.
func storedTrust(t *testing.T, spec string) map[string]float64 {
	t.Helper()
	store, err := openState(strings.ReplaceAll(spec, tenantPlaceholder, "acme"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	st, err := loadState(context.Background(), store)
	if err != nil {
		t.Fatal(err)
	}
	return st.Trust
}

// TestServeFleetLearnsTogether: two servers on one Redis, eight clients
// citing through both; every citation is counted once in the shared
// state, and each server ranks with the trust the other taught.
func TestServeFleetLearnsTogether(t *testing.T) {
	rds := redistest.Start(t, redistest.Options{})
	spec := rds.URL("prefix=fleet-{tenant}")
	tpl := templateDir(t)
	servers := []*served{startServe(t, "--state", spec, "--templates", tpl), startServe(t, "--state", spec, "--templates", tpl)}
	for _, s := range servers {
		if code, r := s.call(t, "POST", "/v1/declarations", serveDeclarations()); code != 200 {
			t.Fatalf("declare: %d %v", code, r)
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, serveBlocks*serveCites)
	for c := range 8 {
		wg.Go(func() {
			for i := c; i < serveBlocks*serveCites; i += 8 {
				// Stored or not yet (a store slower than the flush timeout
				// under load): every citation must end in the state once.
				if _, err := servers[i%2].cite(t, fmt.Sprintf("b-%02d", i%serveBlocks)); err != nil {
					errs <- fmt.Errorf("citation %d: %v", i, err)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	want := learned.TrustUnits(serveCites * feedback.DefaultPolicy().StartGain)
	deadline := time.Now().Add(20 * time.Second)
	for {
		trust := storedTrust(t, spec)
		var wrong []string
		for i := range serveBlocks {
			id := fmt.Sprintf("b-%02d", i)
			if got := learned.TrustUnits(trust[id]); got != want {
				wrong = append(wrong, fmt.Sprintf("%s: %v", id, trust[id]))
			}
		}
		if len(wrong) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("trust in Redis, want %v for every block (%d citations of %v): %v", learned.TrustFromUnits(want), serveCites,
				feedback.DefaultPolicy().StartGain, wrong)
		}
		time.Sleep(100 * time.Millisecond)
	}
	// Each server ranks with what both taught: its dump's trust is the
	// shared one, within a poll.
	for i, s := range servers {
		deadline := time.Now().Add(10 * time.Second)
		for {
			_, a := s.call(t, "POST", "/v1/assemble", map[string]any{"template": "facts", "now": "2026-11-30T09:00:00Z", "dump": true})
			if taught(a) == serveBlocks {
				break
			}
			if time.Now().After(deadline) {
				t.Errorf("server %d does not rank with the shared trust: %v", i, a["dump"])
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
}

// taught counts the blocks of an assemble reply's dump ranked with the
// trust the tests' citations teach.
func taught(reply map[string]any) int {
	n := 0
	dump, _ := reply["dump"].(map[string]any)
	sections, _ := dump["sections"].([]any)
	for _, sec := range sections {
		blocks, _ := sec.(map[string]any)["blocks"].([]any)
		for _, b := range blocks {
			if b.(map[string]any)["trust"] == serveCites*feedback.DefaultPolicy().StartGain {
				n++
			}
		}
	}
	return n
}

// TestServeRestartLosesNothing: a server killed with SIGKILL in the
// middle of a run, and Redis killed and restarted on its append-only
// file: every citation a server acknowledged as stored is in the state,
// once; none is counted twice.
func TestServeRestartLosesNothing(t *testing.T) {
	rds := redistest.Start(t, redistest.Options{Durable: true})
	spec := rds.URL("prefix=restart-{tenant}")
	tpl := templateDir(t)
	s := startServe(t, "--state", spec, "--templates", tpl)
	if code, r := s.call(t, "POST", "/v1/declarations", serveDeclarations()); code != 200 {
		t.Fatalf("declare: %d %v", code, r)
	}
	var mu sync.Mutex
	acked := map[string]int{}
	tried := map[string]int{}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for c := range 4 {
		wg.Go(func() {
			for i := c; ; i += 4 {
				select {
				case <-stop:
					return
				default:
				}
				id := fmt.Sprintf("b-%02d", i%serveBlocks)
				mu.Lock()
				if tried[id] == serveCites { // stay below the ceiling
					mu.Unlock()
					return
				}
				tried[id]++
				mu.Unlock()
				if stored, err := s.cite(t, id); err == nil && stored {
					mu.Lock()
					acked[id]++
					mu.Unlock()
				}
			}
		})
	}
	time.Sleep(300 * time.Millisecond)
	s.cmd.Process.Signal(syscall.SIGKILL)
	s.wait()
	close(stop)
	wg.Wait()
	rds.Kill()
	rds.Restart()
	total := 0
	trust := storedTrust(t, spec)
	gain := learned.TrustUnits(feedback.DefaultPolicy().StartGain)
	for id, n := range tried {
		got := learned.TrustUnits(trust[id])
		if got < int64(acked[id])*gain || got > int64(n)*gain || got%gain != 0 {
			t.Errorf("%s: trust %v; %d citation(s) acknowledged, %d tried: want a whole number of gains between", id, trust[id], acked[id], n)
		}
		total += acked[id]
	}
	if total == 0 {
		t.Fatal("no citation was acknowledged before the kill: the test shows nothing")
	}
	// A new server on the same state ranks with all of it.
	s2 := startServe(t, "--state", spec, "--templates", tpl)
	s2.call(t, "POST", "/v1/declarations", serveDeclarations())
	if stored, err := s2.cite(t, "b-00"); err != nil || !stored {
		t.Errorf("after the restart: stored %v, %v", stored, err)
	}
	t.Logf("%d citations acknowledged before SIGKILL, all in the state", total)
}

// TestServeStopFlushes: SIGTERM answers what is in flight, flushes the
// learned state to its file, and exits 0.
func TestServeStopFlushes(t *testing.T) {
	dir := t.TempDir()
	spec := filepath.Join(dir, "state-{tenant}.json")
	s := startServe(t, "--state", spec, "--templates", templateDir(t))
	s.call(t, "POST", "/v1/declarations", serveDeclarations())
	for i := range 5 {
		if _, err := s.cite(t, fmt.Sprintf("b-%02d", i)); err != nil {
			t.Fatal(err)
		}
	}
	s.cmd.Process.Signal(syscall.SIGTERM)
	if err := s.wait(); err != nil {
		t.Fatalf("serve after SIGTERM: %v", err)
	}
	trust := storedTrust(t, spec)
	for i := range 5 {
		if id := fmt.Sprintf("b-%02d", i); trust[id] != feedback.DefaultPolicy().StartGain {
			t.Errorf("%s: trust %v in the state file, want %v", id, trust[id], feedback.DefaultPolicy().StartGain)
		}
	}
}

// TestServeRefuses: the mistakes serve refuses to start with, exit 2.
func TestServeRefuses(t *testing.T) {
	t.Setenv(keysEnv, "")
	for _, c := range []struct {
		args []string
		env  string
		want string
	}{
		{[]string{"--listen", "0.0.0.0:0"}, "", "not loopback"},
		{[]string{"--state", "state.json"}, serveKeys, "{tenant}"},
		{[]string{"--listen", "nonsense"}, "", "host:port"},
		{nil, `{"keys":[{"key":"short","tenant":"a"}]}`, "keys[0].key"},
		{[]string{"--templates", "testdata/nothing-here"}, "", "--templates"},
	} {
		t.Setenv(keysEnv, c.env)
		code, _, stderr := runCLI(t, append([]string{"serve"}, c.args...)...)
		if code != exitUsage || !strings.Contains(stderr, c.want) {
			t.Errorf("serve %v (keys %q): exit %d, %q; want exit 2 naming %q", c.args, c.env, code, stderr, c.want)
		}
	}
}

// A mistyped serve is told its name, as the other commands are.
func TestServeDidYouMean(t *testing.T) {
	code, _, stderr := runCLI(t, "serv")
	if want := "contextasm: unknown command \"serv\" (did you mean serve?); see contextasm help\n"; code != exitUsage || stderr != want {
		t.Errorf("contextasm serv: exit %d, %q; want exit 2, %q", code, stderr, want)
	}
}
