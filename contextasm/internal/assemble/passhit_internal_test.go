package assemble

import "testing"

// The relevance lane passes over a hit the walk passed over with its
// unit (passUnit marks it markPassed), as it does one made a candidate:
// returned again, the walk would make candidates of the unit it had just
// passed over.
func TestRelevanceLanePassesPassedHits(t *testing.T) {
	looked := 0
	passed := &ixEntry{b: &Block{ID: "r-passed"}, mark: markRel | markPassed}
	pulled := &ixEntry{b: &Block{ID: "r-pulled"}, mark: markRel | markVisited}
	next := &ixEntry{b: &Block{ID: "r-next"}, mark: markRel}
	w := walk{looked: &looked, rel: []relItem{{e: passed}, {e: pulled}, {e: next}}}
	r := w.relHead(false, 0)
	if r == nil {
		t.Fatal("relHead returned nothing, want r-next")
	}
	if r.e != next {
		t.Fatalf("relHead returned %s, want r-next: neither passed over nor pulled", r.e.b.ID)
	}
	if w.ri != 2 {
		t.Errorf("the lane is at %d, want 2: past the two it passed over", w.ri)
	}
}
