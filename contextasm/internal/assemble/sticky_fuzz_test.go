package assemble_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/contextasm/contextasm/contextasm/internal/assemble"
	"github.com/contextasm/contextasm/declare"
)

// FuzzPreviousDecision feeds the assembler previous decisions it did not
// make: a learned-state file is data anyone may edit. Whatever the
// decision says (ids that do not exist, cut lengths past the content or
// inside a character, spans, floors and versions of any value), the
// assembly keeps every guarantee of a fresh one.
func FuzzPreviousDecision(f *testing.F) {
	tpl := mustParse(f, fmt.Sprintf(chatTemplate, 300, 120, 150))
	var blocks []assemble.Block
	for i := range 5 {
		blocks = append(blocks, doc(fmt.Sprintf("doc-%d", i), float64(i)/5, wordsN(fmt.Sprintf("Doc %d 文档", i), 8+4*i)))
	}
	for i := range 6 {
		blocks = append(blocks, chatTurn(fmt.Sprintf("turn-%d", i), wordsN(fmt.Sprintf("USER %d: olá 你好", i), 10+3*i), now.Add(time.Duration(i-6)*time.Minute)))
	}
	rule := block("rule", declare.Constraint, "Never reveal the key.")
	rule.Required = true
	tpl2 := mustParse(f, `{"budget": 300, "sections": [
	  {"name": "RULES", "priority": 1, "memory_types": ["constraint"], "max_tokens": 50, "render": "{content}"},
	  {"name": "DOCS", "priority": 2, "memory_types": ["context"], "max_tokens": 120, "render": "{content}", "partial": true, "separator": " | "},
	  {"name": "HISTORY", "priority": 3, "memory_types": ["history"], "max_tokens": 150, "render": "{content}", "partial": true}]}`)
	c := newConvo(f, tpl, blocks...)
	real := c.call(now, false)
	seed, _ := json.Marshal(real.Decision)
	f.Add(seed, false)
	f.Add([]byte(`{"v":1,"now":"2025-06-01T12:00:00Z","sections":[{"name":"DOCS","blocks":[{"id":"doc-4","key":"x","span":"y","cut":3}]},{"name":"HISTORY","floor":0.9,"blocks":[{"id":"turn-0","cut":999999},{"id":"nope"}]}]}`), false)
	f.Add([]byte(`{"v":1,"sections":[{"name":"RULES","blocks":[{"id":"rule","cut":-5}]},{"name":"DOCS"},{"name":"HISTORY","floor":-1}]}`), true)
	tok := realTokenizer(f)
	f.Fuzz(func(t *testing.T, data []byte, three bool) {
		var d assemble.Decision
		if json.Unmarshal(data, &d) != nil {
			return
		}
		tp, bs := tpl, blocks
		if three {
			tp, bs = tpl2, append([]assemble.Block{rule}, blocks...)
		}
		var a assemble.Assembler
		keyedBlocks := make([]assemble.Block, len(bs))
		for i, b := range bs {
			keyedBlocks[i] = keyed(b)
		}
		slices.SortFunc(keyedBlocks, func(x, y assemble.Block) int { return strings.Compare(x.ID, y.ID) })
		out, err := a.Assemble(tp, keyedBlocks, assemble.Request{Now: now.Add(time.Minute), SessionID: "s1", UserID: "u1", Previous: &d, Record: true}, tok)
		if err != nil {
			t.Fatalf("a decision made the assembly fail: %v", err)
		}
		checkChatOutput(t, "fuzzed decision", tp, keyedBlocks, tok, out)
		if p := out.Prefix; p != nil && (p.StableBytes > len(out.Text) || p.StableBytes < len(tp.Header())+1) {
			t.Fatalf("prefix %+v for a text of %d bytes", *p, len(out.Text))
		}
	})
}
