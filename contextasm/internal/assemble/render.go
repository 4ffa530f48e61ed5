package assemble

import (
	"github.com/contextasm/contextasm/template"
	"github.com/contextasm/contextasm/truncate"
)

// renderBlock renders b (with content in place of its own) for sec. With
// line set it appends the newline that ends the block's line, and returns
// the rendering both with it (to count) and without it (to write).
func (a *Assembler) renderBlock(sec *template.Section, b *Block, content string, line bool) (withLine, text string, escaped bool) {
	a.render, escaped = sec.AppendRender(a.render[:0], template.Fields{
		Content: content, RequestID: b.ID, MemoryType: string(b.Type), SourceID: b.SourceID,
	})
	if line {
		a.render = append(a.render, '\n')
		withLine = string(a.render)
		return withLine, withLine[:len(withLine)-1], escaped
	}
	text = string(a.render)
	return text, text, escaped
}

// lineMode reports whether a section counts its blocks as lines: with the
// default separator "\n" every block is counted with the newline that ends
// it, so a section's count is the exact count of its text (for a
// line-additive counter) and no separator is counted apart.
func lineMode(sec *template.Section) bool { return sec.Separator() == "\n" }

// blockTokens sets cd.tokens: from the memo when it knows the block in this
// section, else by rendering and counting it (and telling the memo).
func (a *Assembler) blockTokens(sec *template.Section, b *Block, cd *candidate, c truncate.Counter) {
	if cd.msg {
		a.messageCount(sec, b, cd, c)
		return
	}
	line := lineMode(sec)
	var key MemoKey
	if a.Memo != nil && b.Key != (MemoKey{}).Block && cd.form != formCleared { // a placeholder names another block's tool
		key = MemoKey{Block: b.Key, Section: sec.Key(), Of: memoOf(cd.form, 0)}
		if n, ok := a.Memo.Get(key); ok {
			cd.tokens = n
			return
		}
	}
	content, _ := a.content(sec, b, cd.form)
	counted, text, escaped := a.renderBlock(sec, b, content, line)
	cd.text, cd.escaped, cd.rendered = text, escaped, true
	cd.tokens = c.Count(counted)
	if key != (MemoKey{}) {
		a.Memo.Add(key, cd.tokens)
	}
	if k, ok := a.renderKey(sec, b, cd); ok {
		a.Renders.AddRender(k, text, escaped)
	}
}

// renderKey returns the key of cd's whole rendering in the render memo,
// when it has one: its content in full (no variant, no max_tokens).
func (a *Assembler) renderKey(sec *template.Section, b *Block, cd *candidate) (MemoKey, bool) {
	if a.Renders == nil || b.Key == (MemoKey{}).Block || cd.form != 0 || clipOf(sec, b) > 0 {
		return MemoKey{}, false
	}
	return MemoKey{Block: b.Key, Section: sec.Key()}, true
}

// ensureRendered renders a kept block whose count came from the memo.
func (a *Assembler) ensureRendered(sec *template.Section, b *Block, cd *candidate) {
	if cd.rendered {
		return
	}
	content, _ := a.content(sec, b, cd.form)
	if cd.msg {
		cd.text, cd.rendered = content, true
		return
	}
	key, memo := a.renderKey(sec, b, cd)
	if memo {
		if text, escaped, ok := a.Renders.GetRender(key); ok {
			cd.text, cd.escaped, cd.rendered = text, escaped, true
			return
		}
	}
	_, cd.text, cd.escaped = a.renderBlock(sec, b, content, false)
	cd.rendered = true
	if memo {
		a.Renders.AddRender(key, cd.text, cd.escaped)
	}
}

// cutAny cuts a text block or a message to room tokens.
func (a *Assembler) cutAny(sec *template.Section, b *Block, cd *candidate, room int, c truncate.Counter) bool {
	if cd.msg {
		return a.cutMessage(sec, b, cd, room, c)
	}
	return a.cut(sec, b, cd, room, c)
}

// cut shrinks b's content so that its rendering fits room tokens, at a
// token boundary of the content. It reports false when nothing fits.
func (a *Assembler) cut(sec *template.Section, b *Block, cd *candidate, room int, c truncate.Counter) bool {
	line := lineMode(sec)
	content, _ := a.content(sec, b, cd.form)
	empty, _, _ := a.renderBlock(sec, b, "", line)
	target := room - c.Count(empty)
	// Cutting the content and rendering it around again can change the
	// count at the joins (and neutralising adds characters), so verify and
	// shrink by the excess a few times.
	for range 8 {
		if target <= 0 {
			return false
		}
		part := c.Cut(content, target)
		if part == "" {
			return false
		}
		counted, text, escaped := a.renderBlock(sec, b, part, line)
		tokens := c.Count(counted)
		if tokens <= room {
			cd.text, cd.tokens, cd.escaped, cd.rendered = text, tokens, escaped, true
			cd.cutLen = len(part)
			return true
		}
		target -= max(tokens-room, 1)
	}
	return false
}
