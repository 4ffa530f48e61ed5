package tokens

import (
	"crypto/sha256"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/contextasm/contextasm/contextasm/internal/grouped"

	"github.com/contextasm/contextasm/contextasm/internal/tokload"
	"github.com/contextasm/contextasm/internal/bpe"
	"github.com/contextasm/contextasm/internal/tokfile"
	"github.com/contextasm/contextasm/learned"
	"github.com/contextasm/contextasm/outcome"
	"github.com/contextasm/contextasm/template"
	"github.com/contextasm/contextasm/truncate"
)

// Config configures Counts.
type Config struct {
	// Counter, when set, counts for every template instead of the
	// built-in tokenizers (contextasm.Config.Counter).
	Counter truncate.Counter
	// CacheSize bounds the count cache, in entries; the cut plans get a
	// 64th of it, at least 16. It must be positive.
	CacheSize int
	// Usage seeds what approximate encodings learned; Counts keeps a copy.
	Usage learned.UsageLog
	// Invalid is wrapped by the errors about bad input
	// (contextasm.ErrInvalid).
	Invalid error
}

// Counts is an Engine's token counting, safe for concurrent use: the
// tokenizers it loaded (built-in encodings, tokenizer files), the caches
// in front of them, and the usage approximate encodings learn from.
type Counts struct {
	counter *cached // Config.Counter, cached; nil without one
	invalid error

	counts *grouped.Cache[key, [16]byte, int]         // the cuts indexed by their text
	plans  *grouped.Cache[key, [16]byte, bpe.CutPlan] // indexed by their text

	mu         sync.Mutex         // guards tokenizers and fileTags
	tokenizers map[string]*cached // by encoding, or a file's identity
	fileTags   map[string]byte    // count-cache tags of tokenizer files

	usageMu sync.Mutex // guards usage
	usage   learned.UsageLog
}

// New returns Counts configured by cfg.
func New(cfg Config) (*Counts, error) {
	counts, err := grouped.New[key, [16]byte, int](cfg.CacheSize, cutOf)
	if err != nil {
		return nil, fmt.Errorf("contextasm: %w", err)
	}
	// Cut plans are for partial blocks only, a few per template.
	plans, err := grouped.New[key, [16]byte, bpe.CutPlan](max(cfg.CacheSize/64, 16), textOf)
	if err != nil {
		return nil, fmt.Errorf("contextasm: %w", err)
	}
	c := &Counts{invalid: cfg.Invalid, counts: counts, plans: plans,
		tokenizers: make(map[string]*cached, 2), usage: cfg.Usage.Clone()}
	if cfg.Counter != nil {
		c.counter = c.cache(cfg.Counter, tagCustom)
	}
	return c, nil
}

// Count-cache tags: the encoding a count was made in. Tokenizer files
// take 3 and up, one per identity an Engine counted with.
const (
	tagCustom = 0
	tagO200k  = 1
	tagCL100k = 2
	tagFiles  = 3
)

// tagOf returns the cache tag of a built-in encoding.
func tagOf(encoding string) byte {
	if encoding == bpe.CL100kBase {
		return tagCL100k
	}
	return tagO200k
}

// cache puts the count caches in front of tok, under tag.
func (c *Counts) cache(tok truncate.Counter, tag byte) *cached {
	return &cached{tok: tok, cache: c.counts, plans: c.plans, tag: tag}
}

// builtin returns the cached counter of a built-in encoding, loading it on
// first use.
func (c *Counts) builtin(encoding string) (*cached, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t, ok := c.tokenizers[encoding]; ok {
		return t, nil
	}
	t, err := bpe.Load(encoding)
	if err != nil {
		return nil, fmt.Errorf("contextasm: %w", err)
	}
	cc := c.cache(t, tagOf(encoding))
	c.tokenizers[encoding] = cc
	return cc, nil
}

// file returns the cached counter of a tokenizer file (shared
// process-wide by identity), giving it a cache tag of its own.
func (c *Counts) file(path, id string) (*cached, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t, ok := c.tokenizers[id]; ok {
		return t, nil
	}
	if len(c.fileTags) >= 256-tagFiles {
		return nil, fmt.Errorf("%w: more than %d tokenizer files in one Engine", c.invalid, 256-tagFiles)
	}
	t, err := tokload.LoadAs(path, id)
	if err != nil {
		return nil, fmt.Errorf("contextasm: %w", err)
	}
	if c.fileTags == nil {
		c.fileTags = make(map[string]byte)
	}
	c.fileTags[id] = byte(tagFiles + len(c.fileTags))
	cc := c.cache(t, c.fileTags[id])
	c.tokenizers[id] = cc
	return cc, nil
}

// Preload loads an Engine's encoding: a built-in encoding, o200k_base for
// an approximate one, or a tokenizer file (a path relative to the working
// directory). It does nothing with a Config.Counter.
func (c *Counts) Preload(enc string) error {
	if c.counter != nil {
		return nil
	}
	switch {
	case strings.HasPrefix(enc, "sha256:"):
		return nil // a template's file, by identity: loaded on first use
	case strings.HasPrefix(enc, template.ApproxPrefix):
		_, err := c.builtin(bpe.O200kBase)
		return err
	case slices.Contains(template.Encodings(), enc):
		_, err := c.builtin(enc)
		return err
	}
	id, err := tokfile.Identity(enc)
	if err != nil {
		return fmt.Errorf("contextasm: Config.Encoding %q is no built-in encoding: %w", enc, err)
	}
	_, err = c.file(enc, id)
	return err
}

// For returns the counter an assembly of tpl counts with, its counts
// cached: Config.Counter when set; the tokenizer file the template names;
// for an approximate encoding, o200k_base scaled by the margin learned so
// far (an *Approx; the Approximation says how); else the built-in
// encoding.
func (c *Counts) For(tpl *template.Template) (truncate.Counter, *outcome.Approximation, error) {
	switch {
	case c.counter != nil:
		return c.counter, nil, nil
	case tpl.TokenizerFile() != "":
		t, err := c.file(tpl.TokenizerFile(), tpl.Encoding())
		if err != nil {
			return nil, nil, err
		}
		return t, nil, nil
	case tpl.Approximate():
		return c.approximate(strings.TrimPrefix(tpl.Encoding(), template.ApproxPrefix))
	}
	t, err := c.builtin(tpl.Encoding())
	if err != nil {
		return nil, nil, err
	}
	return t, nil, nil
}

// approximate returns the approximate counter of a model family, as of the
// usage learned so far.
func (c *Counts) approximate(family string) (truncate.Counter, *outcome.Approximation, error) {
	o200k, err := c.builtin(bpe.O200kBase)
	if err != nil {
		return nil, nil, err
	}
	c.usageMu.Lock()
	ratio, n := c.usage.Ratio(family)
	c.usageMu.Unlock()
	a := approximationOf(family, ratio, n)
	return newApprox(a, o200k), a, nil
}

// Count returns the number of tokens of text in an encoding, as an
// assembly counts: a built-in encoding, an approximate one (with the
// Approximation it counted by), or a tokenizer file (a path relative to
// the working directory).
func (c *Counts) Count(encoding, text string) (int, *outcome.Approximation, error) {
	var (
		tok    truncate.Counter
		err    error
		approx *outcome.Approximation
	)
	switch {
	case c.counter != nil:
		tok = c.counter
	case strings.HasPrefix(encoding, template.ApproxPrefix):
		tok, approx, err = c.approximate(strings.TrimPrefix(encoding, template.ApproxPrefix))
	case slices.Contains(template.Encodings(), encoding):
		tok, err = c.builtin(encoding)
	default:
		var id string
		if id, err = tokfile.Identity(encoding); err == nil {
			tok, err = c.file(encoding, id)
		}
	}
	if err != nil {
		return 0, nil, err
	}
	return tok.Count(text), approx, nil
}

// Report teaches the approximate encoding named encoding ("approx:NAME")
// that the provider counted inputTokens for text.
func (c *Counts) Report(encoding, text string, inputTokens int) error {
	family, ok := strings.CutPrefix(encoding, template.ApproxPrefix)
	if !ok {
		return fmt.Errorf("%w: ReportUsage: encoding %q is exact, not %sNAME", c.invalid, encoding, template.ApproxPrefix)
	}
	o200k, err := c.builtin(bpe.O200kBase)
	if err != nil {
		return err
	}
	n := o200k.Count(text)
	c.usageMu.Lock()
	err = c.usage.Observe(family, n, inputTokens)
	c.usageMu.Unlock()
	if err != nil {
		return fmt.Errorf("%w: %v", c.invalid, err)
	}
	return nil
}

// Observe records a report under key of the usage log, for a margin
// other than an approximate encoding's (the tools' count): counted is
// the Engine's count, reported the provider's.
func (c *Counts) Observe(key string, counted, reported int) error {
	c.usageMu.Lock()
	defer c.usageMu.Unlock()
	if err := c.usage.Observe(key, counted, reported); err != nil {
		return fmt.Errorf("%w: %v", c.invalid, err)
	}
	return nil
}

// Ratio returns the margin learned under key (learned.UsageLog.Ratio).
func (c *Counts) Ratio(key string) (float64, int) {
	c.usageMu.Lock()
	defer c.usageMu.Unlock()
	return c.usage.Ratio(key)
}

// Usage returns a copy of the usage learned (Config.Usage and every
// report since).
func (c *Counts) Usage() learned.UsageLog {
	c.usageMu.Lock()
	defer c.usageMu.Unlock()
	return c.usage.Clone()
}

// Forget drops what is cached of texts (the blocks an ended session
// released): their whole counts in every encoding counted with, their
// cuts and their cut plans, so that a churn of sessions leaves the caches
// as it found them. An equal text declared again is counted again.
func (c *Counts) Forget(texts []string) {
	if len(texts) == 0 {
		return
	}
	tags := c.tags()
	for _, t := range texts {
		sum := sha256.Sum256([]byte(t))
		h := [16]byte(sum[:16])
		c.plans.RemoveGroup(h)
		c.counts.RemoveGroup(h)
		for _, tag := range tags {
			c.counts.Remove(key{tag: tag, hash: h})
		}
	}
}

// tags returns the count-cache tags of the counters loaded.
func (c *Counts) tags() []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	var tags []byte
	if c.counter != nil {
		tags = append(tags, c.counter.tag)
	}
	for _, t := range c.tokenizers {
		if !slices.Contains(tags, t.tag) {
			tags = append(tags, t.tag)
		}
	}
	return tags
}

// cutOf groups the count cache's cuts by their text (whole counts are in
// no group, found by their key: Forget removes them one by one).
func cutOf(k key) ([16]byte, bool) { return k.hash, k.cut > 0 }

// textOf groups cut plans by their text.
func textOf(k key) ([16]byte, bool) { return k.hash, true }

// CutPlans returns the number of cut plans cached.
func (c *Counts) CutPlans() int { return c.plans.Len() }

// Cached returns the number of counts and cuts cached.
func (c *Counts) Cached() int { return c.counts.Len() }

// Holds reports whether the whole count of text in encoding (a built-in
// one, loaded) is cached.
func (c *Counts) Holds(encoding, text string) bool {
	c.mu.Lock()
	t, ok := c.tokenizers[encoding]
	c.mu.Unlock()
	if !ok {
		return false
	}
	_, ok = c.counts.Peek(t.key(text))
	return ok
}
