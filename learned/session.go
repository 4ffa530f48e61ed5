package learned

import (
	"encoding/json"
	"time"
)

// SessionState is what an Engine remembers of one conversation between
// calls: the decisions of its previous assembly, so that the next call can
// keep the prompt prefix byte-stable. It is keyed in State.Sessions by
// SessionKey. Data is owned by the assembler and opaque to stores: a store
// keeps it as one versioned value, replaced whole.
type SessionState struct {
	// Version increases by one on every replacement; a store refuses a
	// replacement whose base version is not the current one.
	Version uint64 `json:"version"`
	// Updated is the assembly time ("now") of the call that wrote it; idle
	// session TTLs count from it.
	Updated time.Time `json:"updated"`
	// Data is the assembler's record of its decisions, as JSON. Stores
	// keep it compact (json.Compact): white space between tokens is not
	// kept.
	Data json.RawMessage `json:"data,omitempty"`
}

// SessionKey is the key of a session's state in State.Sessions: session,
// user and template fingerprint, length-prefixed so that no two distinct
// triples share a key.
func SessionKey(session, user, fingerprint string) string {
	b := make([]byte, 0, len(session)+len(user)+len(fingerprint)+12)
	for _, s := range [...]string{session, user, fingerprint} {
		b = appendLen(b, len(s))
		b = append(b, s...)
	}
	return string(b)
}

func appendLen(b []byte, n int) []byte {
	// Decimal length and a colon: readable in a state file, unambiguous.
	var tmp [20]byte
	i := len(tmp)
	for {
		i--
		tmp[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			break
		}
	}
	b = append(b, tmp[i:]...)
	return append(b, ':')
}
