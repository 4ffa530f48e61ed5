package view

import (
	"fmt"
	"strings"

	"github.com/contextasm/contextasm/outcome"
)

// cacheView is what the views say about a model provider's prompt cache:
// how much of the text the previous render of the same conversation
// shares, and where a cache may end. Both views lay out these sentences;
// neither computes its own.
type cacheView struct {
	Prefix      string   // "" when the dump has no prefix (a conversation's first render)
	Breakpoints []string // one per breakpoint, in text order
}

// prefixWhy words a prefix reason as the end of a sentence.
var prefixWhy = map[outcome.PrefixReason]string{
	outcome.PrefixAppended: "the previous text, then new blocks",
	outcome.PrefixAdded:    "a block the previous text did not have",
	outcome.PrefixRemoved:  "a block of the previous text is gone",
	outcome.PrefixChanged:  "the block is written differently (edited, or cut elsewhere)",
	outcome.PrefixMoved:    "the same blocks in another order",
}

// cacheOf explains d's prefix and breakpoints.
func cacheOf(d *outcome.Dump) cacheView {
	var c cacheView
	if p := d.Prefix; p != nil {
		if p.Reason == outcome.PrefixUnchanged {
			c.Prefix = fmt.Sprintf("all %d tokens are the previous render's: nothing changed", p.StableTokens)
		} else {
			why := prefixWhy[p.Reason]
			if why == "" {
				why = clean(string(p.Reason))
			}
			c.Prefix = fmt.Sprintf("the first %d of %d tokens (%d%%, %d bytes) are the previous render's; it parts in %s at %s: %s",
				p.StableTokens, d.TotalTokens, percent(p.StableTokens, d.TotalTokens), p.StableBytes,
				clean(p.FirstChangedSection), clean(p.FirstChangedBlock), why)
		}
	}
	for _, bp := range d.CacheBreakpoints {
		c.Breakpoints = append(c.Breakpoints, fmt.Sprintf("after %s: byte %d, %d tokens", clean(bp.Section), bp.Offset, bp.Tokens))
	}
	return c
}

// FirstDifference is where two rendered texts part.
type FirstDifference struct {
	// Byte is the offset of the first byte that differs (the length of
	// the shorter text when one text begins with the other).
	Byte int `json:"byte"`
	// Line and Column locate it, from 1, Column in bytes.
	Line   int `json:"line"`
	Column int `json:"column"` // from 1, in bytes
	// Section and Block name where it falls in B's text: the block whose
	// span holds it, or the section whose lines do; empty between them
	// (the header line, or a join).
	Section string `json:"section,omitempty"`
	Block   string `json:"block,omitempty"` // the block's request_id
}

// firstDifference finds where a's and b's texts part; nil when they are
// the same.
func firstDifference(a, b *outcome.Dump) *FirstDifference {
	n := 0
	for n < len(a.Text) && n < len(b.Text) && a.Text[n] == b.Text[n] {
		n++
	}
	if n == len(a.Text) && n == len(b.Text) {
		return nil
	}
	f := &FirstDifference{Byte: n, Line: 1 + strings.Count(b.Text[:min(n, len(b.Text))], "\n")}
	f.Column = n - strings.LastIndexByte(b.Text[:min(n, len(b.Text))], '\n')
	// The block whose span holds the byte, else the last block before it.
	for _, s := range b.Sections {
		for _, blk := range s.Blocks {
			if blk.Length == 0 {
				continue
			}
			if blk.Offset <= n && n <= blk.Offset+blk.Length {
				f.Section, f.Block = s.Name, blk.RequestID
				return f
			}
		}
	}
	return f
}
