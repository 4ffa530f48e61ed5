package mcpsource_test

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/contextasm/contextasm/contextasm"
	"github.com/contextasm/contextasm/declare/mcpsource"
	"github.com/contextasm/contextasm/outcome"
	"github.com/contextasm/contextasm/template"
)

// snapshotHash is the documented hash of a source's blocks, computed
// here from the declarations the sink was given.
func snapshotHash(t *testing.T, s *recSink, prefix string) string {
	t.Helper()
	h := sha256.New()
	var n [8]byte
	for _, id := range s.ids() {
		if !strings.HasPrefix(id, prefix) {
			continue
		}
		d, _ := s.decl(id)
		b, err := json.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(b)
		binary.BigEndian.PutUint64(n[:], uint64(len(id)))
		h.Write(n[:])
		h.Write([]byte(id))
		h.Write(sum[:])
	}
	return hex.EncodeToString(h.Sum(nil))
}

// A Sink that records inputs is told the hash of each source's blocks
// after every change, and the Engine's audit records name it: the same
// blocks give the same hash, other blocks another.
func TestSnapshotHashInAudit(t *testing.T) {
	srv := subscribable("")
	a := addDoc(srv, &mcp.Resource{URI: "test://a", Name: "a"}, "v1")
	addDoc(srv, &mcp.Resource{URI: "test://b", Name: "b"}, "b")
	sink := newSink(t)
	col := start(t, sink, mcpsource.Config{Servers: []mcpsource.Server{fast(mcpsource.Server{Name: "s", Transport: serve(srv).transport})}})
	if err := col.WaitSynced(bounded(t)); err != nil {
		t.Fatal(err)
	}
	first := sink.input("source:mcp:s")
	if first == "" || first != snapshotHash(t, sink, "mcp:s:") {
		t.Fatalf("recorded %q, want the hash of the declared blocks %q", first, snapshotHash(t, sink, "mcp:s:"))
	}
	tpl, err := template.Parse([]byte(`{"budget": 100, "sections": [{"name": "S", "priority": 1, "memory_types": ["external"], "max_tokens": 80, "render": "{content}"}]}`), "t.json")
	if err != nil {
		t.Fatal(err)
	}
	res, err := sink.eng.Assemble(bounded(t), contextasm.Request{Template: tpl, Now: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	if in := res.Audit().Inputs; !slices.Contains(in, outcome.Input{Name: "source:mcp:s", SHA256: first}) {
		t.Errorf("audit inputs %+v, want source:mcp:s with %s", in, first)
	}

	update := func(text string) {
		t.Helper()
		a.set(text, nil)
		eventually(t, "the update to "+text, func() bool {
			_ = srv.ResourceUpdated(t.Context(), &mcp.ResourceUpdatedNotificationParams{URI: "test://a"})
			// the hash is recorded right after the blocks are declared
			return content(sink, "mcp:s:test://a") == text && sink.input("source:mcp:s") == snapshotHash(t, sink, "mcp:s:")
		})
	}
	update("v2")
	if second := sink.input("source:mcp:s"); second == first {
		t.Errorf("after a change: still %q", second)
	}
	update("v1")
	if again := sink.input("source:mcp:s"); again != first {
		t.Errorf("the first blocks again: %q, want %q", again, first)
	}
}
