package contextasm

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"sync"
	"time"

	"github.com/contextasm/contextasm/chat"
	"github.com/contextasm/contextasm/contextasm/internal/assemble"
	"github.com/contextasm/contextasm/learned"
)

// A conversation is the assemblies of one session, user, template and
// format (text, or a chat API's body): each
// follows the decisions of the one before, kept in the learned state
// (learned.State.Sessions, keyed by learned.SessionKey), so that the
// rendered prefix stays byte-stable from call to call. Reading and
// recording those decisions happens here and nowhere else.

// conversationTemplate is what a conversation's key names as its
// template: the fingerprint, and for a chat format the format too. A text
// and a chat body of the same session write different prompts, so each
// follows its own previous decision; the text format's key is the
// fingerprint alone, as it was before chat formats.
func conversationTemplate(fingerprint string, f chat.Format) string {
	if f == 0 {
		return fingerprint
	}
	return fingerprint + "+" + f.String()
}

// convState is what an assembly reads of its conversation's state.
type convState struct {
	key      string
	version  uint64             // of the state read; the record's base
	previous *assemble.Decision // nil on the first assembly
	digest   [16]byte           // of the previous decision: part of the output memo's key
}

// decoded is a conversation's previous decision, decoded once for as long
// as its state stays the same value.
type decoded struct {
	state    *learned.SessionState
	decision *assemble.Decision
	digest   [16]byte
}

// decisionCache holds each conversation's previous decision, decoded, by
// its key.
type decisionCache struct {
	mu sync.Mutex
	m  map[string]decoded
}

// of returns the decision of conversation key, whose state is ss (nil:
// none), decoded on first use of that state.
func (c *decisionCache) of(key string, ss *learned.SessionState) decoded {
	c.mu.Lock()
	defer c.mu.Unlock()
	if ss == nil {
		delete(c.m, key)
		return decoded{}
	}
	d, ok := c.m[key]
	if !ok || d.state != ss {
		d = decoded{state: ss, digest: digestOf(ss.Data)}
		var dec assemble.Decision
		if json.Unmarshal(ss.Data, &dec) == nil && dec.Version == assemble.DecisionVersion {
			d.decision = &dec
		}
		c.m[key] = d
	}
	return d
}

func (c *decisionCache) put(key string, d decoded) {
	c.mu.Lock()
	c.m[key] = d
	c.mu.Unlock()
}

// forget drops the decisions of keys.
func (c *decisionCache) forget(keys []string) {
	c.mu.Lock()
	for _, k := range keys {
		delete(c.m, k)
	}
	c.mu.Unlock()
}

// previousDecision returns the decision the previous assembly of the
// conversation recorded. A record this release cannot read counts as none:
// the assembly decides afresh and replaces it.
func (e *Engine) previousDecision(session, user, fingerprint string) convState {
	c := convState{key: learned.SessionKey(session, user, fingerprint)}
	ss := e.session(c.key)
	d := e.convs.of(c.key, ss)
	if ss != nil {
		c.version = ss.Version
	}
	c.previous, c.digest = d.decision, d.digest
	return c
}

// recordDecision records the decision an assembly at now made as the
// conversation's next version: a replacement of the version it read, which
// loses to any other assembly of the same conversation that recorded
// first. data is appendRecord's of recordOf (assembled.decision).
func (e *Engine) recordDecision(c convState, now time.Time, d *assemble.Decision, data []byte) error {
	if ss := e.session(c.key); ss != nil && ss.Version == c.version && ss.Updated.Equal(now) && bytes.Equal(ss.Data, data) {
		return nil // the same call again: nothing to record
	}
	if err := e.putMarshaled(c.key, c.version, now, data); err != nil {
		return err
	}
	if ss := e.session(c.key); ss != nil && bytes.Equal(ss.Data, data) {
		e.convs.put(c.key, decoded{state: ss, decision: d, digest: digestOf(data)})
	}
	return nil
}
func digestOf(data []byte) [16]byte {
	if len(data) == 0 {
		return [16]byte{}
	}
	sum := sha256.Sum256(data)
	var k [16]byte
	copy(k[:], sum[:16])
	return k
}
