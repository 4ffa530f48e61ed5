package contextasm

import (
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/contextasm/contextasm/outcome"
)

// sourceEvents holds what each source (an MCP server, a file root) last
// reported about blocks it could not deliver: binary, source_unavailable,
// outside_root. Assembly never asks a source anything; it reads these.
type sourceEvents struct {
	mu     sync.RWMutex
	bySrc  map[string][]Event
	merged []Event // all sources' events, sorted by source; rebuilt on change
}

// SetSourceEvents replaces the events source reports (nil clears them).
// Every later assembly lists the current events of every source after its
// own, sources in name order. Sources call this; hosts rarely need to.
func (e *Engine) SetSourceEvents(source string, events []Event) {
	s := &e.sources
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.bySrc == nil {
		s.bySrc = make(map[string][]Event)
	}
	if len(events) == 0 {
		delete(s.bySrc, source)
	} else {
		s.bySrc[source] = slices.Clone(events)
	}
	names := make([]string, 0, len(s.bySrc))
	for name := range s.bySrc {
		names = append(names, name)
	}
	sort.Strings(names)
	var merged []Event
	for _, name := range names {
		merged = append(merged, s.bySrc[name]...)
	}
	s.merged = merged
}

// current returns the merged source events; the slice is never mutated.
func (s *sourceEvents) current() []Event {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.merged
}

// inputSet holds the hashes of the declaration files and source snapshots
// a host reported loading (see Engine.SetInput).
type inputSet struct {
	mu     sync.RWMutex
	inputs []outcome.Input // sorted by name; replaced, never mutated
}

// SetInput records that the declarations named name (a file such as
// "file:memories.jsonl", or a source's snapshot) were loaded with the hex
// SHA-256 sha; an empty sha forgets name. Every later audit record lists
// the current inputs, in name order, so a record tells which version of
// each file the assembly saw.
func (e *Engine) SetInput(name, sha string) {
	s := &e.inputs
	s.mu.Lock()
	defer s.mu.Unlock()
	next := make([]outcome.Input, 0, len(s.inputs)+1)
	for _, in := range s.inputs {
		if in.Name != name {
			next = append(next, in)
		}
	}
	if sha != "" {
		next = append(next, outcome.Input{Name: name, SHA256: sha})
	}
	slices.SortFunc(next, func(a, b outcome.Input) int { return strings.Compare(a.Name, b.Name) })
	s.inputs = next
}

// current returns the recorded inputs; the slice is never mutated.
func (s *inputSet) current() []outcome.Input {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.inputs
}
