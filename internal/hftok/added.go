package hftok

import "slices"

// addedEntry is one added token.
type addedEntry struct {
	content string
	id      int32
}

// addedVocab holds the added tokens: those matched in the raw text
// ("normalized": false) and those matched after normalization.
type addedVocab struct {
	raw, normalized *trie
}

// trie finds added tokens leftmost-longest, as the library's Aho-Corasick
// automaton does: the match that starts first, and the longest of those.
// Each position costs at most the length of the longest token.
type trie struct {
	nodes []trieNode
	first [256]bool // bytes some token starts with
}

type trieNode struct {
	id    int32 // the token ending here, or -1
	edges []trieEdge
}

type trieEdge struct {
	b    byte
	next int32
}

func newTrie(entries []addedEntry) *trie {
	if len(entries) == 0 {
		return nil
	}
	t := &trie{nodes: []trieNode{{id: -1}}}
	for _, e := range entries {
		n := int32(0)
		for i := 0; i < len(e.content); i++ {
			c := e.content[i]
			edges := t.nodes[n].edges
			j, found := slices.BinarySearchFunc(edges, c, func(e trieEdge, c byte) int { return int(e.b) - int(c) })
			if !found {
				t.nodes = append(t.nodes, trieNode{id: -1})
				next := int32(len(t.nodes) - 1)
				t.nodes[n].edges = slices.Insert(edges, j, trieEdge{b: c, next: next})
				n = next
				continue
			}
			n = edges[j].next
		}
		if t.nodes[n].id < 0 { // the first of duplicates wins
			t.nodes[n].id = e.id
		}
		t.first[e.content[0]] = true
	}
	return t
}

// longest returns the id and length of the longest token at the start of
// s, or -1.
func (t *trie) longest(s string) (int32, int) {
	id, n, node := int32(-1), 0, int32(0)
	for i := 0; i < len(s); i++ {
		edges := t.nodes[node].edges
		j, found := slices.BinarySearchFunc(edges, s[i], func(e trieEdge, c byte) int { return int(e.b) - int(c) })
		if !found {
			break
		}
		node = edges[j].next
		if t.nodes[node].id >= 0 {
			id, n = t.nodes[node].id, i+1
		}
	}
	return id, n
}

// split calls fn with each stretch of s in order: an added token (id >= 0)
// or the text between tokens (id -1).
func (t *trie) split(s string, fn func(start, end int, id int32)) {
	if t == nil {
		if s != "" {
			fn(0, len(s), -1)
		}
		return
	}
	last := 0
	for i := 0; i < len(s); i++ {
		if !t.first[s[i]] {
			continue
		}
		id, n := t.longest(s[i:])
		if id < 0 {
			continue
		}
		if i > last {
			fn(last, i, -1)
		}
		fn(i, i+n, id)
		last = i + n
		i += n - 1
	}
	if last < len(s) {
		fn(last, len(s), -1)
	}
}
