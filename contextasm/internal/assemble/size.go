package assemble

import "unsafe"

const (
	entryBytes = int(unsafe.Sizeof(ixEntry{}))
	ptrBytes   = int(unsafe.Sizeof((*Block)(nil)))
)

// Bytes returns about how many bytes x holds beyond the blocks it ranks
// (the store's): each section's entries, lanes, tree and orders, its units
// and summaries as planned, the heat cells, the documents of relevance
// and the scratch of ranking. An Engine bounds the memory of its indexes
// by it. It costs O(sections).
func (x *Index) Bytes() int {
	const key = int(unsafe.Sizeof(rankKey{}))
	n := int(unsafe.Sizeof(*x)) + x.lex.Bytes() +
		(cap(x.keys)+cap(x.keysTmp))*key + (cap(x.perm)+cap(x.place)+cap(x.remapTo)+cap(x.histWas)+cap(x.skipWas))*4 + cap(x.permBase)*entryBytes +
		cap(x.lexOf)*int(unsafe.Sizeof(lexRef{})) + cap(x.lexKeep)*8 + mapBytes(len(x.lexBy), ptrBytes+4) +
		mapBytes(len(x.keyed), 16+4) + mapBytes(len(x.near), ptrBytes+4) + cap(x.noSection)*ptrBytes + cap(x.lastWritten)*ptrBytes
	for i := range x.secs {
		n += x.secs[i].bytes()
	}
	return n
}

// bytes is what s holds, for Index.Bytes.
func (s *ixSection) bytes() int {
	n := int(unsafe.Sizeof(*s)) + (cap(s.base)+cap(s.extra))*entryBytes +
		len(s.base)*int(unsafe.Sizeof(ixHeat{})) + len(s.extra)*(int(unsafe.Sizeof(ixHeat{}))+16) + // a cell each, made in slabs or alone
		cap(s.lanes)*int(unsafe.Sizeof(ixLane{})) + (cap(s.tree.v)+cap(s.byTime)+cap(s.history)+cap(s.movers))*4 +
		mapBytes(len(s.links), ptrBytes) + mapBytes(len(s.sums), ptrBytes)
	if u := s.units; u != nil {
		// keys: a list per group or call, of about two links each.
		n += int(unsafe.Sizeof(*u)) + cap(u.blocks)*ptrBytes + (cap(u.root)+cap(u.size)+cap(u.at))*4 + cap(u.broken) +
			cap(u.names)*16 + mapBytes(len(u.keys), int(unsafe.Sizeof(unitKey{}))+24) + len(u.blocks)*ptrBytes +
			cap(u.added)*ptrBytes + mapBytes(len(u.pos), 4) + (cap(u.head)+cap(u.next)+cap(u.brokenAt)+cap(u.reqRoots))*4
	}
	if p := s.plan; p != nil {
		// The replacements' members, and where each was found, are about
		// the blocks p.of maps.
		n += int(unsafe.Sizeof(*p)) + cap(p.all)*int(unsafe.Sizeof(planRepl{})) + len(p.of)*(ptrBytes+4) +
			(cap(p.order)+cap(p.pos))*4 + cap(p.gone)*(ptrBytes+5) + cap(p.sumList)*(ptrBytes+4) + mapBytes(len(p.of), ptrBytes+4) +
			mapBytes(len(p.named), 16) + mapBytes(len(p.summarised), 16+1)
	}
	return n
}

// mapBytes is about what a map of n entries of kv bytes each holds: a
// Swiss table's slots with their control bytes, at the load (between 7/16
// and 7/8) a table grown by inserts has on average.
func mapBytes(n, kv int) int { return n * (kv + 1) * 3 / 2 }
