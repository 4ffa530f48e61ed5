package contextasm

import (
	"encoding/json"
	"fmt"
	"time"

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
	return e.addSessionDelta(learned.SessionDelta{Key: key, Base: base, Updated: now, Data: data})
}

// dropSession deletes the state of session key.
func (e *Engine) dropSession(key string) error {
	return e.addSessionDelta(learned.SessionDelta{Key: key, Delete: true})
}

func (e *Engine) addSessionDelta(d learned.SessionDelta) error {
	b := learned.Batch{Sessions: []learned.SessionDelta{d}}
	check := b
	check.Writer, check.Seq = "check", 1
	if err := check.Validate(); err != nil {
		return fmt.Errorf("%w: session state: %v", ErrInvalid, err)
	}
	if _, ok := e.rep.Add(b); !ok {
		return fmt.Errorf("%w: the session's state was not kept", ErrStateQueueFull)
	}
	return nil
}
