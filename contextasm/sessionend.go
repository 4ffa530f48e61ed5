package contextasm

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/contextasm/contextasm/chat"
	"github.com/contextasm/contextasm/contextasm/internal/assemble"
	"github.com/contextasm/contextasm/declare"
)

// SessionEnd says what ending a session released.
type SessionEnd struct {
	// Blocks is the number of the session's blocks released from the store.
	Blocks int
	// Decisions is the number of its conversations (one per user and
	// template) whose previous decisions were released.
	Decisions int
}

// EndSession releases a session: its session-scoped blocks, the decisions
// its conversations follow (for every user and template, in the learned
// state too), and the engine's cached output and rendered-block counts of
// those blocks, their heat and the indexes of the session's request
// shapes. It costs what the session holds, not what the caches hold.
// User- and global-scoped memory is untouched, and so is learned trust,
// kept by request_id. Ending a session that holds nothing is not an error.
func (e *Engine) EndSession(session string) (SessionEnd, error) {
	if session == "" {
		return SessionEnd{}, fmt.Errorf("%w: EndSession needs a session id", ErrInvalid)
	}
	e.mu.Lock()
	ids := e.bySession.ids(session)
	e.mu.Unlock()
	released := e.releaseBlocks(ids)
	n, err := e.releaseDecisions(session)
	return SessionEnd{Blocks: len(released), Decisions: n}, err
}

// CollectIdle releases what the idle TTLs of session-scoped blocks say is
// due at now (declaration field idle_ttl): each such block once its
// session has gone idle_ttl without an assembly, and the session's
// decisions and cached output once it has gone the longest idle_ttl of its
// blocks. A session's idle time counts from its last assembly by this
// Engine, or, before its first, from the latest last_modified of its
// blocks. Assemble calls it with its own now; a host that wants abandoned
// sessions collected without assembling calls it itself.
func (e *Engine) CollectIdle(now time.Time) (SessionEnd, error) {
	snap := e.current()
	if len(snap.idle) == 0 {
		return SessionEnd{}, nil
	}
	var end SessionEnd
	e.idleMu.Lock()
	due := map[string]bool{}
	var over []string
	for session, set := range snap.idle {
		since := e.lastUseOf(session)
		if set.dated.After(since) {
			since = set.dated
		}
		if since.IsZero() {
			continue
		}
		idle := now.Sub(since)
		for id, ttl := range set.ttl {
			if idle >= ttl {
				due[id] = true
			}
		}
		if idle >= set.longest {
			over = append(over, session)
		}
	}
	e.idleMu.Unlock()
	if len(due) > 0 {
		end.Blocks = len(e.releaseBlocks(slices.Collect(maps.Keys(due))))
	}
	slices.Sort(over)
	for _, s := range over {
		n, err := e.releaseDecisions(s)
		end.Decisions += n
		if err != nil {
			return end, err
		}
	}
	return end, nil
}

// idleSet is a session's blocks that carry an idle TTL, in one snapshot.
type idleSet struct {
	ttl     map[string]time.Duration // by request_id
	longest time.Duration
	dated   time.Time // the latest last_modified of the session's blocks
}

// idleIndex returns the idle TTLs of blocks by session, nil when no block
// has one.
func idleIndex(blocks []*assemble.Block) map[string]*idleSet {
	var idx map[string]*idleSet
	for _, b := range blocks {
		if b.IdleTTL() <= 0 || b.Scope != declare.ScopeSession {
			continue
		}
		if idx == nil {
			idx = make(map[string]*idleSet)
		}
		set := idx[b.SessionID]
		if set == nil {
			set = &idleSet{ttl: make(map[string]time.Duration)}
			idx[b.SessionID] = set
		}
		set.ttl[b.ID] = b.IdleTTL()
		set.longest = max(set.longest, b.IdleTTL())
	}
	if idx == nil {
		return nil
	}
	for _, b := range blocks {
		if set := idx[b.SessionID]; set != nil && b.Scope == declare.ScopeSession && b.LastModified.After(set.dated) {
			set.dated = b.LastModified
		}
	}
	return idx
}

// used notes an assembly of session at now, from which its idle time
// counts. Only sessions with blocks that carry an idle TTL are tracked.
func (e *Engine) used(session string, now time.Time) {
	if session == "" || e.current().idle[session] == nil {
		return
	}
	e.idleMu.Lock()
	if now.After(e.lastUseOf(session)) {
		e.lastUse[session] = now
	}
	e.idleMu.Unlock()
}

// lastUseOf returns session's last assembly: as noted, or, the first time
// it is asked, as the learned state says (the latest Updated of its
// conversations, written by this process or an earlier one). The caller
// holds idleMu.
func (e *Engine) lastUseOf(session string) time.Time {
	if t, ok := e.lastUse[session]; ok {
		return t
	}
	_, last := e.rep.SessionKeys(session)
	e.lastUse[session] = last
	return last
}

// releaseBlocks forgets the session-scoped blocks of ids, and the
// engine's cached counts of their renderings. It returns them.
func (e *Engine) releaseBlocks(ids []string) []*assemble.Block {
	slices.Sort(ids)
	e.mu.Lock()
	set := e.current().set
	var gone []*assemble.Block
	ids = slices.DeleteFunc(ids, func(id string) bool {
		b, ok := set.get(id)
		if ok && b.Scope == declare.ScopeSession {
			gone = append(gone, b)
			return false
		}
		return true
	})
	if len(gone) > 0 {
		set, changes := set.remove(ids)
		e.publish(set, changes)
		e.dropHeat(ids)
	}
	e.mu.Unlock()
	if len(gone) == 0 {
		return nil
	}
	e.last.forget()
	// The texts counted of them: their contents (a message's, a cut's)
	// and renderings (the render memo's, and the content alone, as
	// "{content}" renders it), each also with the newline that ends it in
	// a section that separates blocks by lines (assemble's lineMode), and
	// their tool calls' ids and arguments.
	texts := make([]string, 0, 4*len(gone))
	for _, b := range gone {
		texts = appendCounted(texts, b.Content)
		for _, r := range e.renders.cache.Group(b.Key) {
			texts = appendCounted(texts, r.text)
		}
		if id := b.ToolCallID(); id != "" {
			texts = append(texts, chat.WireID(id))
		}
		for _, tc := range b.ToolCalls() {
			texts = append(texts, chat.WireID(tc.ID), tc.Arguments)
		}
		e.memo.cache.RemoveGroup(b.Key)
		e.renders.cache.RemoveGroup(b.Key)
	}
	// Counts, cuts and cut plans are cached by the content's hash.
	e.tokens.Forget(texts)
	return gone
}

// appendCounted appends text, when not empty, and text with the newline
// that ends it in a section of lines.
func appendCounted(texts []string, text string) []string {
	if text == "" {
		return texts
	}
	return append(texts, text, text+"\n")
}

// sessionBlocks indexes the session-scoped blocks of the current snapshot
// by session (request_ids as a set), kept in step by publish, so that
// ending a session finds its blocks without a walk of the store. The
// Engine's is guarded by its mu.
type sessionBlocks map[string]map[string]struct{}

// update applies the changes of a publish.
func (s *sessionBlocks) update(changes []change) {
	for _, c := range changes {
		if b := c.old; b != nil && b.Scope == declare.ScopeSession {
			if ids := (*s)[b.SessionID]; ids != nil {
				delete(ids, b.ID)
				if len(ids) == 0 {
					delete(*s, b.SessionID)
				}
			}
		}
		if b := c.new; b != nil && b.Scope == declare.ScopeSession {
			if *s == nil {
				*s = make(sessionBlocks)
			}
			ids := (*s)[b.SessionID]
			if ids == nil {
				ids = make(map[string]struct{})
				(*s)[b.SessionID] = ids
			}
			ids[b.ID] = struct{}{}
		}
	}
}

// ids returns the request_ids of session's blocks.
func (s sessionBlocks) ids(session string) []string {
	return slices.Collect(maps.Keys(s[session]))
}

// releaseDecisions deletes the decisions of every conversation of session
// (one per user and template) and returns how many there were.
func (e *Engine) releaseDecisions(session string) (int, error) {
	keys, _ := e.rep.SessionKeys(session)
	slices.Sort(keys)
	e.convs.forget(keys)
	e.dropIndexes(session)
	e.idleMu.Lock()
	delete(e.lastUse, session)
	e.idleMu.Unlock()
	if len(keys) > 0 {
		e.last.forget() // the cached output may be one of the session's
	}
	for i, k := range keys {
		if err := e.dropSession(k); err != nil {
			return i, err
		}
	}
	return len(keys), nil
}
