package declare

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Bounds of the degradation fields (docs/limits.md).
const (
	// MaxVariants is the most variants one declaration may have.
	MaxVariants = 8
	// MaxSupersedes is the most ids one declaration may supersede.
	MaxSupersedes = 64
	// MaxReplaces is the most turns one summary may replace.
	MaxReplaces = 1000
)

// degradeProblems appends the problems of d's variants, max_tokens,
// supersedes and replaces that a struct tag cannot express.
func (c Config) degradeProblems(d *Declaration, dst []Problem) []Problem {
	add := func(field, format string, args ...any) {
		dst = append(dst, Problem{Field: field, Message: fmt.Sprintf(format, args...)})
	}
	if n := len(d.Variants); n > MaxVariants {
		add("variants", "has %d variants, more than the limit of %d", n, MaxVariants)
	}
	total := len(d.Content)
	for _, v := range d.Variants {
		total += len(v)
	}
	if len(d.Variants) > 0 && total > c.maxContent() && len(d.Content) <= c.maxContent() {
		add("variants", "content and variants are %d bytes together, more than the limit of %d", total, c.maxContent())
	}
	for i, v := range d.Variants {
		f := fmt.Sprintf("variants[%d]", i)
		switch {
		case v == "":
			add(f, "is empty (a variant is a shorter version of content)")
		case !utf8.ValidString(v):
			add(f, "is not valid UTF-8")
		case d.MemoryType == History && strings.TrimFunc(v, unicode.IsSpace) == "":
			add(f, "is only white space (a chat message needs text)")
		case i == 0 && len(v) >= len(d.Content):
			add(f, "is %d bytes, not shorter than content (%d): a variant is a shorter version of content", len(v), len(d.Content))
		case i > 0 && len(v) >= len(d.Variants[i-1]) && d.Variants[i-1] != "":
			add(f, "is %d bytes, not shorter than variants[%d] (%d): variants come longest first", len(v), i-1, len(d.Variants[i-1]))
		}
	}
	if d.MaxTokens != nil && *d.MaxTokens < 1 {
		add("max_tokens", "must be at least 1 token (got %d)", *d.MaxTokens)
	}
	dst = idListProblems(d, "supersedes", d.Supersedes, MaxSupersedes, dst)
	if len(d.Replaces) > 0 {
		switch {
		case d.MemoryType != History && d.MemoryType.Valid():
			add("replaces", "applies to history blocks only: a summary of turns (memory_type is %q)", d.MemoryType)
		case d.ChatRole() == RoleTool || len(d.ToolCalls) > 0:
			add("replaces", "a summary is a plain user or assistant turn: not a tool result, and without tool_calls")
		case d.Group != "":
			add("replaces", "a summary stands in for its turns on its own: it cannot have a group")
		}
	}
	return idListProblems(d, "replaces", d.Replaces, MaxReplaces, dst)
}

// idListProblems appends the problems of a list of request_ids that d
// names (supersedes or replaces): each valid, none twice, not d's own.
func idListProblems(d *Declaration, field string, ids []string, limit int, dst []Problem) []Problem {
	if n := len(ids); n > limit {
		dst = append(dst, Problem{Field: field, Message: fmt.Sprintf("has %d ids, more than the limit of %d", n, limit)})
		return dst
	}
	var seen map[string]int
	for i, id := range ids {
		f := fmt.Sprintf("%s[%d]", field, i)
		switch j, dup := seen[id]; {
		case !validRequestID(id):
			dst = append(dst, Problem{Field: f, Message: fmt.Sprintf("must be a request_id: 1 to %d printable characters without whitespace", MaxRequestIDLen)})
		case id == d.RequestID:
			dst = append(dst, Problem{Field: f, Message: "names the block itself"})
		case dup:
			dst = append(dst, Problem{Field: f, Message: fmt.Sprintf("repeats %s[%d] (%q)", field, j, id)})
		default:
			if seen == nil {
				seen = make(map[string]int, len(ids))
			}
			seen[id] = i
		}
	}
	return dst
}

// Links returns the supersedes and replaces of a block held elsewhere (an
// engine's store), by request_id; ok is false for an id it does not hold.
type Links func(id string) (supersedes, replaces []string, ok bool)

// CheckLinks returns a problem for each declaration of decls that lies on a
// cycle of supersedes (a supersedes b supersedes a) or of replaces, through
// decls and the blocks held answers for. A declaration of decls stands for
// a held block of the same request_id (it replaces it). Problems carry the
// request_id and the field, no file or line.
func CheckLinks(decls []Declaration, held Links) []Problem {
	var probs []Problem
	for _, rel := range [...]string{"supersedes", "replaces"} {
		probs = linkCycles(probs, decls, held, rel)
	}
	return probs
}

// checkLinks appends the link cycles of a set of declarations to dst, each
// located at its declaration's file and line.
func checkLinks(dst []Problem, decls []Declaration, files []string, lines []int) []Problem {
	pos := make(map[string]int)
	for _, p := range CheckLinks(decls, nil) {
		if len(pos) == 0 {
			for i := range decls {
				pos[decls[i].RequestID] = i
			}
		}
		i := pos[p.RequestID]
		p.File, p.Line = files[i], lines[i]
		dst = append(dst, p)
	}
	return dst
}

// linkCycles appends a problem for each declaration on a cycle of the
// relation rel ("supersedes" or "replaces"). It walks the graph depth
// first from each declaration, once, so its cost is the size of what the
// declarations reach.
func linkCycles(probs []Problem, decls []Declaration, held Links, rel string) []Problem {
	idx := make(map[string]int, len(decls))
	linked := false
	for i := range decls {
		idx[decls[i].RequestID] = i
		linked = linked || len(edgesOf(&decls[i], rel)) > 0
	}
	if !linked {
		return probs
	}
	edges := func(id string) []string {
		if i, ok := idx[id]; ok {
			return edgesOf(&decls[i], rel)
		}
		if held == nil {
			return nil
		}
		sup, rep, ok := held(id)
		if !ok {
			return nil
		}
		if rel == "supersedes" {
			return sup
		}
		return rep
	}
	const (
		white = iota
		grey
		black
	)
	colour := make(map[string]uint8)
	reported := make(map[string]bool)
	type frame struct {
		id   string
		next []string
	}
	for i := range decls {
		start := decls[i].RequestID
		if colour[start] != white || len(edgesOf(&decls[i], rel)) == 0 {
			continue
		}
		stack := []frame{{start, edges(start)}}
		colour[start] = grey
		for len(stack) > 0 {
			top := &stack[len(stack)-1]
			if len(top.next) == 0 {
				colour[top.id] = black
				stack = stack[:len(stack)-1]
				continue
			}
			to := top.next[0]
			top.next = top.next[1:]
			switch colour[to] {
			case white:
				colour[to] = grey
				stack = append(stack, frame{to, edges(to)})
			case grey: // a cycle: from to's frame up to the top, and back to to
				k := len(stack) - 1
				for stack[k].id != to {
					k--
				}
				path := make([]string, 0, len(stack)-k+1)
				for _, f := range stack[k:] {
					path = append(path, f.id)
				}
				path = append(path, to)
				for _, f := range stack[k:] {
					if _, ok := idx[f.id]; ok && !reported[rel+"\x00"+f.id] {
						reported[rel+"\x00"+f.id] = true
						probs = append(probs, Problem{RequestID: f.id, Field: rel,
							Message: fmt.Sprintf("forms a cycle: %s", strings.Join(quoteAll(path), " → "))})
					}
				}
			}
		}
	}
	return probs
}

// edgesOf returns d's ids of relation rel.
func edgesOf(d *Declaration, rel string) []string {
	if rel == "supersedes" {
		return d.Supersedes
	}
	return d.Replaces
}

func quoteAll(ids []string) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = fmt.Sprintf("%q", id)
	}
	return out
}
