package assemble

import (
	"slices"
	"strings"

	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/outcome"
	"github.com/contextasm/contextasm/template"
	"github.com/contextasm/contextasm/truncate"
)

// The eligibility pass: every block the request may not see, that no
// section takes, or that an eligible block supersedes is excluded with an
// event (or, for a hidden reason, counted: its id is another tenant's
// business); a stale block stays, with a notice. The others go to their
// section's ranked list, in block order.
func (a *Assembler) eligibility(r *run) {
	tpl, req, out := r.tpl, r.req, r.out
	a.supersede(tpl, r.blocks, req, r.byID)
	for i, b := range r.blocks {
		si, reason := eligibility(b, tpl, req)
		var by string
		if reason == "" {
			reason, by = a.lateExclusion(i, b)
		}
		if reason == "" || reason == outcome.ReasonNoGain {
			a.noteSummary(b)
		}
		if reason != "" {
			if h := hiddenIndex(reason); h >= 0 && !req.ListHidden {
				r.hidden[h]++
				continue
			}
			out.Events = append(out.Events, outcome.Event{Kind: outcome.KindExcluded, RequestID: b.ID, Reason: reason, By: by})
			if reason == outcome.ReasonNoSection && b.Required {
				r.misses = append(r.misses, truncate.RequiredMiss{RequestID: b.ID, Reason: outcome.ReasonNoSection})
			}
			continue
		}
		if _, stale := b.staleness(req.Now); stale {
			out.Events = append(out.Events, outcome.Event{Kind: outcome.KindNotice, Section: tpl.Section(si).Name(), RequestID: b.ID, Reason: outcome.ReasonStale})
		}
		a.secs[si].ranked = append(a.secs[si].ranked, Ranked{Index: int32(i), Required: b.Required, ID: b.ID})
	}
	for h, n := range r.hidden {
		if n > 0 {
			if out.ExcludedCounts == nil {
				out.ExcludedCounts = make(map[outcome.Reason]int, len(r.hidden))
			}
			out.ExcludedCounts[hiddenReasons[h]] = n
		}
	}
}

// hiddenReasons are the reasons outcome.Hidden names, in the order of the
// Assembler's counts.
var hiddenReasons = [...]outcome.Reason{outcome.ReasonOutOfScope, outcome.ReasonAccessDenied, outcome.ReasonAudience}

// hiddenIndex returns r's index in hiddenReasons, or -1.
func hiddenIndex(r outcome.Reason) int {
	switch r {
	case outcome.ReasonOutOfScope:
		return 0
	case outcome.ReasonAccessDenied:
		return 1
	case outcome.ReasonAudience:
		return 2
	}
	return -1
}

// eligibility returns the section b goes to, or why it cannot enter the
// context. Whose block it is comes first: a block of another session or
// user, or one needing a role the request lacks, is out_of_scope or
// access_denied even when it has also expired, so that no event about it
// (which lists ids) tells the request it exists.
func eligibility(b *Block, tpl *template.Template, req *Request) (int, outcome.Reason) {
	if reason := seen(b, req); reason != "" {
		return -1, reason
	}
	si, ok := tpl.SectionFor(b.Type)
	if !ok {
		return -1, outcome.ReasonNoSection
	}
	return si, ""
}

// seen returns why the request may not see b, whatever the template, or
// "": out of scope, access denied, not for the assistant, expired.
func seen(b *Block, req *Request) outcome.Reason {
	switch {
	case b.Scope == "session" && b.SessionID != req.SessionID,
		b.Scope == "user" && b.UserID != req.UserID:
		return outcome.ReasonOutOfScope
	case len(b.Roles()) > 0 && !anyShared(b.Roles(), req.Roles):
		return outcome.ReasonAccessDenied
	case !b.ForAssistant:
		return outcome.ReasonAudience
	case !b.ValidUntil.IsZero() && !req.Now.Before(b.ValidUntil):
		return outcome.ReasonExpired
	}
	return ""
}

func anyShared(have, want []string) bool {
	for _, h := range have {
		if slices.Contains(want, h) {
			return true
		}
	}
	return false
}

// supersede finds the eligible blocks that an eligible block supersedes,
// each with the newest block of its chain: the one that supersedes it,
// directly or through others, and that nothing eligible supersedes (the
// smallest request_id among several).
func (a *Assembler) supersede(tpl *template.Template, blocks []*Block, req *Request, byID bool) {
	first := slices.IndexFunc(blocks, func(b *Block) bool { return len(b.Supersedes()) > 0 })
	if first < 0 {
		return
	}
	var index map[string]int32
	find := func(id string) int32 {
		if byID {
			if i, ok := slices.BinarySearchFunc(blocks, id, func(b *Block, id string) int { return strings.Compare(b.ID, id) }); ok {
				return int32(i)
			}
			return -1
		}
		if index == nil {
			index = make(map[string]int32, len(blocks))
			for i, b := range blocks {
				index[b.ID] = int32(i)
			}
		}
		if i, ok := index[id]; ok {
			return i
		}
		return -1
	}
	newer := make(map[int32][]int32) // block → the eligible blocks superseding it
	for i := first; i < len(blocks); i++ {
		b := blocks[i]
		if len(b.Supersedes()) == 0 {
			continue
		}
		if _, reason := eligibility(b, tpl, req); reason != "" {
			continue
		}
		for _, id := range b.Supersedes() {
			if t := find(id); t >= 0 {
				newer[t] = append(newer[t], int32(i))
			}
		}
	}
	if len(newer) == 0 {
		return
	}
	newest := make(map[int32]string, len(newer))
	var resolve func(i int32) string
	resolve = func(i int32) string {
		ps, ok := newer[i]
		if !ok {
			return blocks[i].ID
		}
		if n, done := newest[i]; done {
			return n // "" while in progress: a cycle, which Declare refuses
		}
		newest[i] = ""
		best := ""
		for _, p := range ps {
			if n := resolve(p); n != "" && (best == "" || n < best) {
				best = n
			}
		}
		newest[i] = best
		return best
	}
	if a.deg.superseded == nil {
		a.deg.superseded = make(map[int32]string, len(newer))
	}
	for t := range newer {
		if n := resolve(t); n != "" {
			a.deg.superseded[t] = n
		}
	}
}

// lateExclusion returns why an eligible block is left out before ranking
// for degradation's sake: superseded (by whom), or, in a plain assembly,
// a summary.
func (a *Assembler) lateExclusion(i int, b *Block) (outcome.Reason, string) {
	if by, ok := a.deg.superseded[int32(i)]; ok {
		return outcome.ReasonSuperseded, by
	}
	if a.deg.plain && len(b.Replaces()) > 0 && b.Type == declare.History {
		return outcome.ReasonNoGain, ""
	}
	return "", ""
}

// noteSummary records the ids b names, when it is a summary (an eligible
// one, or one a plain assembly leaves out): nothing it stands for is
// offered for summarising again.
func (a *Assembler) noteSummary(b *Block) {
	if len(b.Replaces()) == 0 || b.Type != declare.History {
		return
	}
	if a.deg.summarised == nil {
		a.deg.summarised = make(map[string]bool)
	}
	for _, id := range b.Replaces() {
		a.deg.summarised[id] = true
	}
}

// hides reports whether the store holds a block of that id which is
// hidden from the request (outcome.Hidden): no output may name it, though
// a previous decision (made with other roles, or crafted) did.
func (r *run) hides(id string) bool {
	if r.req.ListHidden || id == "" {
		return false
	}
	var b *Block
	switch {
	case r.x != nil:
		b, _ = r.lookup(id)
	case r.byID:
		if i, ok := slices.BinarySearchFunc(r.blocks, id, func(b *Block, id string) int { return strings.Compare(b.ID, id) }); ok {
			b = r.blocks[i]
		}
	default:
		if i := slices.IndexFunc(r.blocks, func(b *Block) bool { return b.ID == id }); i >= 0 {
			b = r.blocks[i]
		}
	}
	if b == nil {
		return false
	}
	_, reason := eligibility(b, r.tpl, r.req)
	return hiddenIndex(reason) >= 0
}

// Sees reports whether the request may see b at its Now, whatever the
// template: b is in its scope, needs no role the request lacks, is meant
// for the assistant and has not expired.
func (r *Request) Sees(b *Block) bool { return seen(b, r) == "" }
