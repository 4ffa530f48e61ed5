package contextasm

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"time"

	"github.com/contextasm/contextasm/contextasm/internal/grouped"

	"github.com/contextasm/contextasm/contextasm/internal/assemble"
	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/internal/bpe"
	"github.com/contextasm/contextasm/internal/lexical"
)

// toBlock makes the assembler's block of a validated declaration.
func toBlock(d *declare.Declaration) *assemble.Block {
	b := &assemble.Block{
		ID:           d.RequestID,
		Type:         d.MemoryType,
		Content:      d.Content,
		SourceID:     d.Provenance.SourceID,
		Weight:       d.Weight(),
		Trust:        d.Trust(),
		Required:     d.IsRequired(),
		Scope:        d.Scope,
		SessionID:    d.SessionID,
		UserID:       d.UserID,
		ForAssistant: d.ForAssistant(),
		Role:         d.ChatRole(),
	}
	r := assemble.Rare{
		Roles:          slices.Clone(d.Roles),
		SourceLocation: d.Provenance.SourceLocation,
		URI:            d.Provenance.URI,
		ToolCalls:      slices.Clone(d.ToolCalls),
		ToolCallID:     d.ToolCallID,
		Group:          d.Group,
		Reasoning:      slices.Clone(d.Reasoning),
		Variants:       slices.Clone(d.Variants),
		Supersedes:     slices.Clone(d.Supersedes),
		Replaces:       slices.Clone(d.Replaces),
		ConflictKey:    d.ConflictKey,
	}
	if d.MaxTokens != nil {
		r.MaxTokens = *d.MaxTokens
	}
	if d.Priority != nil {
		b.Priority, b.HasPriority = *d.Priority, true
	}
	if d.ValidUntil != nil {
		b.ValidUntil = d.ValidUntil.Time
	}
	if from, ok := d.StaleFrom(); ok {
		b.StaleFrom, b.StaleAfter = from, time.Duration(*d.StaleAfter)
	}
	if d.LastModified != nil {
		// A wall time only: a monotonic reading (time.Now's) is this
		// process's, and would order blocks differently from one loaded
		// elsewhere, and from the Index's keys (contextasm/internal/assemble).
		b.LastModified = d.LastModified.Round(0)
	}
	if d.IdleTTL != nil {
		r.IdleTTL = time.Duration(*d.IdleTTL)
	}
	if d.BreakOnViolation {
		r.ViolationPatterns = slices.Clone(d.ViolationPatterns)
		r.Patterns = make([]*regexp.Regexp, len(d.ViolationPatterns))
		for i, p := range d.ViolationPatterns {
			r.Patterns[i] = regexp.MustCompile(p) // validated by Declare
		}
	}
	b.SetRare(r)
	b.Key = blockKey(b)
	doc := lexical.Analyze(d.Content) // once: every query reads it
	b.Doc = &doc
	// The bound holds for the content wherever it stands, so for its
	// rendering too: literals around it, word joiners inserted into it.
	b.MinTokens = int32(min(bpe.LowerBound(d.Content), math.MaxInt32))
	if r.MaxTokens > 0 {
		b.MinTokens = 0 // the content written is clipped: no bound from the whole
	}
	return b
}

// blockMemo is the Assembler's memo of rendered blocks' counts: a
// bounded cache keyed by block and section identity, so a warm assembly
// neither renders nor hashes unchanged blocks.
type blockMemo struct {
	cache *grouped.Cache[assemble.MemoKey, [16]byte, int] // indexed by block (Block.Key)
}

// blockOf groups the memos' entries by the block they render, so that a
// released block's go at the cost of their number.
func blockOf(k assemble.MemoKey) ([16]byte, bool) { return k.Block, k.Block != [16]byte{} }

func (m blockMemo) Get(k assemble.MemoKey) (int, bool) { return m.cache.Get(k) }
func (m blockMemo) Add(k assemble.MemoKey, n int)      { m.cache.Add(k, n) }

// approxMemo keys the memo of rendered blocks' counts by the margin too, so
// that counts made under an older margin are not reused.
type approxMemo struct {
	m     assemble.Memo
	ratio int64
}

func (m approxMemo) key(k assemble.MemoKey) assemble.MemoKey {
	for i := range 8 {
		k.Section[i] ^= byte(m.ratio >> (8 * i))
	}
	k.Section[8] ^= 0xA5 // never the plain key, even for ratio 0
	return k
}

func (m approxMemo) Get(k assemble.MemoKey) (int, bool) { return m.m.Get(m.key(k)) }
func (m approxMemo) Add(k assemble.MemoKey, n int)      { m.m.Add(m.key(k), n) }

// fieldLens returns the length of each field.
func fieldLens(fields []string) []int {
	n := make([]int, len(fields))
	for i, f := range fields {
		n[i] = len(f)
	}
	return n
}

// blockKey hashes everything a rendering of b reads, and what a message's
// count reads (role and tool calls), each field length-prefixed so that no two blocks hash alike by shifting bytes between
// fields. The encoding is not in it: the section key comes from the
// template's canonical JSON, which names the encoding, and an Engine counts
// with one Counter.
func blockKey(b *assemble.Block) [16]byte {
	h := sha256.New()
	fields := []string{b.ID, string(b.Type), b.SourceID, b.Content, string(b.Role), b.ToolCallID()}
	for _, tc := range b.ToolCalls() { // a message's count reads them
		fields = append(fields, tc.ID, tc.Name, tc.Arguments)
	}
	if rs := b.Reasoning(); len(rs) > 0 { // and the reasoning it writes; keys of other blocks stay as they were
		fields = append(fields, "reasoning")
		for _, r := range rs {
			fields = append(fields, string(r.JSON))
		}
	}
	if b.MaxTokens() > 0 || len(b.Variants()) > 0 { // the forms it may be written in; keys of other blocks stay as they were
		fields = append(fields, "forms", strconv.Itoa(b.MaxTokens()))
		fields = append(fields, b.Variants()...)
	}
	lens := make([]byte, 8*(len(fields)+1)) // the number of fields, then each length
	for i, n := range append([]int{len(fields)}, fieldLens(fields)...) {
		for j := range 8 {
			lens[i*8+j] = byte(n >> (8 * j))
		}
	}
	h.Write(lens)
	for _, f := range fields {
		h.Write([]byte(f))
	}
	var k [16]byte
	copy(k[:], h.Sum(nil))
	return k
}

// validate checks each declaration against the Engine's limits, and that
// no request_id stands twice: every problem, or nil.
func (e *Engine) validate(decls []declare.Declaration) error {
	var probs []declare.Problem
	seen := make(map[string]int, len(decls))
	for i := range decls {
		d := &decls[i]
		if err := e.limits.Validate(d); err != nil {
			var ve *declare.ValidationError
			errors.As(err, &ve)
			for _, p := range ve.Problems {
				if p.RequestID == "" {
					p.Field = fmt.Sprintf("declarations[%d].%s", i, p.Field)
				}
				probs = append(probs, p)
			}
			continue
		}
		if j, dup := seen[d.RequestID]; dup {
			probs = append(probs, declare.Problem{RequestID: d.RequestID, Field: "request_id",
				Message: fmt.Sprintf("declared twice in one call (declarations[%d] and [%d])", j, i)})
		}
		seen[d.RequestID] = i
	}
	if len(probs) > 0 {
		return &declare.ValidationError{Problems: probs}
	}
	return nil
}

// blocksOf makes the blocks of decls, numbered after the last declared,
// with the trust the learned state holds for them. The caller holds e.mu.
func (e *Engine) blocksOf(decls []declare.Declaration) []*assemble.Block {
	ids := make([]string, len(decls))
	for i := range decls {
		ids[i] = decls[i].RequestID
	}
	trust := e.rep.TrustOf(ids)
	incoming := make([]*assemble.Block, len(decls))
	for i := range decls {
		incoming[i] = toBlock(&decls[i])
		// Learned trust outlives re-declaration: it is what feedback taught.
		if t, ok := trust[decls[i].RequestID]; ok {
			e.declTrust[decls[i].RequestID] = incoming[i].Trust
			incoming[i].Trust = t
		} else {
			delete(e.declTrust, decls[i].RequestID)
		}
		// Number new blocks in argument order before sorting by ID: that is
		// their declaration order (order "declared"). Replacements take
		// their old number below; the gaps they leave are harmless.
		incoming[i].Seq = e.seq + int64(i) + 1
	}
	return incoming
}
