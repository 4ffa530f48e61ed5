package contextasm

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"

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
}

// check refuses a request without a template or a now, and one whose
// session, user or roles hold a control character.
func (req *Request) check() error {
	if req.Template == nil {
		return fmt.Errorf("%w: Request.Template is nil", ErrInvalid)
	}
	if req.Now.IsZero() {
		return fmt.Errorf("%w: Request.Now is zero (the engine never reads the clock)", ErrInvalid)
	}
	return req.checkIdentity()
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
