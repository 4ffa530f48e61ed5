package contextasm

import "strings"

// sentText returns what a provider counted of res as one text: the text,
// or for a chat format the system prompt and every value of every message
// (role, content, each call's id, name and arguments, a result's call id),
// a line each. The provider's count adds its per-message framing, which
// only makes a ratio learned from it larger.
func sentText(res *Result) string {
	if res.Format == 0 {
		return res.Text
	}
	var b strings.Builder
	b.WriteString(res.Text)
	line := func(s string) {
		if s != "" {
			b.WriteByte('\n')
			b.WriteString(s)
		}
	}
	for _, m := range res.messages {
		line(string(m.Role))
		line(m.Content)
		for _, tc := range m.ToolCalls {
			line(tc.ID)
			line(tc.Name)
			line(tc.Arguments)
		}
		line(m.ToolCallID)
	}
	return b.String()
}
