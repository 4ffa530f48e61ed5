package strictjson

import (
	"encoding"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
)

// Kind says what is wrong with a key.
type Kind uint8

// The kinds of problem.
const (
	// KindDuplicate: the key appears earlier in the same object.
	KindDuplicate Kind = iota + 1
	// KindCase: the key names a field only up to case (or Unicode
	// folding); encoding/json would have accepted it.
	KindCase
	// KindUnknown: the key names no field.
	KindUnknown
)

// Problem is one key that a strict decoder refuses.
type Problem struct {
	// Kind is what is wrong with the key.
	Kind Kind
	// Path is the key's path from the document's root: "scope",
	// "provenance.sourceid", "sections[1].render".
	Path string
	// Key is the key as decoded.
	Key string
	// Offset is the byte offset of the key's opening quote.
	Offset int
	// Suggest is the nearest known field, as a path from the object that
	// holds the key ("semantic_weight", "provenance.source_id"), or "".
	Suggest string
}

// Message says what is wrong, for a message that already names the path:
// "unknown field (did you mean "semantic_weight"?)".
func (p Problem) Message() string {
	switch p.Kind {
	case KindDuplicate:
		return "given twice in one object; each field may appear once"
	case KindCase:
		return "unknown field: field names are case-sensitive (did you mean " + strconv.Quote(p.Suggest) + "?)"
	}
	if p.Suggest != "" {
		return "unknown field (did you mean " + strconv.Quote(p.Suggest) + "?)"
	}
	return "unknown field"
}

// Schema is the shape of the objects a Go type decodes from: field names
// of structs, element shapes of slices and maps. Build it once with [For];
// it is immutable.
type Schema struct{ root *node }

type nodeKind uint8

const (
	kindAny    nodeKind = iota // no field names to check (maps' keys, interfaces, custom decoders)
	kindStruct                 // keys must be field names
	kindList                   // elements have shape elem
	kindMap                    // keys are free; values have shape elem
)

type node struct {
	kind   nodeKind
	fields map[string]*node // kindStruct: by exact json name
	order  []string         // kindStruct: names in declaration order
	elem   *node            // kindList, kindMap
}

// anyNode accepts any keys; skipNode is the value of a refused key, whose
// insides are not reported a second time.
var (
	anyNode  = &node{kind: kindAny}
	skipNode = &node{kind: kindAny}
)

var (
	unmarshalerType     = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// For returns the schema of t, as encoding/json would decode into it.
func For(t reflect.Type) *Schema {
	return &Schema{root: build(t, make(map[reflect.Type]*node))}
}

func build(t reflect.Type, seen map[reflect.Type]*node) *node {
	if n, ok := seen[t]; ok {
		return n
	}
	if t.Implements(unmarshalerType) || reflect.PointerTo(t).Implements(unmarshalerType) ||
		t.Implements(textUnmarshalerType) || reflect.PointerTo(t).Implements(textUnmarshalerType) {
		return anyNode // decodes itself
	}
	switch t.Kind() {
	case reflect.Pointer:
		return build(t.Elem(), seen)
	case reflect.Slice, reflect.Array:
		n := &node{kind: kindList}
		seen[t] = n
		n.elem = build(t.Elem(), seen)
		return n
	case reflect.Map:
		n := &node{kind: kindMap}
		seen[t] = n
		n.elem = build(t.Elem(), seen)
		return n
	case reflect.Struct:
		n := &node{kind: kindStruct, fields: make(map[string]*node)}
		seen[t] = n
		addFields(n, t, seen)
		return n
	}
	return anyNode
}

// addFields adds t's fields to n, flattening embedded structs without a
// name of their own as encoding/json does.
func addFields(n *node, t reflect.Type, seen map[reflect.Type]*node) {
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		ft := f.Type
		if f.Anonymous && name == "" {
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				addFields(n, ft, seen)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		if _, dup := n.fields[name]; !dup {
			n.order = append(n.order, name)
		}
		n.fields[name] = build(ft, seen)
	}
}

// Check returns every duplicate, case-variant and unknown key of the JSON
// value data, in document order. data should be valid JSON (decode it
// first); on malformed input Check stops and returns what it found.
func (s *Schema) Check(data []byte) []Problem {
	sc := scanner{data: data}
	sc.value(s.root, 0)
	if len(sc.probs) == 0 {
		return nil
	}
	// Paths cost allocations, so the first pass keeps none: a second pass
	// finds the path of each problem's key by its offset.
	ps := scanner{data: data, track: true, probs: sc.probs}
	ps.value(anyNode, 0)
	return sc.probs
}

// Offsets returns the byte offset of every value in the JSON document data
// by its path ("budget", "sections[1].max_tokens"); the root's path is "".
// With a key given twice, the first counts. It is for placing problems, so
// it allocates freely.
func Offsets(data []byte) map[string]int {
	sc := scanner{data: data, track: true, offsets: make(map[string]int)}
	sc.value(anyNode, 0)
	return sc.offsets
}

func hasKey(m map[string]int, k string) bool {
	_, ok := m[k]
	return ok
}

// maxDepth is encoding/json's nesting limit.
const maxDepth = 10000

// scanner walks one JSON document. It either checks keys against a shape
// (appending to probs), or, with track, follows the path to each value:
// then it fills in the Path of the probs it was given, and looks for want.
type scanner struct {
	data  []byte
	i     int
	bad   bool
	probs []Problem

	track   bool
	stack   []step         // path to the current value, when tracking
	next    int            // the next of probs to find, when tracking
	offsets map[string]int // for Offsets
}

// step is one element of a path: an object key (raw bytes, and the
// decoded key when it has escapes) or an array index.
type step struct {
	raw     []byte
	decoded string
	escaped bool
	index   int // -1 for a key
}

func (st *step) key() string {
	if st.escaped {
		return st.decoded
	}
	return string(st.raw)
}

// path renders the current path. Only problems and Offset need it.
func (sc *scanner) path() string {
	var b strings.Builder
	for _, st := range sc.stack {
		if st.index >= 0 {
			b.WriteByte('[')
			b.WriteString(strconv.Itoa(st.index))
			b.WriteByte(']')
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(st.key())
	}
	return b.String()
}

func (sc *scanner) ws() {
	for sc.i < len(sc.data) {
		switch sc.data[sc.i] {
		case ' ', '\t', '\n', '\r':
			sc.i++
		default:
			return
		}
	}
}

// value scans one value of shape n.
func (sc *scanner) value(n *node, depth int) {
	sc.ws()
	if sc.offsets != nil {
		if p := sc.path(); !hasKey(sc.offsets, p) {
			sc.offsets[p] = sc.i
		}
	}
	if sc.i >= len(sc.data) || depth > maxDepth {
		sc.bad = true
		return
	}
	switch sc.data[sc.i] {
	case '{':
		sc.object(n, depth)
	case '[':
		sc.array(n, depth)
	case '"':
		sc.str()
	default:
		for sc.i < len(sc.data) {
			switch sc.data[sc.i] {
			case ',', ']', '}', ' ', '\t', '\n', '\r':
				return
			}
			sc.i++
		}
	}
}

// str skips a string starting at sc.i and reports whether it had escapes.
func (sc *scanner) str() (escaped bool) {
	sc.i++ // opening quote
	for sc.i < len(sc.data) {
		switch sc.data[sc.i] {
		case '\\':
			escaped = true
			sc.i += 2
			continue
		case '"':
			sc.i++
			return escaped
		}
		sc.i++
	}
	sc.bad = true
	return escaped
}

func (sc *scanner) array(n *node, depth int) {
	sc.i++
	elem := anyNode
	switch {
	case n == skipNode:
		elem = skipNode
	case n.kind == kindList:
		elem = n.elem
	}
	sc.ws()
	if sc.i < len(sc.data) && sc.data[sc.i] == ']' {
		sc.i++
		return
	}
	for idx := 0; !sc.bad; idx++ {
		if sc.track {
			sc.stack = append(sc.stack, step{index: idx})
		}
		sc.value(elem, depth+1)
		if sc.track {
			sc.stack = sc.stack[:len(sc.stack)-1]
		}
		if !sc.more(']') {
			return
		}
	}
}

func (sc *scanner) object(n *node, depth int) {
	sc.i++
	var buf [16]step
	seen := buf[:0]
	var seenSet map[string]bool // for objects with many keys
	sc.ws()
	if sc.i < len(sc.data) && sc.data[sc.i] == '}' {
		sc.i++
		return
	}
	for !sc.bad {
		sc.ws()
		if sc.i >= len(sc.data) || sc.data[sc.i] != '"' {
			sc.bad = true
			return
		}
		start := sc.i
		escaped := sc.str()
		if sc.bad {
			return
		}
		st := step{raw: sc.data[start+1 : sc.i-1], escaped: escaped, index: -1}
		if escaped {
			var key string // declared here: only an escaped key costs an allocation
			if err := json.Unmarshal(sc.data[start:sc.i], &key); err != nil {
				sc.bad = true
				return
			}
			st.decoded = key
		}
		sc.ws()
		if sc.i >= len(sc.data) || sc.data[sc.i] != ':' {
			sc.bad = true
			return
		}
		sc.i++

		if sc.track {
			sc.stack = append(sc.stack, st)
			for sc.next < len(sc.probs) && sc.probs[sc.next].Offset == start {
				sc.probs[sc.next].Path = sc.path()
				sc.next++
			}
			sc.value(anyNode, depth+1)
			sc.stack = sc.stack[:len(sc.stack)-1]
		} else {
			child, kind, suggest := sc.child(n, &st)
			if n != skipNode && sc.repeated(seen, &seenSet, &st) {
				sc.probs = append(sc.probs, Problem{Kind: KindDuplicate, Key: st.key(), Offset: start})
				child = skipNode
			} else if kind != 0 {
				sc.probs = append(sc.probs, Problem{Kind: kind, Key: st.key(), Offset: start, Suggest: suggest})
			}
			sc.value(child, depth+1)
			if seenSet != nil {
				seenSet[st.key()] = true
			} else {
				seen = append(seen, st)
				if len(seen) > 32 {
					seenSet = make(map[string]bool, 2*len(seen))
					for i := range seen {
						seenSet[seen[i].key()] = true
					}
				}
			}
		}

		if !sc.more('}') {
			return
		}
	}
}

// more reads what follows a member or an element: ',' (more follow) or
// the container's closing byte. Anything else makes the document bad.
func (sc *scanner) more(closing byte) bool {
	sc.ws()
	if sc.i < len(sc.data) {
		switch sc.data[sc.i] {
		case ',':
			sc.i++
			return true
		case closing:
			sc.i++
			return false
		}
	}
	sc.bad = true
	return false
}

// repeated reports whether st's key is among the keys seen in this object.
func (sc *scanner) repeated(seen []step, set *map[string]bool, st *step) bool {
	if *set != nil {
		return (*set)[st.key()]
	}
	for i := range seen {
		s := &seen[i]
		switch {
		case !s.escaped && !st.escaped:
			if string(s.raw) == string(st.raw) {
				return true
			}
		case s.key() == st.key():
			return true
		}
	}
	return false
}

// child returns the shape of the value of key st in an object of shape n,
// and the problem with the key, if any.
func (sc *scanner) child(n *node, st *step) (*node, Kind, string) {
	switch n.kind {
	case kindMap:
		return n.elem, 0, ""
	case kindStruct:
	default:
		if n == skipNode {
			return skipNode, 0, ""
		}
		return anyNode, 0, ""
	}
	var f *node
	var ok bool
	if st.escaped {
		f, ok = n.fields[st.decoded]
	} else {
		f, ok = n.fields[string(st.raw)]
	}
	if ok {
		return f, 0, ""
	}
	kind, suggest := nearest(n, st.key())
	return skipNode, kind, suggest
}

// nearest finds the field of struct n that key most likely meant: one
// equal up to case (a KindCase problem), else a field of a nested struct
// with that name ("source_id" → "provenance.source_id"), else the field
// closest by edit distance, within two edits and a third of its length, a
// word of a name counting as the name one edit away.
func nearest(n *node, key string) (Kind, string) {
	for _, name := range n.order {
		if strings.EqualFold(name, key) {
			return KindCase, name
		}
	}
	type cand struct{ path, leaf string }
	var cands []cand
	for _, name := range n.order {
		cands = append(cands, cand{name, name})
	}
	for _, name := range n.order {
		if sub := n.fields[name]; sub.kind == kindStruct {
			for _, leaf := range sub.order {
				p := name + "." + leaf
				if leaf == key || strings.EqualFold(leaf, key) {
					return KindUnknown, p
				}
				cands = append(cands, cand{p, leaf})
			}
		}
	}
	// By edit distance to a whole name, or, one edit worse, to one word of
	// a name ("wieght" → "semantic_weight").
	lower := strings.ToLower(key)
	best, bestD := "", 3
	for _, c := range cands {
		if d := distance(lower, c.leaf, bestD); d < bestD && 3*d <= len(c.leaf) {
			best, bestD = c.path, d
		}
		for w := range strings.SplitSeq(c.leaf, "_") {
			if len(w) < 4 || w == c.leaf {
				continue
			}
			if d := distance(lower, w, 2) + 1; d < bestD {
				best, bestD = c.path, d
			}
		}
	}
	return KindUnknown, best
}

// distance is the optimal-string-alignment edit distance between a and b
// (insertions, deletions, substitutions and adjacent transpositions), or
// limit when it is limit or more.
func distance(a, b string, limit int) int {
	if len(a)-len(b) >= limit || len(b)-len(a) >= limit {
		return limit
	}
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		rowMin := i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			v := min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				v = min(v, prev2[j-2]+1)
			}
			cur[j] = v
			rowMin = min(rowMin, v)
		}
		if rowMin >= limit {
			return limit
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return min(prev[len(b)], limit)
}

// Closest returns the name of names that word most likely meant, by edit
// distance within two edits and a third of the name's length, or "": the
// command line's "did you mean" for flags and commands.
func Closest(word string, names []string) string {
	best, bestD := "", 3
	for _, n := range names {
		if d := distance(word, n, bestD); d < bestD && 3*d <= len(n) {
			best, bestD = n, d
		}
	}
	return best
}
