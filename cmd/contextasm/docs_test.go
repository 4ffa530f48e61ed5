package main

// Tests that keep the documentation under docs/ and the README honest: every
// field, reason, command and flag the code has is documented, every link
// between the documents resolves, and the README's library snippet is the
// code below, compiled and run. A failure names the document to update.

import (
	"bytes"
	"context"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/contextasm/contextasm/contextasm"
	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/feedback"
	"github.com/contextasm/contextasm/learned"
	"github.com/contextasm/contextasm/template"
)

// repoRoot is the module's root, seen from this package's directory.
const repoRoot = "../.."

// readDoc returns a file of the repository, by its path from the root.
func readDoc(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, path))
	if err != nil {
		t.Fatalf("%s is missing: %v", path, err)
	}
	return string(b)
}

// jsonNames returns the JSON field names of t and of the structs it holds
// (through pointers, slices and maps), each with the Go path it was found
// at, in field order.
func jsonNames(t reflect.Type) (names, paths []string) {
	seen := map[reflect.Type]bool{}
	var walk func(t reflect.Type, path string)
	walk = func(t reflect.Type, path string) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array || t.Kind() == reflect.Map {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct || seen[t] {
			return
		}
		seen[t] = true
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" || !f.IsExported() {
				continue
			}
			if f.Anonymous && name == "" {
				walk(f.Type, path) // an embedded struct's fields are the parent's
				continue
			}
			if name == "" {
				name = f.Name
			}
			names = append(names, name)
			paths = append(paths, path+"."+f.Name)
			walk(f.Type, path+"."+f.Name)
		}
	}
	walk(t, t.String())
	return names, paths
}

// documents reports whether doc names name as code: `name`, or `name` at
// the start of a longer code span such as `name: value`.
func documents(doc, name string) bool {
	return strings.Contains(doc, "`"+name+"`") ||
		regexp.MustCompile("`"+regexp.QuoteMeta(name)+`[ :=\[.]`).MatchString(doc)
}

// checkFields reports every JSON field name of types (and of the structs
// they hold) that doc does not name as code; what says whose fields they
// are, for the message.
func checkFields(t *testing.T, doc, what string, types ...reflect.Type) string {
	t.Helper()
	text := readDoc(t, doc)
	for _, typ := range types {
		names, paths := jsonNames(typ)
		for i, name := range names {
			if !documents(text, name) {
				t.Errorf("%s does not document the %s field `%s` (%s): add it to %s", doc, what, name, paths[i], doc)
			}
		}
	}
	return text
}

// checkValues reports every value of a field that doc does not name.
func checkValues(t *testing.T, doc, text, what string, values ...string) {
	t.Helper()
	for _, v := range values {
		if !documents(text, v) {
			t.Errorf("%s does not document the %s `%s`: add it to %s", doc, what, v, doc)
		}
	}
}

func TestDocsDeclarationFields(t *testing.T) {
	const doc = "docs/declarations.md"
	text := checkFields(t, doc, "declaration", reflect.TypeFor[declare.Declaration]())
	checkValues(t, doc, text, "memory type", string(declare.Constraint), string(declare.Context), string(declare.History), string(declare.External))
	checkValues(t, doc, text, "scope", string(declare.ScopeGlobal), string(declare.ScopeSession), string(declare.ScopeUser))
}

func TestDocsTemplateFields(t *testing.T) {
	const doc = "docs/templates.md"
	text := checkFields(t, doc, "template", reflect.TypeFor[template.Definition]())
	checkValues(t, doc, text, "fill", string(template.FillStop), string(template.FillSkip))
	checkValues(t, doc, text, "order", string(template.OrderRank), string(template.OrderDeclared), string(template.OrderTime))
}

func TestDocsDumpFields(t *testing.T) {
	checkFields(t, "docs/dump.md", "dump", reflect.TypeFor[contextasm.Dump](), reflect.TypeFor[contextasm.Audit]())
}

func TestDocsFeedbackFields(t *testing.T) {
	checkFields(t, "docs/feedback.md", "feedback or heat output", reflect.TypeFor[feedback.Result](), reflect.TypeFor[learned.Heat]())
}

// TestDocsReasons checks that every event reason and kind the code
// declares (a string constant of a type named Reason or Kind, in any
// package) is in the dump's reference, with its own table row.
func TestDocsReasons(t *testing.T) {
	const doc = "docs/dump.md"
	text := readDoc(t, doc)
	consts := typedStringConsts(t, "Reason", "Kind")
	if len(consts["Reason"]) < 13 || len(consts["Kind"]) < 5 {
		t.Fatalf("found %d reasons and %d kinds in the source, want at least 13 and 5: is the scan broken?", len(consts["Reason"]), len(consts["Kind"]))
	}
	for typ, vals := range consts {
		for _, c := range vals {
			if !strings.Contains(text, "| `"+c.value+"` |") {
				t.Errorf("%s has no table row for the %s `%s` (%s, %s): add one to %s saying when it occurs", doc, strings.ToLower(typ), c.value, c.name, c.pos, doc)
			}
		}
	}
}

type stringConst struct{ name, value, pos string }

// typedStringConsts returns the string constants of the repository's
// non-test Go files whose declared type is named one of types, by type.
func typedStringConsts(t *testing.T, types ...string) map[string][]stringConst {
	t.Helper()
	out := map[string][]stringConst{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(repoRoot, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != repoRoot && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "node_modules" || d.Name() == "adapters") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				typ := ""
				switch tt := vs.Type.(type) {
				case *ast.Ident:
					typ = tt.Name
				case *ast.SelectorExpr:
					typ = tt.Sel.Name
				}
				if !slices.Contains(types, typ) {
					continue
				}
				for i, v := range vs.Values {
					lit, ok := v.(*ast.BasicLit)
					if !ok || lit.Kind != token.STRING {
						continue
					}
					s, err := strconv.Unquote(lit.Value)
					if err != nil {
						return err
					}
					rel, _ := filepath.Rel(repoRoot, fset.Position(lit.Pos()).Filename)
					out[typ] = append(out[typ], stringConst{name: vs.Names[i].Name, value: s, pos: filepath.ToSlash(rel)})
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// docsRun runs the program and returns its exit code and its output,
// stdout and stderr together.
func docsRun(args ...string) (int, string) {
	var out bytes.Buffer
	code := run(context.Background(), args, strings.NewReader(""), &out, &out)
	return code, out.String()
}

// TestDocsCLI checks that every command of the program has a section in
// the CLI reference, and every flag of every command is in it.
func TestDocsCLI(t *testing.T) {
	const doc = "docs/cli.md"
	text := readDoc(t, doc)
	_, help := docsRun("help")
	// Candidates are the words that start an indented line of the help;
	// a command is one that answers --help with exit 0.
	var commands []string
	for _, m := range regexp.MustCompile(`(?m)^ {1,4}([a-z][a-z-]*)(?:\s|$)`).FindAllStringSubmatch(help, -1) {
		if slices.Contains(commands, m[1]) {
			continue
		}
		if code, _ := docsRun(m[1], "--help"); code == exitOK {
			commands = append(commands, m[1])
		}
	}
	if len(commands) < 8 {
		t.Fatalf("found %d commands in the help (%q), want at least 8: is the scan broken?\n%s", len(commands), commands, help)
	}
	flagLine := regexp.MustCompile(`(?m)^\s+--?([a-z][a-z0-9-]*)`)
	for _, cmd := range commands {
		if !regexp.MustCompile(`(?m)^## ` + regexp.QuoteMeta(cmd) + `\s*$`).MatchString(text) {
			t.Errorf("%s has no section \"## %s\" for the command %s: add one to %s", doc, cmd, cmd, doc)
		}
		_, usage := docsRun(cmd, "--help")
		for _, m := range flagLine.FindAllStringSubmatch(usage, -1) {
			name := m[1]
			if name == "h" || name == "help" {
				continue
			}
			if !regexp.MustCompile("`--?" + regexp.QuoteMeta(name) + "[` =]").MatchString(text) {
				t.Errorf("%s does not document the flag -%s of %s: add it to %s", doc, name, cmd, doc)
			}
		}
	}
}

// TestDocsLinks checks every relative link of the README and docs/: the
// file exists, and an anchor names a heading of it.
func TestDocsLinks(t *testing.T) {
	files := []string{"README.md"}
	entries, err := os.ReadDir(filepath.Join(repoRoot, "docs"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".md") {
			files = append(files, "docs/"+e.Name())
		}
	}
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	for _, file := range files {
		text := readDoc(t, file)
		for _, m := range link.FindAllStringSubmatch(stripCode(text), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			path, anchor, _ := strings.Cut(target, "#")
			dest := file
			if path != "" {
				dest = filepath.ToSlash(filepath.Clean(filepath.Join(filepath.Dir(file), path)))
			}
			info, err := os.Stat(filepath.Join(repoRoot, dest))
			if err != nil {
				t.Errorf("%s links to %s, which does not exist: fix the link in %s", file, target, file)
				continue
			}
			if anchor == "" || info.IsDir() || !strings.HasSuffix(dest, ".md") {
				continue
			}
			if !slices.Contains(headingAnchors(readDoc(t, dest)), anchor) {
				t.Errorf("%s links to %s, but %s has no heading with the anchor #%s: fix the link in %s", file, target, dest, anchor, file)
			}
		}
	}
}

// stripCode removes fenced code blocks, whose brackets are not links.
func stripCode(md string) string {
	var b strings.Builder
	fenced := false
	for line := range strings.Lines(md) {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if !fenced {
			b.WriteString(line)
		}
	}
	return b.String()
}

// headingAnchors returns the anchors GitHub gives a document's headings:
// lower case, punctuation other than '-' and '_' removed, spaces as '-',
// and "-1", "-2"… after repeats.
func headingAnchors(md string) []string {
	var out []string
	seen := map[string]int{}
	for line := range strings.Lines(stripCode(md)) {
		line = strings.TrimRight(line, "\n")
		if !strings.HasPrefix(line, "#") {
			continue
		}
		title := strings.TrimSpace(strings.TrimLeft(line, "#"))
		var b strings.Builder
		for _, r := range strings.ToLower(title) {
			switch {
			case r == ' ':
				b.WriteByte('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		a := b.String()
		if n := seen[a]; n > 0 {
			out = append(out, a+"-"+strconv.Itoa(n))
		} else {
			out = append(out, a)
		}
		seen[a]++
	}
	return out
}

// TestREADME checks the README's promises: the two first-run commands, a
// size a newcomer reads in minutes, a worked example whose output is the
// demo's, and a library snippet that is setup and contextFor below,
// compiled and run.
func TestREADME(t *testing.T) {
	const doc = "README.md"
	text := readDoc(t, doc)
	for _, cmd := range []string{"go run ./cmd/contextasm demo", "go test ./..."} {
		if !strings.Contains(text, cmd) {
			t.Errorf("%s lacks the first-run command %q", doc, cmd)
		}
	}
	if n := len(text); n > 10_000 {
		t.Errorf("%s is %d bytes: keep it a front door of about 8 KB and move detail into a page under docs/", doc, n)
	}

	// The worked example's output: every line shown is a line of the
	// demo's rendering.
	_, out := docsRun("demo", "--format", "json")
	var d contextasm.Dump
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatalf("demo --format json: %v\n%s", err, out)
	}
	lines := strings.Split(d.Text, "\n")
	block := codeBlockAfter(t, text, "[MODEL_CONTEXT_PROTOCOL")
	for _, l := range strings.Split(block, "\n") {
		if l != "" && l != "..." && !slices.Contains(lines, l) {
			t.Errorf("%s's worked example shows a line the demo does not render: update it in %s\n%s", doc, doc, l)
		}
	}

	// The library snippet.
	src, err := os.ReadFile("docs_test.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "docs_test.go", src, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	// From setup's doc comment to the end of contextFor.
	from, to := -1, -1
	for _, decl := range f.Decls {
		if fd, ok := decl.(*ast.FuncDecl); ok {
			switch fd.Name.Name {
			case "setup":
				from = fset.Position(fd.Doc.Pos()).Offset
			case "contextFor":
				to = fset.Position(fd.End()).Offset
			}
		}
	}
	if from < 0 || to < from {
		t.Fatal("docs_test.go lost setup or contextFor")
	}
	want := string(src[from:to])
	got := codeBlockAfter(t, text, "func contextFor(")
	if strings.TrimSpace(got) != strings.TrimSpace(want) {
		t.Errorf("%s's library snippet differs from setup and contextFor in cmd/contextasm/docs_test.go; change both together.\nREADME:\n%s\ntest:\n%s", doc, got, want)
	}
	// And it runs, on the demo's files.
	dir := t.TempDir()
	for src, dst := range map[string]string{"demo/template.json": "template.json", "demo/memories.jsonl": "memories.jsonl"} {
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, dst), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(dir)
	eng, tpl, err := setup()
	if err != nil {
		t.Fatalf("the README's library snippet fails: %v", err)
	}
	res, err := contextFor(context.Background(), eng, tpl, time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatalf("the README's library snippet fails: %v", err)
	}
	if res.Text != d.Text {
		t.Errorf("the README's library snippet renders another text than the demo")
	}
}

// codeBlockAfter returns the fenced code block of md that contains marker.
func codeBlockAfter(t *testing.T, md, marker string) string {
	t.Helper()
	i := strings.Index(md, marker)
	if i < 0 {
		t.Fatalf("README.md has no code block with %q", marker)
	}
	start := strings.LastIndex(md[:i], "```")
	start += strings.IndexByte(md[start:], '\n') + 1
	end := start + strings.Index(md[start:], "```")
	return md[start:end]
}

// setup runs once per process: one Engine (safe for concurrent use).
func setup() (*contextasm.Engine, *template.Template, error) {
	eng, err := contextasm.New(contextasm.Config{})
	if err != nil {
		return nil, nil, err
	}
	decls, err := declare.LoadFile("memories.jsonl") // all or nothing
	if err != nil {
		return nil, nil, err
	}
	if err := eng.Declare(decls...); err != nil { // same request_id: replaced
		return nil, nil, err
	}
	tpl, err := template.LoadFile("template.json") // immutable
	return eng, tpl, err
}

// contextFor assembles the context of one model call.
func contextFor(ctx context.Context, eng *contextasm.Engine, tpl *template.Template, now time.Time) (*contextasm.Result, error) {
	return eng.Assemble(ctx, contextasm.Request{Template: tpl, Now: now,
		SessionID: "sess-4711", UserID: "u-ana", Roles: []string{"loan-agent"}})
}

// TestNothingPointsOutside checks that no file of the repository cites a
// document outside it: formats and decisions are documented under docs/.
func TestNothingPointsOutside(t *testing.T) {
	bad := regexp.MustCompile(`[.][.][/]shared|[S]PEC[.]md|[S]PEC[ ]§`) // written so that neither it nor a grep for it matches this line
	err := filepath.WalkDir(repoRoot, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != repoRoot && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if info, err := d.Info(); err != nil || info.Size() > 4<<20 {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if !bad.Match(b) {
			return nil
		}
		rel, _ := filepath.Rel(repoRoot, path)
		for i, line := range strings.Split(string(b), "\n") {
			if m := bad.FindString(line); m != "" {
				t.Errorf("%s:%d cites %q, a document outside the repository: say it, or point into docs/", filepath.ToSlash(rel), i+1, m)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestNoDanglingReferences checks that the comments of every .go file and
// the text of every .md file name no document the repository does not
// hold (a bare name ending in .md, or one under docs/ or ../, where there
// is none), no path of the machine they were written on, and no issue of
// a tracker, by number or as the one at hand: the repository says what it
// means itself.
// Example paths (notes/a.md) and URIs are not references.
func TestNoDanglingReferences(t *testing.T) {
	mdRef := regexp.MustCompile(`(?:^|[^A-Za-z0-9_./:-])((?:docs/|\.\./)*[A-Za-z0-9_-]+\.md)\b`)
	bad := []struct {
		re   *regexp.Regexp
		what string
	}{
		{regexp.MustCompile(`/[w]ork/`), "a path outside the repository"},
		{regexp.MustCompile(`(?i)\b[i]ssue \d+|\bthe [i]ssue\b|\b[i]ssues show\b`), "an issue of a tracker: say what it asked for"},
	}
	have := map[string]bool{} // every file's path from the root, and its name
	var texts []struct{ path, text string }
	err := filepath.WalkDir(repoRoot, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != repoRoot && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules" || d.Name() == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		rel, _ := filepath.Rel(repoRoot, path)
		have[filepath.ToSlash(rel)], have[d.Name()] = true, true
		switch filepath.Ext(path) {
		case ".md":
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			texts = append(texts, struct{ path, text string }{filepath.ToSlash(rel), string(b)})
		case ".go":
			f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ParseComments)
			if err != nil {
				return err
			}
			var b strings.Builder
			for _, g := range f.Comments {
				b.WriteString(g.Text())
			}
			texts = append(texts, struct{ path, text string }{filepath.ToSlash(rel), b.String()})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range texts {
		for _, sm := range mdRef.FindAllStringSubmatch(f.text, -1) {
			m := sm[1]
			joined := filepath.ToSlash(filepath.Join(filepath.Dir(f.path), m))
			if !have[m] && !have[joined] && !have[filepath.Base(m)] {
				t.Errorf("%s names %s, which is not in the repository: say what it says, or point into docs/", f.path, m)
			}
		}
		for _, b := range bad {
			for _, m := range b.re.FindAllString(f.text, -1) {
				t.Errorf("%s has %q, %s", f.path, m, b.what)
			}
		}
	}
}

// TestAdaptersFromClone checks what building the adapters from a clone
// rests on: the committed go.work uses the root and every adapter module,
// and each adapter's Example needs nothing from the adapter's other test
// files (a reader copies the example file, not the tests' fakes).
func TestAdaptersFromClone(t *testing.T) {
	work := readDoc(t, "go.work")
	uses := map[string]bool{}
	for _, line := range strings.Split(work, "\n") {
		if f := strings.Fields(line); len(f) == 1 && (f[0] == "." || strings.HasPrefix(f[0], "./")) {
			uses[f[0]] = true
		}
	}
	mods, err := filepath.Glob(filepath.Join(repoRoot, "adapters", "*", "go.mod"))
	if err != nil || len(mods) == 0 {
		t.Fatalf("no adapter modules: %v", err)
	}
	if !uses["."] {
		t.Error("go.work does not use the root module")
	}
	for _, m := range mods {
		dir, _ := filepath.Rel(repoRoot, filepath.Dir(m))
		dir = "./" + filepath.ToSlash(dir)
		if !uses[dir] {
			t.Errorf("go.work does not use %s", dir)
		}
		checkExampleAlone(t, filepath.Dir(m))
	}
}

// checkExampleAlone fails if the example file of dir uses a name that only
// another test file of the package declares.
func checkExampleAlone(t *testing.T, dir string) {
	t.Helper()
	fset := token.NewFileSet()
	tests, err := filepath.Glob(filepath.Join(dir, "*_test.go"))
	if err != nil {
		t.Fatal(err)
	}
	declared := map[string]string{} // name: the other test file declaring it
	var example *ast.File
	for _, p := range tests {
		f, err := parser.ParseFile(fset, p, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		if filepath.Base(p) == "example_test.go" {
			example = f
			continue
		}
		if !strings.HasSuffix(f.Name.Name, "_test") {
			continue // an internal test file: the example's package cannot see it
		}
		for name := range f.Scope.Objects {
			declared[name] = filepath.Base(p)
		}
	}
	if example == nil {
		t.Errorf("%s has no example_test.go", dir)
		return
	}
	for _, d := range example.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil {
			delete(declared, fd.Name.Name)
		}
	}
	for name := range example.Scope.Objects {
		delete(declared, name)
	}
	// Names after a dot and struct keys are fields, not package names.
	fields := map[*ast.Ident]bool{}
	ast.Inspect(example, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SelectorExpr:
			fields[n.Sel] = true
		case *ast.KeyValueExpr:
			if id, ok := n.Key.(*ast.Ident); ok {
				fields[id] = true
			}
		}
		return true
	})
	ast.Inspect(example, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok && !fields[id] {
			if file, hidden := declared[id.Name]; hidden && id.Obj == nil {
				t.Errorf("%s/example_test.go uses %s, which only %s declares: the example must run from its own file", filepath.Base(dir), id.Name, file)
				delete(declared, id.Name)
			}
		}
		return true
	})
}
