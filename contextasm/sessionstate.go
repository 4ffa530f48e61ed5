package contextasm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/contextasm/contextasm/contextasm/internal/assemble"
	"github.com/contextasm/contextasm/internal/jsonx"
	"github.com/contextasm/contextasm/learned"
)

// The learned state of sessions (learned.State.Sessions, keyed by
// learned.SessionKey) is read and written only through these, so that a
// shared store sees every change as a delta: a replacement that applies
// only on the version it was made from, or a deletion.

// session returns the state of session key, nil if there is none. The
// value is shared: read it, never change it.
func (e *Engine) session(key string) *learned.SessionState { return e.rep.Session(key) }

// putSession replaces the state of session key, read at version base (0:
// there was none), with data as of now: at once in the Engine's state, and
// queued for the store, which keeps it only if no other writer replaced
// that version first (the Engine then learns the winner from the store).
func (e *Engine) putSession(key string, base uint64, now time.Time, data json.RawMessage) error {
	return e.addSessionDelta(learned.SessionDelta{Key: key, Base: base, Updated: now, Data: data}, true)
}

// putMarshaled is putSession of data json.Marshal made, which is JSON:
// not checked again here (a few KB a call), only by the store
// (learned.Batch.Validate).
func (e *Engine) putMarshaled(key string, base uint64, now time.Time, data json.RawMessage) error {
	return e.addSessionDelta(learned.SessionDelta{Key: key, Base: base, Updated: now, Data: data}, false)
}

// dropSession deletes the state of session key.
func (e *Engine) dropSession(key string) error {
	return e.addSessionDelta(learned.SessionDelta{Key: key, Delete: true}, true)
}

// addSessionDelta queues d, held first to what a store accepts when
// check is set.
func (e *Engine) addSessionDelta(d learned.SessionDelta, check bool) error {
	b := learned.Batch{Sessions: []learned.SessionDelta{d}}
	if check {
		c := b
		c.Writer, c.Seq = "check", 1
		if err := c.Validate(); err != nil {
			return fmt.Errorf("%w: session state: %v", ErrInvalid, err)
		}
	}
	if _, ok := e.rep.Add(b); !ok {
		return fmt.Errorf("%w: the session's state was not kept", ErrStateQueueFull)
	}
	return nil
}

// recorded is what a conversation's state keeps of an assembly: its
// decision and, for a chat request with tools, the names of the tools it
// carried, which the next call's selection follows (tools.go). The
// decision's readers ignore the extra field; it comes first, so that
// reading it does not read the decision.
type recorded struct {
	Tools []string `json:"tools,omitempty"`
	*assemble.Decision
}

// appendRecord appends r as JSON: json.Marshal's of r, but for '<', '>'
// and '&' in its strings, which it writes as they are (any JSON reader
// reads the same record). It is made every call of a conversation, so it
// is written field by field, without reflection; TestRecordAsJSON and
// FuzzRecordAsJSON hold it to encoding/json.
func appendRecord(dst []byte, r recorded) ([]byte, error) {
	d := r.Decision
	dst = append(dst, '{')
	if len(r.Tools) > 0 {
		dst = append(dst, `"tools":[`...)
		for i, name := range r.Tools {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = jsonx.AppendString(dst, name)
		}
		dst = append(dst, "],"...)
	}
	dst = append(dst, `"v":`...)
	dst = strconv.AppendInt(dst, int64(d.Version), 10)
	dst, err := jsonx.AppendTime(append(dst, `,"now":`...), d.Now)
	if err != nil {
		return nil, fmt.Errorf("the decision's now: %w", err)
	}
	dst = append(dst, `,"sections":`...)
	if d.Sections == nil {
		dst = append(dst, "null"...)
	} else {
		dst = append(dst, '[')
		for i := range d.Sections {
			if i > 0 {
				dst = append(dst, ',')
			}
			if dst, err = appendSectionDecision(dst, &d.Sections[i]); err != nil {
				return nil, err
			}
		}
		dst = append(dst, ']')
	}
	if d.Query != "" {
		dst = append(dst, `,"query":`...)
		dst = jsonx.AppendString(dst, d.Query)
	}
	return append(dst, '}'), nil
}

// recordSize is about the size of d's record, so that it is written into
// one allocation.
func recordSize(d *assemble.Decision) int {
	n := 96 + len(d.Query)
	for i := range d.Sections {
		n += 48 + len(d.Sections[i].Name)
		for j := range d.Sections[i].Blocks {
			w := &d.Sections[i].Blocks[j]
			n += 48 + len(w.ID) + len(w.Key) + len(w.Span)
		}
	}
	return n
}

func appendSectionDecision(dst []byte, s *assemble.SectionDecision) ([]byte, error) {
	dst = append(dst, `{"name":`...)
	dst = jsonx.AppendString(dst, s.Name)
	if len(s.Blocks) > 0 {
		dst = append(dst, `,"blocks":[`...)
		for i := range s.Blocks {
			w := &s.Blocks[i]
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, `{"id":`...)
			dst = jsonx.AppendString(dst, w.ID)
			dst = append(dst, `,"key":`...)
			dst = jsonx.AppendString(dst, w.Key)
			dst = append(dst, `,"span":`...)
			dst = jsonx.AppendString(dst, w.Span)
			if w.Cut != 0 {
				dst = append(dst, `,"cut":`...)
				dst = strconv.AppendInt(dst, int64(w.Cut), 10)
			}
			if w.Message {
				dst = append(dst, `,"message":true`...)
			}
			if w.Variant != 0 {
				dst = append(dst, `,"variant":`...)
				dst = strconv.AppendInt(dst, int64(w.Variant), 10)
			}
			if w.Cleared {
				dst = append(dst, `,"cleared":true`...)
			}
			if w.Recalled {
				dst = append(dst, `,"recalled":true`...)
			}
			dst = append(dst, '}')
		}
		dst = append(dst, ']')
	}
	if s.Floor != nil {
		dst = append(dst, `,"floor":`...)
		var ok bool
		if dst, ok = jsonx.AppendFloat(dst, *s.Floor); !ok {
			return nil, fmt.Errorf("section %q: floor %v is not a JSON number", s.Name, *s.Floor)
		}
	}
	return append(dst, '}'), nil
}

// recordOf returns what the conversation's state keeps of out.
func recordOf(out *assemble.Output) recorded {
	r := recorded{Decision: out.Decision}
	if out.Tools != nil {
		r.Tools = make([]string, 0, len(out.Tools.Defs))
		for _, d := range out.Tools.Defs {
			r.Tools = append(r.Tools, d.Name)
		}
	}
	return r
}

// previousTools is the tools recorded in one session state, decoded.
type previousTools struct {
	state *learned.SessionState
	names []string
}

// previous returns the tools recorded in ss (nil: none), decoded once for
// as long as it is the state read last: a conversation's calls follow
// one another.
func (s *toolStore) previous(ss *learned.SessionState) []string {
	if ss == nil {
		return nil
	}
	if p := s.last.Load(); p != nil && p.state == ss {
		return p.names
	}
	names := recordedTools(ss.Data)
	s.last.Store(&previousTools{state: ss, names: names})
	return names
}

// recordedTools returns the tools a record (recorded, as JSON) names:
// its first field, when it is "tools".
func recordedTools(data []byte) []string {
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	if t, err := dec.Token(); err != nil || t != "tools" {
		return nil
	}
	var names []string
	if dec.Decode(&names) != nil {
		return nil
	}
	return names
}
