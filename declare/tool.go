package declare

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/contextasm/contextasm/chat"
	"github.com/contextasm/contextasm/internal/strictjson"
)

// Bounds of a tool declaration (docs/tools.md).
const (
	// MaxToolDescriptionBytes bounds a tool's description.
	MaxToolDescriptionBytes = 16 << 10
	// MaxToolSchemaBytes bounds a tool's input_schema, as JSON.
	MaxToolSchemaBytes = 64 << 10
	// MaxToolSourceLen bounds a tool's source, in bytes.
	MaxToolSourceLen = 128
	// MaxTools is the most tools one file (or one DeclareTools) holds.
	MaxTools = 10_000
	// maxToolLine bounds one line of a tools file: a schema and a
	// description at their bounds, JSON-escaped, and room for the rest.
	maxToolLine = 6*(MaxToolSchemaBytes+MaxToolDescriptionBytes) + 64<<10
)

// SourceHost is the source of a tool the host declares itself (a tools
// file, Engine.DeclareTools); an MCP server's tools have source
// "mcp:<server>".
const SourceHost = "host"

// ToolAnnotations are the hints an MCP server gives about a tool. They are
// hints, not guarantees: contextasm uses them only to ask for a role
// (template tools part), never to grant anything. A nil field is absent,
// and reads as MCP's default (see [Tool.Destructive], [Tool.OpenWorld]).
type ToolAnnotations struct {
	// ReadOnly (readOnlyHint): the tool does not change its environment.
	ReadOnly *bool `json:"readOnlyHint,omitempty"`
	// Destructive (destructiveHint): an update may destroy; MCP's default
	// is true.
	Destructive *bool `json:"destructiveHint,omitempty"`
	// Idempotent (idempotentHint): calling twice does no more than once.
	Idempotent *bool `json:"idempotentHint,omitempty"`
	// OpenWorld (openWorldHint): the tool reaches outside entities (the
	// web, other people); MCP's default is true.
	OpenWorld *bool `json:"openWorldHint,omitempty"`
}

// Tool is one tool definition the model may be shown (docs/tools.md). Its
// JSON form is one line of a tools file.
type Tool struct {
	// Name is what the model calls the tool: 1 to 64 characters of
	// [A-Za-z0-9_-], unique among the tools of one engine. MCP tools are
	// named "<server>__<tool>" (see [MCPToolName]).
	Name string `json:"name"`
	// Description tells the model what the tool does.
	Description string `json:"description,omitempty"`
	// InputSchema is a JSON Schema object whose "type" is "object".
	InputSchema json.RawMessage `json:"input_schema"`
	// Roles, when not empty, show the tool only to a request holding one
	// of them, and let only such a request call it (Engine.Authorize).
	Roles []string `json:"roles,omitempty"`
	// Required keeps the tool whatever the tools cap, when its source is
	// trusted.
	Required bool `json:"required,omitempty"`
	// Annotations are the source's hints about the tool.
	Annotations ToolAnnotations `json:"annotations,omitzero"`
	// Source says where the tool came from: SourceHost (the default) or
	// "mcp:<server>".
	Source string `json:"source,omitempty"`
	// Untrusted marks a tool whose source the host does not control: its
	// Required is ignored, so it cannot make assembly fail or take the
	// room of others. MCP tools are untrusted unless their server is.
	Untrusted bool `json:"untrusted,omitempty"`
}

// IsRequired reports whether the tool is kept whatever the cap: declared
// required by a trusted source.
func (t *Tool) IsRequired() bool { return t.Required && !t.Untrusted }

// Destructive reports whether the tool may destroy, as MCP reads its
// hints: not read-only, and destructiveHint true or absent.
func (t *Tool) Destructive() bool {
	a := t.Annotations
	if a.ReadOnly != nil && *a.ReadOnly {
		return false
	}
	return a.Destructive == nil || *a.Destructive
}

// OpenWorld reports whether the tool reaches outside entities, as MCP
// reads its hints: openWorldHint true or absent.
func (t *Tool) OpenWorld() bool { return t.Annotations.OpenWorld == nil || *t.Annotations.OpenWorld }

// SourceOf returns the tool's source, SourceHost when it names none.
func (t *Tool) SourceOf() string {
	if t.Source == "" {
		return SourceHost
	}
	return t.Source
}

// MCPToolName returns the name an MCP server's tool takes among the
// engine's tools: the server's name, "__", the tool's own name, every
// character outside [A-Za-z0-9_-] written as '_'. It reports false when
// the result is longer than 64 characters or empty: such a tool is not
// collected. Two servers cannot clash, as server names are unique.
func MCPToolName(server, tool string) (string, bool) {
	var b strings.Builder
	for _, s := range [...]string{server, "__", tool} {
		for _, r := range s {
			if r < utf8.RuneSelf && (r == '_' || r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
				b.WriteRune(r)
			} else {
				b.WriteByte('_')
			}
		}
	}
	name := b.String()
	return name, tool != "" && chat.ValidToolName(name)
}

// ValidateTools checks tools as one set (names unique) and returns a
// *ValidationError listing every problem, or nil. A problem's Field names
// the tool and the field: `tools["get_rate"].input_schema`, or by index
// when the name is unusable.
func ValidateTools(tools []Tool) error {
	var probs []Problem
	seen := make(map[string]int, len(tools))
	if len(tools) > MaxTools {
		probs = append(probs, Problem{Field: "tools", Message: fmt.Sprintf("holds %d tools, more than %d", len(tools), MaxTools)})
	}
	for i := range tools {
		probs = toolProblems(&tools[i], toolRef(&tools[i], i), probs)
		if first, dup := seen[tools[i].Name]; dup {
			probs = append(probs, Problem{Field: toolRef(&tools[i], i) + ".name", Message: fmt.Sprintf("is declared twice (tools[%d] and tools[%d])", first, i)})
		} else {
			seen[tools[i].Name] = i
		}
	}
	if len(probs) > 0 {
		return &ValidationError{Problems: probs}
	}
	return nil
}

// toolRef names tools[i] in a problem.
func toolRef(t *Tool, i int) string {
	if chat.ValidToolName(t.Name) {
		return fmt.Sprintf("tools[%q]", t.Name)
	}
	return fmt.Sprintf("tools[%d]", i)
}

// toolProblems appends t's problems, each Field prefixed by ref (empty
// for a line of a file, which the file and line locate).
func toolProblems(t *Tool, ref string, dst []Problem) []Problem {
	at := func(field string) string {
		if ref == "" {
			return field
		}
		return ref + "." + field
	}
	add := func(field, msg string) { dst = append(dst, Problem{Field: at(field), Message: msg}) }
	if !chat.ValidToolName(t.Name) {
		add("name", fmt.Sprintf("%q must be 1 to %d characters of A-Z a-z 0-9 _ -", clip(t.Name), chat.MaxToolNameLen))
	}
	switch {
	case !utf8.ValidString(t.Description):
		add("description", "is not valid UTF-8")
	case len(t.Description) > MaxToolDescriptionBytes:
		add("description", fmt.Sprintf("has %d bytes, more than %d", len(t.Description), MaxToolDescriptionBytes))
	}
	if msg := schemaProblem(t.InputSchema); msg != "" {
		add("input_schema", msg)
	}
	for i, r := range t.Roles {
		if r == "" || strings.IndexFunc(r, unicode.IsControl) >= 0 || !utf8.ValidString(r) {
			add(fmt.Sprintf("roles[%d]", i), fmt.Sprintf("%q must be a non-empty role without control characters", clip(r)))
		}
	}
	if len(t.Source) > MaxToolSourceLen || strings.IndexFunc(t.Source, unicode.IsControl) >= 0 || !utf8.ValidString(t.Source) {
		add("source", fmt.Sprintf("must be at most %d bytes of text without control characters", MaxToolSourceLen))
	}
	return dst
}

// schemaProblem says what is wrong with an input_schema, "" for nothing.
func schemaProblem(s json.RawMessage) string {
	if len(bytes.TrimSpace(s)) == 0 {
		return `is required: a JSON Schema object, at least {"type":"object"}`
	}
	if len(s) > MaxToolSchemaBytes {
		return fmt.Sprintf("has %d bytes, more than %d", len(s), MaxToolSchemaBytes)
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(s, &obj); err != nil || obj == nil {
		return "must be a JSON object"
	}
	var typ string
	if err := json.Unmarshal(obj["type"], &typ); err != nil || typ != "object" {
		return `must have "type": "object" (a tool takes an object of arguments)`
	}
	if p, ok := obj["properties"]; ok {
		var props map[string]json.RawMessage
		if json.Unmarshal(p, &props) != nil || props == nil {
			return `"properties" must be an object`
		}
	}
	return ""
}

// LoadToolsFile reads a tools file: JSON Lines, one [Tool] a line (blank
// lines skipped). See [LoadTools].
func LoadToolsFile(name string) ([]Tool, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, fmt.Errorf("declare: %w", err)
	}
	defer f.Close()
	return LoadTools(f, name)
}

// LoadTools reads tools from JSON Lines, one [Tool] a line, and validates
// them as one set. It returns a *ValidationError naming file, line, tool
// and field for every problem (unknown fields included), and nothing when
// there is any.
func LoadTools(r io.Reader, name string) ([]Tool, error) {
	var (
		tools []Tool
		probs []Problem
		lines []int
	)
	br := bufio.NewReaderSize(r, 64<<10)
	lineNo := 0
	for {
		line, err := readToolLine(br)
		lineNo++
		if errors.Is(err, errToolLineLong) {
			probs = append(probs, Problem{File: name, Line: lineNo, Message: fmt.Sprintf("line longer than %d bytes", maxToolLine)})
			break
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("declare: %s: %w", name, err)
		}
		if t := bytes.TrimSpace(line); len(t) > 0 {
			var tool Tool
			if p, ok := decodeTool(t, &tool); !ok {
				p.File, p.Line = name, lineNo
				probs = append(probs, p)
			} else {
				before := len(probs)
				probs = toolProblems(&tool, "", probs)
				for i := before; i < len(probs); i++ {
					probs[i].File, probs[i].Line, probs[i].RequestID = name, lineNo, ""
					probs[i].Message = fmt.Sprintf("tool %q: %s", clip(tool.Name), probs[i].Message)
				}
				tools, lines = append(tools, tool), append(lines, lineNo)
			}
			if len(tools) > MaxTools {
				probs = append(probs, Problem{File: name, Line: lineNo, Message: fmt.Sprintf("more than %d tools", MaxTools)})
				break
			}
		}
		if err != nil {
			break
		}
	}
	seen := make(map[string]int, len(tools))
	for i := range tools {
		if first, dup := seen[tools[i].Name]; dup {
			probs = append(probs, Problem{File: name, Line: lines[i], Field: "name", Message: fmt.Sprintf("tool %q is declared on line %d already", clip(tools[i].Name), first)})
		} else {
			seen[tools[i].Name] = lines[i]
		}
	}
	if len(probs) > 0 {
		return nil, &ValidationError{Problems: probs}
	}
	return tools, nil
}

var errToolLineLong = errors.New("line too long")

// readToolLine reads one line without its newline, refusing one longer
// than maxToolLine without holding it.
func readToolLine(br *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		frag, err := br.ReadSlice('\n')
		line = append(line, frag...)
		if len(line) > maxToolLine {
			return nil, errToolLineLong
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return bytes.TrimSuffix(line, []byte("\n")), err
	}
}

var toolSchema = strictjson.For(reflect.TypeFor[Tool]())

// decodeTool decodes one line strictly: one JSON object with known fields
// only.
func decodeTool(line []byte, t *Tool) (Problem, bool) {
	dec := json.NewDecoder(bytes.NewReader(line))
	if err := dec.Decode(t); err != nil {
		var field string
		var ute *json.UnmarshalTypeError
		if errors.As(err, &ute) {
			field = ute.Field
		}
		return Problem{Field: field, Message: decodeMessage(err)}, false
	}
	if dec.More() {
		return Problem{Message: "more than one JSON value on the line"}, false
	}
	// encoding/json takes "NAME" for "name" and a key given twice; a
	// declaration must say what it means.
	if ps := toolSchema.Check(line); len(ps) > 0 {
		return Problem{Field: ps[0].Path, Message: ps[0].Message()}, false
	}
	return Problem{}, true
}

// CloneTools returns a deep copy of tools: the engine keeps its own.
func CloneTools(tools []Tool) []Tool {
	out := slices.Clone(tools)
	for i := range out {
		out[i].InputSchema = slices.Clone(out[i].InputSchema)
		out[i].Roles = slices.Clone(out[i].Roles)
	}
	return out
}
