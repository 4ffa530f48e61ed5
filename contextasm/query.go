package contextasm

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"sync"

	"github.com/contextasm/contextasm/internal/lexical"
	"github.com/contextasm/contextasm/outcome"
)

// What a request is about (docs/relevance.md). A request names its query
// (Request.Query) or gives the host's own relevance (Request.Relevance);
// without either, a request with a SessionID is about the session's
// newest user turn it may see, which the assembler finds among the
// eligible blocks (so that a turn's index finds it without a pass over
// the store).

// query is a request's query as the assembler takes it.
type query struct {
	q          *lexical.Query
	key        string         // assemble.Request.QueryKey; "" for the newest user turn
	info       *outcome.Query // for the result; nil for none or the newest user turn
	text       string         // the text, to count for info
	newestTurn bool           // the assembler finds the query: the session's newest user turn
}

// queried is what an assembly's relevance came from, told on first use.
type queried struct {
	q       query
	counter Counter
	once    sync.Once
	info    *outcome.Query
}

// queryInfo returns what the assembly's relevance came from, nil for
// none: the query's hash and token count, or the host's scores'.
func (a *assembled) queryInfo() *outcome.Query {
	qd := a.query
	if qd == nil {
		return nil
	}
	qd.once.Do(func() {
		switch q := qd.q; {
		case q.info != nil && q.text != "":
			info := *q.info
			info.Tokens = qd.counter.Count(q.text)
			qd.info = &info
		case q.info != nil:
			qd.info = q.info
		case a.out.QueryTurn != nil:
			b := a.out.QueryTurn
			qd.info = &outcome.Query{From: outcome.QueryNewestUserTurn, SHA256: hashOf([]byte(b.Content)), Block: b.ID, Tokens: rowTokens(a.explained().Sections, b.ID)}
		}
	})
	return qd.info
}

// queryOf returns what req is about.
func queryOf(req *Request) query {
	switch {
	case req.Relevance != nil:
		js, _ := json.Marshal(req.Relevance) // map keys sorted: canonical
		key := hashOf(js)
		return query{key: key, info: &outcome.Query{From: outcome.QueryHost, SHA256: key, Scores: len(req.Relevance)}}
	case req.NoQuery:
		return query{}
	case req.Query != "":
		key := hashOf([]byte(req.Query))
		return query{q: lexical.NewQuery(req.Query), key: key, text: req.Query, info: &outcome.Query{From: outcome.QueryRequest, SHA256: key}}
	}
	return query{newestTurn: req.SessionID != ""}
}

// hashOf returns "sha256:" and the hex SHA-256 of b.
func hashOf(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// rowTokens returns the tokens of block id's row in sections: its count as
// its section wrote it, 0 when it was not counted.
func rowTokens(sections []outcome.SectionResult, id string) int {
	for _, s := range sections {
		for _, b := range s.Blocks {
			if b.RequestID == id {
				return b.Tokens
			}
		}
	}
	return 0
}
