package outcome

// Prefix says how much of a rendered text is byte-identical to the text of
// the previous assembly of the same conversation (session, user and
// template), which is what a model provider's prompt cache can reuse.
type Prefix struct {
	// StableBytes is the length of the shared prefix, in bytes, up to the
	// end of the last block both texts begin alike with (and the byte
	// after it, which ends its line in a section with the default
	// separator): the header line at least.
	StableBytes int `json:"stable_bytes"`
	// StableTokens is the token count of those bytes.
	StableTokens int `json:"stable_tokens"`
	// FirstChangedSection names the section where the texts part; empty
	// when nothing changed.
	FirstChangedSection string `json:"first_changed_section,omitempty"`
	// FirstChangedBlock is the request_id of the block where they part:
	// the new block, or the one that is gone (PrefixRemoved).
	FirstChangedBlock string `json:"first_changed_block,omitempty"`
	// Reason says why they part.
	Reason PrefixReason `json:"reason"`
}

// PrefixReason says why a text parts from the previous one where it does.
type PrefixReason string

// The prefix reasons.
const (
	PrefixUnchanged PrefixReason = "unchanged" // the same text
	PrefixAppended  PrefixReason = "appended"  // the previous text, then more blocks
	PrefixAdded     PrefixReason = "added"     // a block that was not in the previous text
	PrefixRemoved   PrefixReason = "removed"   // a block of the previous text is gone
	PrefixChanged   PrefixReason = "changed"   // the same block, written differently (edited, cut anew)
	PrefixMoved     PrefixReason = "moved"     // the same blocks in another order
)

// Breakpoint is a place in the text where a prompt cache may end: the end
// of a section that did not change since the previous assembly of the
// conversation (on its first assembly, of every section).
type Breakpoint struct {
	// Section is the section that ends here.
	Section string `json:"section"`
	// Offset is the byte offset in the text just after the section (and
	// the newline that ends it): split the text there.
	Offset int `json:"offset"`
	// Tokens is the token count of the text before Offset.
	Tokens int `json:"tokens"`
}
