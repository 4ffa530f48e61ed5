package assemble

import (
	"math"
	"slices"

	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/outcome"
	"github.com/contextasm/contextasm/template"
)

// explain is the explaining pass: each section's rows (status, reason,
// tokens) and the events that complete them, then, for a conversation,
// the runs of history a host may summarise and what the prompt cache can
// keep of the text (prefix.go). An incremental assembly lists no rows and
// events (its caller makes them from a full assembly when asked).
func (a *Assembler) explain(r *run) {
	tpl, out, c := r.tpl, r.out, r.c
	conversation := r.req.Record || r.req.Previous != nil
	if r.x == nil {
		blocks := r.blocks
		a.settleRepls(tpl, blocks, out)
		if r.follow {
			a.stickyReasons(tpl, out, r.stick.Margin)
		}
		compactEvents(out)
		a.results(tpl, blocks, out, r.req.hostRelevance())
	} else {
		a.settleRepls(tpl, a.view(nil), out)
		if a.deg.plain && a.inc.beat {
			if out.represented = a.represented(a.view(r.blocks)); out.represented <= a.inc.toBeat {
				return // not taken (AssembleIndexed): what it would offer to summarise, and cache, is no one's
			}
		}
	}
	if r.x != nil && conversation {
		for si := range a.secs {
			a.pullHistory(r.x, tpl.Section(si), c, r.lookup) // what summarizeCandidates reads, never pulled
		}
	}
	blocks := a.view(r.blocks)
	if conversation { // its host may summarise what went
		a.summarizeCandidates(tpl, blocks, out, c)
	}
	out.represented = a.represented(blocks)
	if conversation {
		a.cacheInfo(r)
		// A conversation's messages only grow at the end: a breakpoint on
		// the last one caches the whole request for the next call, which
		// reads it back up to where it appends.
		if n := len(out.Messages); n > 0 && out.TotalTokens >= r.stick.MinCachePrefix {
			out.Messages[n-1].CacheBreakpoint = true
		}
	}
}

// results fills out.Sections and the escaped notices.
func (a *Assembler) results(tpl *template.Template, blocks []*Block, out *Output, host bool) {
	out.Sections = make([]outcome.SectionResult, tpl.NumSections())
	total := 0
	for si := range a.secs {
		total += len(a.secs[si].cands)
	}
	all := make([]outcome.BlockResult, total) // one allocation for every section
	for si := range out.Sections {
		sec := tpl.Section(si)
		_, share := sectionScoring(a.Scoring, sec, host)
		sr := outcome.SectionResult{Name: sec.Name(), Priority: sec.Priority(), MaxTokens: sec.MaxTokens(), UsedTokens: a.secs[si].used + a.secs[si].msgs}
		sr.Blocks, all = all[:len(a.secs[si].cands):len(a.secs[si].cands)], all[len(a.secs[si].cands):]
		for i := range a.secs[si].cands {
			cd := &a.secs[si].cands[i]
			b := blocks[cd.Index]
			br := &sr.Blocks[cd.rank] // in rank order, whatever order the fill took them in
			br.RequestID, br.MemoryType, br.Tokens = cd.ID, string(b.Type), cd.tokens
			br.Score, br.Status, br.Reason, br.Required = round4(cd.Score), cd.status, cd.reason, cd.Required
			br.Relevance, br.RelevancePoints = round4(cd.Relevance), round4(share*cd.Relevance)
			br.Trust, br.ViolationPatterns = b.Trust, b.ViolationPatterns()
			br.SourceID, br.SourceLocation, br.URI = b.SourceID, b.SourceLocation(), b.URI()
			br.Index = cd.Index
			br.Group, br.Message = a.groupName(cd, b), int(cd.message)
			if cd.inText() && !cd.msg {
				br.Offset, br.Length = cd.offset, len(cd.text)
			}
			if cd.inText() {
				br.Variant = writtenVariant(cd)
			}
			br.By = a.byOf(cd, blocks)
		}
		outcome.MarkLostOnRelevance(sr.Blocks) // from the finished rows' figures
		out.Sections[si] = sr
	}
	for si := range a.secs {
		for i := range a.secs[si].cands {
			a.degradeNotices(tpl.Section(si), &a.secs[si].cands[i], blocks[a.secs[si].cands[i].Index], out)
			a.clearedNotice(tpl.Section(si), &a.secs[si].cands[i], blocks[a.secs[si].cands[i].Index], out)
			if cd := &a.secs[si].cands[i]; cd.inText() && cd.escaped {
				out.Events = append(out.Events, outcome.Event{Kind: outcome.KindNotice, Section: tpl.Section(si).Name(), RequestID: cd.ID, Reason: outcome.ReasonEscaped})
			}
		}
	}
}

// void withdraws cd's dropped event: the block is back in the text.
func (a *Assembler) void(cd *candidate, out *Output) {
	if cd.event > 0 {
		out.Events[cd.event-1].Kind = ""
		cd.event = 0
	}
}

// compactEvents removes the withdrawn events.
func compactEvents(out *Output) {
	out.Events = slices.DeleteFunc(out.Events, func(e outcome.Event) bool { return e.Kind == "" })
}

// represented counts the blocks the text holds or stands for: each block
// in it, a summary for each turn it stands for (present or not).
func (a *Assembler) represented(blocks []*Block) int {
	n := 0
	for si := range a.secs {
		for i := range a.secs[si].cands {
			cd := &a.secs[si].cands[i]
			switch {
			case !cd.inText():
			case cd.summary:
				n += a.deg.repls[cd.repl-1].ids
			case len(blocks[cd.Index].Replaces()) > 0 && blocks[cd.Index].Type == declare.History:
				n += len(blocks[cd.Index].Replaces())
			default:
				n++
			}
		}
	}
	return n
}

// round4 rounds v to 4 decimals, as the rows show scores.
func round4(v float64) float64 { return math.Round(v*1e4) / 1e4 }
