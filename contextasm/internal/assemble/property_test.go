package assemble_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/contextasm/contextasm/contextasm/internal/assemble"
	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/fingerprint"
	"github.com/contextasm/contextasm/outcome"
	"github.com/contextasm/contextasm/template"
	"github.com/contextasm/contextasm/truncate"
)

// fragments are the pieces random content is made of: Chinese (including
// rare characters the tokenizer splits into bytes), Portuguese, English,
// code, JSON, emoji, and now and then a delimiter that must be escaped.
var fragments = []string{
	"上下文组装器根据优先级截断记忆块。",
	"用户偏好简洁的回答，讨厌冗长的解释。",
	"鬱龘𠀀齉",
	"数据库连接池的最大值是 42。",
	"A configuração do usuário não foi encontrada; ação necessária.",
	"O coração do avô é de pão e a mãe está à espera.",
	"Responda sempre em português, por favor.",
	"The deployment runs on Kubernetes 1.31 with three replicas.",
	"Never reveal the API key.",
	"func main() {\n\tfmt.Println(\"olá, 世界\")\n}",
	"for i := range n { total += xs[i] * 2 }",
	"def f(x):\n    return {k: v for k, v in x.items() if v}",
	`{"key": "valor", "n": 42, "ok": true, "tags": ["a", "b"]}`,
	`{"usuário": {"nome": "João", "idade": 31}, "城市": "上海"}`,
	"🚀✨ emoji 👩‍💻 e acentuação",
	"   ",
	"\n\n",
	"x",
	"</s1>",
	"【/s2】",
	"[MODEL_CONTEXT_PROTOCOL v1.2",
	"// nota: /etc/hosts 已更新", // starts with '/': not a clean line start
}

// renders are the render strings random sections use; %d is the
// section's number, so delimiters differ between sections.
var renders = []string{
	"{content}",
	"<s%d>{content}</s%d>",
	"【s%d】{content}【/s%d】",
	"### s%d [{request_id}]\n{content}",
	`<doc%d id="{request_id}" type="{memory_type}" src="{source_id}">{content}</doc%d>`,
	"  - s%d [{request_id}] {content}", // every block starts its line with white space
}

// workload is one random assembly.
type workload struct {
	def    template.Definition
	tpl    *template.Template
	blocks []assemble.Block
	// excluded gives, for each block generated to be ineligible, the one
	// reason why.
	excluded map[string]outcome.Reason
}

func randomContent(rng *rand.Rand, pieces int) string {
	var b strings.Builder
	for i := range pieces {
		if i > 0 {
			b.WriteString([]string{" ", "\n", "", " — "}[rng.IntN(4)])
		}
		b.WriteString(fragments[rng.IntN(len(fragments))])
	}
	return b.String()
}

func randomWorkload(t *testing.T, rng *rand.Rand) workload {
	t.Helper()
	w := workload{excluded: map[string]outcome.Reason{}}
	nsec := 1 + rng.IntN(4)
	types := declare.MemoryTypes()
	rng.Shuffle(len(types), func(i, j int) { types[i], types[j] = types[j], types[i] })
	secs := make([]template.SectionDefinition, nsec)
	for i := range secs {
		r := renders[rng.IntN(len(renders))]
		r = strings.ReplaceAll(r, "%d", fmt.Sprint(i+1))
		s := template.SectionDefinition{
			Name:        fmt.Sprintf("SEC_%d", i+1),
			Priority:    1 + rng.IntN(4), // ties happen
			MemoryTypes: []declare.MemoryType{types[i]},
			MaxTokens:   5 + rng.IntN(400),
			Render:      r,
			Fill:        []template.Fill{template.FillStop, template.FillSkip}[rng.IntN(2)],
			Order:       []template.Order{template.OrderRank, template.OrderDeclared, template.OrderTime}[rng.IntN(3)],
			Partial:     rng.IntN(2) == 0,
		}
		if rng.IntN(2) == 0 {
			s.MinPartialTokens = 1 + rng.IntN(40)
		}
		if rng.IntN(2) == 0 {
			sep := []string{"", "\n---\n", " | ", "\n\n"}[rng.IntN(4)]
			s.Separator = &sep
		}
		secs[i] = s
	}
	// The types left over go to a random section, or to none.
	for _, mt := range types[nsec:] {
		if rng.IntN(5) > 0 {
			i := rng.IntN(nsec)
			secs[i].MemoryTypes = append(secs[i].MemoryTypes, mt)
		}
	}
	// Now and then a type is listed twice: the first section by priority takes it.
	if nsec > 1 && rng.IntN(4) == 0 {
		i, j := rng.IntN(nsec), rng.IntN(nsec)
		if mt := secs[j].MemoryTypes[0]; i != j && !slices.Contains(secs[i].MemoryTypes, mt) {
			secs[i].MemoryTypes = append(secs[i].MemoryTypes, mt)
		}
	}
	w.def = template.Definition{Budget: 40 + rng.IntN(1500), Sections: secs}
	if rng.IntN(8) == 0 {
		w.def.Budget = 40 + rng.IntN(80) // tight
	}
	tpl, err := template.Compile(w.def)
	if err != nil {
		t.Fatalf("random template: %v", err)
	}
	w.tpl = tpl
	routed := func(mt declare.MemoryType) bool { _, ok := tpl.SectionFor(mt); return ok }

	ids := []string{"mem", "ação", "记忆", "note"}
	n := rng.IntN(61)
	for i := range n {
		b := assemble.Block{
			ID:           fmt.Sprintf("%s-%02d", ids[rng.IntN(len(ids))], i),
			Type:         declare.MemoryTypes()[rng.IntN(declare.NumMemoryTypes)],
			SourceID:     []string{"", "src-a", "fonte/ç", "源"}[rng.IntN(4)],
			Seq:          int64(rng.IntN(n + 1)), // duplicates happen
			Weight:       float64(rng.IntN(5)) / 4,
			Trust:        float64(rng.IntN(5)) / 4, // coarse: score ties happen
			Scope:        declare.ScopeGlobal,
			ForAssistant: true,
		}
		if rng.IntN(2) == 0 {
			b.Priority, b.HasPriority = float64(rng.IntN(5))/4, true
		}
		if rng.IntN(3) > 0 {
			b.LastModified = now.Add(-time.Duration(rng.IntN(100)) * time.Hour)
		}
		if rng.IntN(6) == 0 {
			b.StaleFrom, b.StaleAfter = now.Add(time.Duration(rng.IntN(5)-3)*time.Hour), time.Duration(rng.IntN(3))*time.Hour
		}
		if rng.IntN(10) == 0 && (routed(b.Type) || rng.IntN(10) == 0) {
			// Required: small, always eligible, rarely of an unrouted type.
			b.Required = true
			b.Content = randomContent(rng, 1)
			w.blocks = append(w.blocks, b)
			continue
		}
		b.Content = randomContent(rng, 1+rng.IntN(10))
		if !routed(b.Type) {
			w.excluded[b.ID] = outcome.ReasonNoSection
			w.blocks = append(w.blocks, b)
			continue
		}
		switch rng.IntN(20) {
		case 0:
			b.ValidUntil = now.Add(-time.Duration(rng.IntN(2)) * time.Hour) // at or before now
			w.excluded[b.ID] = outcome.ReasonExpired
		case 1:
			b.Scope, b.SessionID = declare.ScopeSession, "other"
			w.excluded[b.ID] = outcome.ReasonOutOfScope
		case 2:
			b.Scope, b.UserID = declare.ScopeUser, "other"
			w.excluded[b.ID] = outcome.ReasonOutOfScope
		case 3:
			b.EditRare().Roles = []string{"admin"}
			w.excluded[b.ID] = outcome.ReasonAccessDenied
		case 4:
			b.ForAssistant = false
			w.excluded[b.ID] = outcome.ReasonAudience
		case 5:
			b.ValidUntil = now.Add(time.Minute) // still valid
			b.Scope, b.SessionID = declare.ScopeSession, "s1"
			b.EditRare().Roles = []string{"admin", "analyst"}
		}
		w.blocks = append(w.blocks, b)
	}
	return w
}

var propertyRequest = assemble.Request{Now: now, SessionID: "s1", UserID: "u1", Roles: []string{"analyst"}}

func TestAssembleProperties(t *testing.T) {
	real := additiveTokenizer(t)
	// The assemblies and the checks count through a cache of the real
	// tokenizer (as the engine does): the same answers, each text
	// tokenized once. Property (a) counts the final text with the
	// tokenizer itself.
	tok := &memoCounter{Counter: real, counts: map[string]int{}}
	if !isAdditive(tok) {
		t.Fatal("fixture: the cached tokenizer is not line-additive")
	}
	rng := rand.New(rand.NewPCG(20250601, 42))
	const workloads = 300
	var reused assemble.Assembler // scratch reused across every workload
	var ok, failed, cuts, budgetDrops, capDrops int
	var exact, notLine, unclean int // how the successes were counted
	for i := range workloads {
		w := randomWorkload(t, rng)
		describe := func() string {
			def, _ := json.Marshal(w.def)
			return fmt.Sprintf("workload %d: template %s, %d blocks", i, def, len(w.blocks))
		}
		rec := &countingCounter{Counter: tok} // line-additive, as tok is
		out, err := reused.Assemble(w.tpl, w.blocks, propertyRequest, rec)

		// (d) The same workload in another order, on a fresh Assembler,
		// gives the same bytes (or the same failure). It counts with a
		// counter that is not line-additive, so it always counts its final
		// text: the same TotalTokens checks the shortcut against it. Every
		// other workload comes sorted by request_id, as package contextasm
		// gives blocks, which the Assembler ranks by index.
		shuffled := slices.Clone(w.blocks)
		if i%2 == 0 {
			rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		} else {
			slices.SortFunc(shuffled, func(x, y assemble.Block) int { return strings.Compare(x.ID, y.ID) })
		}
		var fresh assemble.Assembler
		out2, err2 := fresh.Assemble(w.tpl, shuffled, propertyRequest, plainCounter{tok})

		if err != nil {
			failed++
			checkFailure(t, describe, w, tok, err)
			if err2 == nil || !sameMisses(err, err2) {
				t.Fatalf("%s: shuffled blocks give %v, original %v", describe(), err2, err)
			}
			continue
		}
		ok++
		if err2 != nil {
			t.Fatalf("%s: shuffled blocks fail (%v), original succeeds", describe(), err2)
		}
		if out.Text != out2.Text {
			t.Fatalf("%s: shuffled blocks give another text:\n%q\nvs\n%q", describe(), out2.Text, out.Text)
		}
		if !reflect.DeepEqual(withoutIndex(t, describe, out.Sections, w.blocks), withoutIndex(t, describe, out2.Sections, shuffled)) || out.TotalTokens != out2.TotalTokens {
			t.Fatalf("%s: shuffled blocks give other section results (TotalTokens %d, counted %d)", describe(), out.TotalTokens, out2.TotalTokens)
		}
		if !sameEvents(out.Events, out2.Events) {
			t.Fatalf("%s: shuffled blocks give other events:\n%+v\nvs\n%+v", describe(), out2.Events, out.Events)
		}
		checkSuccess(t, describe, w, real, tok, out)
		switch checkShortcut(t, describe, w.tpl, rec, out) {
		case shortcutTaken:
			exact++
		case notLineMode:
			notLine++
		case uncleanStart:
			unclean++
		}
		for _, e := range out.Events {
			switch e.Reason {
			case outcome.ReasonCut:
				cuts++
			case outcome.ReasonBudget:
				budgetDrops++
			case outcome.ReasonSectionCap:
				capDrops++
			}
		}
	}
	t.Logf("%d workloads: %d assembled (%d cuts, %d section_cap and %d budget drops), %d failed closed", workloads, ok, cuts, capDrops, budgetDrops, failed)
	t.Logf("final text not counted (lines add up) %d times; counted %d times for a section out of line mode, %d for a block not starting its line cleanly", exact, notLine, unclean)
	// The generator must exercise what the properties are about.
	if ok < workloads*2/3 || failed == 0 || cuts == 0 || budgetDrops == 0 || capDrops == 0 {
		t.Errorf("the random workloads do not cover enough: %d ok, %d failed, %d cuts, %d budget, %d section_cap", ok, failed, cuts, budgetDrops, capDrops)
	}
	if exact < ok/10 || notLine < ok/10 || unclean < ok/20 {
		t.Errorf("the random workloads do not cover both ways of counting: %d not counted, %d counted out of line mode, %d for unclean starts", exact, notLine, unclean)
	}
}

// withoutIndex checks that each result's Index is the position of its
// block in blocks, and returns a copy of the results without it, the one
// field that depends on the order blocks come in.
func withoutIndex(t *testing.T, describe func() string, sections []outcome.SectionResult, blocks []assemble.Block) []outcome.SectionResult {
	t.Helper()
	c := slices.Clone(sections)
	for i := range c {
		c[i].Blocks = slices.Clone(c[i].Blocks)
		for j := range c[i].Blocks {
			br := &c[i].Blocks[j]
			if br.Index < 0 || int(br.Index) >= len(blocks) || blocks[br.Index].ID != br.RequestID {
				t.Fatalf("%s: %s has Index %d, not its position in the blocks", describe(), br.RequestID, br.Index)
			}
			br.Index = 0
		}
	}
	return c
}

// How an assembly came by its TotalTokens.
type counting int

const (
	shortcutTaken counting = iota // the sum of the lines; the final text not counted
	notLineMode                   // counted: a section with blocks is out of line mode
	uncleanStart                  // counted: a block does not start its line cleanly
)

// checkShortcut checks that a successful assembly with the line-additive
// counter rec counted its final text exactly when it had to: unless every
// section with blocks is in line mode and every block in the text starts
// its line cleanly. When it did not, TotalTokens must be the header line's
// count plus the sections' used tokens.
func checkShortcut(t *testing.T, describe func() string, tpl *template.Template, rec *countingCounter, out *assemble.Output) counting {
	t.Helper()
	how, blocks := shortcutTaken, 0
	sum := rec.Counter.Count(tpl.Header() + "\n")
	for si, s := range out.Sections {
		sum += s.UsedTokens
		for _, br := range s.Blocks {
			if br.Status == outcome.StatusDropped {
				continue
			}
			blocks++
			switch {
			case !lineMode(tpl.Section(si)):
				how = notLineMode
			case !truncate.StartsLineCleanly(out.Text[br.Offset:br.Offset+br.Length]) && how == shortcutTaken:
				how = uncleanStart
			}
		}
	}
	counted := rec.countedExactly(out.Text)
	switch {
	case how != shortcutTaken && !counted:
		t.Fatalf("%s: the final text was not counted, though %v", describe(), how)
	case how == shortcutTaken && blocks > 0 && counted:
		// With no block, the header line is the text, and it is counted.
		t.Fatalf("%s: the final text was counted, though its lines add up", describe())
	case how == shortcutTaken && out.TotalTokens != sum:
		t.Fatalf("%s: TotalTokens %d, the header line and the sections' used tokens %d", describe(), out.TotalTokens, sum)
	}
	return how
}

func (c counting) String() string {
	return [...]string{"the lines add up", "a section is out of line mode", "a block does not start its line cleanly"}[c]
}

// checkSuccess checks the properties of a successful assembly.
func checkSuccess(t *testing.T, describe func() string, w workload, real, tok truncate.Counter, out *assemble.Output) {
	t.Helper()
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("%s: %s\ntext:\n%s", describe(), fmt.Sprintf(format, args...), out.Text)
	}
	tpl := w.tpl
	byID := map[string]assemble.Block{}
	for _, b := range w.blocks {
		byID[b.ID] = b
	}

	// (a) The exact count of the final text, within the budget.
	if n := real.Count(out.Text); n != out.TotalTokens || n > tpl.Budget() {
		fail("TotalTokens %d, the text counts %d, budget %d", out.TotalTokens, n, tpl.Budget())
	}

	// Every block is accounted for: ineligible ones by one exclusion event
	// and no result, eligible ones by one result in their section.
	type place struct {
		sec  int // file order
		rank int // position in the section's results
		br   outcome.BlockResult
	}
	placed := map[string]place{}
	if len(out.Sections) != tpl.NumSections() {
		fail("%d section results for %d sections", len(out.Sections), tpl.NumSections())
	}
	for si, s := range out.Sections {
		if s.Name != tpl.Section(si).Name() {
			fail("section result %d is %s, want %s", si, s.Name, tpl.Section(si).Name())
		}
		for j, br := range s.Blocks {
			if _, dup := placed[br.RequestID]; dup {
				fail("%s placed twice", br.RequestID)
			}
			placed[br.RequestID] = place{si, j, br}
		}
	}
	hidden := map[outcome.Reason]int{}
	for _, b := range w.blocks {
		var excl []outcome.Event
		for _, e := range out.Events {
			if e.RequestID == b.ID && e.Kind == outcome.KindExcluded {
				excl = append(excl, e)
			}
		}
		if reason, ok := w.excluded[b.ID]; ok && outcome.Hidden(reason) {
			// Someone else's block: counted, never named.
			hidden[reason]++
			if len(excl) != 0 {
				fail("%s: hidden exclusion listed as %+v", b.ID, excl)
			}
			if _, in := placed[b.ID]; in {
				fail("excluded block %s has a result", b.ID)
			}
			continue
		} else if ok {
			want := outcome.Event{Kind: outcome.KindExcluded, RequestID: b.ID, Reason: reason}
			if len(excl) != 1 || excl[0] != want {
				fail("%s: exclusion events %+v, want [%+v]", b.ID, excl, want)
			}
			if _, in := placed[b.ID]; in {
				fail("excluded block %s has a result", b.ID)
			}
			continue
		}
		p, in := placed[b.ID]
		si, _ := tpl.SectionFor(b.Type)
		if len(excl) != 0 || !in || p.sec != si {
			fail("eligible block %s: exclusions %+v, placed %v in section %d, want section %d", b.ID, excl, in, p.sec, si)
		}
		// (b) Required blocks are kept whole.
		if b.Required && p.br.Status != outcome.StatusKept {
			fail("required block %s is %v (%s)", b.ID, p.br.Status, p.br.Reason)
		}
		stale := !b.StaleFrom.IsZero() && !now.Before(b.StaleFrom)
		want := outcome.Event{Kind: outcome.KindNotice, Section: tpl.Section(si).Name(), RequestID: b.ID, Reason: outcome.ReasonStale}
		if got := slices.Contains(out.Events, want); got != stale {
			fail("%s: stale notice %v, want %v", b.ID, got, stale)
		}
	}
	if len(hidden) == 0 {
		hidden = nil
	}
	if !maps.Equal(out.ExcludedCounts, hidden) {
		fail("excluded counts %v, want %v", out.ExcludedCounts, hidden)
	}

	// Each status with its reason and its one event.
	for id, p := range placed {
		br := p.br
		var evs []outcome.Event
		for _, e := range out.Events {
			if e.RequestID == id && (e.Kind == outcome.KindDropped || e.Kind == outcome.KindCut) {
				evs = append(evs, e)
			}
		}
		sec := tpl.Section(p.sec)
		var want []outcome.Event
		switch {
		case br.Status == outcome.StatusKept && br.Reason == "":
		case br.Status == outcome.StatusCut && br.Reason == outcome.ReasonCut && sec.Partial():
			want = []outcome.Event{{Kind: outcome.KindCut, Section: sec.Name(), RequestID: id, Reason: outcome.ReasonCut, Tokens: br.Tokens}}
		case br.Status == outcome.StatusDropped && br.Reason == outcome.ReasonSectionCap:
			want = []outcome.Event{{Kind: outcome.KindDropped, Section: sec.Name(), RequestID: id, Reason: outcome.ReasonSectionCap, Tokens: br.Tokens}}
		case br.Status == outcome.StatusDropped && br.Reason == outcome.ReasonBudget:
			// A cut block dropped for the budget has both events.
			if slices.ContainsFunc(evs, func(e outcome.Event) bool { return e.Reason == outcome.ReasonCut }) {
				want = append(want, outcome.Event{Kind: outcome.KindCut, Section: sec.Name(), RequestID: id, Reason: outcome.ReasonCut, Tokens: br.Tokens})
			}
			want = append(want, outcome.Event{Kind: outcome.KindDropped, Section: sec.Name(), RequestID: id, Reason: outcome.ReasonBudget, Tokens: br.Tokens})
		default:
			fail("%s: status %v with reason %q in section %s (partial %v)", id, br.Status, br.Reason, sec.Name(), sec.Partial())
		}
		if !slices.Equal(evs, want) {
			fail("%s: events %+v, want %+v", id, evs, want)
		}
		if br.Required != byID[id].Required || br.MemoryType != string(byID[id].Type) {
			fail("%s: result %+v does not match the block", id, br)
		}
	}

	// Per section: rank order, the cap, (c) fill stop, one cut at most,
	// (e) the offsets, and the text rebuilt from them.
	rebuilt := tpl.Header() + "\n"
	for si, s := range out.Sections {
		sec := tpl.Section(si)
		sepTokens := 0 // in line mode each block counts with its newline
		if !lineMode(sec) {
			sepTokens = tok.Count(sec.Separator())
		}
		used, inText, cutCount := 0, 0, 0
		firstCapDrop := -1
		type span struct {
			off, end int
			id       string
		}
		var spans []span
		for j, br := range s.Blocks {
			if j > 0 {
				prev := s.Blocks[j-1]
				if prev.Required != br.Required && !prev.Required || prev.Required == br.Required && prev.Score < br.Score {
					fail("section %s: %s ranked after %s", s.Name, prev.RequestID, br.RequestID)
				}
			}
			if br.Status == outcome.StatusDropped && br.Reason == outcome.ReasonSectionCap && firstCapDrop < 0 {
				firstCapDrop = j
			}
			if br.Status == outcome.StatusDropped {
				if br.Offset != 0 || br.Length != 0 {
					fail("dropped %s has offset %d length %d", br.RequestID, br.Offset, br.Length)
				}
				continue
			}
			// (c) Under fill stop nothing is kept below a section_cap drop.
			if sec.Fill() == template.FillStop && firstCapDrop >= 0 {
				fail("section %s (stop): %s (%v, rank %d) ranks below %s dropped for section_cap (rank %d)",
					s.Name, br.RequestID, br.Status, j, s.Blocks[firstCapDrop].RequestID, firstCapDrop)
			}
			inText++
			used += br.Tokens
			// (e) Offset and Length locate exactly the block's text.
			if br.Offset < 0 || br.Length <= 0 || br.Offset+br.Length > len(out.Text) {
				fail("%s: offset %d length %d outside the text (%d bytes)", br.RequestID, br.Offset, br.Length, len(out.Text))
			}
			got := out.Text[br.Offset : br.Offset+br.Length]
			b := byID[br.RequestID]
			if br.Status == outcome.StatusKept {
				want, escaped := sec.AppendRender(nil, template.Fields{Content: b.Content, RequestID: b.ID, MemoryType: string(b.Type), SourceID: b.SourceID})
				if got != string(want) {
					fail("%s at [%d:+%d] = %q, want %q", br.RequestID, br.Offset, br.Length, got, want)
				}
				notice := outcome.Event{Kind: outcome.KindNotice, Section: s.Name, RequestID: b.ID, Reason: outcome.ReasonEscaped}
				if slices.Contains(out.Events, notice) != escaped {
					fail("%s: escaped notice %v, rendering escaped %v", b.ID, !escaped, escaped)
				}
			} else {
				cutCount++
				if n := blockTokens(tok, sec, got); !utf8.ValidString(got) || n != br.Tokens || strings.Contains(got, b.Content) {
					fail("cut %s at [%d:+%d] = %q: valid %v, counts %d (result %d)", br.RequestID, br.Offset, br.Length, got, utf8.ValidString(got), n, br.Tokens)
				}
			}
			if n := blockTokens(tok, sec, got); n != br.Tokens {
				fail("%s: counts %d tokens, result says %d", br.RequestID, n, br.Tokens)
			}
			spans = append(spans, span{br.Offset, br.Offset + br.Length, br.RequestID})
		}
		if inText > 1 {
			used += (inText - 1) * sepTokens
		}
		if s.UsedTokens != used || used > s.MaxTokens || s.MaxTokens != sec.MaxTokens() || s.Priority != sec.Priority() {
			fail("section %s: used %d (recomputed %d), cap %d (template %d)", s.Name, s.UsedTokens, used, s.MaxTokens, sec.MaxTokens())
		}
		if cutCount > 1 {
			fail("section %s: %d cut blocks", s.Name, cutCount)
		}
		if len(spans) == 0 {
			if s.UsedTokens != 0 {
				fail("section %s: no block in the text, but %d tokens used", s.Name, s.UsedTokens)
			}
			continue
		}
		slices.SortFunc(spans, func(a, b span) int { return a.off - b.off })
		// The written order follows the section's order; ties keep rank.
		for k := 1; k < len(spans); k++ {
			x, y := byID[spans[k-1].id], byID[spans[k].id]
			px, py := placed[x.ID].rank, placed[y.ID].rank
			var wrong bool
			switch sec.Order() {
			case template.OrderRank:
				wrong = px > py
			case template.OrderDeclared:
				wrong = x.Seq > y.Seq || x.Seq == y.Seq && px > py
			case template.OrderTime:
				c := x.LastModified.Compare(y.LastModified)
				wrong = c > 0 || c == 0 && px > py
			}
			if wrong {
				fail("section %s (order %s): %s written before %s", s.Name, sec.Order(), x.ID, y.ID)
			}
		}
		for k, sp := range spans {
			if k > 0 {
				rebuilt += sec.Separator()
			}
			if sp.off != len(rebuilt) {
				fail("section %s: a block starts at %d, want %d", s.Name, sp.off, len(rebuilt))
			}
			rebuilt += out.Text[sp.off:sp.end]
		}
		rebuilt += "\n"
	}
	if rebuilt != out.Text {
		fail("the text is not the header line and the sections' blocks, each section ending a line:\n%q\nrebuilt\n%q", out.Text, rebuilt)
	}

	// The budget cut goes from the least important section and the
	// lowest-ranked block: nothing cuttable stays behind a budget drop.
	pos := make([]int, tpl.NumSections()) // section index -> cut order, 0 most important
	for k := range tpl.NumSections() {
		pos[tpl.ByPriority(k)] = k
	}
	for id, p := range placed {
		if p.br.Reason != outcome.ReasonBudget {
			continue
		}
		for id2, q := range placed {
			inText := q.br.Status == outcome.StatusKept || q.br.Status == outcome.StatusCut
			after := pos[q.sec] > pos[p.sec] || q.sec == p.sec && q.rank > p.rank
			if inText && !q.br.Required && after {
				fail("%s dropped for the budget, but %s, cut before it, stays", id, id2)
			}
		}
	}

	// Header and fingerprint are intact: the header is the first line.
	if !strings.HasPrefix(out.Text, tpl.Header()) || strings.Count(out.Text, fingerprint.HeaderPrefix) != 1 {
		fail("the header is not the one and only first line")
	}
}

// checkFailure checks that a failed assembly failed closed, for a real
// reason: the misses it lists really do not fit.
func checkFailure(t *testing.T, describe func() string, w workload, tok truncate.Counter, err error) {
	t.Helper()
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("%s: %s\nerror: %v", describe(), fmt.Sprintf(format, args...), err)
	}
	var re *truncate.RequiredError
	if !errors.Is(err, truncate.ErrBudgetTooSmall) || !errors.As(err, &re) || len(re.Misses) == 0 {
		fail("want a RequiredError with misses wrapping ErrBudgetTooSmall")
	}
	tpl := w.tpl
	var required []assemble.Block
	unrouted := 0
	for _, b := range w.blocks {
		if !b.Required {
			continue
		}
		if _, ok := tpl.SectionFor(b.Type); ok {
			required = append(required, b)
		} else {
			unrouted++
		}
	}
	var noSection, capMisses, budgetMisses int
	for _, m := range re.Misses {
		i := slices.IndexFunc(w.blocks, func(b assemble.Block) bool { return b.ID == m.RequestID })
		if i < 0 || !w.blocks[i].Required {
			fail("miss %+v is not a required block", m)
		}
		b := w.blocks[i]
		switch m.Reason {
		case outcome.ReasonNoSection:
			noSection++
			if _, ok := tpl.SectionFor(b.Type); ok {
				fail("miss %+v: a section takes %s", m, b.Type)
			}
		case outcome.ReasonSectionCap:
			capMisses++
			si, ok := tpl.SectionFor(b.Type)
			sec := tpl.Section(si)
			if !ok || sec.Name() != m.Section || m.Limit != sec.MaxTokens() {
				fail("miss %+v: block %s goes to section %d", m, b.ID, si)
			}
			// The section's required blocks really exceed its cap.
			sum, n := 0, 0
			for _, r := range required {
				if rs, _ := tpl.SectionFor(r.Type); rs == si {
					sum += blockTokens(tok, sec, renderContent(sec, r, r.Content))
					n++
				}
			}
			if !lineMode(sec) {
				sum += (n - 1) * tok.Count(sec.Separator())
			}
			if sum <= sec.MaxTokens() {
				fail("miss %+v, but the required blocks of %s count %d ≤ %d", m, sec.Name(), sum, sec.MaxTokens())
			}
		case outcome.ReasonBudget:
			budgetMisses++
			if m.Limit != tpl.Budget() {
				fail("miss %+v: limit is not the budget %d", m, tpl.Budget())
			}
		default:
			fail("miss %+v: unexpected reason", m)
		}
	}
	if noSection != unrouted {
		fail("%d no_section misses, %d required blocks of a type no section takes", noSection, unrouted)
	}
	if budgetMisses > 0 {
		// The required blocks alone, without a budget, really count more.
		if noSection+capMisses > 0 {
			fail("budget misses mixed with cap or section misses")
		}
		big, err := tpl.WithBudget(1 << 30)
		if err != nil {
			t.Fatal(err)
		}
		var a assemble.Assembler
		alone, err := a.Assemble(big, required, propertyRequest, tok)
		if err != nil {
			fail("the required blocks alone fail without a budget: %v", err)
		}
		// The header differs with the budget; count the same text under
		// the original header.
		text := tpl.Header() + strings.TrimPrefix(alone.Text, big.Header())
		if n := tok.Count(text); n <= tpl.Budget() {
			fail("the required blocks alone count %d ≤ budget %d", n, tpl.Budget())
		}
		if budgetMisses != len(required) {
			fail("%d budget misses, %d required blocks", budgetMisses, len(required))
		}
	}
}

// sameMisses reports whether two RequiredErrors list the same misses, in
// any order.
func sameMisses(a, b error) bool {
	var ra, rb *truncate.RequiredError
	if !errors.As(a, &ra) || !errors.As(b, &rb) {
		return false
	}
	key := func(m truncate.RequiredMiss) string { return fmt.Sprintf("%+v", m) }
	ka, kb := make([]string, 0, len(ra.Misses)), make([]string, 0, len(rb.Misses))
	for _, m := range ra.Misses {
		ka = append(ka, key(m))
	}
	for _, m := range rb.Misses {
		kb = append(kb, key(m))
	}
	slices.Sort(ka)
	slices.Sort(kb)
	return slices.Equal(ka, kb)
}

// sameEvents reports whether two event lists hold the same events, in any
// order (the order follows the order blocks are given in).
func sameEvents(a, b []outcome.Event) bool {
	key := func(e outcome.Event) string { return fmt.Sprintf("%+v", e) }
	ka, kb := make([]string, 0, len(a)), make([]string, 0, len(b))
	for _, e := range a {
		ka = append(ka, key(e))
	}
	for _, e := range b {
		kb = append(kb, key(e))
	}
	slices.Sort(ka)
	slices.Sort(kb)
	return slices.Equal(ka, kb)
}
