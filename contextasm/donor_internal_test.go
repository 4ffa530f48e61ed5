package contextasm

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/contextasm/contextasm/bench"
	"github.com/contextasm/contextasm/declare"
)

// A new session's index takes over an ended session's (Engine.adopt) or
// is built with the lexical documents of another session's, live or
// ended (Engine.donor, Index.BuildFrom): each
// session's assembly, with the query its newest turn makes, is the one
// an Engine that assembles from scratch makes, whether the sessions
// come one after another or at once, and none sees another's turns.
func TestSessionsFromDonorsEqualFull(t *testing.T) {
	fast, full, tpl := benchPair(t)
	store := bench.Generate(800, 1)
	for _, e := range []*Engine{fast, full} {
		if err := e.Declare(store...); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	session := func(t *testing.T, i int, end bool) {
		s := fmt.Sprintf("donor-%03d", i)
		var decls []declare.Declaration
		for k := range 1 + i%3 {
			d := bench.Turn(i*3 + k)
			d.RequestID, d.SessionID = fmt.Sprintf("%s-%d", s, k), s
			decls = append(decls, d)
		}
		req := Request{Template: tpl, Now: bench.Epoch, SessionID: s, UserID: bench.User}
		var texts [2]string
		for k, e := range []*Engine{fast, full} {
			if err := e.Declare(decls...); err != nil {
				t.Error(err)
				return
			}
			res, err := e.Assemble(ctx, req)
			if err != nil {
				t.Error(err)
				return
			}
			texts[k] = res.Text
			if end {
				if _, err := e.EndSession(s); err != nil {
					t.Error(err)
				}
			}
		}
		if texts[0] != texts[1] {
			t.Errorf("session %s: the incremental assembly differs from the full one:\n%s\n---\n%s", s, texts[0], texts[1])
		}
	}
	for i := range 12 { // one after another, each ended
		session(t, i, true)
	}
	var wg sync.WaitGroup
	for i := 12; i < 36; i++ { // at once, some left open
		wg.Add(1)
		go func() {
			defer wg.Done()
			session(t, i, i%2 == 0)
		}()
	}
	wg.Wait()
	// One after another, a session takes over the index of the one ended
	// before it (adopt); at once, most find none and build with another's
	// documents.
	if n, m := fast.donated.Load(), fast.adopted.Load(); n+m < 24 {
		t.Errorf("%d of 36 sessions' indexes were built with another's documents and %d took over an ended one's: want most", n, m)
	}
	if fast.indexed.Load() < 36 {
		t.Errorf("%d of 36 assemblies served from an index", fast.indexed.Load())
	}
}
