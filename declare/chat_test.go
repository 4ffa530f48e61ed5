package declare_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/contextasm/contextasm/chat"
	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/internal/goldenfile"
)

// turn returns a valid session history block of role r.
func turn(r declare.Role) declare.Declaration {
	d := declare.Declaration{
		RequestID: "t1", MemoryType: declare.History, Scope: declare.ScopeSession, SessionID: "s1",
		Role: r, Content: "Hello.",
	}
	switch r {
	case declare.RoleAssistant:
		d.ToolCalls = []declare.ToolCall{{ID: "call_1", Name: "get_rate", Arguments: `{"term":60}`}}
	case declare.RoleTool:
		d.ToolCallID = "call_1"
	}
	return d
}

func reasonings(items ...string) []declare.Reasoning {
	out := make([]declare.Reasoning, len(items))
	for i, s := range items {
		if err := json.Unmarshal([]byte(s), &out[i]); err != nil {
			panic(err)
		}
	}
	return out
}

func TestValidateChatFields(t *testing.T) {
	long := strings.Repeat("a", chat.MaxToolCallIDLen)
	tests := []struct {
		name   string
		role   declare.Role
		edit   func(*declare.Declaration)
		fields []string // none = valid
		msg    string
	}{
		{name: "user turn", role: declare.RoleUser},
		{name: "history without role is a user turn", edit: func(d *declare.Declaration) { d.Role = "" }},
		{name: "assistant with calls", role: declare.RoleAssistant},
		{name: "assistant with calls and no content", role: declare.RoleAssistant, edit: func(d *declare.Declaration) { d.Content = "" }},
		{name: "assistant without calls", role: declare.RoleAssistant, edit: func(d *declare.Declaration) { d.ToolCalls = nil }},
		{name: "tool result", role: declare.RoleTool},
		{name: "group on a history block", edit: func(d *declare.Declaration) { d.Group = "turn-7" }},
		{name: "longest call id, name", role: declare.RoleAssistant, edit: func(d *declare.Declaration) {
			d.ToolCalls[0].ID, d.ToolCalls[0].Name = long, strings.Repeat("n", chat.MaxToolNameLen)
		}},
		{name: "a Kimi call id", role: declare.RoleAssistant, edit: func(d *declare.Declaration) { d.ToolCalls[0].ID = "functions.get_weather:0" }},
		{name: "a Kimi result", role: declare.RoleTool, edit: func(d *declare.Declaration) { d.ToolCallID = "functions.get_weather:0" }},
		{name: "reasoning of every type", role: declare.RoleAssistant, edit: func(d *declare.Declaration) {
			d.Reasoning = reasonings(`{"type":"thinking","thinking":"","signature":"sig"}`, `{"type":"redacted_thinking","data":"x"}`,
				`{"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"t"}],"encrypted_content":null}`)
		}},
		{name: "arguments with white space around the object", role: declare.RoleAssistant, edit: func(d *declare.Declaration) {
			d.ToolCalls[0].Arguments = " {\"a\": [1, 2]}\n"
		}},

		{name: "call id too long", role: declare.RoleAssistant, edit: func(d *declare.Declaration) { d.ToolCalls[0].ID = long + "a" },
			fields: []string{"tool_calls[0].id"}, msg: "1 to 128 characters of printable ASCII"},
		{name: "call id not ASCII", role: declare.RoleTool, edit: func(d *declare.Declaration) { d.ToolCallID = "appel_é" },
			fields: []string{"tool_call_id"}, msg: "printable ASCII"},
		{name: "arguments not UTF-8", role: declare.RoleAssistant, edit: func(d *declare.Declaration) { d.ToolCalls[0].Arguments = "{\"a\":\"\xc3\"}" },
			fields: []string{"tool_calls[0].arguments"}, msg: "in UTF-8"},
		{name: "reasoning on a tool result", role: declare.RoleTool, edit: func(d *declare.Declaration) { d.Reasoning = reasonings(`{"type":"redacted_thinking","data":"x"}`) },
			fields: []string{"reasoning"}, msg: `needs role "assistant"`},
		{name: "reasoning on a context block", edit: func(d *declare.Declaration) {
			d.MemoryType, d.Role, d.Reasoning = declare.Context, "", reasonings(`{"type":"redacted_thinking","data":"x"}`)
		}, fields: []string{"reasoning"}, msg: "history blocks only"},
		{name: "a thinking block without signature", role: declare.RoleAssistant, edit: func(d *declare.Declaration) {
			d.Reasoning = reasonings(`{"type":"redacted_thinking","data":"x"}`, `{"type":"thinking","thinking":"t","signature":""}`)
		}, fields: []string{"reasoning[1].signature"}, msg: "must not be empty"},
		{name: "unknown role", edit: func(d *declare.Declaration) { d.Role = "system" },
			fields: []string{"role"}, msg: "user, assistant, tool"},
		{name: "role on a constraint", edit: func(d *declare.Declaration) { d.MemoryType, d.Scope = declare.Constraint, declare.ScopeGlobal },
			role: declare.RoleAssistant, fields: []string{"role", "tool_calls"}, msg: "history blocks only"},
		{name: "group on a context block", edit: func(d *declare.Declaration) { d.MemoryType, d.Group, d.Role = declare.Context, "g", "" },
			fields: []string{"group"}, msg: "history blocks only"},
		{name: "tool_call_id on an external block", edit: func(d *declare.Declaration) { d.MemoryType = declare.External },
			role: declare.RoleTool, fields: []string{"role", "tool_call_id"}},
		{name: "calls on a user turn", edit: func(d *declare.Declaration) {
			d.ToolCalls = []declare.ToolCall{{ID: "c", Name: "n", Arguments: "{}"}}
		}, fields: []string{"tool_calls"}, msg: `needs role "assistant"`},
		{name: "tool_call_id on an assistant turn", role: declare.RoleAssistant, edit: func(d *declare.Declaration) { d.ToolCallID = "c" },
			fields: []string{"tool_call_id"}, msg: `needs role "tool"`},
		{name: "tool result without tool_call_id", role: declare.RoleTool, edit: func(d *declare.Declaration) { d.ToolCallID = "" },
			fields: []string{"tool_call_id"}, msg: "required when role is tool"},
		{name: "tool result without content", role: declare.RoleTool, edit: func(d *declare.Declaration) { d.Content = "" },
			fields: []string{"content"}, msg: "required"},
		{name: "assistant without content or calls", role: declare.RoleAssistant, edit: func(d *declare.Declaration) {
			d.Content, d.ToolCalls = "", nil
		}, fields: []string{"content"}, msg: "without tool_calls"},
		{name: "white space content", edit: func(d *declare.Declaration) { d.Content = " \n\t" },
			fields: []string{"content"}, msg: "white space"},
		{name: "a tool exchange outside a session", role: declare.RoleTool, edit: func(d *declare.Declaration) {
			d.Scope, d.SessionID, d.UserID = declare.ScopeUser, "", "u"
		}, fields: []string{"scope"}, msg: "must be session"},
		{name: "call id with a space", role: declare.RoleAssistant, edit: func(d *declare.Declaration) { d.ToolCalls[0].ID = "mcp 1" },
			fields: []string{"tool_calls[0].id"}},
		{name: "empty call id and name", role: declare.RoleAssistant, edit: func(d *declare.Declaration) { d.ToolCalls[0].ID, d.ToolCalls[0].Name = "", "" },
			fields: []string{"tool_calls[0].id", "tool_calls[0].name"}},
		{name: "tool name with a dot", role: declare.RoleAssistant, edit: func(d *declare.Declaration) { d.ToolCalls[0].Name = "rates.get" },
			fields: []string{"tool_calls[0].name"}},
		{name: "tool name too long", role: declare.RoleAssistant, edit: func(d *declare.Declaration) {
			d.ToolCalls[0].Name = strings.Repeat("n", chat.MaxToolNameLen+1)
		}, fields: []string{"tool_calls[0].name"}},
		{name: "arguments not JSON", role: declare.RoleAssistant, edit: func(d *declare.Declaration) { d.ToolCalls[0].Arguments = "term=60" },
			fields: []string{"tool_calls[0].arguments"}, msg: "JSON object"},
		{name: "arguments an array", role: declare.RoleAssistant, edit: func(d *declare.Declaration) { d.ToolCalls[0].Arguments = "[60]" },
			fields: []string{"tool_calls[0].arguments"}},
		{name: "arguments empty", role: declare.RoleAssistant, edit: func(d *declare.Declaration) { d.ToolCalls[0].Arguments = "" },
			fields: []string{"tool_calls[0].arguments"}},
		{name: "arguments an object and more", role: declare.RoleAssistant, edit: func(d *declare.Declaration) { d.ToolCalls[0].Arguments = "{} {}" },
			fields: []string{"tool_calls[0].arguments"}},
		{name: "the same call id twice in one turn", role: declare.RoleAssistant, edit: func(d *declare.Declaration) {
			d.ToolCalls = append(d.ToolCalls, d.ToolCalls[0])
		}, fields: []string{"tool_calls[1].id"}, msg: "repeats"},
		{name: "bad result id", role: declare.RoleTool, edit: func(d *declare.Declaration) { d.ToolCallID = "call 1" },
			fields: []string{"tool_call_id"}},
		{name: "group with white space", edit: func(d *declare.Declaration) { d.Group = "turn 7" },
			fields: []string{"group"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			role := tt.role
			if role == "" {
				role = declare.RoleUser
			}
			d := turn(role)
			if tt.edit != nil {
				tt.edit(&d)
			}
			err := declare.Validate(&d)
			if len(tt.fields) == 0 {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			probs := problemsOf(t, err)
			want := slices.Sorted(slices.Values(tt.fields))
			if got := sortedFields(probs); !slices.Equal(got, want) {
				t.Errorf("fields = %q, want %q (%v)", got, want, err)
			}
			if tt.msg != "" && !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("error %q does not contain %q", err, tt.msg)
			}
			for _, p := range probs {
				if p.RequestID != "t1" {
					t.Errorf("problem %+v does not name the request_id", p)
				}
			}
		})
	}
}

func TestChatRole(t *testing.T) {
	for _, tt := range []struct {
		mt   declare.MemoryType
		role declare.Role
		want declare.Role
	}{
		{declare.History, "", declare.RoleUser},
		{declare.History, declare.RoleAssistant, declare.RoleAssistant},
		{declare.History, declare.RoleTool, declare.RoleTool},
		{declare.Context, "", ""},
		{declare.Constraint, declare.RoleUser, ""},
	} {
		d := declare.Declaration{MemoryType: tt.mt, Role: tt.role}
		if got := d.ChatRole(); got != tt.want {
			t.Errorf("%s/%q: ChatRole = %q, want %q", tt.mt, tt.role, got, tt.want)
		}
	}
	for _, r := range []declare.Role{declare.RoleUser, declare.RoleAssistant, declare.RoleTool} {
		if !r.Valid() {
			t.Errorf("%q.Valid() = false", r)
		}
	}
	for _, r := range []declare.Role{"", "system", "User"} {
		if r.Valid() {
			t.Errorf("%q.Valid() = true", r)
		}
	}
}

func chatFile(name string) string { return filepath.Join("testdata", "chat", name) }

func TestLoadChatFixture(t *testing.T) {
	decls, err := declare.LoadFile(chatFile("valid.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	by := make(map[string]declare.Declaration)
	for _, d := range decls {
		by[d.RequestID] = d
	}
	agent := by["t1-agent"]
	want := []declare.ToolCall{
		{ID: "call_rate_1", Name: "get_rate", Arguments: `{"product":"car-loan","term_months":60}`},
		{ID: "call_credit_1", Name: "get_credit_file", Arguments: `{"applicant":"u-ana"}`},
	}
	if agent.ChatRole() != declare.RoleAssistant || !slices.Equal(agent.ToolCalls, want) {
		t.Errorf("t1-agent = %q %+v", agent.ChatRole(), agent.ToolCalls)
	}
	if r := by["t1-rate"]; r.ChatRole() != declare.RoleTool || r.ToolCallID != "call_rate_1" {
		t.Errorf("t1-rate = %q %q", r.ChatRole(), r.ToolCallID)
	}
	if u := by["t1-user"]; u.Role != "" || u.ChatRole() != declare.RoleUser {
		t.Errorf("t1-user role %q, chat role %q", u.Role, u.ChatRole())
	}
	if g := by["t1-answer"]; g.Group != "turn-1" {
		t.Errorf("t1-answer group %q", g.Group)
	}
	if c := by["t2-call"]; c.Content != "" || len(c.ToolCalls) != 1 {
		t.Errorf("t2-call: content %q, %d calls", c.Content, len(c.ToolCalls))
	}
	// Written back, the chat fields load to the same thing.
	first := marshalLines(t, decls)
	again, err := declare.Load(bytes.NewReader(first), "again.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if second := marshalLines(t, again); !bytes.Equal(first, second) {
		t.Errorf("round trip changed:\n%s\n%s", first, second)
	}
	// A block without chat fields writes none of them.
	if bytes.Contains(marshalLines(t, decls[:1]), []byte("role")) {
		t.Errorf("a block without a role writes one: %s", marshalLines(t, decls[:1]))
	}
}

// The problems of the chat fields, as a user reads them.
func TestLoadChatInvalidGolden(t *testing.T) {
	_, err := declare.LoadFile(chatFile("invalid.jsonl"))
	if err == nil {
		t.Fatal("no error")
	}
	for _, p := range problemsOf(t, err) {
		if p.File == "" || p.Line == 0 || p.RequestID == "" || p.Field == "" {
			t.Errorf("problem %+v lacks its file, line, request_id or field", p)
		}
	}
	goldenfile.Check(t, filepath.Join("chat", "invalid.golden"), err.Error()+"\n", *update)
}

func TestLoadToolResults(t *testing.T) {
	calls, results, orphans := chatFile("calls.jsonl"), chatFile("results.jsonl"), chatFile("orphans.jsonl")

	// One file is a whole set: its results must answer its calls.
	_, err := declare.LoadFile(results)
	checkProblems(t, problemsOf(t, err), results, []wantProblem{
		{1, "r1", "tool_call_id", `names call "c1", which no assistant block of session "s1" declares`},
		{2, "r2", "tool_call_id", `session "s2"`},
	})

	// Across files, a result answers a call of another file, whichever
	// file comes first; a call id is matched within its session.
	for _, order := range [][]string{{calls, results}, {results, calls}} {
		decls, err := declare.LoadFiles(order...)
		if err != nil || len(decls) != 4 {
			t.Errorf("LoadFiles(%q) = %d, %v", order, len(decls), err)
		}
	}

	// A result without a call in its session, a call answered twice and a
	// call id declared twice in a session are each reported where they are.
	decls, err := declare.LoadFiles(calls, results, orphans)
	if decls != nil {
		t.Errorf("%d declarations loaded along with problems", len(decls))
	}
	checkProblems(t, problemsOf(t, err), orphans, []wantProblem{
		{2, "r4", "tool_call_id", `call "c1" of session "s1" is already answered by "r1"`},
		{3, "a4", "tool_calls[0].id", `call "c1" is already declared in session "s1" by "a1"`},
		{1, "r3", "tool_call_id", `session "s3" declares`},
	})

	// A line that fails keeps its result's call from being reported as
	// missing: the call may be on that line.
	dir := t.TempDir()
	broken := filepath.Join(dir, "broken.jsonl")
	if err := os.WriteFile(broken, []byte(
		`{"request_id":"a1","memory_type":"history","role":"assistant","scope":"session","session_id":"s1","content":"x","tool_calls":[{"id":"c1","name":"n","arguments":"{"}]}`+"\n"+
			`{"request_id":"r1","memory_type":"history","role":"tool","tool_call_id":"c1","scope":"session","session_id":"s1","content":"found"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = declare.LoadFile(broken)
	checkProblems(t, problemsOf(t, err), broken, []wantProblem{{1, "a1", "tool_calls[0].arguments", "JSON object"}})
}

func TestLoadFiles(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.jsonl"), filepath.Join(dir, "b.jsonl")
	if err := os.WriteFile(a, []byte(line(`"request_id":"x"`)+"\n"+line(`"request_id":"y"`)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(b, []byte("# b\n"+line(`"request_id":"y"`)+"\n"+line(`"request_id":"z"`)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	decls, err := declare.LoadFiles(a)
	if err != nil || !slices.Equal(ids(decls), []string{"x", "y"}) {
		t.Errorf("LoadFiles(a) = %q, %v", ids(decls), err)
	}
	_, err = declare.LoadFiles(a, b)
	checkProblems(t, problemsOf(t, err), b, []wantProblem{{2, "y", "request_id", "also declared in " + a + ":2"}})

	_, err = declare.LoadFiles(a, filepath.Join(dir, "missing.jsonl"))
	if !errors.Is(err, os.ErrNotExist) || errors.Is(err, declare.ErrInvalid) {
		t.Errorf("missing file: %v", err)
	}
	// Limits apply to every file.
	_, err = declare.Config{MaxContentBytes: 4}.LoadFiles(a, b)
	// y is also declared twice: a broken line still claims its id, across
	// files as within one.
	if probs := problemsOf(t, err); len(probs) != 5 {
		t.Errorf("content limit over two files: %d problems, want 5 (one per block, and y twice): %v", len(probs), err)
	}
}

func TestCallIndex(t *testing.T) {
	var x declare.CallIndex
	call, result := turn(declare.RoleAssistant), turn(declare.RoleTool)
	result.RequestID = "t2"
	if p, ok := x.Answers(&result); ok || p.Field != "tool_call_id" || p.RequestID != "t2" {
		t.Errorf("empty index answers %+v, %v", p, ok)
	}
	if probs := x.Add(&call); probs != nil {
		t.Fatal(probs)
	}
	// Adding the same block again (a re-declaration) is no conflict.
	if probs := x.Add(&call); probs != nil {
		t.Errorf("re-adding the same block: %v", probs)
	}
	if _, ok := x.Answers(&result); !ok {
		t.Error("call not found")
	}
	other := result
	other.SessionID = "s2"
	if _, ok := x.Answers(&other); ok {
		t.Error("a call of session s1 answers a result of session s2")
	}
	if probs := x.Add(&result); probs != nil {
		t.Fatal(probs)
	}
	twice := result
	twice.RequestID = "t3"
	if probs := x.Add(&twice); len(probs) != 1 || probs[0].RequestID != "t3" || !strings.Contains(probs[0].Message, `answered by "t2"`) {
		t.Errorf("second answer: %+v", probs)
	}
	if user := turn(declare.RoleUser); x.Add(&user) != nil {
		t.Error("a user turn brings a problem")
	}
	if _, ok := x.Answers(&declare.Declaration{MemoryType: declare.Context}); !ok {
		t.Error("a context block needs an answer")
	}
	// Two call ids that every format would write alike are refused: the
	// second names the first.
	kimi := turn(declare.RoleAssistant)
	kimi.RequestID, kimi.ToolCalls[0].ID = "t4", "functions.get_rate:0"
	if probs := x.Add(&kimi); probs != nil {
		t.Fatal(probs)
	}
	alike := turn(declare.RoleAssistant)
	alike.RequestID, alike.ToolCalls[0].ID = "t5", chat.WireID("functions.get_rate:0")
	if probs := x.Add(&alike); len(probs) != 1 || probs[0].Field != "tool_calls[0].id" || !strings.Contains(probs[0].Message, `as call "functions.get_rate:0" of session "s1" is`) {
		t.Errorf("an id written as another's: %+v", probs)
	}
	alike.SessionID = "s2" // another session's ids are its own
	if probs := x.Add(&alike); probs != nil {
		t.Errorf("another session: %+v", probs)
	}
}

// FuzzLoadChat builds a call and a result from fuzzed chat fields and
// checks the loader's promises for them: it never panics; what loads is
// valid, every loaded result answers a loaded call of its session, and
// it writes back as JSON that loads again; what fails names the line,
// request_id and field of each problem.
func FuzzLoadChat(f *testing.F) {
	f.Add("assistant", "call_1", "get_rate", `{"term":60}`, "tool", "call_1", "g", "42", false)
	f.Add("assistant", "c", "n", "{}", "tool", "c", "", " ", true)
	f.Add("user", "c 1", "a.b", "[1]", "assistant", "", "two words", "", false)
	f.Add("tool", "", "", "", "user", "x", "", "\u00a0", true)
	f.Fuzz(func(t *testing.T, role1, id, name, args, role2, answers, group, content string, otherSession bool) {
		session2 := "s1"
		if otherSession {
			session2 = "s2"
		}
		lines := []map[string]any{
			{"request_id": "call", "memory_type": "history", "scope": "session", "session_id": "s1", "role": role1,
				"content": "Let me check.", "tool_calls": []map[string]string{{"id": id, "name": name, "arguments": args}}, "group": group},
			{"request_id": "result", "memory_type": "history", "scope": "session", "session_id": session2, "role": role2,
				"tool_call_id": answers, "content": content},
		}
		var in bytes.Buffer
		for _, l := range lines {
			b, err := json.Marshal(l)
			if err != nil {
				t.Skip() // a string that is not UTF-8 enough for JSON
			}
			in.Write(b)
			in.WriteByte('\n')
		}
		decls, err := declare.Load(bytes.NewReader(in.Bytes()), "fuzz.jsonl")
		if err != nil {
			var ve *declare.ValidationError
			if !errors.As(err, &ve) || decls != nil {
				t.Fatalf("%v (%T) with %d declarations", err, err, len(decls))
			}
			for _, p := range ve.Problems {
				if p.Line < 1 || p.Line > 2 || p.RequestID == "" || p.Message == "" {
					t.Fatalf("problem %+v does not point at a line and a block", p)
				}
			}
			return
		}
		var x declare.CallIndex
		for i := range decls {
			if err := declare.Validate(&decls[i]); err != nil {
				t.Fatalf("loaded an invalid declaration: %v", err)
			}
			x.Add(&decls[i])
		}
		for i := range decls {
			if p, ok := x.Answers(&decls[i]); !ok {
				t.Fatalf("loaded a result without its call: %v", p)
			}
		}
		first := marshalLines(t, decls)
		again, err := declare.Load(bytes.NewReader(first), "again.jsonl")
		if err != nil || !bytes.Equal(marshalLines(t, again), first) {
			t.Fatalf("round trip: %v\n%s", err, first)
		}
	})
}
