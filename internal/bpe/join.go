package bpe

import "unicode/utf8"

// JoinDelta returns Count(text) less the sum of the counts of the parts
// text is cut into at cuts (ascending byte offsets into text, each at a
// character boundary): what joining the parts changes. A caller that knows
// each part's count gets the whole's count by adding it, while this
// tokenizes only around the cuts that need it. ok is always true (a
// wrapper that cannot pass the call on says false).
//
// Why it is exact: text splits into pieces the same way on either side of
// a sync point as it does whole (see unknown.go), and a sync point depends
// only on the two characters around it, so the same positions are sync
// points of a part and of the whole. Count(text) is then the sum of the
// counts of the stretches between sync points, and each part's count the
// sum over its own: they differ only in the stretches that hold a cut that
// is not a sync point. JoinDelta counts those stretches, whole and cut,
// and nothing else: a cut at a sync point (a line that starts cleanly)
// costs one look at two characters. TestJoinDelta and FuzzJoinDelta check
// it against counting the whole.
func (t *Tokenizer) JoinDelta(text string, cuts []int) (delta int, ok bool) {
	return t.joinDelta(text, cuts), true
}

func (t *Tokenizer) joinDelta(text string, cuts []int) int {
	if !utf8.ValidString(text) {
		// Rare (content is validated): count the whole and the parts.
		delta, from := t.Count(text), 0
		for _, c := range cuts {
			if c > from && c < len(text) {
				delta -= t.Count(text[from:c])
				from = c
			}
		}
		return delta - t.Count(text[from:])
	}
	cls := t.sp.cls
	sync := func(q int) bool {
		if q <= 0 || q >= len(text) {
			return true
		}
		pr, _ := utf8.DecodeLastRuneInString(text[:q])
		cr, _ := decode(text, q)
		return syncPoint(cls.of(pr), cls.of(cr), cr)
	}
	delta, done := 0, 0 // done: where the last stretch counted ends
	for k := 0; k < len(cuts); k++ {
		p := cuts[k]
		if p < done || sync(p) {
			continue
		}
		x := p // the stretch's start: the last sync point before p
		for x > done && !sync(x) {
			_, size := utf8.DecodeLastRuneInString(text[:x])
			x -= size
		}
		y := p // its end: the first sync point after p
		for !sync(y) {
			_, size := decode(text, y)
			y += size
		}
		delta += t.Count(text[x:y])
		from := x
		for ; k < len(cuts) && cuts[k] < y; k++ {
			if cuts[k] > from {
				delta -= t.Count(text[from:cuts[k]])
				from = cuts[k]
			}
		}
		k--
		delta -= t.Count(text[from:y])
		done = y
	}
	return delta
}
