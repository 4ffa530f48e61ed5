package assemble_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/contextasm/contextasm/contextasm/internal/assemble"
	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/internal/bpe"
	"github.com/contextasm/contextasm/internal/delimit"
	"github.com/contextasm/contextasm/outcome"
	"github.com/contextasm/contextasm/template"
	"github.com/contextasm/contextasm/truncate"
)

// TestFill checks fill "stop" against "skip": both select in rank order, but
// stop ends the section at the first misfit, without even counting what
// follows, while skip keeps trying smaller blocks.
func TestFill(t *testing.T) {
	tok := realTokenizer(t)
	blocks := []assemble.Block{
		weighted("a", declare.Context, "Short note.", 0.9),
		weighted("b", declare.Context, longNotes, 0.8), // the first misfit
		weighted("c", declare.Context, "ZZLATE c.", 0.7),
		weighted("d", declare.Context, "ZZLATE d.", 0.6),
	}
	const capTokens = 40
	js := func(fill string) string {
		return fmt.Sprintf(`{"budget": 4096, "sections": [
		  {"name": "NOTES", "priority": 1, "memory_types": ["context"], "max_tokens": %d, "render": "<n>{content}</n>", "fill": %q}]}`, capTokens, fill)
	}
	{ // The fixture must discriminate: b does not fit after a; c and d do, even both.
		// The section is in line mode: each block counts with its newline,
		// and no separator is counted apart.
		tpl := mustParse(t, js("skip"))
		n := func(i int) int { return tok.Count(render(t, tpl, "NOTES", blocks[i]) + "\n") }
		if n(0)+n(1) <= capTokens || n(0)+n(2)+n(3) > capTokens {
			t.Fatalf("fixture: counts a=%d b=%d c=%d d=%d do not discriminate under cap %d", n(0), n(1), n(2), n(3), capTokens)
		}
	}

	tests := []struct {
		fill        string
		want        map[string]string
		lateCounted bool // whether c and d are counted at all
	}{
		{"stop", map[string]string{"a": "kept", "b": "dropped", "c": "dropped", "d": "dropped"}, false},
		{"skip", map[string]string{"a": "kept", "b": "dropped", "c": "kept", "d": "kept"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.fill, func(t *testing.T) {
			tpl := mustParse(t, js(tt.fill))
			cc := &countingCounter{Counter: tok}
			var a assemble.Assembler
			out, err := a.Assemble(tpl, blocks, assemble.Request{Now: now}, cc)
			if err != nil {
				t.Fatal(err)
			}
			if got := statuses(out); fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("statuses = %v, want %v", got, tt.want)
			}
			if got := cc.saw("ZZLATE"); got != tt.lateCounted {
				t.Errorf("blocks after the first misfit counted = %v, want %v", got, tt.lateCounted)
			}
			for _, id := range []string{"b", "c", "d"} {
				if tt.want[id] != "dropped" {
					continue
				}
				_, br, _ := result(out, id)
				want := outcome.Event{Kind: outcome.KindDropped, Section: "NOTES", RequestID: id, Reason: outcome.ReasonSectionCap, Tokens: br.Tokens}
				if got := eventsOf(out, id); len(got) != 1 || got[0] != want {
					t.Errorf("events about %q = %+v, want [%+v]", id, got, want)
				}
				if br.Reason != outcome.ReasonSectionCap {
					t.Errorf("%q reason = %q, want section_cap", id, br.Reason)
				}
				wantTokens := 0 // not counted
				if id == "b" {
					wantTokens = tok.Count(render(t, tpl, "NOTES", blocks[1]) + "\n")
				}
				if br.Tokens != wantTokens {
					t.Errorf("%q tokens = %d, want %d", id, br.Tokens, wantTokens)
				}
			}
			sr := out.Sections[0]
			if sr.UsedTokens > sr.MaxTokens {
				t.Errorf("used %d tokens over the cap %d", sr.UsedTokens, sr.MaxTokens)
			}
			sum := 0
			for _, br := range sr.Blocks {
				if br.Status == outcome.StatusKept {
					sum += br.Tokens
				}
			}
			if sr.UsedTokens != sum {
				t.Errorf("used %d tokens, want the kept blocks' %d (line mode counts no separator apart)", sr.UsedTokens, sum)
			}
		})
	}
}

// TestOrder checks that order changes the written order of the selected
// blocks, never the selection, which is by rank.
func TestOrder(t *testing.T) {
	tok := realTokenizer(t)
	at := func(d time.Duration) time.Time { return now.Add(d) }
	mk := func(id string, w float64, seq int64, lm time.Time) assemble.Block {
		b := weighted(id, declare.History, "Turn "+id+": olá, 你好.", w)
		b.Seq, b.LastModified = seq, lm
		return b
	}
	// History ranks by weight and recency: r3 is older than r1 but
	// newer than the undated r2, whose weight does not make up for having
	// no recency at all.
	blocks := []assemble.Block{
		mk("r1", 0.9, 3, at(-1*time.Hour)),
		mk("r2", 0.8, 1, time.Time{}), // undated
		mk("r3", 0.7, 2, at(-3*time.Hour)),
		// Ranked last: would be written first by declaration or by time,
		// but does not fit, and selection is by rank.
		mk("r4", 0.1, 0, at(-10*time.Hour)),
	}
	const sep = " ¦ "
	js := func(order string, maxTokens int) string {
		return fmt.Sprintf(`{"budget": 4096, "sections": [
		  {"name": "H", "priority": 1, "memory_types": ["history"], "max_tokens": %d, "render": "[{request_id}] {content}", "separator": %q, "order": %q}]}`, maxTokens, sep, order)
	}
	probe := mustParse(t, js("rank", 1))
	capTokens := 2 * tok.Count(sep)
	for _, b := range blocks[:3] {
		capTokens += tok.Count(render(t, probe, "H", b))
	}

	tests := []struct {
		order string
		want  []string
	}{
		{"rank", []string{"r1", "r3", "r2"}},
		{"declared", []string{"r2", "r3", "r1"}},
		{"time", []string{"r2", "r3", "r1"}}, // undated first, then oldest
	}
	for _, tt := range tests {
		t.Run(tt.order, func(t *testing.T) {
			tpl := mustParse(t, js(tt.order, capTokens))
			out := mustAssemble(t, tpl, blocks, assemble.Request{})
			if got := statuses(out); fmt.Sprint(got) != fmt.Sprint(map[string]string{"r1": "kept", "r2": "kept", "r3": "kept", "r4": "dropped"}) {
				t.Fatalf("statuses = %v; selection must be by rank", got)
			}
			parts := make([]string, len(tt.want))
			for i, id := range tt.want {
				j := slices.IndexFunc(blocks, func(b assemble.Block) bool { return b.ID == id })
				parts[i] = render(t, tpl, "H", blocks[j])
			}
			want := tpl.Header() + "\n" + strings.Join(parts, sep) + "\n"
			if out.Text != want {
				t.Errorf("text =\n%q\nwant\n%q", out.Text, want)
			}
			// Out of line mode: the blocks alone and the separators
			// between them, which is the cap exactly.
			if sr := out.Sections[0]; sr.UsedTokens != capTokens {
				t.Errorf("used %d tokens, want the blocks and two separators, %d", sr.UsedTokens, capTokens)
			}
			if out.TotalTokens != tok.Count(out.Text) {
				t.Errorf("TotalTokens %d, text counts %d", out.TotalTokens, tok.Count(out.Text))
			}
			var ids []string
			for _, b := range out.Sections[0].Blocks {
				ids = append(ids, b.RequestID)
			}
			if fmt.Sprint(ids) != "[r1 r3 r2 r4]" {
				t.Errorf("section result order = %v, want rank order [r1 r3 r2 r4]", ids)
			}
		})
	}

	// Time order breaks ties by rank: two blocks of the same instant come
	// in rank order whatever their declaration order.
	t.Run("time ties", func(t *testing.T) {
		same := []assemble.Block{mk("t2", 0.2, 0, at(-time.Hour)), mk("t1", 0.9, 1, at(-time.Hour)), mk("t0", 0.5, 2, at(-2*time.Hour))}
		tpl := mustParse(t, js("time", 4000))
		out := mustAssemble(t, tpl, same, assemble.Request{})
		want := tpl.Header() + "\n" + render(t, tpl, "H", same[2]) + sep + render(t, tpl, "H", same[1]) + sep + render(t, tpl, "H", same[0]) + "\n"
		if out.Text != want {
			t.Errorf("text =\n%q\nwant\n%q", out.Text, want)
		}
	})
}

// partialContent mixes rare CJK characters (several tokens each, so a
// token boundary can fall inside a character), Chinese, Portuguese and
// emoji.
const partialContent = "鬱龘𠀀齉 上下文组装器根据优先级截断记忆块。 A configuração não foi encontrada; ação necessária 🚀✨ 鬱龘𠀀齉 " +
	"用户偏好简洁的回答，并且讨厌冗长的解释。 O coração do avô é de pão. 𠀀𠀁𠀂𠀃 fim."

func TestPartial(t *testing.T) {
	tok := realTokenizer(t)
	blocks := []assemble.Block{
		weighted("a", declare.History, "Primeira nota.", 0.9),
		weighted("big", declare.History, partialContent, 0.5),
		weighted("tail", declare.History, "ZZTAIL", 0.1),
	}
	js := func(fill string, partial bool, minPartial, maxTokens int) string {
		return fmt.Sprintf(`{"budget": 4096, "sections": [
		  {"name": "H", "priority": 1, "memory_types": ["history"], "max_tokens": %d, "render": "{content}",
		   "fill": %q, "partial": %t, "min_partial_tokens": %d}]}`, maxTokens, fill, partial, minPartial)
	}
	// The section is in line mode: a block counts with the newline that
	// ends its line, and no separator is counted apart.
	probe := mustParse(t, js("stop", false, 0, 1))
	aTokens := tok.Count(render(t, probe, "H", blocks[0]) + "\n")
	bigTokens := tok.Count(render(t, probe, "H", blocks[1]) + "\n")
	points := cutPoints(tok, partialContent)

	tests := []struct {
		name       string
		fill       string
		partial    bool
		minPartial int // 0: the default, 32
		room       int // tokens left for big after a's line
		cut        bool
	}{
		{name: "room equals min", fill: "stop", partial: true, minPartial: 10, room: 10, cut: true},
		{name: "room one under min", fill: "stop", partial: true, minPartial: 10, room: 9},
		{name: "default min 32", fill: "stop", partial: true, room: 32, cut: true},
		{name: "default min, 31 left", fill: "stop", partial: true, room: 31},
		{name: "partial off", fill: "stop", partial: false, minPartial: 1, room: 40},
		{name: "skip cuts too", fill: "skip", partial: true, minPartial: 10, room: 12, cut: true},
		{name: "skip, too little room", fill: "skip", partial: true, minPartial: 10, room: 9},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.room >= bigTokens {
				t.Fatalf("fixture: big (%d tokens) fits a room of %d", bigTokens, tt.room)
			}
			capTokens := aTokens + tt.room
			tpl := mustParse(t, js(tt.fill, tt.partial, tt.minPartial, capTokens))
			cc := &countingCounter{Counter: tok}
			var a assemble.Assembler
			out, err := a.Assemble(tpl, blocks, assemble.Request{Now: now}, cc)
			if err != nil {
				t.Fatal(err)
			}
			_, br, _ := result(out, "big")
			evs := eventsOf(out, "big")
			if !tt.cut {
				want := outcome.Event{Kind: outcome.KindDropped, Section: "H", RequestID: "big", Reason: outcome.ReasonSectionCap, Tokens: bigTokens}
				if br.Status != outcome.StatusDropped || len(evs) != 1 || evs[0] != want {
					t.Fatalf("big: status %v, events %+v; want dropped with [%+v]", br.Status, evs, want)
				}
				if len(cc.cut) != 0 {
					t.Errorf("Cut called on %q, want no cut", cc.cut)
				}
				return
			}
			want := outcome.Event{Kind: outcome.KindCut, Section: "H", RequestID: "big", Reason: outcome.ReasonCut, Tokens: br.Tokens}
			if br.Status != outcome.StatusCut || br.Reason != outcome.ReasonCut || len(evs) != 1 || evs[0] != want {
				t.Fatalf("big: status %v reason %q, events %+v; want cut with [%+v]", br.Status, br.Reason, evs, want)
			}
			checkCut(t, tok, out.Text[br.Offset:br.Offset+br.Length], "\n", "", "", partialContent, points, br.Tokens, tt.room)
			if !strings.HasPrefix(render(t, tpl, "H", blocks[1]), out.Text[br.Offset:br.Offset+br.Length]) {
				t.Errorf("cut text is not a prefix of the rendered block")
			}
			if _, tail, _ := result(out, "tail"); tt.fill == "stop" {
				// Nothing after the cut block: not kept, not even counted.
				if tail.Status != outcome.StatusDropped || tail.Reason != outcome.ReasonSectionCap || tail.Tokens != 0 || cc.saw("ZZTAIL") {
					t.Errorf("tail after the cut under stop: %+v, counted %v; want dropped (section_cap) uncounted", tail, cc.saw("ZZTAIL"))
				}
			} else if !cc.saw("ZZTAIL") {
				t.Errorf("tail after the cut under skip was not even counted")
			}
			if sr := out.Sections[0]; sr.UsedTokens > sr.MaxTokens {
				t.Errorf("used %d tokens over the cap %d", sr.UsedTokens, sr.MaxTokens)
			}
		})
	}
}

// TestPartialEveryRoom cuts the same block to every room from 1 to past
// its size, with and without delimiters around the content, in line mode
// (the cut block counts with its newline) and out of it.
func TestPartialEveryRoom(t *testing.T) {
	// Through a cache of the real tokenizer: the same answers, faster.
	tok := &memoCounter{Counter: additiveTokenizer(t), counts: map[string]int{}}
	points := cutPoints(tok, partialContent)
	for _, r := range []struct{ render, open, close, separator string }{
		{"{content}", "", "", "\n"},
		{"<h>{content}</h>", "<h>", "</h>", "\n"},
		{"【历史】{content}【/历史】", "【历史】", "【/历史】", "\n"},
		{"<h>{content}</h>", "<h>", "</h>", " | "},
	} {
		t.Run(fmt.Sprintf("%s sep %q", r.render, r.separator), func(t *testing.T) {
			suffix := "" // what the Assembler counts after the block's text
			if r.separator == "\n" {
				suffix = "\n"
			}
			b := block("big", declare.History, partialContent)
			probe := mustParse(t, fmt.Sprintf(`{"budget": 4096, "sections": [{"name": "H", "priority": 1, "memory_types": ["history"], "max_tokens": 1, "render": %q, "separator": %q}]}`, r.render, r.separator))
			full := tok.Count(render(t, probe, "H", b) + suffix)
			empty := tok.Count(r.open + r.close + suffix)
			cuts := 0
			for room := 1; room < full; room++ {
				tpl := mustParse(t, fmt.Sprintf(`{"budget": 4096, "sections": [
				  {"name": "H", "priority": 1, "memory_types": ["history"], "max_tokens": %d, "render": %q, "separator": %q, "partial": true, "min_partial_tokens": 1}]}`, room, r.render, r.separator))
				var a assemble.Assembler
				out, err := a.Assemble(tpl, []assemble.Block{b}, assemble.Request{Now: now}, tok)
				if err != nil {
					t.Fatalf("room %d: %v", room, err)
				}
				_, br, _ := result(out, "big")
				if br.Status == outcome.StatusDropped {
					// Only when not even the empty rendering and a token fit.
					if room > empty+4 {
						t.Errorf("room %d: dropped, but the delimiters take only %d tokens", room, empty)
					}
					continue
				}
				if br.Status != outcome.StatusCut {
					t.Fatalf("room %d: status %v, want cut", room, br.Status)
				}
				cuts++
				checkCut(t, tok, out.Text[br.Offset:br.Offset+br.Length], suffix, r.open, r.close, partialContent, points, br.Tokens, room)
				if out.TotalTokens != tok.Count(out.Text) {
					t.Errorf("room %d: TotalTokens %d, text counts %d", room, out.TotalTokens, tok.Count(out.Text))
				}
				if sr := out.Sections[0]; sr.UsedTokens != br.Tokens {
					t.Errorf("room %d: used %d tokens, the one block %d", room, sr.UsedTokens, br.Tokens)
				}
			}
			if cuts < full/2 {
				t.Errorf("only %d of %d rooms gave a cut", cuts, full-1)
			}
		})
	}
}

// checkCut checks a cut block's text: valid UTF-8, open + a prefix of
// content ending on a token boundary + close, counting tokens ≤ room with
// suffix after it (the newline that ends its line, in line mode).
func checkCut(t *testing.T, tok truncate.Counter, text, suffix, open, close, content string, boundaries map[string]bool, tokens, room int) {
	t.Helper()
	if !utf8.ValidString(text) {
		t.Errorf("room %d: cut text is not valid UTF-8: %q", room, text)
	}
	if n := tok.Count(text + suffix); n != tokens || n > room {
		t.Errorf("room %d: cut text with %q counts %d tokens (result says %d), want ≤ %d", room, suffix, n, tokens, room)
	}
	part, ok := strings.CutPrefix(text, open)
	if ok {
		part, ok = strings.CutSuffix(part, close)
	}
	if !ok || part == "" || !strings.HasPrefix(content, part) || part == content {
		t.Fatalf("room %d: cut text %q is not %q + a proper prefix of the content + %q", room, text, open, close)
	}
	if !boundaries[part] {
		t.Errorf("room %d: %q does not end on a token boundary of the content", room, part)
	}
}

// cutPoints returns the prefixes of content that end on a token boundary:
// what the real tokenizer's Cut returns for some count of tokens.
func cutPoints(tok truncate.Counter, content string) map[string]bool {
	m := map[string]bool{}
	for n := 1; n <= tok.Count(content); n++ {
		m[tok.Cut(content, n)] = true
	}
	return m
}

// TestPartialOnlyFirstMisfit checks that only the first misfit may be cut:
// under fill skip, a later misfit is dropped even when the room left after
// the cut would hold a part of it, while a later block that fits whole is
// still kept.
func TestPartialOnlyFirstMisfit(t *testing.T) {
	tok := realTokenizer(t)
	tpl := mustParse(t, `{"budget": 4096, "sections": [
	  {"name": "H", "priority": 1, "memory_types": ["history"], "max_tokens": 6, "render": "{content}", "separator": "",
	   "fill": "skip", "partial": true, "min_partial_tokens": 1}]}`)
	blocks := []assemble.Block{
		// Rare characters of two or three tokens each: cut to a room of 6,
		// the first keeps 4 tokens and leaves 2.
		weighted("first", declare.History, "鬱龘𠀀齉鬱龘𠀀齉", 0.9),
		weighted("second", declare.History, "Hello world, again and again", 0.5),
		weighted("tiny", declare.History, "ok", 0.1),
	}
	if n := tok.Count(tok.Cut(blocks[0].Content, 6)); n > 4 || tok.Count(blocks[2].Content) > 6-n || tok.Count(tok.Cut(blocks[1].Content, 6-n)) == 0 {
		t.Fatalf("fixture: the first cut keeps %d tokens; it must leave room for a part of the second and for the third", n)
	}
	out := mustAssemble(t, tpl, blocks, assemble.Request{})
	want := map[string]string{"first": "cut", "second": "dropped", "tiny": "kept"}
	if got := statuses(out); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("statuses = %v, want %v", got, want)
	}
	if _, br, _ := result(out, "second"); br.Reason != outcome.ReasonSectionCap {
		t.Errorf("second: reason %q, want section_cap", br.Reason)
	}
	if out.TotalTokens != tok.Count(out.Text) {
		t.Errorf("TotalTokens %d, text counts %d", out.TotalTokens, tok.Count(out.Text))
	}
}

// Two blocks written back to back (separator "") must not spell a
// delimiter between them: the join gets a word joiner.
func TestJoinBetweenBlocksCannotForgeDelimiter(t *testing.T) {
	tpl, err := template.Parse([]byte(`{"budget": 500, "sections": [
		{"name": "RULES", "priority": 1, "memory_types": ["constraint"], "max_tokens": 200, "render": "【硬性规则】{content}【/硬性规则】"},
		{"name": "NOTES", "priority": 2, "memory_types": ["context"], "max_tokens": 200, "render": "{content}", "separator": ""}]}`), "join")
	if err != nil {
		t.Fatal(err)
	}
	tok, err := bpe.Load("o200k_base")
	if err != nil {
		t.Fatal(err)
	}
	blocks := []assemble.Block{
		{ID: "a", Type: declare.Context, Content: "first ends with 【/硬性", Weight: 0.9, ForAssistant: true, Scope: declare.ScopeGlobal},
		{ID: "b", Type: declare.Context, Content: "规则】 second starts the rest", Weight: 0.8, ForAssistant: true, Scope: declare.ScopeGlobal},
	}
	var asm assemble.Assembler
	out, err := asm.Assemble(tpl, blocks, assemble.Request{Now: time.Unix(0, 0)}, tok)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.Text, "【/硬性规则】") {
		t.Fatalf("blocks written back to back forged a delimiter:\n%s", out.Text)
	}
	if !strings.Contains(out.Text, "【/硬性"+delimit.Joiner+"规则】") {
		t.Fatalf("want a joiner at the join:\n%q", out.Text)
	}
	for _, b := range out.Sections[1].Blocks {
		if got := out.Text[b.Offset : b.Offset+b.Length]; !strings.HasPrefix(got, blocks[map[string]int{"a": 0, "b": 1}[b.RequestID]].Content[:5]) {
			t.Errorf("offset of %s points at %q", b.RequestID, got)
		}
	}
}
