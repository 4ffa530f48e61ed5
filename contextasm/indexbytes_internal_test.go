package contextasm

import (
	"context"
	"fmt"
	"runtime"
	"testing"

	"github.com/contextasm/contextasm/bench"
)

// Index.Bytes, which bounds the indexes' memory (Config.IndexBytes), is
// what they hold: building a dozen sessions' indexes on a store of 5,000
// blocks, with no query (no lexical documents), the newest turn's and
// the request's, grows the heap by what the Engine counts, within a third.
func TestIndexBytesIsWhatIndexesHold(t *testing.T) {
	for _, query := range []string{"", "-", "rate limit retry budget"} {
		t.Run(fmt.Sprintf("query=%q", query), func(t *testing.T) {
			req := Request{Query: query, NoQuery: query == ""}
			if query == "-" {
				req.Query = "" // the newest turn's
			}
			e, tpl := benchEngine(t, Config{})
			if err := e.Declare(bench.Generate(5000, 1)...); err != nil {
				t.Fatal(err)
			}
			call := func(s int) {
				d := bench.Turn(s)
				d.SessionID = fmt.Sprint("conv-", s)
				if err := e.Declare(d); err != nil {
					t.Fatal(err)
				}
				if _, err := e.Assemble(context.Background(), Request{Template: tpl, Now: bench.Epoch, SessionID: d.SessionID, UserID: bench.User, Query: req.Query, NoQuery: req.NoQuery}); err != nil {
					t.Fatal(err)
				}
			}
			call(0) // the caches warm, the first index made
			heap := func() uint64 {
				var m runtime.MemStats
				runtime.GC()
				runtime.GC()
				runtime.ReadMemStats(&m)
				return m.HeapAlloc
			}
			before, counted := heap(), e.ixs.bytes
			for s := 1; s <= 12; s++ {
				call(s)
			}
			grew, counts := float64(heap()-before), float64(e.ixs.bytes-counted)
			t.Logf("heap grew %.0f KB, indexes counted %.0f KB (%.2f)", grew/1024, counts/1024, counts/grew)
			if counts < grew*2/3 || counts > grew*4/3 {
				t.Errorf("the indexes count %.0f bytes, the heap grew %.0f", counts, grew)
			}
			runtime.KeepAlive(e)
		})
	}
}
