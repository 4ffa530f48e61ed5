package tokens

import (
	"crypto/sha256"
	"strings"

	"github.com/contextasm/contextasm/contextasm/internal/grouped"

	"github.com/contextasm/contextasm/internal/bpe"
	"github.com/contextasm/contextasm/truncate"
)

// key identifies a counted text: its SHA-256 (truncated to 128 bits,
// ample against accidental collisions) and the encoding it was counted in.
// A cut of the text to maxTokens is cached under the same hash with cut set
// to maxTokens+1, its value the length of the prefix kept.
type key struct {
	tag  byte
	cut  int
	hash [16]byte
}

// cached puts the count caches in front of a tokenizer.
type cached struct {
	tok   truncate.Counter
	cache *grouped.Cache[key, [16]byte, int]
	plans *grouped.Cache[key, [16]byte, bpe.CutPlan] // cut plans, by text hash and encoding
	tag   byte
}

func (c *cached) key(text string) key {
	sum := sha256.Sum256([]byte(text))
	k := key{tag: c.tag}
	copy(k.hash[:], sum[:16])
	return k
}

func (c *cached) Count(text string) int {
	if text == "" {
		return 0
	}
	k := c.key(text)
	if n, ok := c.cache.Get(k); ok {
		return n
	}
	n := c.tok.Count(text)
	c.cache.Add(k, n)
	return n
}

// LineAdditive passes on the tokenizer's promise (see truncate.Counter).
func (c *cached) LineAdditive() bool {
	la, ok := c.tok.(truncate.LineAdditive)
	return ok && la.LineAdditive()
}

// LowerBounded passes on the tokenizer's promise (see truncate.Counter).
func (c *cached) LowerBounded() bool {
	lb, ok := c.tok.(truncate.LowerBounded)
	return ok && lb.LowerBounded()
}

// JoinDelta passes on to the tokenizer, when it counts joins (see
// truncate.JoinCounter): the final text's count from its parts' counts.
func (c *cached) JoinDelta(text string, cuts []int) (int, bool) {
	if jc, ok := c.tok.(truncate.JoinCounter); ok {
		return jc.JoinDelta(text, cuts)
	}
	return 0, false
}

// Cut is cached too: a partial block is cut again by every assembly that
// keeps it, and cutting tokenizes the whole content.
func (c *cached) Cut(text string, maxTokens int) string {
	if text == "" || maxTokens < 0 {
		return c.tok.Cut(text, maxTokens)
	}
	k := c.key(text)
	ck := k
	ck.cut = maxTokens + 1
	if n, ok := c.cache.Get(ck); ok && n <= len(text) {
		return text[:n]
	}
	var part string
	if plan, planner, ok := c.plan(text, k); ok {
		// A partial block is cut anew whenever the room left in its
		// section moves: with its content planned once, a new cut
		// tokenizes only the stretch after the last word that fits.
		part = planner.CutPlanned(plan, text, maxTokens)
	} else {
		part = c.tok.Cut(text, maxTokens)
	}
	if strings.HasPrefix(text, part) { // a Counter's contract; don't cache one that breaks it
		c.cache.Add(ck, len(part))
	}
	return part
}

// plan returns text's cut plan, making it on first use, when the tokenizer
// plans cuts.
func (c *cached) plan(text string, k key) (bpe.CutPlan, cutPlanner, bool) {
	planner, ok := c.tok.(cutPlanner)
	if !ok || c.plans == nil {
		return bpe.CutPlan{}, nil, false
	}
	if plan, ok := c.plans.Get(k); ok {
		return plan, planner, true
	}
	plan, ok := planner.PlanCuts(text)
	if ok {
		c.plans.Add(k, plan)
	}
	return plan, planner, ok
}

// cutPlanner is implemented by tokenizers that can plan the cuts of a text
// once (bpe.Tokenizer), so that cutting it again to another size tokenizes
// at most the stretch after the last word that fits.
type cutPlanner interface {
	PlanCuts(text string) (bpe.CutPlan, bool)
	CutPlanned(plan bpe.CutPlan, text string, maxTokens int) string
}
