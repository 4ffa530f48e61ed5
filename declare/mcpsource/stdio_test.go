package mcpsource_test

import (
	"strings"
	"testing"
	"time"

	"github.com/contextasm/contextasm/declare/mcpsource"
	"github.com/contextasm/contextasm/outcome"
)

// stdio starts one stdio server built from internal/testserver.
func stdio(t *testing.T, sink *recSink, name string, s mcpsource.Server, args ...string) *mcpsource.Collector {
	t.Helper()
	s.Name = name
	s.Command = append([]string{testServerBin, "-name", name}, args...)
	return start(t, sink, mcpsource.Config{Servers: []mcpsource.Server{fast(s)}})
}

// A real subprocess over stdio: resources, annotations, a clean Close.
func TestStdio(t *testing.T) {
	sink := newSink(t)
	col := stdio(t, sink, "real", mcpsource.Server{}, "-resources", "4")
	if err := col.WaitSynced(bounded(t)); err != nil {
		t.Fatal(err)
	}
	st := col.Status()[0]
	if st.State != mcpsource.Ready || st.Blocks != 4 || st.Protocol == "" {
		t.Fatalf("status %+v", st)
	}
	d, _ := sink.decl("mcp:real:test://real/doc/0")
	if d.Content != "Document 0 of server real." || d.Priority == nil || *d.Priority != 0.8 || d.LastModified == nil ||
		len(d.Audience) != 1 || d.Audience[0] != "assistant" || d.Provenance.SourceFormat != "text/plain" {
		t.Errorf("doc 0: %+v", d)
	}
	if d, _ := sink.decl("mcp:real:test://real/doc/3"); d.Priority != nil {
		t.Errorf("doc 3 has a priority: %v", *d.Priority)
	}
	t0 := time.Now()
	col.Close()
	if d := time.Since(t0); d > 1500*time.Millisecond {
		t.Errorf("Close took %v: the server should exit when its stdin closes", d) // a loose guard, not a measurement
	}
}

// A server that crashes mid-session (on its first read) is unavailable,
// says why (its stderr), and is retried.
func TestStdioCrashMidSession(t *testing.T) {
	sink := newSink(t)
	col := stdio(t, sink, "crashy", mcpsource.Server{}, "-mode", "crash-on-read")
	eventually(t, "the crash to be reported", func() bool {
		st := col.Status()[0]
		return st.State == mcpsource.Unavailable && st.Err != nil && strings.Contains(st.Err.Error(), "dying mid-session")
	})
	if !sink.hasEvent("mcp:crashy", "mcp:crashy", outcome.ReasonSourceUnavailable) || len(sink.ids()) != 0 {
		t.Errorf("events %+v, blocks %q", sink.eventsOf("mcp:crashy"), sink.ids())
	}
}

// A server that dies at once, and a command that does not exist.
func TestStdioCrashAtStart(t *testing.T) {
	sink := newSink(t)
	col := stdio(t, sink, "dead", mcpsource.Server{}, "-mode", "crash")
	if err := col.WaitSynced(bounded(t)); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the server's own words", func() bool {
		err := col.Status()[0].Err
		return err != nil && strings.Contains(err.Error(), "crashing on purpose")
	})
	col2 := start(t, sink, mcpsource.Config{Servers: []mcpsource.Server{fast(mcpsource.Server{Name: "nosuch", Command: []string{"/nonexistent/mcp-server"}})}})
	if err := col2.WaitSynced(bounded(t)); err != nil {
		t.Fatal(err)
	}
	if st := col2.Status()[0]; st.State != mcpsource.Unavailable || !sink.hasEvent("mcp:nosuch", "mcp:nosuch", outcome.ReasonSourceUnavailable) {
		t.Errorf("status %+v", st)
	}
}

// A server that never answers times out; the first sync attempt ends at
// ConnectTimeout, and Close is quick.
func TestStdioHang(t *testing.T) {
	sink := newSink(t)
	t0 := time.Now()
	col := stdio(t, sink, "hang", mcpsource.Server{ConnectTimeout: 300 * time.Millisecond}, "-mode", "hang")
	if err := col.WaitSynced(bounded(t)); err != nil {
		t.Fatal(err)
	}
	t.Logf("first sync attempt ended after %v", time.Since(t0))
	st := col.Status()[0]
	if st.State != mcpsource.Unavailable || st.Err == nil || !strings.Contains(st.Err.Error(), "connect") {
		t.Errorf("status %+v", st)
	}
	if !sink.hasEvent("mcp:hang", "mcp:hang", outcome.ReasonSourceUnavailable) {
		t.Errorf("events %+v", sink.eventsOf("mcp:hang"))
	}
}

// A server that lies (empty contents) gets an event per resource and no
// empty block, and stays Ready.
func TestStdioEmptyContents(t *testing.T) {
	sink := newSink(t)
	col := stdio(t, sink, "liar", mcpsource.Server{}, "-mode", "empty", "-resources", "2")
	if err := col.WaitSynced(bounded(t)); err != nil {
		t.Fatal(err)
	}
	if st := col.Status()[0]; st.State != mcpsource.Ready || len(sink.ids()) != 0 {
		t.Fatalf("status %+v, blocks %q", st, sink.ids())
	}
	for _, id := range []string{"mcp:liar:test://liar/doc/0", "mcp:liar:test://liar/doc/1"} {
		if !sink.hasEvent("mcp:liar", id, outcome.ReasonSourceUnavailable) {
			t.Errorf("no event for %s: %+v", id, sink.eventsOf("mcp:liar"))
		}
	}
}

// One message of a stdio server is bounded by MaxResponseBytes, as an HTTP
// response is: a larger one ends the session, the blocks read before it
// stay, and the server is reported.
func TestStdioMessageTooLarge(t *testing.T) {
	sink := newSink(t)
	s := fast(mcpsource.Server{Name: "big", Command: []string{testServerBin, "-name", "big", "-resources", "2", "-pad", "200000"},
		MaxResponseBytes: 64 << 10})
	s.MinBackoff, s.MaxBackoff = time.Minute, time.Minute // the failure stays to be seen
	col := start(t, sink, mcpsource.Config{Servers: []mcpsource.Server{s}})
	eventually(t, "the session to end on the large message", func() bool {
		st := col.Status()[0]
		return st.State == mcpsource.Unavailable && st.Err != nil &&
			strings.Contains(st.Err.Error(), "larger than Server.MaxResponseBytes (65536 bytes)")
	})
	if got := content(sink, "mcp:big:test://big/doc/0"); got != "Document 0 of server big." {
		t.Errorf("the block read before the large message: %q", got)
	}
	if _, ok := sink.decl("mcp:big:test://big/doc/1"); ok {
		t.Error("the large resource was declared")
	}
	if !sink.hasEvent("mcp:big", "mcp:big", outcome.ReasonSourceUnavailable) ||
		!sink.hasEvent("mcp:big", "mcp:big:test://big/doc/1", outcome.ReasonSourceUnavailable) {
		t.Errorf("events %+v", sink.eventsOf("mcp:big"))
	}
}
