package contextasm

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"

	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/contextasm/contextasm/chat"
	"github.com/contextasm/contextasm/contextasm/internal/replica"
	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/feedback"
	"github.com/contextasm/contextasm/internal/assemble"
	"github.com/contextasm/contextasm/internal/bpe"
	"github.com/contextasm/contextasm/learned"
	"github.com/contextasm/contextasm/template"
	"github.com/contextasm/contextasm/truncate"
)

// ErrBudgetTooSmall means required blocks do not fit their section cap or
// the budget; the error is a *truncate.RequiredError listing them.
var ErrBudgetTooSmall = truncate.ErrBudgetTooSmall

// ErrInvalid is wrapped by errors about invalid requests. Declare reports
// invalid declarations as a *declare.ValidationError, which wraps
// declare.ErrInvalid.
var ErrInvalid = errors.New("contextasm: invalid input")

// DefaultCacheSize is the number of token counts cached when
// Config.CacheSize is zero: enough for every block of a 20,000-block store
// under three templates.
const DefaultCacheSize = 1 << 16

// DefaultMaxBlocks is the store's bound when Config.MaxBlocks is zero.
const DefaultMaxBlocks = 1_000_000

// ErrStoreFull means a Declare would take the store past Config.MaxBlocks;
// nothing of that call was applied.
var ErrStoreFull = errors.New("contextasm: block store full")

// Counter counts tokens; see [truncate.Counter]. A host may bring its own.
type Counter = truncate.Counter

// Config configures an Engine. Its zero value means the documented
// defaults.
type Config struct {
	// Encoding is loaded when the Engine is created, so the first assembly
	// does not pay for it (about 0.4 s): "o200k_base" (the default),
	// "cl100k_base", an approximate encoding ("approx:claude", which counts
	// from o200k_base) or a tokenizer file (docs/tokenizers.md). Templates
	// naming another encoding load it on first use.
	Encoding string
	// Counter, when set, counts tokens for every template instead of the
	// built-in BPE tokenizers; its counts are cached like theirs.
	Counter Counter
	// CacheSize bounds the token-count cache, in entries (DefaultCacheSize).
	CacheSize int
	// Scoring weighs blocks for ranking; each zero field takes its value
	// from truncate.DefaultScoring().
	Scoring truncate.Scoring
	// MaxContentBytes bounds a block's content (declare.DefaultMaxContentBytes).
	MaxContentBytes int
	// MaxBlocks bounds the store: a Declare that would hold more blocks
	// fails whole with ErrStoreFull (DefaultMaxBlocks). Declared memory is
	// never evicted silently.
	MaxBlocks int
	// Audit, when set, receives one record per assembly (see [Audit]), and
	// one more, with model_response_hash, per Feedback.
	Audit *slog.Logger
	// State, when set, holds the learned state (trust, heat, sessions'
	// decisions), shared with every Engine using the same store: New loads
	// it, and a background goroutine sends this Engine's deltas and takes
	// in others' (see StateOptions; Close stops it). Nil keeps learned
	// state in memory only. learned.FileStore is the embedded default:
	// one JSON file, locked and replaced atomically.
	State learned.Store
	// StateOptions tunes the sharing of learned state through State.
	StateOptions StateOptions
	// Policy moves trust on feedback; each zero field takes its value from
	// feedback.DefaultPolicy().
	Policy feedback.Policy
	// FeedbackLimits bound the work of checking a response against its
	// context's violation patterns (see feedback.Limits): past them
	// Feedback fails with feedback.ErrResponseTooLarge and learns nothing.
	// Each zero field takes its default; a negative one is ErrInvalid.
	FeedbackLimits feedback.Limits
	// Usage seeds what approximate encodings ("approx:claude") learned from
	// provider-reported usage (see Engine.ReportUsage and Engine.Usage);
	// nil starts with none. The Engine keeps its own copy.
	Usage learned.UsageLog
	// ChatOverhead is what a request for a chat format counts beyond the
	// messages' text (see ChatOverhead); each zero field takes its default.
	ChatOverhead ChatOverhead
	// Stickiness sets how an assembly follows the previous one of its
	// conversation (same session, user, template and format): the margin learned
	// trust and freshness must cross to change what was kept, the slack a
	// growing history sheds down to, and the smallest prefix worth a cache
	// breakpoint. Each zero field takes its value from
	// truncate.DefaultStickiness(); docs/conversations.md explains them.
	Stickiness truncate.Stickiness
}

// Engine holds declared memory and assembles contexts from it. It is safe
// for concurrent use.
type Engine struct {
	cfg    Config
	limits declare.Config

	mu  sync.Mutex // serialises Declare and Forget
	seq int64
	// snap is the current store, sorted by ID. A published snapshot is never
	// mutated: writers build a new one, readers keep the one they loaded.
	snap atomic.Pointer[snapshot]
	log  storeLog // the changes of the last snapshots
	ixs  indexSet // an index of the store per request shape (turns.go)
	// fullOnly makes every assembly from scratch: the reference the
	// tests hold incremental assembly to.
	fullOnly bool
	indexed  atomic.Int64 // assemblies served from an index, for the tests
	heat     heatCells    // every block's render counters, not yet in rep
	last     outputMemo

	counts     *lru.Cache[countKey, int]
	plans      *lru.Cache[countKey, bpe.CutPlan]
	memo       blockMemo
	renders    renderMemo
	tokMu      sync.Mutex
	tokenizers map[string]Counter // by encoding, or a file's identity
	fileTags   map[string]byte    // count-cache tags of tokenizer files
	pool       sync.Pool          // *assemble.Assembler

	sources sourceEvents
	inputs  inputSet

	usageMu sync.Mutex       // guards usage
	usage   learned.UsageLog // reported usage of approximate encodings
	rep     *replica.Replica // the learned state, and the deltas not yet stored
	// declTrust keeps the declared trust of blocks whose trust the learned
	// state overrides; guarded by mu.
	declTrust map[string]float64
	decMu     sync.Mutex           // guards decoded
	decoded   map[string]decoded   // each conversation's previous decision, decoded
	idleMu    sync.Mutex           // guards lastUse
	lastUse   map[string]time.Time // sessions' last assembly, for idle TTLs
}

// New returns an Engine configured by cfg.
func New(cfg Config) (*Engine, error) {
	if cfg.Encoding == "" {
		cfg.Encoding = template.DefaultEncoding
	}
	if cfg.CacheSize == 0 {
		cfg.CacheSize = DefaultCacheSize
	}
	if cfg.MaxBlocks == 0 {
		cfg.MaxBlocks = DefaultMaxBlocks
	}
	for _, l := range [...]struct {
		name string
		v    int
	}{{"CacheSize", cfg.CacheSize}, {"MaxContentBytes", cfg.MaxContentBytes}, {"MaxBlocks", cfg.MaxBlocks}} {
		if l.v < 0 {
			return nil, fmt.Errorf("%w: Config.%s %d is negative (0 means the default)", ErrInvalid, l.name, l.v)
		}
	}
	if err := cfg.FeedbackLimits.Validate(); err != nil {
		return nil, fmt.Errorf("%w: Config.FeedbackLimits: %v", ErrInvalid, err)
	}
	if err := cfg.Stickiness.Validate(); err != nil {
		return nil, fmt.Errorf("%w: Config.%v", ErrInvalid, err)
	}
	counts, err := lru.New[countKey, int](cfg.CacheSize)
	if err != nil {
		return nil, fmt.Errorf("contextasm: %w", err)
	}
	memo, err := lru.New[assemble.MemoKey, int](cfg.CacheSize)
	if err != nil {
		return nil, fmt.Errorf("contextasm: %w", err)
	}
	// Renders are of kept blocks only, a few hundred per template.
	renders, err := lru.New[assemble.MemoKey, rendered](max(cfg.CacheSize/16, 256))
	if err != nil {
		return nil, fmt.Errorf("contextasm: %w", err)
	}
	// Cut plans are for partial blocks only, a few per template.
	plans, err := lru.New[countKey, bpe.CutPlan](max(cfg.CacheSize/64, 16))
	if err != nil {
		return nil, fmt.Errorf("contextasm: %w", err)
	}
	e := &Engine{
		memo:       blockMemo{memo},
		renders:    renderMemo{renders},
		plans:      plans,
		cfg:        cfg,
		limits:     declare.Config{MaxContentBytes: cfg.MaxContentBytes},
		counts:     counts,
		tokenizers: make(map[string]Counter, 2),
		declTrust:  make(map[string]float64),
		decoded:    make(map[string]decoded),
		lastUse:    make(map[string]time.Time),
	}
	e.usage = cfg.Usage.Clone()
	memos, renderMemos := e.memo, e.renders // not e: a pooled Assembler must not keep the Engine
	e.pool.New = func() any {
		return &assemble.Assembler{Scoring: cfg.Scoring, Stickiness: cfg.Stickiness, Memo: memos, Renders: renderMemos, SortedByID: true}
	}
	opts, err := cfg.StateOptions.normal()
	if err != nil {
		return nil, err
	}
	e.cfg.StateOptions = opts
	if cfg.Counter == nil {
		if err := e.preload(cfg.Encoding); err != nil {
			return nil, err
		}
	}
	e.rep = e.newReplica(opts)
	if err := e.rep.Start(); err != nil {
		return nil, err
	}
	return e, nil
}

// tokenizer returns the raw counter for an encoding.
func (e *Engine) tokenizer(encoding string) (Counter, error) {
	if e.cfg.Counter != nil {
		return e.cfg.Counter, nil
	}
	e.tokMu.Lock()
	defer e.tokMu.Unlock()
	if t, ok := e.tokenizers[encoding]; ok {
		return t, nil
	}
	t, err := bpe.Load(encoding)
	if err != nil {
		return nil, fmt.Errorf("contextasm: %w", err)
	}
	e.tokenizers[encoding] = t
	return t, nil
}

// Declare validates decls and adds them to the store, replacing blocks with
// the same request_id (a replaced block keeps its place in declaration
// order). It applies all of them or, on any problem, none: the error is a
// *declare.ValidationError listing every problem, each naming the
// declaration's request_id and field.
//
// With a Config.State that shares global blocks (learned.GlobalAnnouncer), the
// global-scoped declarations are announced to the other Engines; it fails
// with ErrStateQueueFull, applying nothing, when the queue is full.
func (e *Engine) Declare(decls ...declare.Declaration) error { return e.declare(decls, true) }

// declare is Declare; announce says whether global blocks are announced
// (not when they came from an announcement).
func (e *Engine) declare(decls []declare.Declaration, announce bool) error {
	var probs []declare.Problem
	seen := make(map[string]int, len(decls))
	for i := range decls {
		d := &decls[i]
		if err := e.limits.Validate(d); err != nil {
			var ve *declare.ValidationError
			errors.As(err, &ve)
			for _, p := range ve.Problems {
				if p.RequestID == "" {
					p.Field = fmt.Sprintf("declarations[%d].%s", i, p.Field)
				}
				probs = append(probs, p)
			}
			continue
		}
		if j, dup := seen[d.RequestID]; dup {
			probs = append(probs, declare.Problem{RequestID: d.RequestID, Field: "request_id",
				Message: fmt.Sprintf("declared twice in one call (declarations[%d] and [%d])", j, i)})
		}
		seen[d.RequestID] = i
	}
	if len(probs) > 0 {
		return &declare.ValidationError{Problems: probs}
	}

	e.mu.Lock()
	defer e.mu.Unlock()
	if err := checkToolCalls(e.current(), decls); err != nil {
		return err
	}
	if err := checkLinks(e.current(), decls); err != nil {
		return err
	}
	var global []declare.Declaration
	if announce && e.rep.Announces() {
		if global = globals(decls); len(global) > 0 && !e.rep.Room(len(global)) {
			return fmt.Errorf("%w: %d global blocks not announced", ErrStateQueueFull, len(global))
		}
	}
	ids := make([]string, len(decls))
	for i := range decls {
		ids[i] = decls[i].RequestID
	}
	trust := e.rep.TrustOf(ids)
	incoming := make([]*assemble.Block, len(decls))
	for i := range decls {
		incoming[i] = toBlock(&decls[i])
		// Learned trust outlives re-declaration: it is what feedback taught.
		if t, ok := trust[decls[i].RequestID]; ok {
			e.declTrust[decls[i].RequestID] = incoming[i].Trust
			incoming[i].Trust = t
		} else {
			delete(e.declTrust, decls[i].RequestID)
		}
		// Number new blocks in argument order before sorting by ID: that is
		// their declaration order (order "declared"). Replacements take
		// their old number below; the gaps they leave are harmless.
		incoming[i].Seq = e.seq + int64(i) + 1
	}
	e.seq += int64(len(decls))
	slices.SortFunc(incoming, func(a, b *assemble.Block) int { return cmp.Compare(a.ID, b.ID) })
	// A new set of chunks: readers keep the one they hold. A replaced
	// block keeps its declaration position.
	set := e.current().set
	added := 0
	for _, in := range incoming {
		if old, ok := set.get(in.ID); ok {
			in.Seq = old.Seq
		} else {
			added++
		}
	}
	if set.len()+added > e.cfg.MaxBlocks {
		return fmt.Errorf("%w: %d blocks would exceed Config.MaxBlocks (%d); forget some first", ErrStoreFull, set.len()+added, e.cfg.MaxBlocks)
	}
	set, changes := set.put(incoming)
	e.publish(set, changes)
	e.rep.Announce(global, nil)
	return nil
}

// Forget removes the blocks with the given request_ids; unknown ids are
// ignored. It returns how many blocks it removed. Forgotten global blocks
// are announced like declared ones (see Declare).
func (e *Engine) Forget(ids ...string) int { return e.forget(ids, true, false) }

// forget is Forget; announce says whether forgotten global blocks are
// announced, onlyGlobal whether only global blocks are forgotten.
func (e *Engine) forget(ids []string, announce, onlyGlobal bool) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	ids = slices.Clone(ids)
	slices.Sort(ids)
	ids = slices.Compact(ids)
	set := e.current().set
	if onlyGlobal {
		ids = slices.DeleteFunc(ids, func(id string) bool {
			b, ok := set.get(id)
			return ok && b.Scope != declare.ScopeGlobal
		})
	}
	set, changes := set.remove(ids)
	var global []string
	for _, c := range changes {
		if c.old.Scope == declare.ScopeGlobal {
			global = append(global, c.old.ID)
		}
	}
	if len(changes) > 0 {
		e.publish(set, changes)
	}
	if announce {
		e.rep.Announce(nil, global)
	}
	return len(changes)
}

// Len returns the number of blocks held.
func (e *Engine) Len() int { return e.current().set.len() }

func toBlock(d *declare.Declaration) *assemble.Block {
	b := &assemble.Block{
		ID:           d.RequestID,
		Type:         d.MemoryType,
		Content:      d.Content,
		SourceID:     d.Provenance.SourceID,
		Weight:       d.Weight(),
		Trust:        d.Trust(),
		Required:     d.IsRequired(),
		Scope:        d.Scope,
		SessionID:    d.SessionID,
		UserID:       d.UserID,
		ForAssistant: d.ForAssistant(),
		Role:         d.ChatRole(),
	}
	r := assemble.Rare{
		Roles:          slices.Clone(d.Roles),
		SourceLocation: d.Provenance.SourceLocation,
		URI:            d.Provenance.URI,
		ToolCalls:      slices.Clone(d.ToolCalls),
		ToolCallID:     d.ToolCallID,
		Group:          d.Group,
		Variants:       slices.Clone(d.Variants),
		Supersedes:     slices.Clone(d.Supersedes),
		Replaces:       slices.Clone(d.Replaces),
	}
	if d.MaxTokens != nil {
		r.MaxTokens = *d.MaxTokens
	}
	if d.Priority != nil {
		b.Priority, b.HasPriority = *d.Priority, true
	}
	if d.ValidUntil != nil {
		b.ValidUntil = d.ValidUntil.Time
	}
	if from, ok := d.StaleFrom(); ok {
		b.StaleFrom, b.StaleAfter = from, time.Duration(*d.StaleAfter)
	}
	if d.LastModified != nil {
		// A wall time only: a monotonic reading (time.Now's) is this
		// process's, and would order blocks differently from one loaded
		// elsewhere, and from the Index's keys (internal/assemble).
		b.LastModified = d.LastModified.Round(0)
	}
	if d.IdleTTL != nil {
		r.IdleTTL = time.Duration(*d.IdleTTL)
	}
	if d.BreakOnViolation {
		r.ViolationPatterns = slices.Clone(d.ViolationPatterns)
		r.Patterns = make([]*regexp.Regexp, len(d.ViolationPatterns))
		for i, p := range d.ViolationPatterns {
			r.Patterns[i] = regexp.MustCompile(p) // validated by Declare
		}
	}
	b.SetRare(r)
	b.Key = blockKey(b)
	// The bound holds for the content wherever it stands, so for its
	// rendering too: literals around it, word joiners inserted into it.
	b.MinTokens = bpe.LowerBound(d.Content)
	if r.MaxTokens > 0 {
		b.MinTokens = 0 // the content written is clipped: no bound from the whole
	}
	return b
}

// Request is one assembly's input.
type Request struct {
	// Template is the compiled template to fill. Required.
	Template *template.Template
	// Now is the instant expiry and staleness are judged at. Required: the
	// engine never reads the clock, so that a result can be reproduced.
	Now time.Time
	// SessionID and UserID select session- and user-scoped blocks.
	SessionID string
	UserID    string // empty: the request sees no user-scoped block
	// Roles are the roles the request holds; a block with roles needs one.
	Roles []string
	// ID names the assembly in its audit record. Empty means
	// "asm-" and the first 12 hex digits of the render hash.
	ID string
	// ListHidden is a trusted debugging mode: blocks excluded because they
	// belong to another session or user, need a role the request lacks or
	// are meant for the user only are listed by id in the events (and so
	// in the dump, the views and the audit record) instead of being
	// counted per reason in ExcludedCounts. Those ids are other tenants'
	// business: never set it for output a tenant may see.
	ListHidden bool
	// Format, when set, assembles for a chat API's request body instead
	// of one text: history blocks become messages (Result.Messages), and
	// the budget covers the whole conversation (see ChatOverhead).
	Format chat.Format
	// Fresh decides from scratch, as if the conversation had no previous
	// assembly; the decision it makes is the one the next call follows.
	// Without it, a request with a SessionID follows the decisions of the
	// previous assembly of the same session, user, template and format (see
	// Config.Stickiness), and Result.Prefix compares the two texts.
	Fresh bool
}

// checkIdentity refuses control characters in the request's session, user
// and roles: they are compared byte for byte and keyed on, and a role "a\x00b"
// has no business next to roles "a" and "b".
func (req *Request) checkIdentity() error {
	bad := func(s string) bool {
		return strings.IndexFunc(s, unicode.IsControl) >= 0
	}
	switch {
	case bad(req.SessionID):
		return fmt.Errorf("%w: Request.SessionID %q contains a control character", ErrInvalid, req.SessionID)
	case bad(req.UserID):
		return fmt.Errorf("%w: Request.UserID %q contains a control character", ErrInvalid, req.UserID)
	}
	for i, r := range req.Roles {
		if bad(r) {
			return fmt.Errorf("%w: Request.Roles[%d] %q contains a control character", ErrInvalid, i, r)
		}
	}
	return nil
}

// rolesKey encodes a role list for the warm-path key without ambiguity:
// each role is prefixed by its length, so no two lists share a key.
func rolesKey(roles []string) string {
	var b []byte
	for _, r := range roles {
		b = strconv.AppendInt(b, int64(len(r)), 10)
		b = append(b, ':')
		b = append(b, r...)
	}
	return string(b)
}

// Assemble builds the context for req from the blocks declared so far.
// It returns an error wrapping ErrBudgetTooSmall (a *truncate.RequiredError)
// when required blocks do not fit, and ErrInvalid for a bad request.
func (e *Engine) Assemble(ctx context.Context, req Request) (*Result, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if req.Template == nil {
		return nil, fmt.Errorf("%w: Request.Template is nil", ErrInvalid)
	}
	if req.Now.IsZero() {
		return nil, fmt.Errorf("%w: Request.Now is zero (the engine never reads the clock)", ErrInvalid)
	}
	if err := req.checkIdentity(); err != nil {
		return nil, err
	}
	tpl := req.Template
	tok, tag, err := e.counterFor(tpl)
	if err != nil {
		return nil, err
	}
	approx := e.approximation(tpl)
	// Sessions idle past their blocks' TTL end before this assembly sees
	// them. A failure to queue their deletion for the state store leaves
	// the decisions for a later call; this assembly goes on.
	_, _ = e.CollectIdle(req.Now)
	e.used(req.SessionID, req.Now)
	snap := e.current()
	var conv convState
	if req.SessionID != "" {
		conv = e.previousDecision(req.SessionID, req.UserID, conversationTemplate(tpl.Fingerprint(), req.Format))
	}
	key := outputKey{snap: snap, tpl: tpl, now: req.Now.UnixNano(), session: req.SessionID, user: req.UserID, roles: rolesKey(req.Roles), listHidden: req.ListHidden, format: req.Format,
		previous: conv.digest, fresh: req.Fresh}
	memo, ok := e.last.get(key)
	if !ok && req.SessionID != "" {
		memo, ok = e.last.repeat(key, conv.digest)
	}
	counted := false // the assembly's heat
	if !ok {
		var counter Counter = &cachedCounter{tok: tok, cache: e.counts, plans: e.plans, tag: tag}
		asm := e.pool.Get().(*assemble.Assembler)
		if approx != nil {
			counter = newApproxCounter(approx, counter)
			asm.Memo = approxMemo{m: e.memo, ratio: counter.(*approxCounter).ratio}
		}
		areq := assemble.Request{Now: req.Now, SessionID: req.SessionID, UserID: req.UserID, Roles: req.Roles, ListHidden: req.ListHidden,
			Chat: e.cfg.ChatOverhead.cost(req.Format), Previous: conv.previous, Fresh: req.Fresh, Record: req.SessionID != ""}
		out, heat, why, fast, err := e.assembleIndexed(req, areq, snap, asm, counter)
		if !fast {
			out, err = asm.AssembleRefs(tpl, snap.blocks(), areq, counter)
		}
		asm.Memo = e.memo
		e.pool.Put(asm)
		if err != nil {
			return nil, fmt.Errorf("contextasm: %w", err)
		}
		memo = &assembled{out: out, format: req.Format, why: why, heat: heat}
		counted = fast
		if memo.renderHash, err = renderHashOf(memo); err != nil {
			return nil, err
		}
		if out.Decision != nil {
			if memo.decision, err = json.Marshal(out.Decision); err != nil {
				return nil, fmt.Errorf("contextasm: %w", err)
			}
			memo.decisionDigest = digestOf(memo.decision)
		}
		e.last.put(key, memo)
	}
	if req.SessionID != "" {
		// A decision that cannot be kept (the state store's queue is full)
		// costs the next call its stickiness, not this call its result.
		_ = e.recordDecision(conv, req.Now, memo.out.Decision, memo.decision)
	}
	if !counted && (memo.heat == nil || !memo.heat.again()) {
		recordHeat(memo.explained().Sections, snap.blocks())
	}
	e.rep.MarkHeat()
	res := newResult(tpl, req, memo, e.stateEvents(e.sources.current()))
	res.told.inputs = e.inputs.current()
	res.StateVersion = snap.state
	res.Approximate = approx
	if e.cfg.Audit != nil {
		audit := res.Audit()
		audit.Log(ctx, e.cfg.Audit)
	}
	return res, nil
}

// countKey identifies a counted text: its SHA-256 (truncated to 128 bits,
// ample against accidental collisions) and the encoding it was counted in.
// A cut of the text to maxTokens is cached under the same hash with cut set
// to maxTokens+1, its value the length of the prefix kept.
type countKey struct {
	tag  byte
	cut  int
	hash [16]byte
}

func tagOf(encoding string, custom bool) byte {
	switch {
	case custom:
		return 0
	case encoding == bpe.CL100kBase:
		return 2
	}
	return 1
}

// cachedCounter puts the engine's count cache in front of a tokenizer.
type cachedCounter struct {
	tok   Counter
	cache *lru.Cache[countKey, int]
	plans *lru.Cache[countKey, bpe.CutPlan] // cut plans, by text hash and encoding
	tag   byte
}

func (c *cachedCounter) key(text string) countKey {
	sum := sha256.Sum256([]byte(text))
	k := countKey{tag: c.tag}
	copy(k.hash[:], sum[:16])
	return k
}

func (c *cachedCounter) Count(text string) int {
	if text == "" {
		return 0
	}
	k := c.key(text)
	if n, ok := c.cache.Get(k); ok {
		return n
	}
	n := c.tok.Count(text)
	c.cache.Add(k, n)
	return n
}

// Cut is cached too: a partial block is cut again by every assembly that
// keeps it, and cutting tokenizes the whole content.
// LineAdditive passes on the tokenizer's promise (see truncate.Counter).
func (c *cachedCounter) LineAdditive() bool {
	la, ok := c.tok.(truncate.LineAdditive)
	return ok && la.LineAdditive()
}

// LowerBounded passes on the tokenizer's promise (see truncate.Counter).
func (c *cachedCounter) LowerBounded() bool {
	lb, ok := c.tok.(truncate.LowerBounded)
	return ok && lb.LowerBounded()
}

// JoinDelta passes on to the tokenizer, when it counts joins (see
// truncate.JoinCounter): the final text's count from its parts' counts.
func (c *cachedCounter) JoinDelta(text string, cuts []int) (int, bool) {
	if jc, ok := c.tok.(truncate.JoinCounter); ok {
		return jc.JoinDelta(text, cuts)
	}
	return 0, false
}

// blockMemo is the Assembler's memo of rendered blocks' counts: an LRU
// keyed by block and section identity, so a warm assembly neither renders
// nor hashes unchanged blocks.
type blockMemo struct {
	cache *lru.Cache[assemble.MemoKey, int]
}

func (m blockMemo) Get(k assemble.MemoKey) (int, bool) { return m.cache.Get(k) }
func (m blockMemo) Add(k assemble.MemoKey, n int)      { m.cache.Add(k, n) }

// fieldLens returns the length of each field.
func fieldLens(fields []string) []int {
	n := make([]int, len(fields))
	for i, f := range fields {
		n[i] = len(f)
	}
	return n
}

// blockKey hashes everything a rendering of b reads, and what a message's
// count reads (role and tool calls), each field length-prefixed so that no two blocks hash alike by shifting bytes between
// fields. The encoding is not in it: the section key comes from the
// template's canonical JSON, which names the encoding, and an Engine counts
// with one Counter.
func blockKey(b *assemble.Block) [16]byte {
	h := sha256.New()
	fields := []string{b.ID, string(b.Type), b.SourceID, b.Content, string(b.Role), b.ToolCallID()}
	for _, tc := range b.ToolCalls() { // a message's count reads them
		fields = append(fields, tc.ID, tc.Name, tc.Arguments)
	}
	if b.MaxTokens() > 0 || len(b.Variants()) > 0 { // the forms it may be written in; keys of other blocks stay as they were
		fields = append(fields, "forms", strconv.Itoa(b.MaxTokens()))
		fields = append(fields, b.Variants()...)
	}
	lens := make([]byte, 8*(len(fields)+1)) // the number of fields, then each length
	for i, n := range append([]int{len(fields)}, fieldLens(fields)...) {
		for j := range 8 {
			lens[i*8+j] = byte(n >> (8 * j))
		}
	}
	h.Write(lens)
	for _, f := range fields {
		h.Write([]byte(f))
	}
	var k [16]byte
	copy(k[:], h.Sum(nil))
	return k
}

func (c *cachedCounter) Cut(text string, maxTokens int) string {
	if text == "" || maxTokens < 0 {
		return c.tok.Cut(text, maxTokens)
	}
	k := c.key(text)
	ck := k
	ck.cut = maxTokens + 1
	if n, ok := c.cache.Get(ck); ok && n <= len(text) {
		return text[:n]
	}
	var part string
	if plan, planner, ok := c.plan(text, k); ok {
		// A partial block is cut anew whenever the room left in its
		// section moves: with its content planned once, a new cut
		// tokenizes only the stretch after the last word that fits.
		part = planner.CutPlanned(plan, text, maxTokens)
	} else {
		part = c.tok.Cut(text, maxTokens)
	}
	if strings.HasPrefix(text, part) { // a Counter's contract; don't cache one that breaks it
		c.cache.Add(ck, len(part))
	}
	return part
}

// plan returns text's cut plan, making it on first use, when the tokenizer
// plans cuts.
func (c *cachedCounter) plan(text string, k countKey) (bpe.CutPlan, cutPlanner, bool) {
	planner, ok := c.tok.(cutPlanner)
	if !ok || c.plans == nil {
		return bpe.CutPlan{}, nil, false
	}
	if plan, ok := c.plans.Get(k); ok {
		return plan, planner, true
	}
	plan, ok := planner.PlanCuts(text)
	if ok {
		c.plans.Add(k, plan)
	}
	return plan, planner, ok
}

// cutPlanner is implemented by tokenizers that can plan the cuts of a text
// once (bpe.Tokenizer), so that cutting it again to another size tokenizes
// at most the stretch after the last word that fits.
type cutPlanner interface {
	PlanCuts(text string) (bpe.CutPlan, bool)
	CutPlanned(plan bpe.CutPlan, text string, maxTokens int) string
}
