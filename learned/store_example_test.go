package learned_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/contextasm/contextasm/learned"
)

// A batch of deltas applied to a state file, then resent (its
// acknowledgement was lost): the store applies it once.
func ExampleFileStore_Apply() {
	dir, _ := os.MkdirTemp("", "state")
	defer os.RemoveAll(dir)
	store := learned.NewFileStore(filepath.Join(dir, "state.json"))
	b := &learned.Batch{Writer: "host-1", Seq: 1,
		Trust: []learned.TrustDelta{{ID: "policy-dti-limit", Base: 0.8, Add: 0.05, Ceiling: 0.99}},
		Heat:  []learned.HeatDelta{{ID: "policy-dti-limit", Heat: learned.Heat{Refs: 1, StartRefs: 1}}}}
	for range 2 {
		if _, err := store.Apply(context.Background(), b); err != nil {
			fmt.Println(err)
		}
	}
	st, _ := store.Load()
	fmt.Println(st.Trust["policy-dti-limit"], st.Heat["policy-dti-limit"].Refs)
	// Output: 0.85 1
}
