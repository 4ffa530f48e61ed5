package view

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/contextasm/contextasm/outcome"
)

var screenshots = flag.String("screenshots", "", "write full-page PNG screenshots of the HTML views to this directory")

// chromiumPath is Debian's chromium, which .ci/run installs.
const chromiumPath = "/usr/bin/chromium"

// browser starts headless Chromium for one test, with no network of its
// own (no background requests, updates, sync or QUIC) and a fresh
// profile. Without Chromium the test is skipped, except in CI, where it
// fails: a skipped browser test would hide a broken page.
func browser(t *testing.T) context.Context {
	t.Helper()
	path := chromiumPath
	if _, err := os.Stat(path); err != nil {
		p, lerr := exec.LookPath("chromium")
		if lerr != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("chromium is not installed (%v); CI must install it (.ci/run does: apt-get install chromium)", err)
			}
			t.Skipf("chromium is not installed at %s; install it (apt-get install chromium) to run the HTML view's browser test", chromiumPath)
		}
		path = p
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-default-apps", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("metrics-recording-only", true),
		chromedp.Flag("no-pings", true),
	}
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	t.Cleanup(cancel)
	actx, acancel := chromedp.NewExecAllocator(ctx, opts...)
	t.Cleanup(acancel)
	bctx, bcancel := chromedp.NewContext(actx)
	t.Cleanup(bcancel)
	return bctx
}

// pageLog records what a page did that a self-contained, well-formed page
// must not: requests, console errors (Content Security Policy violations
// among them) and uncaught exceptions.
type pageLog struct {
	mu       sync.Mutex
	requests []string
	problems []string
}

func (p *pageLog) listen(ctx context.Context, t *testing.T) {
	t.Helper()
	err := chromedp.Listen(ctx, func(ev any) {
		p.mu.Lock()
		defer p.mu.Unlock()
		switch e := ev.(type) {
		case *network.EventRequestWillBeSent:
			p.requests = append(p.requests, e.Request.URL)
		case *log.EventEntryAdded:
			if e.Entry.Level == log.EntryLevelError || e.Entry.Level == log.EntryLevelWarning {
				p.problems = append(p.problems, fmt.Sprintf("%s: %s (%s)", e.Entry.Source, e.Entry.Text, e.Entry.URL))
			}
		case *runtime.EventExceptionThrown:
			p.problems = append(p.problems, "exception: "+e.ExceptionDetails.Text)
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.ConsoleAPICalledTypeError || e.Type == runtime.ConsoleAPICalledTypeWarning {
				p.problems = append(p.problems, "console."+string(e.Type))
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	// The network domain is what reports requests; enable it before the
	// page loads (chromedp enables it too, this states the dependency).
	if _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, log.Enable, cdp.Empty{}); err != nil {
		t.Fatal(err)
	}
}

// open writes d's page to a file, loads it and waits for its script.
func open(t *testing.T, ctx context.Context, d *outcome.Dump, name string) (url string, pl *pageLog) {
	t.Helper()
	file := filepath.Join(t.TempDir(), name+".html")
	f, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteHTML(f, d); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	pl = &pageLog{}
	pl.listen(ctx, t)
	url = "file://" + file
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := chromedp.Do(wctx, chromedp.Navigate(url), chromedp.WaitReady(chromedp.CSS(`body[data-ready="true"]`))); err != nil {
		t.Fatalf("loading %s and waiting for its script: %v", url, err)
	}
	return url, pl
}

// check asserts that the page made no request but for its own document
// and logged no error, such as a refused inline style.
func (p *pageLog) check(t *testing.T, url string) {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	t.Logf("requests: %q", p.requests)
	if len(p.requests) == 0 {
		t.Errorf("no request seen at all: is the network domain reporting?")
	}
	for _, r := range p.requests {
		if r != url {
			t.Errorf("the page made a request: %s", r)
		}
	}
	for _, pr := range p.problems {
		t.Errorf("the page logged: %s", pr)
	}
}

func eval[T any](t *testing.T, ctx context.Context, js string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js))
	if err != nil {
		t.Fatalf("%s: %v", js, err)
	}
	return v
}

func shoot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	if *screenshots == "" {
		return
	}
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(*screenshots, name+".png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// rowInfo is what the page shows of one block's row.
type rowInfo struct {
	ID      string `json:"id"`
	Status  string `json:"status"`
	Reason  string `json:"reason"`
	Section string `json:"section"`
	Hidden  bool   `json:"hidden"`
}

const rowsJS = `Array.from(document.querySelectorAll("tr.block")).map(function (r) {
	var reason = r.querySelector(".why .reason");
	var sec = r.closest("section");
	return {id: r.querySelector(".id").textContent, status: r.dataset.status,
		reason: reason ? reason.textContent : "", section: sec.dataset.section || "",
		hidden: r.hidden || r.offsetParent === null};
})`

// rowKey names a row in the test's maps: its id, or for an unnamed row of
// hidden exclusions (which all read alike) that text and its reason.
func rowKey(r rowInfo) string {
	if r.Status == "excluded" && strings.HasSuffix(r.ID, "counted, not named") {
		return r.ID + r.Reason
	}
	return r.ID
}

// The demo's page, after its script ran: the right sections in order,
// every block in its section with its status and reason, the exclusions,
// the text spans linked to their rows, filters that hide what they
// should, and not one request.
func TestHTMLInBrowser(t *testing.T) {
	ctx := browser(t)
	d := loadDump(t, demoDump)
	url, pl := open(t, ctx, d, "demo")
	shoot(t, ctx, "demo")

	var wantSections []string
	for _, s := range d.Sections {
		wantSections = append(wantSections, s.Name)
	}
	if got := eval[[]string](t, ctx, `Array.from(document.querySelectorAll("section.section[data-section]")).map(function (s) { return s.dataset.section; })`); !slices.Equal(got, wantSections) {
		t.Errorf("sections = %q, want %q", got, wantSections)
	}

	// Every block: its row, in its section, with its status and reason.
	want := map[string]rowInfo{}
	counts := map[string]int{}
	for _, s := range d.Sections {
		for _, b := range s.Blocks {
			want[b.RequestID] = rowInfo{ID: b.RequestID, Status: b.Status.String(), Reason: string(b.Reason), Section: s.Name}
			counts[b.Status.String()]++
		}
	}
	for _, e := range d.Events {
		if e.Kind == "excluded" {
			want[e.RequestID] = rowInfo{ID: e.RequestID, Status: "excluded", Reason: string(e.Reason)}
			counts["excluded"]++
		}
	}
	// Hidden exclusions are one unnamed row per reason, counted, never
	// named (the demo hides one block for each of its three reasons).
	for r, n := range d.ExcludedCounts {
		if n != 1 {
			t.Fatalf("the demo hides %d blocks for %s; this test expects one per reason", n, r)
		}
		id := unnamedText(n)
		want[id+string(r)] = rowInfo{ID: id, Status: "excluded", Reason: string(r)}
		counts["excluded"]++
	}
	if len(d.ExcludedCounts) == 0 {
		t.Fatal("the demo's dump counts no hidden exclusions; the page's unnamed rows go untested")
	}
	rows := eval[[]rowInfo](t, ctx, rowsJS)
	if len(rows) != len(want) {
		t.Errorf("%d rows, want %d", len(rows), len(want))
	}
	gotCounts := map[string]int{}
	for _, r := range rows {
		gotCounts[r.Status]++
		w, ok := want[rowKey(r)]
		r.Hidden = false
		if !ok || r != w {
			t.Errorf("row %+v, want %+v", r, w)
		}
	}
	for st, n := range counts {
		if gotCounts[st] != n {
			t.Errorf("%d %s rows, want %d", gotCounts[st], st, n)
		}
		label := eval[string](t, ctx, `document.querySelector('label.chip.`+st+` .n').textContent`)
		if label != fmt.Sprint(n) {
			t.Errorf("the %s filter says %s, want %d", st, label, n)
		}
	}
	// The newcomer's question, answered at the top: what was dropped, why.
	leftOut := eval[string](t, ctx, `document.getElementById("left-out").innerText`)
	if !strings.Contains(leftOut, "turn-04-agent from HISTORY — budget: removed to fit the budget") {
		t.Errorf("the left-out panel does not say why turn-04-agent was dropped:\n%s", leftOut)
	}

	// Each span of the text is the block's exact text and links to its row.
	type span struct {
		Row  string `json:"row"`
		ID   string `json:"id"`
		Text string `json:"text"`
	}
	spans := eval[[]span](t, ctx, `Array.from(document.querySelectorAll("pre.rendered a.span")).map(function (a) {
		var row = document.getElementById(a.getAttribute("href").slice(1));
		return {row: a.dataset.row, id: row ? row.querySelector(".id").textContent : "", text: a.textContent};
	})`)
	byID := map[string]outcome.BlockResult{}
	for _, s := range d.Sections {
		for _, b := range s.Blocks {
			if b.Length > 0 {
				byID[b.RequestID] = b
			}
		}
	}
	if len(spans) != len(byID) {
		t.Errorf("%d spans in the text, want %d", len(spans), len(byID))
	}
	for _, s := range spans {
		b, ok := byID[s.ID]
		if !ok || s.Text != d.Text[b.Offset:b.Offset+b.Length] {
			t.Errorf("span linked to %q shows %q", s.ID, s.Text)
		}
	}
	if got := eval[string](t, ctx, `document.querySelector("pre.rendered").textContent`); got != d.Text {
		t.Errorf("the rendered text differs from the dump's")
	}

	visible := func() map[string]bool {
		v := map[string]bool{}
		for _, r := range eval[[]rowInfo](t, ctx, rowsJS) {
			if !r.Hidden {
				v[rowKey(r)] = true
			}
		}
		return v
	}
	shown := func() string { return eval[string](t, ctx, `document.getElementById("shown").textContent`) }

	// Status filter: unticking "kept" hides exactly the kept rows.
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`input[name=status][value=kept]`))); err != nil {
		t.Fatal(err)
	}
	v := visible()
	for id, w := range want {
		if v[id] != (w.Status != "kept") {
			t.Errorf("with kept unticked, %s (%s) visible = %v", id, w.Status, v[id])
		}
	}
	if got, wantText := shown(), fmt.Sprintf("showing %d of %d blocks", len(want)-counts["kept"], len(want)); got != wantText {
		t.Errorf("count says %q, want %q", got, wantText)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`input[name=status][value=kept]`))); err != nil {
		t.Fatal(err)
	}
	if v := visible(); len(v) != len(want) {
		t.Errorf("with every status ticked, %d rows visible, want %d", len(v), len(want))
	}

	// Reason filter: "budget" leaves the three history turns the budget
	// dropped; a section with none left says so.
	eval[bool](t, ctx, `(function () { var s = document.getElementById("filter-reason"); s.value = "budget"; s.dispatchEvent(new Event("change")); return true; })()`)
	shoot(t, ctx, "demo-budget")
	v = visible()
	var budget []string
	for id, w := range want {
		if w.Reason == "budget" {
			budget = append(budget, id)
		}
		if v[id] != (w.Reason == "budget") {
			t.Errorf("with reason budget, %s (%s) visible = %v", id, w.Reason, v[id])
		}
	}
	if len(budget) == 0 {
		t.Fatal("the demo dropped nothing for the budget: the filter test tests nothing")
	}
	empty := 1 // the excluded blocks' table
	for _, s := range d.Sections {
		if !slices.ContainsFunc(s.Blocks, func(b outcome.BlockResult) bool { return b.Reason == "budget" }) {
			empty++
		}
	}
	if n := eval[int](t, ctx, `document.querySelectorAll("tr.none:not([hidden])").length`); n != empty {
		t.Errorf("%d tables say no block matches, want %d", n, empty)
	}
	// Notes are reasons to filter by too: the stale rate sheet.
	eval[bool](t, ctx, `(function () { var s = document.getElementById("filter-reason"); s.value = "stale"; s.dispatchEvent(new Event("change")); return true; })()`)
	if v := visible(); len(v) != 1 || !v["rate-sheet-2026-11"] {
		t.Errorf("with reason stale, visible = %v", v)
	}
	eval[bool](t, ctx, `(function () { var s = document.getElementById("filter-reason"); s.value = ""; s.dispatchEvent(new Event("change")); return true; })()`)

	// Find: typing part of an id leaves its row.
	if err := chromedp.Do(ctx, chromedp.SendKeys(chromedp.CSS(`#filter-find`), "turn-04")); err != nil {
		t.Fatal(err)
	}
	if v := visible(); len(v) != 1 || !v["turn-04-agent"] {
		t.Errorf("finding turn-04, visible = %v", v)
	}

	pl.check(t, url)
}

// A dump full of markup cannot run script in the page, nor make it
// request anything.
func TestHTMLInBrowserHostile(t *testing.T) {
	ctx := browser(t)
	url, pl := open(t, ctx, hostileDump(), "hostile")
	shoot(t, ctx, "hostile")
	if got := eval[string](t, ctx, `String(window.pwned)`); got != "undefined" {
		t.Errorf("injected script ran: window.pwned = %s", got)
	}
	if n := eval[int](t, ctx, `document.scripts.length`); n != 1 {
		t.Errorf("%d scripts in the page, want 1", n)
	}
	if n := eval[int](t, ctx, `document.querySelectorAll("img, iframe, object, embed, link, [onclick], [onerror], [onmouseover]").length`); n != 0 {
		t.Errorf("%d injected elements in the page", n)
	}
	text := eval[string](t, ctx, `document.querySelector("pre.rendered").textContent`)
	if !strings.Contains(text, "<script>window.pwned=1</script>") {
		t.Errorf("the markup is not shown as text: %q", text)
	}
	pl.check(t, url)
}

// A page with a query and tools: the reason filter finds the block lost
// on relevance, whose note names the block it lost to; the tools part
// shows each tool sent and left out, counts the hidden ones without a
// row, and the block filters leave the tools alone.
func TestHTMLInBrowserRelevanceAndTools(t *testing.T) {
	ctx := browser(t)
	url, pl := open(t, ctx, queryDump(), "query")
	shoot(t, ctx, "query")
	if got := eval[string](t, ctx, `document.getElementById("query").textContent`); got != "the request's query · 7 tokens · sha256:9f9f9f9f9f9f…" {
		t.Errorf("query fact %q", got)
	}
	tools := eval[[]string](t, ctx, `Array.from(document.querySelectorAll("#tools tr.tool")).map(function (r) { return r.innerText.replace(/\s+/g, " ").trim(); })`)
	if want := []string{"sent issue_refund mcp:billing 60 0.4200", "sent lookup_order host 45 - required",
		"left out send_email host 35 0.0500 tools_cap a tool that did not fit the template's tools cap: the tools sent were more relevant to the query, or as relevant and first by name"}; !slices.Equal(tools, want) {
		t.Errorf("tools rows\n%q\nwant\n%q", tools, want)
	}
	if hidden := eval[string](t, ctx, `document.querySelector("#tools .hidden-tools").innerText`); !strings.HasPrefix(hidden, "3 tools hidden from this request: role") {
		t.Errorf("hidden tools: %q", hidden)
	}
	eval[bool](t, ctx, `(function () { var s = document.getElementById("filter-reason"); s.value = "lost_on_relevance"; s.dispatchEvent(new Event("change")); return true; })()`)
	var visible []string
	for _, r := range eval[[]rowInfo](t, ctx, rowsJS) {
		if !r.Hidden {
			visible = append(visible, r.ID)
		}
	}
	if !slices.Equal(visible, []string{"turn-8-agent"}) {
		t.Errorf("with reason lost_on_relevance, visible %q, want [turn-8-agent]", visible)
	}
	if n := eval[int](t, ctx, `document.querySelectorAll("#tools tr.tool:not([hidden])").length`); n != 3 {
		t.Errorf("the block filter hid tools: %d of 3 visible", n)
	}
	note := eval[string](t, ctx, `document.querySelector("tr[data-id='turn-8-agent'] .note-help").textContent`)
	if note != "lost on relevance to turn-3-refund, ranked above it: without relevance it scores 0.2000, this block 0.4000" {
		t.Errorf("the note says %q", note)
	}
	pl.check(t, url)
}
