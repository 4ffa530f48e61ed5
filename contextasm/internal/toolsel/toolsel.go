package toolsel

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/contextasm/contextasm/chat"
	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/internal/lexical"
	"github.com/contextasm/contextasm/template"
	"github.com/contextasm/contextasm/truncate"
)

// Reason says why a tool is not in a request.
type Reason string

// The reasons. The first two are hidden, like a block's role: counted,
// never named in what the request's reader may see.
const (
	// ReasonRole: the tool's roles and the request's share none.
	ReasonRole Reason = "role"
	// ReasonHintRole: the template asks a role of tools the tool's hints
	// mark destructive or open-world, and the request lacks it.
	ReasonHintRole Reason = "hint_role"
	// ReasonToolsCap: the tool would take the tools part past its cap
	// (or the budget); others were more relevant, or came first by name.
	ReasonToolsCap Reason = "tools_cap"
	// ReasonSticky: a fresh selection would carry the tool, but the tools
	// the conversation's previous call carried kept their place: it does
	// not outrank them by more than the margin (Options.Margin).
	ReasonSticky Reason = "sticky"
)

// Hidden reports whether tools left out for r are counted, not named.
func (r Reason) Hidden() bool { return r == ReasonRole || r == ReasonHintRole }

// ErrRequiredTooLarge means the required tools alone exceed the tools
// part's cap; it wraps truncate.ErrBudgetTooSmall.
var ErrRequiredTooLarge = fmt.Errorf("%w: required tools exceed the tools cap", truncate.ErrBudgetTooSmall)

// Set is an immutable list of tools sorted by name, with what selection
// reads of each analysed once; and, for one request (Set.With), what its
// selection follows.
type Set struct {
	*shared
	opts Options
}

// shared is a Set's tools and their analysis, shared by every request's
// view of it.
type shared struct {
	tools []declare.Tool
	docs  []lexical.Doc
	props [][]string // each tool's top-level parameter names, in schema order
	// costs caches every tool's count per rule and counter (costKey ->
	// []toolCost): a set is immutable, and counting 200 schemas on every
	// request would cost more than the rest of it.
	costs sync.Map
}

// Options are what one request's selection takes beyond the template:
// the conversation's previous selection, and the margin learned for the
// format's count.
type Options struct {
	// Previous are the names of the tools the conversation's previous
	// call carried; nil for a fresh decision (a first call, a request
	// without a session, Fresh). When the selection goes by relevance,
	// they keep their place unless a tool left out outranks them by more
	// than Margin.
	Previous []string
	// Margin is how far (in relevance, which lies in [0, 1)) a tool must
	// outrank one of Previous to take its place.
	Margin float64
	// AnthropicScale multiplies the anthropic-tools count (its fixed cost
	// and each definition, rounded up): the margin learned from the
	// usage providers reported. At most 1 means none.
	AnthropicScale float64
}

// With returns s for one request: the same tools, selected with o.
func (s *Set) With(o Options) *Set {
	if s == nil {
		return nil
	}
	o.Previous = slices.Clone(o.Previous)
	slices.Sort(o.Previous)
	return &Set{shared: s.shared, opts: o}
}

type costKey struct {
	rule    rule
	counter truncate.Counter // comparable dynamic types only
}

type toolCost struct {
	tokens int
	approx bool
}

// costsFor returns every tool's count under r with c, cached when c can
// be a map key.
func (s *Set) costsFor(r rule, c truncate.Counter) []toolCost {
	count := func() []toolCost {
		out := make([]toolCost, len(s.tools))
		for i := range s.tools {
			out[i].tokens, out[i].approx = r.count(&s.tools[i], s.props[i], c)
		}
		return out
	}
	if c == nil || !reflect.TypeOf(c).Comparable() {
		return count()
	}
	k := costKey{rule: r, counter: c}
	if v, ok := s.costs.Load(k); ok {
		return v.([]toolCost)
	}
	v, _ := s.costs.LoadOrStore(k, count())
	return v.([]toolCost)
}

// NewSet returns the set of tools (valid, names unique), sorted by name.
func NewSet(tools []declare.Tool) *Set {
	s := &Set{shared: &shared{tools: slices.Clone(tools)}}
	slices.SortFunc(s.tools, func(a, b declare.Tool) int { return strings.Compare(a.Name, b.Name) })
	s.docs = make([]lexical.Doc, len(s.tools))
	s.props = make([][]string, len(s.tools))
	for i := range s.tools {
		t := &s.tools[i]
		s.props[i] = paramNames(t.InputSchema)
		// The analyser splits names at '_', '-' and camelCase, so
		// "get_exchange_rate" matches "exchange rate".
		text := t.Name + "\n" + t.Description + "\n" + strings.Join(s.props[i], " ")
		s.docs[i] = lexical.Analyze(text)
	}
	return s
}

// Len returns the number of tools.
func (s *Set) Len() int {
	if s == nil {
		return 0
	}
	return len(s.tools)
}

// Tool returns the i-th tool, by name order.
func (s *Set) Tool(i int) *declare.Tool { return &s.tools[i] }

// Find returns the index of the tool named name.
func (s *Set) Find(name string) (int, bool) {
	if s == nil {
		return 0, false
	}
	return slices.BinarySearchFunc(s.tools, name, func(t declare.Tool, n string) int { return strings.Compare(t.Name, n) })
}

// paramNames returns the keys of a schema's "properties", in the order
// written.
func paramNames(schema json.RawMessage) []string {
	var top struct {
		Properties json.RawMessage `json:"properties"`
	}
	if json.Unmarshal(schema, &top) != nil || len(top.Properties) == 0 {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(top.Properties))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil
	}
	var names []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return names
		}
		key, _ := tok.(string)
		names = append(names, key)
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return names
		}
	}
	return names
}

// Access says whether a request holding roles may see and call t under
// the template's tools part (nil: none), and if not, why and which role
// the tool needs.
func Access(t *declare.Tool, roles []string, part *template.ToolsDefinition) (ok bool, reason Reason, needs []string) {
	if len(t.Roles) > 0 && !slices.ContainsFunc(t.Roles, func(r string) bool { return slices.Contains(roles, r) }) {
		return false, ReasonRole, t.Roles
	}
	if part != nil {
		if r := part.DestructiveRole; r != "" && t.Destructive() && !slices.Contains(roles, r) {
			return false, ReasonHintRole, []string{r}
		}
		if r := part.OpenWorldRole; r != "" && t.OpenWorld() && !slices.Contains(roles, r) {
			return false, ReasonHintRole, []string{r}
		}
	}
	return true, "", nil
}

// Input is one request's selection.
type Input struct {
	// Set is the engine's tools.
	Set *Set
	// Roles are the request's.
	Roles []string
	// Part is the template's tools part; nil: no cap but Budget.
	Part *template.ToolsDefinition
	// Budget is the template's budget, the cap when Part sets none.
	Budget int
	// Format is the chat format the tools are counted for.
	Format chat.Format
	// Query, when it has terms, is what relevance is to.
	Query *lexical.Query
	// Counter counts with the template's encoding; Encoding names it.
	Counter  truncate.Counter
	Encoding string
}

// Kept is a tool sent with the request.
type Kept struct {
	// Index is the tool's index in the Set.
	Index int
	// Tokens is its count in the format's rule.
	Tokens int
	// Relevance is its relevance to the query, 0 without one.
	Relevance float64
	// Required says it was kept whatever the cap.
	Required bool
}

// Left is a tool the request could see that was not sent.
type Left struct {
	Index     int
	Tokens    int
	Relevance float64
	Reason    Reason
}

// Result is a request's tools part.
type Result struct {
	// Kept are the tools sent, in name order: the array's order, which
	// changes only when the set does.
	Kept []Kept
	// Left are the tools the request could see but that were not sent
	// (reason tools_cap), in name order.
	Left []Left
	// Hidden counts the tools the request may not see, per reason.
	Hidden map[Reason]int
	// Tokens is the tools part's count: the definitions kept and the
	// format's fixed cost for a request with tools; 0 without tools.
	Tokens int
	// Fixed is the format's fixed cost, included in Tokens when a tool
	// is kept.
	Fixed int
	// Cap is the cap applied (the part's, else the budget).
	Cap int
	// Counted is Tokens before the learned margin
	// (Options.AnthropicScale): what the margin is learned against.
	Counted int
	// Approximate says Tokens follows no exact published rule here.
	Approximate bool
	// Method names the counting rule: "openai-functions" or
	// "anthropic-tools".
	Method string
}

// Select chooses the tools of one request: those it may see, the required
// ones first, then by relevance to the query (or by name) while the cap
// holds. A request that follows a previous selection (Options.Previous,
// when the selection goes by relevance) ranks the tools it carried as if
// they were Options.Margin more relevant: they stay unless a tool left
// out outranks them by more than the margin, or the cap no longer holds
// them (the weakest leave first). A tool so kept out is left out with
// ReasonSticky. Following its own result, a selection gives that result
// again. It fails with ErrRequiredTooLarge when the required tools alone
// do not fit.
func Select(in Input) (*Result, error) {
	res := &Result{Cap: in.Budget}
	if in.Part != nil && in.Part.MaxTokens > 0 && in.Part.MaxTokens < res.Cap {
		res.Cap = in.Part.MaxTokens
	}
	rule := ruleFor(in.Format, in.Encoding)
	var opts Options
	if in.Set != nil {
		opts = in.Set.opts
	}
	scale := scaleOf(rule, opts.AnthropicScale)
	res.Method, res.Fixed, res.Approximate = rule.name, scale.of(rule.fixed), rule.approx
	n := in.Set.Len()
	if n == 0 {
		return res, nil
	}
	costs := in.Set.costsFor(rule, in.Counter)
	var allowed []cand
	for i := range n {
		t := in.Set.Tool(i)
		if ok, why, _ := Access(t, in.Roles, in.Part); !ok {
			if res.Hidden == nil {
				res.Hidden = make(map[Reason]int)
			}
			res.Hidden[why]++
			continue
		}
		res.Approximate = res.Approximate || costs[i].approx
		allowed = append(allowed, cand{i: i, tokens: scale.of(costs[i].tokens), raw: costs[i].tokens, required: t.IsRequired()})
	}
	if len(allowed) == 0 {
		return res, nil
	}
	relevance := in.Part == nil || in.Part.Select != template.SelectName
	if relevance && in.Query != nil && in.Query.Terms() > 0 {
		var scan lexical.Scan
		scan.Reset(in.Query)
		for _, c := range allowed {
			scan.Count(&in.Set.docs[c.i])
		}
		for k := range allowed {
			allowed[k].rel = scan.Relevance(&in.Set.docs[allowed[k].i])
		}
	}
	sticky := relevance && opts.Previous != nil
	if sticky {
		for k := range allowed {
			if _, ok := slices.BinarySearch(opts.Previous, in.Set.Tool(allowed[k].i).Name); ok {
				allowed[k].rank = opts.Margin
			}
		}
	}
	kept, total := fill(allowed, n, res.Fixed, res.Cap)
	if total > res.Cap {
		return nil, fmt.Errorf("%w: they take %d tokens (%s), the cap is %d", ErrRequiredTooLarge, total, res.Method, res.Cap)
	}
	var fresh []bool // what a fresh selection would carry, for the reasons
	if sticky {
		plain := slices.Clone(allowed)
		for k := range plain {
			plain[k].rank = 0
		}
		fresh, _ = fill(plain, n, res.Fixed, res.Cap)
	}
	counted := rule.fixed
	for _, c := range allowed { // name order
		switch {
		case kept[c.i]:
			counted += c.raw
			res.Kept = append(res.Kept, Kept{Index: c.i, Tokens: c.tokens, Relevance: c.rel, Required: c.required})
		case fresh != nil && fresh[c.i]:
			res.Left = append(res.Left, Left{Index: c.i, Tokens: c.tokens, Relevance: c.rel, Reason: ReasonSticky})
		default:
			res.Left = append(res.Left, Left{Index: c.i, Tokens: c.tokens, Relevance: c.rel, Reason: ReasonToolsCap})
		}
	}
	if len(res.Kept) > 0 {
		res.Tokens, res.Counted = total, counted
	}
	return res, nil
}

// cand is a tool a request may see, as Select ranks it.
type cand struct {
	i        int
	tokens   int // under the learned margin
	raw      int // before it
	rel      float64
	rank     float64 // added to rel for the order: the margin of an incumbent
	required bool
}

// fill takes the required tools, then the rest in order of rel+rank (ties
// in name order, as allowed is) while they fit cap, from fixed tokens; it
// returns which of a set of n it took and their total.
//
// Why following a result gives it again: with the kept tools ranked up
// and the others not, a kept tool only moves ahead of the tools left out,
// so each tool left out meets at least the tools it met before (no room),
// and each kept one fits as the whole kept set did.
func fill(allowed []cand, n, fixed, limit int) ([]bool, int) {
	order := slices.Clone(allowed)
	slices.SortStableFunc(order, func(a, b cand) int {
		if a.required != b.required {
			if a.required {
				return -1
			}
			return 1
		}
		return cmp.Compare(b.rel+b.rank, a.rel+a.rank) // name order stays for ties (stable)
	})
	total := fixed
	kept := make([]bool, n)
	for _, c := range order {
		if c.required || total+c.tokens <= limit {
			total += c.tokens
			kept[c.i] = true
		}
	}
	return kept, total
}

// scale is a count's learned margin in fixed point (1/scaleOne); scaleOne
// is none.
type scale int64

const scaleOne = 1 << 16

// scaleOf returns the margin r applies: m for anthropic-tools when above
// 1, rounded up, else none.
func scaleOf(r rule, m float64) scale {
	if r.openai || !(m > 1) || math.IsInf(m, 0) {
		return scaleOne
	}
	return scale(math.Ceil(m * scaleOne))
}

// of returns n tokens under the margin, rounded up: never under n.
func (s scale) of(n int) int {
	if s == scaleOne {
		return n
	}
	return int((int64(n)*int64(s) + scaleOne - 1) / scaleOne)
}

// IsTooLarge reports whether err is Select's for required tools.
func IsTooLarge(err error) bool { return errors.Is(err, ErrRequiredTooLarge) }
