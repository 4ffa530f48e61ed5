package assemble

import (
	"cmp"
	"slices"
	"strings"

	"github.com/contextasm/contextasm/outcome"
)

// The conflict pass, right after eligibility: of the eligible blocks that
// share a conflict_key, one enters (conflictOrder); the others are
// excluded with reason conflict, an event naming the winner and the trusts
// compared, and the key's row in Output.Conflicts. Only eligible blocks
// take part, so a block the request cannot see neither wins nor loses,
// and nothing here names it. Two required blocks of one key fail the
// assembly (*outcome.ConflictError): the host said each must be there.
func (a *Assembler) conflicts(r *run) error {
	var keyed []conflictMember
	for si := range a.secs {
		for k, rk := range a.secs[si].ranked {
			if b := r.blocks[rk.Index]; b.Rare != nil && b.Rare.ConflictKey != "" {
				keyed = append(keyed, conflictMember{b: b, si: int32(si), pos: int32(k)})
			}
		}
	}
	if len(keyed) < 2 {
		return nil
	}
	slices.SortFunc(keyed, func(x, y conflictMember) int {
		if c := strings.Compare(x.b.Rare.ConflictKey, y.b.Rare.ConflictKey); c != 0 {
			return c
		}
		return conflictOrder(x.b, y.b)
	})
	var (
		lost     map[int32]bool // the losers' block indexes
		required []outcome.RequiredConflict
	)
	for i := 0; i < len(keyed); {
		key := keyed[i].b.Rare.ConflictKey
		j := i + 1
		for j < len(keyed) && keyed[j].b.Rare.ConflictKey == key {
			j++
		}
		group := keyed[i:j]
		i = j
		if len(group) < 2 {
			continue
		}
		win := group[0].b
		if win.Required && group[1].b.Required {
			rc := outcome.RequiredConflict{Key: key}
			for _, m := range group {
				if m.b.Required {
					rc.IDs = append(rc.IDs, m.b.ID)
				}
			}
			required = append(required, rc)
			continue
		}
		c := outcome.Conflict{Key: key, Winner: win.ID, WinnerTrust: win.Trust, Losers: make([]outcome.ConflictLoser, 0, len(group)-1)}
		if lost == nil {
			lost = make(map[int32]bool)
		}
		for _, m := range group[1:] {
			rule := conflictRule(win, m.b)
			c.Losers = append(c.Losers, outcome.ConflictLoser{RequestID: m.b.ID, Trust: m.b.Trust, Rule: rule})
			r.out.Events = append(r.out.Events, outcome.Event{Kind: outcome.KindExcluded, RequestID: m.b.ID, Reason: outcome.ReasonConflict, By: win.ID,
				Conflict: &outcome.EventConflict{Key: key, Trust: m.b.Trust, ByTrust: win.Trust, Rule: rule}})
			lost[a.secs[m.si].ranked[m.pos].Index] = true
		}
		r.out.Conflicts = append(r.out.Conflicts, c)
	}
	if len(required) > 0 {
		return &outcome.ConflictError{Keys: required}
	}
	if lost != nil {
		for si := range a.secs {
			a.secs[si].ranked = slices.DeleteFunc(a.secs[si].ranked, func(rk Ranked) bool { return lost[rk.Index] })
		}
	}
	return nil
}

// conflictMember is an eligible block with a conflict_key, and where its
// section's ranked list holds it.
type conflictMember struct {
	b       *Block
	si, pos int32
}

// conflictOrder orders the blocks of one conflict_key, the winner first:
// required first, then higher trust (the trust the block ranks with:
// learned where there is one, else declared), newer last_modified (an
// undated block is older than any dated one), higher semantic_weight, and
// last the smaller request_id, so that the order is total.
func conflictOrder(x, y *Block) int {
	if x.Required != y.Required {
		if x.Required {
			return -1
		}
		return 1
	}
	if c := cmp.Compare(y.Trust, x.Trust); c != 0 {
		return c
	}
	if c := y.LastModified.Compare(x.LastModified); c != 0 {
		return c
	}
	if c := cmp.Compare(y.Weight, x.Weight); c != 0 {
		return c
	}
	return strings.Compare(x.ID, y.ID)
}

// conflictRule returns the first comparison of conflictOrder on which win
// and lost differ.
func conflictRule(win, lost *Block) outcome.ConflictRule {
	switch {
	case win.Required != lost.Required:
		return outcome.RuleRequired
	case win.Trust != lost.Trust:
		return outcome.RuleTrust
	case !win.LastModified.Equal(lost.LastModified):
		return outcome.RuleLastModified
	case win.Weight != lost.Weight:
		return outcome.RuleSemanticWeight
	}
	return outcome.RuleRequestID
}

// countKey adds d to the count of b's conflict_key among the blocks not
// hidden from the Index's shape. Expiry is not looked at (it moves with
// now): a key of two blocks, one expired, still sends the request to a
// full assembly, which is exact.
func (x *Index) countKey(b *Block, d int32) {
	k := b.ConflictKey()
	if k == "" {
		return
	}
	if x.keyed == nil {
		x.keyed = make(map[string]int32)
	}
	n := x.keyed[k]
	switch {
	case d > 0 && n == 1:
		x.clashes++
	case d < 0 && n == 2:
		x.clashes--
	}
	if n += d; n <= 0 {
		delete(x.keyed, k)
	} else {
		x.keyed[k] = n
	}
}
