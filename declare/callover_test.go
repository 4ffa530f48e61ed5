package declare_test

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/contextasm/contextasm/chat"
	"github.com/contextasm/contextasm/declare"
)

// An index of a store kept by Add and Remove, read through by Over under
// a batch of declarations that replace some of the store, finds exactly
// the problems an index made from scratch of the store (less the blocks
// replaced) and the batch finds, in the same order: over random stores of
// calls and results in two sessions, with call ids that collide and ids
// written alike on the wire.
func TestOverIsTheStoreLessTheReplaced(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 3))
	callID := func() string {
		ids := []string{"c1", "c2", "c3", "c.4", chat.WireID("c.4"), "c5"} // the two written alike
		return ids[r.IntN(len(ids))]
	}
	block := func() declare.Declaration {
		d := declare.Declaration{RequestID: fmt.Sprint("b", r.IntN(12)), MemoryType: declare.History, Scope: declare.ScopeSession,
			SessionID: []string{"s1", "s2"}[r.IntN(2)]}
		if r.IntN(2) == 0 {
			d.Role = declare.RoleAssistant
			for range 1 + r.IntN(2) {
				d.ToolCalls = append(d.ToolCalls, declare.ToolCall{ID: callID(), Name: "f"})
			}
		} else {
			d.Role, d.ToolCallID = declare.RoleTool, callID()
		}
		return d
	}
	checked, refused := 0, 0
	for trial := range 3000 {
		// The store: blocks declared one by one when they pass, some
		// forgotten or declared again; the index follows it.
		store := map[string]declare.Declaration{}
		var kept declare.CallIndex
		for range r.IntN(14) {
			d := block()
			if old, ok := store[d.RequestID]; ok && r.IntN(3) == 0 { // forgotten
				kept.Remove(&old)
				delete(store, d.RequestID)
				continue
			}
			x := declare.Over(&kept, func(id string) bool { return id == d.RequestID })
			if probs := x.Add(&d); len(probs) > 0 {
				continue
			}
			if _, ok := x.Answers(&d); !ok {
				continue
			}
			if old, ok := store[d.RequestID]; ok {
				kept.Remove(&old)
			}
			kept.Add(&d)
			store[d.RequestID] = d
		}
		batch := make([]declare.Declaration, 1+r.IntN(3))
		replaced := map[string]bool{}
		for i := range batch {
			batch[i] = block()
			replaced[batch[i].RequestID] = true
		}
		check := func(x *declare.CallIndex) []declare.Problem {
			var probs []declare.Problem
			for i := range batch {
				probs = append(probs, x.Add(&batch[i])...)
			}
			for i := range batch {
				if p, ok := x.Answers(&batch[i]); !ok {
					probs = append(probs, p)
				}
			}
			return probs
		}
		var fresh declare.CallIndex
		for i := range 12 { // the store, less what the batch replaces
			if d, ok := store[fmt.Sprint("b", i)]; ok && !replaced[d.RequestID] {
				fresh.Add(&d)
			}
		}
		want := check(&fresh)
		over := declare.Over(&kept, func(id string) bool { return replaced[id] })
		if got := check(&over); !reflect.DeepEqual(got, want) {
			t.Fatalf("trial %d: through the kept index %v, from scratch %v (store %v, batch %v)", trial, got, want, store, batch)
		}
		checked++
		if len(want) > 0 {
			refused++
		}
	}
	if refused < checked/5 || refused > checked*4/5 {
		t.Errorf("%d of %d batches refused: the trials do not test both outcomes", refused, checked)
	}
}
