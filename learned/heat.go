package learned

// Heat counts what happened to one block across renders and responses.
type Heat struct {
	Included  int64 `json:"included"`   // renders that kept it whole
	Dropped   int64 `json:"dropped"`    // renders that dropped it (section cap or budget)
	Cut       int64 `json:"cut"`        // renders that kept only part of it
	Refs      int64 `json:"refs"`       // responses that cited it
	StartRefs int64 `json:"start_refs"` // responses that cited it first in their first third
}

// HotTruncated reports whether the block is cited often yet often cut or
// dropped: at least two citations, in at least half of the renders that
// included it (whole or cut), and cut or dropped in at least a quarter of
// the renders that considered it.
func (h Heat) HotTruncated() bool {
	shown := h.Included + h.Cut
	considered := shown + h.Dropped
	if h.Refs < 2 || shown == 0 || considered == 0 {
		return false
	}
	return 2*h.Refs >= shown && 4*(h.Cut+h.Dropped) >= considered
}
