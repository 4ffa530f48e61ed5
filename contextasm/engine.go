package contextasm

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/contextasm/contextasm/contextasm/internal/grouped"

	"github.com/contextasm/contextasm/contextasm/internal/assemble"
	"github.com/contextasm/contextasm/contextasm/internal/replica"
	"github.com/contextasm/contextasm/contextasm/internal/tokens"
	"github.com/contextasm/contextasm/contextasm/internal/toolsel"
	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/feedback"
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

// DefaultMaxIndexes is the number of request shapes an Engine keeps an
// incremental index for when Config.MaxIndexes is zero. Memory
// (DefaultIndexBytes) is usually the bound that holds first.
const DefaultMaxIndexes = 4096

// DefaultIndexBytes is what the incremental indexes of an Engine may hold
// together when Config.IndexBytes is zero: 256 MiB, about a thousand
// conversations on a store of 2,000 blocks, fifteen on 200,000
// (docs/performance.md).
const DefaultIndexBytes = 256 << 20

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
	// MaxIndexes bounds the request shapes (template, session, user and
	// roles) the Engine keeps an incremental index of the store for
	// (DefaultMaxIndexes); past it the least recently used one goes, and
	// its shape's next assembly builds it again.
	MaxIndexes int
	// IndexBytes bounds the memory those indexes hold together, in bytes
	// (DefaultIndexBytes): past it the least recently used ones go, all
	// but the one just used. An index holds about 15 bytes per block of
	// the store, and about 100 with the documents relevance queries need
	// (docs/performance.md).
	IndexBytes int
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
	// CheckBodies holds every request body of a chat format to the
	// message rules its API documents (the checker the tests use, which
	// shares no code with the writer) before Assemble returns it: a body
	// that breaks one fails the assembly with an error wrapping
	// chat.ErrInvalid and naming the rule, rather than reaching the
	// provider. Off by default (it decodes each body once more); a body
	// without messages passes, for hosts that append the user's turn.
	CheckBodies bool
}

// Engine holds declared memory and assembles contexts from it. It is safe
// for concurrent use.
//
// It is a façade: the store of blocks is its own (Declare, Forget and the
// snapshots they publish); counting tokens is package tokens', the
// learned state package replica's, the decision package assemble's.
type Engine struct {
	cfg    Config
	limits declare.Config

	// The store of blocks.
	mu  sync.Mutex // serialises Declare, Forget and trust refreshes
	seq int64
	// snap is the current store, sorted by ID. A published snapshot is never
	// mutated: writers build a new one, readers keep the one they loaded.
	snap atomic.Pointer[snapshot]
	log  storeLog // the changes of the last snapshots
	// declTrust keeps the declared trust of blocks whose trust the learned
	// state overrides; guarded by mu.
	declTrust map[string]float64
	bySession sessionBlocks     // the session-scoped blocks by session; guarded by mu
	calls     declare.CallIndex // the store's tool calls and results (checkToolCalls); guarded by mu
	links     linkRefs          // what the store's blocks may name in supersedes and replaces (checkLinks); guarded by mu

	// The parts.
	tokens  *tokens.Counts   // token counting, its caches, the usage learned
	rep     *replica.Replica // the learned state and its store
	heat    heatCells        // every block's render counters, not yet in rep
	pool    sync.Pool        // *assemble.Assembler
	memo    blockMemo        // the assemblers' counts of rendered blocks
	renders renderMemo       // … and their texts
	ixs     indexSet         // an index of the store per request shape (turns.go)
	last    outputMemo       // the last assembly, for a warm repeat
	convs   decisionCache    // each conversation's previous decision, decoded
	sources sourceEvents
	inputs  inputSet
	idleMu  sync.Mutex           // guards lastUse
	lastUse map[string]time.Time // sessions' last assembly, for idle TTLs
	// toolStore holds the tool definitions (tools.go).
	toolStore toolStore

	// fullOnly makes every assembly from scratch: the reference the
	// tests hold incremental assembly to.
	fullOnly bool
	indexed  atomic.Int64 // assemblies served from an index, for the tests
	donated  atomic.Int64 // indexes built with another's documents (donor), for the tests
	adopted  atomic.Int64 // new sessions' indexes that took over an ended one's (adopt), for the tests
}

// New returns an Engine configured by cfg.
func New(cfg Config) (*Engine, error) {
	cfg, err := cfg.normal()
	if err != nil {
		return nil, err
	}
	tok, err := tokens.New(tokens.Config{Counter: cfg.Counter, CacheSize: cfg.CacheSize, Usage: cfg.Usage, Invalid: ErrInvalid})
	if err != nil {
		return nil, err
	}
	memo, err := grouped.New[assemble.MemoKey, [16]byte, int](cfg.CacheSize, blockOf)
	if err != nil {
		return nil, fmt.Errorf("contextasm: %w", err)
	}
	// Renders are of kept blocks only, a few hundred per template.
	renders, err := grouped.New[assemble.MemoKey, [16]byte, rendered](max(cfg.CacheSize/16, 256), blockOf)
	if err != nil {
		return nil, fmt.Errorf("contextasm: %w", err)
	}
	e := &Engine{
		cfg:       cfg,
		limits:    declare.Config{MaxContentBytes: cfg.MaxContentBytes},
		declTrust: make(map[string]float64),
		tokens:    tok,
		memo:      blockMemo{memo},
		renders:   renderMemo{renders},
		convs:     decisionCache{m: make(map[string]decoded)},
		lastUse:   make(map[string]time.Time),
	}
	memos, renderMemos := e.memo, e.renders // not e: a pooled Assembler must not keep the Engine
	e.pool.New = func() any {
		return &assemble.Assembler{Scoring: cfg.Scoring, Stickiness: cfg.Stickiness, Memo: memos, Renders: renderMemos, SortedByID: true}
	}
	if err := e.tokens.Preload(cfg.Encoding); err != nil {
		return nil, err
	}
	e.rep = e.newReplica(cfg.StateOptions)
	if err := e.rep.Start(); err != nil {
		return nil, err
	}
	return e, nil
}

// normal returns cfg with its defaults filled in, or the first field that
// is invalid.
func (cfg Config) normal() (Config, error) {
	if cfg.Encoding == "" {
		cfg.Encoding = template.DefaultEncoding
	}
	if cfg.CacheSize == 0 {
		cfg.CacheSize = DefaultCacheSize
	}
	if cfg.MaxBlocks == 0 {
		cfg.MaxBlocks = DefaultMaxBlocks
	}
	if cfg.MaxIndexes == 0 {
		cfg.MaxIndexes = DefaultMaxIndexes
	}
	if cfg.IndexBytes == 0 {
		cfg.IndexBytes = DefaultIndexBytes
	}
	for _, l := range [...]struct {
		name string
		v    int
	}{{"CacheSize", cfg.CacheSize}, {"MaxContentBytes", cfg.MaxContentBytes}, {"MaxBlocks", cfg.MaxBlocks}, {"MaxIndexes", cfg.MaxIndexes}, {"IndexBytes", cfg.IndexBytes}} {
		if l.v < 0 {
			return cfg, fmt.Errorf("%w: Config.%s %d is negative (0 means the default)", ErrInvalid, l.name, l.v)
		}
	}
	if err := cfg.FeedbackLimits.Validate(); err != nil {
		return cfg, fmt.Errorf("%w: Config.FeedbackLimits: %v", ErrInvalid, err)
	}
	if err := cfg.Stickiness.Validate(); err != nil {
		return cfg, fmt.Errorf("%w: Config.%v", ErrInvalid, err)
	}
	opts, err := cfg.StateOptions.normal()
	if err != nil {
		return cfg, err
	}
	cfg.StateOptions = opts
	return cfg, nil
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
	if err := e.validate(decls); err != nil {
		return err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := checkToolCalls(&e.calls, decls); err != nil {
		return err
	}
	if err := checkLinks(e.current(), &e.links, decls); err != nil {
		return err
	}
	var global []declare.Declaration
	if announce && e.rep.Announces() {
		if global = globals(decls); len(global) > 0 && !e.rep.Room(len(global)) {
			return fmt.Errorf("%w: %d global blocks not announced", ErrStateQueueFull, len(global))
		}
	}
	incoming := e.blocksOf(decls)
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
	e.links.add(set, decls)
	e.publish(set, changes)
	e.rep.Announce(global, nil)
	return nil
}

// Forget removes the blocks with the given request_ids; unknown ids are
// ignored. It returns how many blocks it removed; their heat is deleted
// (in the store too). Forgotten global blocks
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
		gone := make([]string, len(changes))
		for i, c := range changes {
			gone[i] = c.old.ID
		}
		e.dropHeat(gone)
	}
	if announce {
		e.rep.Announce(nil, global)
	}
	return len(changes)
}

// Len returns the number of blocks held.
func (e *Engine) Len() int { return e.current().set.len() }

// Assemble builds the context for req from the blocks declared so far.
// It returns an error wrapping ErrBudgetTooSmall (a *truncate.RequiredError)
// when required blocks do not fit, and ErrInvalid for a bad request.
//
// With Request.Fallback or Request.Accept, it tries the templates in
// order (fallback.go).
func (e *Engine) Assemble(ctx context.Context, req Request) (*Result, error) {
	if len(req.Fallback) > 0 || len(req.Accept) > 0 {
		return e.assembleChain(ctx, req)
	}
	return e.assembleOne(ctx, req, nil)
}

// assembleOne is Assemble with one template; choice, when set, is the
// fallback chain's, for the result and its audit record.
func (e *Engine) assembleOne(ctx context.Context, req Request, choice *TemplateChoice) (*Result, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := req.check(e.limits.MaxContent()); err != nil {
		return nil, err
	}
	tpl := req.Template
	counter, approx, err := e.tokens.For(tpl)
	if err != nil {
		return nil, err
	}
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
	q := queryOf(&req)
	tools := e.toolsFor(&req)
	key := outputKey{tools: tools, snap: snap, tpl: tpl, now: req.Now.UnixNano(), session: req.SessionID, user: req.UserID, roles: rolesKey(req.Roles), listHidden: req.ListHidden, format: req.Format,
		previous: conv.digest, fresh: req.Fresh, query: q.key, newestTurn: q.newestTurn}
	memo, ok := e.last.get(key)
	if !ok && req.SessionID != "" {
		memo, ok = e.last.repeat(key, conv.digest)
	}
	counted := false // the assembly's heat
	if !ok {
		if memo, counted, err = e.assembleAnew(req, snap, conv, q, counter, tools); err != nil {
			return nil, err
		}
		e.last.put(key, memo)
	}
	if req.SessionID != "" {
		// A decision that cannot be kept (the state store's queue is full)
		// costs the next call its stickiness, not this call its result.
		_ = e.recordDecision(conv, req.Now, memo.out.Decision, memo.decision)
	}
	e.countHeat(memo, counted, snap)
	e.rep.MarkHeat()
	res := newResult(tpl, req, memo, withToolEvents(memo.out, e.stateEvents(e.sources.current())))
	withTools(res, memo.out)
	res.told.inputs = e.inputs.current()
	res.StateVersion = snap.state
	res.Approximate = approx
	res.Template = choice
	if e.cfg.Audit != nil {
		audit := res.Audit()
		audit.Log(ctx, e.cfg.Audit)
	}
	return res, nil
}

// assembleAnew assembles req from snap, incrementally from its shape's
// index when it can, else from scratch; counted says whether the
// assembly's heat was counted (an incremental one counts its own).
func (e *Engine) assembleAnew(req Request, snap *snapshot, conv convState, q query, counter Counter, tools *toolsel.Set) (memo *assembled, counted bool, err error) {
	asm := e.pool.Get().(*assemble.Assembler)
	if a, ok := counter.(*tokens.Approx); ok {
		asm.Memo = approxMemo{m: e.memo, ratio: a.Ratio()}
	}
	areq := assemble.Request{Now: req.Now, SessionID: req.SessionID, UserID: req.UserID, Roles: req.Roles, ListHidden: req.ListHidden,
		Chat: e.cfg.ChatOverhead.cost(req.Format), Previous: conv.previous, Fresh: req.Fresh, Record: req.SessionID != "",
		Query: q.q, Relevance: req.Relevance, QueryKey: q.key, NewestTurnQuery: q.newestTurn, Tools: e.assembleTools(tools, &req, conv)}
	out, heat, why, fast, err := e.assembleIndexed(req, areq, snap, asm, counter)
	if !fast {
		out, err = asm.AssembleRefs(req.Template, snap.blocks(), areq, counter)
	}
	asm.Memo = e.memo
	e.pool.Put(asm)
	if err != nil {
		return nil, false, fmt.Errorf("contextasm: %w", err)
	}
	memo = &assembled{out: out, format: req.Format, why: why, heat: heat, query: &queried{q: q, counter: counter}}
	if why != nil {
		memo.snap = snap // its explanation holds it already
	}
	if q.text != "" {
		memo.queryInfo() // the request's own query is counted now, once
	}
	if memo.renderHash, err = renderHashOf(memo, e.cfg.CheckBodies); err != nil {
		return nil, false, err
	}
	if out.Decision != nil {
		if memo.decision, err = appendRecord(make([]byte, 0, recordSize(out.Decision)), recordOf(out)); err != nil {
			return nil, false, fmt.Errorf("contextasm: %w", err)
		}
		memo.decisionDigest = digestOf(memo.decision)
	}
	return memo, fast, nil
}
