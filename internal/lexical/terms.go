package lexical

import (
	"math"
	"slices"
	"sync"
)

// A Doc is a text analysed: its distinct terms with their frequencies, and
// its length. A Doc is immutable once made, so any number of indexes and
// goroutines may share it.
type Doc struct {
	terms  []uint64 // key<<16 | tf (saturated at 65535), ascending
	length uint32   // terms in the text, repeats counted (saturated)
}

// Analyze returns the Doc of text. It is safe for concurrent use.
func Analyze(text string) Doc {
	a := analyzers.Get().(*analyzer)
	defer analyzers.Put(a)
	a.keys = a.keys[:0]
	a.run(text)
	return a.doc()
}

// Tokens returns the terms of text as text, in the order they occur: what
// Analyze indexes, for tests and for people.
func Tokens(text string) []string {
	var out []string
	a := analyzer{strs: &out}
	a.run(text)
	return out
}

var analyzers = sync.Pool{New: func() any { return new(analyzer) }}

// doc makes a Doc of the keys analysed.
func (a *analyzer) doc() Doc {
	keys := sortKeys(a.keys, &a.tmp)
	d := Doc{length: uint32(min(len(keys), math.MaxUint32))}
	distinct := 0
	for i := range keys {
		if i == 0 || keys[i] != keys[i-1] {
			distinct++
		}
	}
	d.terms = make([]uint64, 0, distinct)
	for i := 0; i < len(keys); {
		j := i + 1
		for j < len(keys) && keys[j] == keys[i] {
			j++
		}
		d.terms = append(d.terms, keys[i]<<16|uint64(min(j-i, math.MaxUint16)))
		i = j
	}
	return d
}

// Len returns the number of terms in the Doc's text, repeats counted: the
// length BM25 normalises by.
func (d Doc) Len() int { return int(d.length) }

// Distinct returns the number of distinct terms.
func (d Doc) Distinct() int { return len(d.terms) }

// tf returns the frequency of the term of key in d, 0 when it has none.
func (d *Doc) tf(key uint64) uint16 {
	lo, hi := 0, len(d.terms)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if d.terms[m]>>16 < key {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo < len(d.terms) && d.terms[lo]>>16 == key {
		return uint16(d.terms[lo])
	}
	return 0
}

// sortKeys sorts keys ascending, with *tmp as scratch: a radix sort for
// many keys, so that analysing a long text stays linear.
func sortKeys(keys []uint64, tmp *[]uint64) []uint64 {
	if len(keys) <= 256 {
		slices.Sort(keys)
		return keys
	}
	if cap(*tmp) < len(keys) {
		*tmp = make([]uint64, len(keys))
	}
	src, dst := keys, (*tmp)[:len(keys)]
	for shift := 0; shift < 48; shift += 8 {
		var count [256]int
		for _, k := range src {
			count[k>>shift&0xff]++
		}
		pos := 0
		for i, c := range count {
			count[i] = pos
			pos += c
		}
		for _, k := range src {
			b := k >> shift & 0xff
			dst[count[b]] = k
			count[b]++
		}
		src, dst = dst, src
	}
	return src // six passes: back in keys
}
