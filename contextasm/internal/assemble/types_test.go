package assemble_test

import (
	"reflect"
	"testing"
	"unsafe"

	"github.com/contextasm/contextasm/contextasm/internal/assemble"
	"github.com/contextasm/contextasm/truncate"
)

// TestScoreNoWeights: a Scoring whose weights sum to zero scores every
// block 0 rather than dividing by zero.
func TestScoreNoWeights(t *testing.T) {
	b := assemble.Block{Priority: 1, HasPriority: true, Weight: 1, Trust: 1}
	if got := assemble.Score(truncate.Scoring{Priority: 1, SemanticWeight: -0.5, Trust: -0.5}, &b, now); got != 0 {
		t.Errorf("score = %v, want 0", got)
	}
}

// TestRareIsZeroSeesEveryField: setting any one field of a Rare makes it
// non-zero, so SetRare never drops a field a later change adds to Rare
// and forgets in IsZero.
func TestRareIsZeroSeesEveryField(t *testing.T) {
	if !(&assemble.Rare{}).IsZero() {
		t.Fatal("the zero Rare is not zero")
	}
	rt := reflect.TypeFor[assemble.Rare]()
	for i := range rt.NumField() {
		var r assemble.Rare
		f := reflect.ValueOf(&r).Elem().Field(i)
		switch f.Kind() {
		case reflect.Slice:
			f.Set(reflect.MakeSlice(f.Type(), 0, 0)) // empty but not nil: set
		case reflect.String:
			f.SetString("x")
		case reflect.Int, reflect.Int64:
			f.SetInt(1)
		default:
			t.Fatalf("Rare.%s: kind %s not covered by this test", rt.Field(i).Name, f.Kind())
		}
		if r.IsZero() {
			t.Errorf("Rare with only %s set is zero", rt.Field(i).Name)
		}
		var b assemble.Block
		b.SetRare(r)
		if b.Rare == nil || !reflect.DeepEqual(*b.Rare, r) {
			t.Errorf("SetRare with only %s set: Rare %+v", rt.Field(i).Name, b.Rare)
		}
	}
	b := assemble.Block{Rare: &assemble.Rare{Group: "g"}}
	b.SetRare(assemble.Rare{})
	if b.Rare != nil {
		t.Errorf("SetRare(zero) left Rare %+v", b.Rare)
	}
}

// TestEditRareCopies: EditRare gives a Block rare fields of its own, so a
// Block copied before keeps its own.
func TestEditRareCopies(t *testing.T) {
	var a assemble.Block
	if a.Group() != "" || a.Roles() != nil || a.MaxTokens() != 0 {
		t.Fatal("a Block without Rare reads non-zero rare fields")
	}
	a.EditRare().Group = "g"
	b := a
	b.EditRare().Group = "h"
	if a.Group() != "g" || b.Group() != "h" {
		t.Errorf("groups %q and %q, want g and h", a.Group(), b.Group())
	}
}

// TestBlockSize pins the size of a Block: an Engine holds one per block
// (hundreds of thousands), allocated one by one, and 288 bytes is a size
// class of Go's allocator. A field added inline that most blocks leave
// empty belongs in Rare.
func TestBlockSize(t *testing.T) {
	if n := unsafe.Sizeof(assemble.Block{}); n > 288 {
		t.Errorf("assemble.Block is %d bytes, more than 288", n)
	}
}
