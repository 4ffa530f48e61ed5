package learned

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
)

// StateVersion is the version of the state file this release reads and
// writes.
//
// Version 2 added the sessions' decisions and the store's bookkeeping
// (revision, epoch, writers). A version 1 file holds a subset of that and is
// read as it is; it is written back as version 2, which an older release
// refuses by its version rather than by an unknown field.
const StateVersion = 2

// ErrStateVersion means a state file has a version this release does not
// know; it is never silently reset.
var ErrStateVersion = errors.New("learned: unsupported state version")

// ErrInvalidState means a state file is not valid JSON of the state's
// shape; like ErrStateVersion, it is never silently reset.
var ErrInvalidState = errors.New("learned: not a state file")

// State is what an Engine has learned: trust per block and heat per block,
// keyed by request_id.
type State struct {
	// Version is the state file's version, StateVersion.
	Version int `json:"version"`
	// Trust is each block's learned trust, in [0, MaxTrust].
	Trust map[string]float64 `json:"trust"`
	// Heat is each block's heat counters.
	Heat map[string]Heat `json:"heat"`
	// Sessions holds each conversation's previous decisions, keyed by
	// SessionKey.
	Sessions map[string]*SessionState `json:"sessions,omitempty"`
}

// NewState returns an empty state of the current version.
func NewState() *State {
	return &State{Version: StateVersion, Trust: map[string]float64{}, Heat: map[string]Heat{}}
}

// Clone returns a deep copy of s.
func (s *State) Clone() *State {
	c := &State{Version: s.Version, Trust: make(map[string]float64, len(s.Trust)), Heat: make(map[string]Heat, len(s.Heat))}
	for k, v := range s.Trust {
		c.Trust[k] = v
	}
	for k, v := range s.Heat {
		c.Heat[k] = v
	}
	if s.Sessions != nil {
		c.Sessions = make(map[string]*SessionState, len(s.Sessions))
		for k, v := range s.Sessions {
			cp := *v
			cp.Data = append([]byte(nil), v.Data...)
			c.Sessions[k] = &cp
		}
	}
	return c
}

// DecodeState parses a state file's bytes; name is used in errors.
func DecodeState(data []byte, name string) (*State, error) {
	f, err := decodeFile(data, name)
	if err != nil {
		return nil, err
	}
	return f.State, nil
}

// decodeFile parses a state file: the state and the store's bookkeeping.
func decodeFile(data []byte, name string) (*stateFile, error) {
	var probe struct {
		Version *int `json:"version"`
	}
	if err := json.Unmarshal(data, &probe); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrInvalidState, name, err)
	}
	if probe.Version == nil {
		return nil, fmt.Errorf("%w: state %s has no version", ErrStateVersion, name)
	}
	if *probe.Version != StateVersion && *probe.Version != 1 {
		return nil, fmt.Errorf("%w: state %s is version %d; this release reads versions 1 and %d", ErrStateVersion, name, *probe.Version, StateVersion)
	}
	f := &stateFile{State: NewState()}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(f); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrInvalidState, name, err)
	}
	st := f.State
	st.Version = StateVersion // a version 1 file is upgraded as it is read
	if st.Trust == nil {
		st.Trust = map[string]float64{}
	}
	if st.Heat == nil {
		st.Heat = map[string]Heat{}
	}
	for id, t := range st.Trust {
		if math.IsNaN(t) || t < 0 || t > MaxTrust {
			return nil, fmt.Errorf("%w: %s: trust of %q is %v, outside [0, 0.99]", ErrInvalidState, name, id, t)
		}
	}
	for id, h := range st.Heat {
		if h.Included < 0 || h.Dropped < 0 || h.Cut < 0 || h.Refs < 0 || h.StartRefs < 0 {
			return nil, fmt.Errorf("%w: %s: heat of %q has a negative counter", ErrInvalidState, name, id)
		}
	}
	for k, v := range st.Sessions {
		if v == nil {
			return nil, fmt.Errorf("%w: %s: session %q is null", ErrInvalidState, name, k)
		}
		v.Data = compactJSON(v.Data) // the file is indented; stores hold it compact
	}
	if f.Epoch == "" && (f.Revision > 0 || len(st.Trust)+len(st.Heat)+len(st.Sessions) > 0) {
		// A file of an earlier release: a name of its own, so that it is
		// not mistaken for the empty state.
		f.Epoch = "unnamed"
	}
	return f, nil
}

// compactJSON returns data without insignificant white space; data is
// valid JSON or empty.
func compactJSON(data []byte) json.RawMessage {
	if len(data) == 0 {
		return nil
	}
	if !bytes.ContainsAny(data, " \t\r\n") {
		// No white space at all, so none to take out (an engine's own
		// decisions, from json.Marshal): a copy, without scanning it.
		return bytes.Clone(data)
	}
	var b bytes.Buffer
	if err := json.Compact(&b, data); err != nil {
		return data
	}
	return b.Bytes()
}
