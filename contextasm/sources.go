package contextasm

import (
	"slices"
	"sort"
	"sync"
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
