package assemble_test

import (
	"errors"
	"math/rand/v2"
	"reflect"
	"slices"
	"sync"
	"testing"

	"github.com/contextasm/contextasm/contextasm/internal/assemble"
	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/truncate"
)

// TestAssemblerReuse checks that an Assembler's scratch space does not leak
// into results: an Output stays as it was after the Assembler runs again,
// and a reused Assembler gives what a fresh one gives.
func TestAssemblerReuse(t *testing.T) {
	tok := realTokenizer(t)
	rng := rand.New(rand.NewPCG(7, 8))
	var reused assemble.Assembler
	var kept []*assemble.Output
	var copies []assemble.Output
	for range 40 {
		w := randomWorkload(t, rng)
		out, err := reused.Assemble(w.tpl, w.blocks, propertyRequest, tok)
		var fresh assemble.Assembler
		want, wantErr := fresh.Assemble(w.tpl, w.blocks, propertyRequest, tok)
		if (err == nil) != (wantErr == nil) || err != nil && err.Error() != wantErr.Error() {
			t.Fatalf("reused: %v, fresh: %v", err, wantErr)
		}
		if err != nil {
			continue
		}
		if !reflect.DeepEqual(out, want) {
			t.Fatalf("a reused Assembler gives another output than a fresh one")
		}
		kept = append(kept, out)
		copies = append(copies, deepCopy(out))
	}
	for i := range kept {
		if !reflect.DeepEqual(*kept[i], copies[i]) {
			t.Fatalf("output %d changed after later assemblies", i)
		}
	}
	if len(kept) < 20 {
		t.Fatalf("only %d workloads assembled", len(kept))
	}
}

func deepCopy(o *assemble.Output) assemble.Output {
	c := *o
	c.Events = slices.Clone(o.Events)
	c.Sections = slices.Clone(o.Sections)
	for i := range c.Sections {
		c.Sections[i].Blocks = slices.Clone(o.Sections[i].Blocks)
	}
	return c
}

// TestConcurrentAssemblers runs Assemblers in parallel over one template
// and one block slice, half of them sharing one memo: the inputs are only
// read (the race detector would see a write), are left unchanged, and
// every run gives the same output.
func TestConcurrentAssemblers(t *testing.T) {
	tok := realTokenizer(t)
	rng := rand.New(rand.NewPCG(9, 10))
	var w workload
	for {
		w = randomWorkload(t, rng)
		var a assemble.Assembler
		if _, err := a.Assemble(w.tpl, w.blocks, propertyRequest, tok); err == nil && len(w.blocks) > 20 {
			break
		}
	}
	for i := range w.blocks {
		w.blocks[i] = keyed(w.blocks[i])
	}
	memo := newMapMemo()
	before := slices.Clone(w.blocks)
	for i := range before {
		if w.blocks[i].Rare != nil {
			before[i].EditRare().Roles = slices.Clone(w.blocks[i].Roles())
		}
	}
	var ref assemble.Assembler
	want, err := ref.Assemble(w.tpl, w.blocks, propertyRequest, tok)
	if err != nil {
		t.Fatal(err)
	}
	const workers = 8
	outs := make([]*assemble.Output, workers)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for g := range workers {
		wg.Go(func() {
			var a assemble.Assembler
			if g%2 == 0 {
				a.Memo = memo
			}
			for range 3 {
				out, err := a.Assemble(w.tpl, w.blocks, propertyRequest, tok)
				if err != nil {
					errs[g] = err
					return
				}
				outs[g] = out
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	for g, out := range outs {
		if !reflect.DeepEqual(out, want) {
			t.Errorf("worker %d (memo %v): another output", g, g%2 == 0)
		}
	}
	if memo.hits == 0 {
		t.Error("the shared memo was never used")
	}
	if !reflect.DeepEqual(before, w.blocks) {
		t.Error("Assemble changed the blocks it was given")
	}
}

// TestHeaderOverBudget: a budget smaller than the protocol header cannot
// be met by dropping blocks; the assembly fails closed.
func TestHeaderOverBudget(t *testing.T) {
	tok := realTokenizer(t)
	tpl := mustParse(t, `{"budget": 10, "sections": [
	  {"name": "S", "priority": 1, "memory_types": ["context"], "max_tokens": 100, "render": "{content}"}]}`)
	if n := tok.Count(tpl.Header()); n <= 10 {
		t.Fatalf("fixture: the header counts %d ≤ 10", n)
	}
	var a assemble.Assembler
	for _, blocks := range [][]assemble.Block{nil, {block("a", declare.Context, "hi")}} {
		out, err := a.Assemble(tpl, blocks, assemble.Request{Now: now}, tok)
		if !errors.Is(err, truncate.ErrBudgetTooSmall) || out != nil {
			t.Errorf("%d blocks: out %v, err %v; want ErrBudgetTooSmall", len(blocks), out, err)
		}
	}
}
