package contextasm

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/contextasm/contextasm/chat"
	"github.com/contextasm/contextasm/template"
)

// Request is one assembly's input.
type Request struct {
	// Template is the compiled template to fill. Required.
	Template *template.Template
	// Now is the instant expiry and staleness are judged at. Required: the
	// engine never reads the clock, so that a result can be reproduced.
	Now time.Time
	// SessionID and UserID select session- and user-scoped blocks.
	SessionID string
	UserID    string // empty: the request sees no user-scoped block
	// Roles are the roles the request holds; a block with roles needs one.
	Roles []string
	// ID names the assembly in its audit record. Empty means
	// "asm-" and the first 12 hex digits of the render hash.
	ID string
	// ListHidden is a trusted debugging mode: blocks excluded because they
	// belong to another session or user, need a role the request lacks or
	// are meant for the user only are listed by id in the events (and so
	// in the dump, the views and the audit record) instead of being
	// counted per reason in ExcludedCounts. Those ids are other tenants'
	// business: never set it for output a tenant may see.
	ListHidden bool
	// Format, when set, assembles for a chat API's request body instead
	// of one text: history blocks become messages (Result.Messages), and
	// the budget covers the whole conversation (see ChatOverhead).
	Format chat.Format
	// Fresh decides from scratch, as if the conversation had no previous
	// assembly; the decision it makes is the one the next call follows.
	// Without it, a request with a SessionID follows the decisions of the
	// previous assembly of the same session, user, template and format (see
	// Config.Stickiness), and Result.Prefix compares the two texts.
	Fresh bool
	// Query is what the call is about, as text: each eligible block's
	// relevance to it enters its score (docs/relevance.md). Empty means,
	// for a request with a SessionID, the session's newest user turn the
	// request may see (NoQuery turns that off), and no query otherwise.
	Query string
	// NoQuery assembles without relevance, whatever the session holds.
	NoQuery bool
	// Relevance, when not nil, is the host's own relevance of blocks, by
	// request_id, each from 0 to 1 (a retriever's, an embedding index's),
	// in place of the built-in scorer's: a block it does not name has
	// relevance 0, since two scorers' numbers are not on one scale
	// (docs/relevance.md). Query is then not read.
	Relevance map[string]float64
}

// check refuses a request without a template or a now, and one whose
// session, user or roles hold a control character.
func (req *Request) check(maxQuery int) error {
	if req.Template == nil {
		return fmt.Errorf("%w: Request.Template is nil", ErrInvalid)
	}
	if req.Now.IsZero() {
		return fmt.Errorf("%w: Request.Now is zero (the engine never reads the clock)", ErrInvalid)
	}
	if err := req.checkQuery(maxQuery); err != nil {
		return err
	}
	return req.checkIdentity()
}

// checkQuery refuses a query that is not UTF-8 or longer than a block's
// content may be, and host relevance outside [0, 1] (NaN included).
func (req *Request) checkQuery(maxQuery int) error {
	switch {
	case !utf8.ValidString(req.Query):
		return fmt.Errorf("%w: Request.Query is not valid UTF-8", ErrInvalid)
	case len(req.Query) > maxQuery:
		return fmt.Errorf("%w: Request.Query has %d bytes, more than a block's content may (%d)", ErrInvalid, len(req.Query), maxQuery)
	}
	for id, v := range req.Relevance {
		if !(v >= 0 && v <= 1) {
			return fmt.Errorf("%w: Request.Relevance[%q] is %v, want a number from 0 to 1", ErrInvalid, id, v)
		}
	}
	return nil
}

// checkIdentity refuses control characters in the request's session, user
// and roles: they are compared byte for byte and keyed on, and a role "a\x00b"
// has no business next to roles "a" and "b".
func (req *Request) checkIdentity() error {
	bad := func(s string) bool {
		return strings.IndexFunc(s, unicode.IsControl) >= 0
	}
	switch {
	case bad(req.SessionID):
		return fmt.Errorf("%w: Request.SessionID %q contains a control character", ErrInvalid, req.SessionID)
	case bad(req.UserID):
		return fmt.Errorf("%w: Request.UserID %q contains a control character", ErrInvalid, req.UserID)
	}
	for i, r := range req.Roles {
		if bad(r) {
			return fmt.Errorf("%w: Request.Roles[%d] %q contains a control character", ErrInvalid, i, r)
		}
	}
	return nil
}

// rolesKey encodes a role list for the warm-path key without ambiguity:
// each role is prefixed by its length, so no two lists share a key.
func rolesKey(roles []string) string {
	var b []byte
	for _, r := range roles {
		b = strconv.AppendInt(b, int64(len(r)), 10)
		b = append(b, ':')
		b = append(b, r...)
	}
	return string(b)
}
