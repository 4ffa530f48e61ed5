package feedback

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
)

// StateVersion is the version of the state file this release reads and
// writes.
const StateVersion = 1

// ErrStateVersion means a state file has a version this release does not
// know; it is never silently reset.
var ErrStateVersion = errors.New("feedback: unsupported state version")

// State is what an Engine has learned: trust per block and heat per block,
// keyed by request_id.
type State struct {
	Version int                `json:"version"`
	Trust   map[string]float64 `json:"trust"`
	Heat    map[string]Heat    `json:"heat"`
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

// FileStore keeps a State in one JSON file, replaced atomically on every
// save: a temporary file in the same directory is written and fsynced, then
// renamed over the old file, then the directory is fsynced. A crash at any
// point leaves either the old file or the new one, never a torn one.
type FileStore struct {
	path string
	// rename is os.Rename; tests replace it to inject a failure between
	// writing the temporary file and renaming it.
	rename func(oldpath, newpath string) error
}

// NewFileStore returns a store for the state file at path.
func NewFileStore(path string) *FileStore {
	return &FileStore{path: path, rename: os.Rename}
}

// Path returns the state file's path.
func (s *FileStore) Path() string { return s.path }

// Load reads the state. A missing file is an empty state (the first run);
// an unreadable, malformed or unknown-version file is an error.
func (s *FileStore) Load() (*State, error) {
	data, err := os.ReadFile(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		return NewState(), nil
	}
	if err != nil {
		return nil, fmt.Errorf("feedback: reading state: %w", err)
	}
	return DecodeState(data, s.path)
}

// DecodeState parses a state file's bytes; name is used in errors.
func DecodeState(data []byte, name string) (*State, error) {
	var probe struct {
		Version *int `json:"version"`
	}
	if err := json.Unmarshal(data, &probe); err != nil {
		return nil, fmt.Errorf("feedback: state %s: not a state file: %w", name, err)
	}
	if probe.Version == nil {
		return nil, fmt.Errorf("%w: state %s has no version", ErrStateVersion, name)
	}
	if *probe.Version != StateVersion {
		return nil, fmt.Errorf("%w: state %s is version %d; this release reads version %d", ErrStateVersion, name, *probe.Version, StateVersion)
	}
	st := NewState()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(st); err != nil {
		return nil, fmt.Errorf("feedback: state %s: %w", name, err)
	}
	if st.Trust == nil {
		st.Trust = map[string]float64{}
	}
	if st.Heat == nil {
		st.Heat = map[string]Heat{}
	}
	for id, t := range st.Trust {
		if math.IsNaN(t) || t < 0 || t > 0.99 {
			return nil, fmt.Errorf("feedback: state %s: trust of %q is %v, outside [0, 0.99]", name, id, t)
		}
	}
	for id, h := range st.Heat {
		if h.Included < 0 || h.Dropped < 0 || h.Cut < 0 || h.Refs < 0 || h.StartRefs < 0 {
			return nil, fmt.Errorf("feedback: state %s: heat of %q has a negative counter", name, id)
		}
	}
	return st, nil
}

// Save replaces the state file with st, atomically.
func (s *FileStore) Save(st *State) (err error) {
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return fmt.Errorf("feedback: encoding state: %w", err)
	}
	data = append(data, '\n')
	dir := filepath.Dir(s.path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(s.path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("feedback: saving state: %w", err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err = tmp.Write(data); err != nil {
		return fmt.Errorf("feedback: saving state: %w", err)
	}
	if err = tmp.Sync(); err != nil {
		return fmt.Errorf("feedback: saving state: %w", err)
	}
	if err = tmp.Close(); err != nil {
		return fmt.Errorf("feedback: saving state: %w", err)
	}
	if err = s.rename(tmp.Name(), s.path); err != nil {
		return fmt.Errorf("feedback: saving state: %w", err)
	}
	// The rename is durable only once the directory entry is on disk.
	if d, derr := os.Open(dir); derr == nil {
		derr = d.Sync()
		d.Close()
		if derr != nil {
			return fmt.Errorf("feedback: saving state: syncing %s: %w", dir, derr)
		}
	}
	return nil
}
