package feedback

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
)

// ErrInvalidCitation is wrapped by the error about a citation without an
// id, or with an offset outside its response.
var ErrInvalidCitation = errors.New("feedback: invalid citation")

// EvaluateCited is [Evaluate] with citations reported apart from the
// response's text: a provider's structured citations (a document, a URL)
// that the host mapped back to request ids. Each of cited counts as a
// <memory_ref> tag at its Offset in response, read with the response's own
// tags in order of offset (a tag of the text first at equal offsets); a
// block is still listed once, at its first citation.
func EvaluateCited(blocks []Block, response string, cited []Tag, p Policy) (*Result, error) {
	return Limits{}.EvaluateCited(blocks, response, cited, p)
}

// EvaluateCited is [EvaluateCited] under l. A citation without an id, or
// with an offset outside the response, is an error wrapping
// ErrInvalidCitation, and nothing is evaluated.
func (l Limits) EvaluateCited(blocks []Block, response string, cited []Tag, p Policy) (*Result, error) {
	tags := ParseRefs(response)
	if len(cited) == 0 {
		return l.evaluate(blocks, response, tags, p)
	}
	for i, t := range cited {
		switch {
		case t.ID == "":
			return nil, fmt.Errorf("%w: cited[%d]: empty request id", ErrInvalidCitation, i)
		case t.Offset < 0 || t.Offset > len(response):
			return nil, fmt.Errorf("%w: cited[%d] (%q): offset %d outside the response's %d bytes", ErrInvalidCitation, i, t.ID, t.Offset, len(response))
		}
	}
	tags = append(tags, cited...)
	slices.SortStableFunc(tags, func(a, b Tag) int { return cmp.Compare(a.Offset, b.Offset) })
	return l.evaluate(blocks, response, tags, p)
}
