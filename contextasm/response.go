package contextasm

import (
	"context"
	"errors"
	"fmt"

	"github.com/contextasm/contextasm/feedback"
	"github.com/contextasm/contextasm/outcome"
)

// Response is a model's response to an assembled context as a provider's
// SDK reports it: for FeedbackResponse, and for what instruments it
// (adapters/otel).
type Response struct {
	// Text is the response's text: its <memory_ref> tags are citations,
	// and violation patterns are matched against it, as in Feedback.
	Text string
	// Cited are the provider's structured citations (of a document, a
	// URL), each at its byte offset in Text, naming the block it points at
	// by its request_id or by its provenance uri (a URL citation names a
	// web page a block came from). They count as <memory_ref> tags there
	// (feedback.EvaluateCited); a name that is neither of a block the
	// result kept is an unknown ref.
	Cited []feedback.Tag
	// Usage is what the provider counted for the call; zero when unknown.
	Usage Usage
}

// Usage is what a provider counted for one call.
type Usage struct {
	// InputTokens are all the input tokens of the call, those read from
	// or written to a prompt cache included (OpenAI's prompt_tokens;
	// Anthropic's input_tokens plus cache_read_input_tokens plus
	// cache_creation_input_tokens).
	InputTokens int
	// CachedTokens are the input tokens read from the prompt cache: the
	// cache hits a stable prefix (Result.Prefix) is meant to earn.
	CachedTokens int
	// CacheWriteTokens are the input tokens written to the prompt cache.
	CacheWriteTokens int
}

// FeedbackResponse is Feedback for a response as a provider reports it:
// it learns from the text's <memory_ref> tags and from the structured
// citations in r.Cited, and, when res's encoding is approximate
// ("approx:...") or res is an Anthropic request with tools, reports
// r.Usage.InputTokens as ReportUsage does. The
// cache counts are not the Engine's business: they are there for
// instruments, and for the host.
//
// A citation without an id or outside the text is an error wrapping
// feedback.ErrInvalidCitation, and usage that does not add up (a negative
// count, more tokens cached or written than the input) one wrapping
// ErrInvalid; in both cases nothing is learned or reported.
func (e *Engine) FeedbackResponse(ctx context.Context, res *Result, r Response) (*feedback.Result, error) {
	u := r.Usage
	if u.InputTokens < 0 || u.CachedTokens < 0 || u.CacheWriteTokens < 0 || u.CachedTokens+u.CacheWriteTokens > u.InputTokens {
		return nil, fmt.Errorf("%w: Usage %+v: want counts of zero or more, the cached and written within the input", ErrInvalid, u)
	}
	fb, err := e.feedbackCited(ctx, res, r.Text, byRequestID(res, r.Cited))
	if fb == nil || u.InputTokens == 0 || (res.Approximate == nil && anthropicTools(res) == nil) {
		return fb, err
	}
	if uerr := e.ReportUsage(res, u.InputTokens); uerr != nil {
		return fb, errors.Join(err, uerr)
	}
	return fb, err
}

// byRequestID returns cited with each name that is the uri of a block res
// kept, and not a kept block's request_id, replaced by that block's
// request_id (the first such block, in section and rank order).
func byRequestID(res *Result, cited []feedback.Tag) []feedback.Tag {
	if len(cited) == 0 || res == nil {
		return cited
	}
	ids := make(map[string]bool)
	uris := make(map[string]string)
	for _, sec := range res.Sections() {
		for _, b := range sec.Blocks {
			if b.Status == outcome.StatusDropped {
				continue
			}
			ids[b.RequestID] = true
			if _, seen := uris[b.URI]; b.URI != "" && !seen {
				uris[b.URI] = b.RequestID
			}
		}
	}
	out := make([]feedback.Tag, len(cited))
	for i, t := range cited {
		if id, ok := uris[t.ID]; ok && !ids[t.ID] {
			t.ID = id
		}
		out[i] = t
	}
	return out
}
