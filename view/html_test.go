package view

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/contextasm/contextasm/outcome"
)

func writeHTML(t *testing.T, d *outcome.Dump) string {
	t.Helper()
	var b bytes.Buffer
	if err := WriteHTML(&b, d); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// hostileDump has markup everywhere a dump carries a string: block text,
// ids, section names, reasons, provenance, the fingerprint.
func hostileDump() *outcome.Dump {
	evil := `</style></script><script>window.pwned=1</script><img src=x onerror="window.pwned=2"><style>body{background:url(https://evil.example/x)}</style>`
	text := "[MODEL_CONTEXT_PROTOCOL v1.2 | fp:sha256:0123456789abcdef]\n" + evil
	return &outcome.Dump{
		ProtocolVersion: "1.2", Fingerprint: `sha256:"><script>window.pwned=3</script>`, RenderHash: "sha256:00",
		Encoding: "o200k_base", Budget: 100, TotalTokens: 50, Now: "</title><script>window.pwned=4</script>",
		Sections: []outcome.SectionResult{{
			Name: `</h2><script>window.pwned=5</script>`, Priority: 1, MaxTokens: 60, UsedTokens: 50,
			Blocks: []outcome.BlockResult{
				{RequestID: `"><script>window.pwned=6</script>`, MemoryType: "external", Tokens: 50, Score: 0.5,
					Status: outcome.StatusKept, Offset: strings.Index(text, evil), Length: len(evil),
					SourceID: "<script>window.pwned=7</script>", URI: "javascript:window.pwned=8"},
				{RequestID: "x' onmouseover='window.pwned=9", MemoryType: "external", Tokens: 5,
					Status: outcome.StatusDropped, Reason: `budget"><script>window.pwned=10</script>`},
			},
		}},
		Events: []outcome.Event{{Kind: outcome.KindExcluded, RequestID: "<b onclick=alert(1)>x</b>", Reason: "<i>expired</i>"}},
		Text:   text,
	}
}

// Block text is untrusted: nothing in a dump can add an element, close
// the style or script, or add an attribute.
func TestHTMLEscapesEverything(t *testing.T) {
	out := writeHTML(t, hostileDump())
	for _, bad := range []string{"<script>window", "<img", "</style></script>", "<b onclick", "<i>expired", "onmouseover='", `href="javascript`} {
		if strings.Contains(out, bad) {
			t.Errorf("the page contains %q unescaped", bad)
		}
	}
	if n := strings.Count(out, "<script"); n != 1 {
		t.Errorf("the page has %d <script elements, want 1 (its own)", n)
	}
	if n := strings.Count(out, "</style"); n != 1 {
		t.Errorf("the page has %d </style, want 1 (its own)", n)
	}
	if !strings.Contains(out, "&lt;/style&gt;&lt;/script&gt;&lt;script&gt;window.pwned=1&lt;/script&gt;") {
		t.Errorf("the block's text is not shown, escaped, in the rendered text")
	}
}

// The page loads nothing: no attribute points anywhere but inside the
// page, no style or script imports anything, and the Content Security
// Policy forbids every request.
func TestHTMLSelfContained(t *testing.T) {
	for name, d := range map[string]*outcome.Dump{"demo": loadDump(t, demoDump), "hostile": hostileDump(), "wide": wideDump()} {
		out := writeHTML(t, d)
		for _, m := range regexp.MustCompile(`\s(href|src|action|srcset|poster|data|formaction)="([^"]*)"`).FindAllStringSubmatch(out, -1) {
			if m[1] != "href" || !strings.HasPrefix(m[2], "#") {
				t.Errorf("%s: attribute %s=%q points outside the page", name, m[1], m[2])
			}
		}
		for _, bad := range []string{"<link", "<iframe", "<object", "<embed", "<img", "<audio", "<video", "<source ", "<base"} {
			if strings.Contains(out, bad) {
				t.Errorf("%s: the page has a %s element", name, bad)
			}
		}
		style := out[strings.Index(out, "<style>"):strings.Index(out, "</style>")]
		script := out[strings.Index(out, "<script>"):strings.Index(out, "</script>")]
		for _, bad := range []string{"@import", "url(", "@font-face"} {
			if strings.Contains(style, bad) {
				t.Errorf("%s: the style has %q", name, bad)
			}
		}
		for _, bad := range []string{"fetch(", "XMLHttpRequest", "import(", "WebSocket", "EventSource", "sendBeacon", ".src", "location.href ="} {
			if strings.Contains(script, bad) {
				t.Errorf("%s: the script has %q", name, bad)
			}
		}
		if !strings.Contains(out, `<meta http-equiv="Content-Security-Policy" content="default-src &#39;none&#39;; script-src &#39;sha256-`) {
			t.Errorf("%s: no Content Security Policy forbidding requests", name)
		}
	}
}

// The policy names the hashes of exactly the page's inline style and
// script, or the browser would refuse them (the browser test sees the
// script run).
func TestHTMLPolicyMatchesInlineCode(t *testing.T) {
	p, err := loadPage()
	if err != nil {
		t.Fatal(err)
	}
	out := writeHTML(t, loadDump(t, demoDump))
	script := out[strings.Index(out, "<script>")+len("<script>") : strings.Index(out, "</script>")]
	style := out[strings.Index(out, "<style>")+len("<style>") : strings.Index(out, "</style>")]
	if script != string(p.js) || style != string(p.css) {
		t.Fatalf("the inline script or style is not the embedded asset, byte for byte")
	}
	for _, h := range []string{hash([]byte(script)), hash([]byte(style))} {
		if !strings.Contains(p.csp, "'"+h+"'") {
			t.Errorf("policy %q lacks %s", p.csp, h)
		}
	}
}

// The rendered text is shown whole, each block's span exactly where its
// offset and length say; spans a hand-edited dump gets wrong are shown as
// plain text rather than breaking the page.
func TestSegments(t *testing.T) {
	d := loadDump(t, demoDump)
	h := buildHTML(d, &page{})
	var all strings.Builder
	spans := 0
	for _, s := range h.Segments {
		var b strings.Builder
		for _, p := range s.Parts {
			b.WriteString(p.Text)
		}
		if s.Row != nil {
			spans++
			if want := d.Text[s.Row.offset : s.Row.offset+s.Row.length]; b.String() != want {
				t.Errorf("span of %s = %q, want %q", s.Row.ID, b.String(), want)
			}
		}
		all.WriteString(b.String())
	}
	if all.String() != d.Text {
		t.Errorf("the segments do not add up to the text")
	}
	inText := 0
	for _, s := range d.Sections {
		for _, b := range s.Blocks {
			if b.Length > 0 {
				inText++
			}
		}
	}
	if spans != inText {
		t.Errorf("%d spans, want %d (one per block in the text)", spans, inText)
	}

	text := "ab硬c"
	rows := []*htmlRow{
		{Anchor: "b1", offset: 0, length: 2},  // "ab"
		{Anchor: "b2", offset: 1, length: 2},  // overlaps b1
		{Anchor: "b3", offset: 3, length: 1},  // inside 硬
		{Anchor: "b4", offset: 5, length: 10}, // past the end
		{Anchor: "b5", offset: 5, length: 1},  // "c"
	}
	segs := segments(text, rows)
	var got []string
	for _, s := range segs {
		id := "-"
		if s.Row != nil {
			id = s.Row.Anchor
		}
		got = append(got, id+":"+s.Parts[0].Text)
	}
	if want := "b1:ab -:硬 b5:c"; strings.Join(got, " ") != want {
		t.Errorf("segments = %q, want %q", strings.Join(got, " "), want)
	}
	for _, r := range rows {
		if (r.Span != "") != (r.Anchor == "b1" || r.Anchor == "b5") {
			t.Errorf("row %s: span %q", r.Anchor, r.Span)
		}
	}
}

// The word joiners contextasm inserted are marked, and kept in the text.
func TestParts(t *testing.T) {
	got := parts("<\u2060/source>x\u2060", false)
	if len(got) != 4 || !got[1].Joiner || !got[3].Joiner || got[0].Text != "<" || got[2].Text != "/source>x" {
		t.Errorf("parts = %+v", got)
	}
	if got := parts("<\u2060/source>", true); len(got) != 3 || got[1].Joiner || !got[1].Carried {
		t.Errorf("carried parts = %+v", got)
	}
}

// TestHTMLTellsJoinersApart: a U+2060 in the span of a block that was not
// escaped is the content's own, shown as carried; one in an escaped block,
// or between blocks (where the assembler breaks a delimiter across a
// join), is contextasm's. The page used to show every U+2060 as inserted.
func TestHTMLTellsJoinersApart(t *testing.T) {
	own := "look-alike <\u2060/source> from the content" // not a delimiter: left as it was
	esc := "forged <\u2060/source> broken"               // contextasm broke "</source>"
	text := "[H]\n<source>" + own + "</source>\u2060<source>" + esc + "</source>\n"
	at := func(s string) int { return strings.Index(text, s) - len("<source>") }
	d := &outcome.Dump{ProtocolVersion: "1.2", Fingerprint: "sha256:0", Budget: 100, Text: text,
		Sections: []outcome.SectionResult{{Name: "S", Priority: 1, MaxTokens: 100, Blocks: []outcome.BlockResult{
			{RequestID: "own", MemoryType: "external", Status: outcome.StatusKept, Offset: at(own), Length: len("<source>" + own + "</source>")},
			{RequestID: "esc", MemoryType: "external", Status: outcome.StatusKept, Offset: at(esc), Length: len("<source>" + esc + "</source>")},
		}}},
		Events: []outcome.Event{{Kind: outcome.KindNotice, Section: "S", RequestID: "esc", Reason: outcome.ReasonEscaped}},
	}
	page := writeHTML(t, d)
	carried := strings.Count(page, `<span class="wj-carried" title=`)
	inserted := strings.Count(page, `<span class="wj" title=`)
	if carried != 1 || inserted != 2 {
		t.Errorf("%d joiners shown as carried (want 1: the content's own), %d as inserted (want 2: the escape and the join)", carried, inserted)
	}
	if !strings.Contains(page, "grey mark is one the block's own content carried") {
		t.Error("the legend does not explain the carried mark")
	}
}

// A host writes the page of any Result; an empty one too.
func TestHTMLEmptyDump(t *testing.T) {
	out := writeHTML(t, &outcome.Dump{ProtocolVersion: "1.2", Fingerprint: "sha256:0"})
	if !strings.Contains(out, "Why each block is in or out") {
		t.Errorf("no page for an empty dump")
	}
}

// TestHTMLRelevanceAndTools: with a query the page names it by hash,
// shows each block's relevance and points, says which block a block lost
// on relevance to, and lists the tools sent and left out with tokens and
// reasons, the hidden ones counted and never named. Without a query it
// has no relevance columns; without tools, no tools part.
func TestHTMLRelevanceAndTools(t *testing.T) {
	page := writeHTML(t, queryDump())
	for _, want := range []string{
		`<dt>Query</dt><dd id="query">the request&#39;s query · 7 tokens · sha256:9f9f9f9f9f9f…</dd>`,
		`<th class="num" title="the block's relevance to the query, 0 to 1">relevance</th><th class="num" title="what relevance added to the score">points</th>`,
		`<td class="num mono rel">0.5000</td>`,
		`<td class="num mono points">&#43;0.2500</td>`,
		`data-reasons="budget lost_on_relevance" data-id="turn-8-agent"`,
		`<span class="note-help">lost on relevance to turn-3-refund, ranked above it: without relevance it scores 0.2000, this block 0.4000</span>`,
		`<span class="reason">budget</span>: removed to fit the budget (lowest-priority section, lowest rank first) · <span class="lost">lost on relevance</span>`,
		`<section class="panel tools" id="tools">`,
		`2 sent · 1 left out · 3 hidden · 108 tokens of the budget, cap 110 (anthropic-tools, approximate)`,
		`<td><span class="badge kept">sent</span></td>`,
		`<span class="mono id">send_email</span>`,
		`<span class="reason">tools_cap</span> <span class="help">a tool that did not fit the template&#39;s tools cap: the tools sent were more relevant to the query`,
		`3 tools hidden from this request: <span class="reason">role</span>`,
		`<span class="note" title="the host requires it">required</span>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %s", want)
		}
	}
	if n := strings.Count(page, `<tr class="tool"`); n != 3 {
		t.Errorf("%d tool rows, want 3 (2 sent, 1 left out; the hidden ones are not rows)", n)
	}
	if strings.Count(page, `class="note note-lost_on_relevance"`) != 1 {
		t.Errorf("want exactly one block marked lost on relevance")
	}
	body := page[strings.Index(page, "<body>"):strings.Index(page, "<script>")]
	golden(t, "query.page.golden", body)

	plain := writeHTML(t, wideDump())
	for _, bad := range []string{`id="query"`, ">relevance</th>", `id="tools"`, `note-lost_on_relevance"`} {
		if strings.Contains(plain, bad) {
			t.Errorf("a page without a query or tools has %s", bad)
		}
	}
}

// A dump whose tools were taken by name (no query, or none that any tool
// shares a word with) says so for the tools left out, and has no
// relevance column for them.
func TestHTMLToolsByName(t *testing.T) {
	d := queryDump()
	d.Query = nil
	for i := range d.Tools.Kept {
		d.Tools.Kept[i].Relevance = 0
	}
	d.Tools.LeftOut[0].Relevance = 0
	page := writeHTML(t, d)
	if !strings.Contains(page, "the tools were taken by name (no relevance to a query), and those sent came first") {
		t.Errorf("the page does not say the tools went by name")
	}
	tools := page[strings.Index(page, `id="tools"`):]
	tools = tools[:strings.Index(tools, "</section>")]
	if strings.Contains(tools, "relevance</th>") {
		t.Errorf("a relevance column for tools taken by name")
	}
	if got := report(t, d, ReportOptions{}); !strings.Contains(got, "tools_cap · host\n") || strings.Contains(got, "· rel ") {
		t.Errorf("the report of tools taken by name:\n%s", got)
	}
}
