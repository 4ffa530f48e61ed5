package assemble_test

import (
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/contextasm/contextasm/chat"
	"github.com/contextasm/contextasm/contextasm/internal/assemble"
	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/internal/bpe"
	"github.com/contextasm/contextasm/internal/lexical"
	"github.com/contextasm/contextasm/outcome"
	"github.com/contextasm/contextasm/template"
	"github.com/contextasm/contextasm/truncate"
)

// boundedCounter promises lower bounds (LowerBounded) whatever the blocks'
// MinTokens are: an incremental assembly must agree with a full one on
// any bounds, sound or not, since both read the same ones.
type boundedCounter struct{ *memoCounter }

func (boundedCounter) LowerBounded() bool { return true }

// store is a block store as package contextasm keeps one: blocks by
// pointer, sorted by request_id, each with its heat cell.
type store struct {
	blocks []*assemble.Block
	heat   map[string]*assemble.Heat
	seq    int64
}

// put adds b, or replaces the block of its id, and returns the block it
// replaced.
func (s *store) put(b *assemble.Block) *assemble.Block {
	if s.heat[b.ID] == nil {
		s.heat[b.ID] = new(assemble.Heat)
	}
	b.Heat = s.heat[b.ID]
	i, found := slices.BinarySearchFunc(s.blocks, b.ID, func(x *assemble.Block, id string) int { return strings.Compare(x.ID, id) })
	if found {
		old := s.blocks[i]
		b.Seq = old.Seq
		s.blocks[i] = b
		return old
	}
	s.seq++
	b.Seq = s.seq
	s.blocks = slices.Insert(s.blocks, i, b)
	return nil
}

func (s *store) remove(id string) *assemble.Block {
	i, found := slices.BinarySearchFunc(s.blocks, id, func(x *assemble.Block, id string) int { return strings.Compare(x.ID, id) })
	if !found {
		return nil
	}
	old := s.blocks[i]
	s.blocks = slices.Delete(s.blocks, i, i+1)
	return old
}

func (s *store) get(id string) (*assemble.Block, bool) {
	i, found := slices.BinarySearchFunc(s.blocks, id, func(x *assemble.Block, id string) int { return strings.Compare(x.ID, id) })
	if !found {
		return nil, false
	}
	return s.blocks[i], true
}

// randomKeyedBlock is a random block dated around at: of the request's
// session and user or of others', with roles, for the user only, expiring,
// going stale, required, in a group now and then; with keys, about one
// block in fourteen has one of two conflict_keys (without, the stream is
// the same).
func randomKeyedBlock(rng *rand.Rand, id string, at time.Time, groups, keys bool) *assemble.Block {
	b := &assemble.Block{
		ID:           id,
		Type:         declare.MemoryTypes()[rng.IntN(declare.NumMemoryTypes)],
		SourceID:     []string{"", "src-a", "源"}[rng.IntN(3)],
		Weight:       float64(rng.IntN(5)) / 4,
		Trust:        float64(rng.IntN(5)) / 4, // coarse: ties happen
		Scope:        declare.ScopeGlobal,
		ForAssistant: true,
		Content:      randomContent(rng, 1+rng.IntN(8)),
	}
	if rng.IntN(2) == 0 {
		b.Priority, b.HasPriority = float64(rng.IntN(5))/4, true
	}
	if rng.IntN(4) > 0 {
		b.LastModified = at.Add(time.Duration(rng.IntN(200)-150) * time.Minute)
	}
	if rng.IntN(5) == 0 {
		b.StaleFrom, b.StaleAfter = at.Add(time.Duration(rng.IntN(300)-150)*time.Minute), time.Duration(rng.IntN(3))*time.Hour
	}
	if rng.IntN(6) == 0 {
		b.ValidUntil = at.Add(time.Duration(rng.IntN(300)-100) * time.Minute)
	}
	switch rng.IntN(14) {
	case 0:
		b.Scope, b.SessionID = declare.ScopeSession, "other"
	case 1:
		b.Scope, b.SessionID = declare.ScopeSession, "s1"
	case 2:
		b.Scope, b.UserID = declare.ScopeUser, []string{"other", "u1"}[rng.IntN(2)]
	case 3:
		b.EditRare().Roles = [][]string{{"admin"}, {"admin", "analyst"}}[rng.IntN(2)]
	case 4:
		b.ForAssistant = false
	case 5:
		if groups && rng.IntN(4) == 0 {
			b.EditRare().Group = "g1" // the Index cannot serve it
		}
	case 6:
		if groups && rng.IntN(4) == 0 {
			b.EditRare().Variants = []string{randomContent(rng, 1)} // nor this
		}
	case 7:
		if keys {
			b.EditRare().ConflictKey = []string{"rate", "term"}[rng.IntN(2)] // two of a key: nor this
		}
	}
	if rng.IntN(25) == 0 {
		b.Required = true
		b.Content = randomContent(rng, 1)
	}
	if b.Type == declare.History {
		// Roles from the id, so the stream is the same: a chat's current
		// turn is the newest user turn.
		b.Role = []declare.Role{"", declare.RoleUser, declare.RoleAssistant}[int(id[len(id)-1])%3]
	}
	// Bounds of any quality: the two assemblies read the same ones.
	b.MinTokens = int32(rng.IntN(len(b.Content)/3 + 1))
	return keyedPtr(b)
}

func keyedPtr(b *assemble.Block) *assemble.Block {
	k := keyed(*b)
	b.Key = k.Key
	return b
}

// TestIndexedEqualsFull is the incremental assembly's proof: random
// sequences of blocks added, replaced and removed, trust moved, now
// moving forward (and back, now and then), sticky conversations and fresh
// requests, each assembled incrementally from an Index kept up to date
// change by change and from scratch by AssembleRefs, must agree on every
// eager output: text, token count, hidden counts, prefix, breakpoints,
// decision, error; and the heat the Index counts lazily must be the heat
// counted from the full assemblies' rows.
func TestIndexedEqualsFull(t *testing.T) {
	real := additiveTokenizer(t)
	tok := boundedCounter{&memoCounter{Counter: real, counts: map[string]int{}}}
	runs, steps := 120, 40
	if testing.Short() {
		runs = 30
	}
	restore := assemble.SetHitCutoff(256, 32)
	t.Cleanup(restore)
	var served, fallback, failed, skippedSome, rebuilt, warm, floors, prefixes, queried, turnQueries, conflicts, keyedServed, chats, withCalls, toolServed, passedUnits, donated, retargeted, near int
	var sumServed, sumKept, sumChats, sumQueried, sumFloors, extendedPlans, damaged, remembered int
	defer assemble.SetEntriesPerLane(8)()
	defer assemble.CheckPlans(t.Errorf)()
	var restoreRuns func()
	defer func() {
		if restoreRuns != nil {
			restoreRuns()
		}
	}()
	for k := range runs + runs/4 {
		// Runs of their own after the others declare summaries, as a host
		// would and of any kind, in the workloads of every fourth run.
		run, summaries := k, k >= runs
		if summaries {
			run = 4*(k-runs) + 1
		}
		// Every other run lays out each section with two recency entries
		// or more in lanes (lanes.go); the others only the large ones.
		if k%2 == 1 {
			assemble.SetEntriesPerLane(1)
		} else {
			assemble.SetEntriesPerLane(8)
		}
		// Some runs' lexical indexes read their lists in runs and stop
		// as soon as they may (internal/lexical's pruning, which these
		// small stores would never reach).
		if restoreRuns != nil {
			restoreRuns()
			restoreRuns = nil
		}
		if run%3 == 1 && k%2 == 0 { // of the runs that cut off at a few hits, so that a query may stop
			restoreRuns = lexical.ReadInRuns()
		}
		rng := rand.New(rand.NewPCG(uint64(run), 77))
		tpl := randomWorkload(t, rng).tpl
		// Queries and sections' scoring from a stream of their own, so the
		// stores and templates are those of the runs without them.
		qrng := rand.New(rand.NewPCG(uint64(run), 99))
		crng := rand.New(rand.NewPCG(uint64(run), 131)) // chat formats, likewise
		trng := rand.New(rand.NewPCG(uint64(run), 211)) // tool exchanges, likewise
		srng := rand.New(rand.NewPCG(uint64(run), 307)) // summaries, likewise
		drng := rand.New(rand.NewPCG(uint64(run), 401)) // builds from a donor, likewise
		rrng := rand.New(rand.NewPCG(uint64(run), 503)) // retargets, likewise
		vrng := rand.New(rand.NewPCG(uint64(run), 601)) // damaged previous decisions, likewise
		var offered []outcome.SummarizeCandidate        // the last full assembly's runs to summarise
		nsum := 0
		tools := run%4 == 2 // tool calls and their results in the history
		if tools {
			tpl = withToolOptions(t, trng, tpl)
		}
		tpl = withSectionScoring(t, qrng, tpl)
		if run%3 == 1 {
			// Few hits keep their relevance: both assemblies cut the
			// rest off alike.
			assemble.SetHitCutoff(3+run%5, 1<<30)
		} else {
			restore()
		}
		groups := run%8 == 0 // blocks in groups or with variants: the full assembly only
		keys := run%8 == 4   // blocks with conflict_keys: the full assembly only when two share one
		at := now
		s := &store{heat: map[string]*assemble.Heat{}}
		for i := range 20 + rng.IntN(120) {
			s.put(randomKeyedBlock(rng, fmt.Sprintf("b%03d", i), at, groups, keys))
		}
		nx := 0 // tool exchanges declared
		if tools {
			for range 2 + trng.IntN(6) {
				for _, b := range randomExchange(trng, nx, at) {
					s.put(b)
				}
				nx++
			}
		}
		shape := assemble.Request{SessionID: "s1", UserID: "u1", Roles: []string{"analyst"}}
		x := assemble.NewIndex(tpl, shape, truncate.Scoring{})
		want := map[string]heatCount{} // counted from the full assemblies
		var fullAsm assemble.Assembler
		// The incremental side keeps renders and counts, as the engine
		// does; the full one renders and counts every time.
		fastAsm := assemble.Assembler{Renders: renderMap{}, Memo: newMapMemo()}
		var prev *assemble.Decision
		var pending [][2]*assemble.Block // changes not yet given to the index
		next := 1000
		for step := range steps {
			// Change the store.
			for range rng.IntN(4) {
				switch k := rng.IntN(10); {
				case k < 4:
					nb := randomKeyedBlock(rng, fmt.Sprintf("b%03d", next), at, groups, keys)
					pending = append(pending, [2]*assemble.Block{s.put(nb), nb})
					next++
					if tools && trng.IntN(3) == 0 {
						for _, b := range randomExchange(trng, nx, at) {
							pending = append(pending, [2]*assemble.Block{s.put(b), b})
						}
						nx++
					}
				case k < 6 && len(s.blocks) > 0:
					old := s.blocks[rng.IntN(len(s.blocks))]
					nb := *old
					nb.Heat = nil
					switch rng.IntN(3) {
					case 0:
						nb.Trust = float64(rng.IntN(5)) / 4
					case 1:
						nb.Content += " " + randomContent(rng, 1)
						nb.LastModified = at
						nb.MinTokens = int32(rng.IntN(len(nb.Content)/3 + 1))
					default:
						nb = *randomKeyedBlock(rng, old.ID, at, groups, keys)
					}
					nbp := keyedPtr(&nb)
					pending = append(pending, [2]*assemble.Block{s.put(nbp), nbp})
				case k < 8 && len(s.blocks) > 0:
					id := s.blocks[rng.IntN(len(s.blocks))].ID
					pending = append(pending, [2]*assemble.Block{s.remove(id), nil})
				}
			}
			if summaries && srng.IntN(3) == 0 {
				b := randomSummary(srng, fmt.Sprintf("sum%03d", nsum), at, offered, s.blocks)
				pending = append(pending, [2]*assemble.Block{s.put(b), b})
				nsum++
			}
			// Move now.
			switch rng.IntN(6) {
			case 0, 1:
				at = at.Add(time.Duration(1+rng.IntN(90)) * time.Minute)
			case 2:
				at = at.Add(-time.Duration(1+rng.IntN(30)) * time.Minute)
			}
			// Keep the index up to date: change by change, or made again
			// (as when the store's log no longer has the changes).
			switch {
			case !x.Built() || rng.IntN(15) == 0:
				if x.Built() && drng.IntN(2) == 0 {
					// With the documents of another session's index, made
					// with this one's (Index.BuildFrom): as the Engine
					// makes a new session's.
					other := assemble.NewIndex(tpl, assemble.Request{SessionID: "other", UserID: "u1", Roles: []string{"analyst"}}, truncate.Scoring{})
					took := other.BuildFrom(s.blocks, at, x)
					if err := other.Verify(s.blocks); err != nil {
						t.Fatalf("run %d step %d: the other session's index made from this one's: %v", run, step, err)
					}
					if took != other.Lexical() {
						t.Fatalf("run %d step %d: BuildFrom reports %v, and the index keeps documents: %v", run, step, took, other.Lexical())
					}
					if took {
						donated++
					}
					x.BuildFrom(s.blocks, at, other)
				} else {
					x.Build(s.blocks, at)
				}
				pending = pending[:0]
			default:
				for _, c := range pending {
					x.Update(c[0], c[1])
				}
				pending = pending[:0]
				if rrng.IntN(6) == 0 {
					// To the other session and back, as the Engine gives a
					// new session an ended one's index (Index.Retarget):
					// each is the index built for its session.
					var moved []*assemble.Block
					for _, b := range s.blocks {
						if b.Scope == declare.ScopeSession && (b.SessionID == "s1" || b.SessionID == "other") {
							moved = append(moved, b)
						}
					}
					x.Retarget("other", moved)
					if err := x.Verify(s.blocks); err != nil {
						t.Fatalf("run %d step %d: the index retargeted to the other session: %v", run, step, err)
					}
					x.Retarget("s1", moved)
					retargeted++
				}
				if !x.Serves(at) {
					x.Refresh(s.blocks, at)
					rebuilt++
				}
			}
			if err := x.Verify(s.blocks); err != nil {
				t.Fatalf("run %d step %d: the index is not the one built from the store: %v", run, step, err)
			}
			req := assemble.Request{Now: at, SessionID: "s1", UserID: "u1", Roles: []string{"analyst"}}
			switch qrng.IntN(5) {
			case 4:
				req.NewestTurnQuery = true
			case 0:
				text := randomContent(qrng, 1+qrng.IntN(3))
				req.Query, req.QueryKey = lexical.NewQuery(text), text
			case 1:
				req.Relevance, req.QueryKey = map[string]float64{}, fmt.Sprint("host", step)
				for range qrng.IntN(12) {
					id := fmt.Sprintf("b%03d", qrng.IntN(next))
					req.Relevance[id] = []float64{0, 0.1, 0.5, 1, 2, -1}[qrng.IntN(6)]
				}
			}
			if summaries && srng.IntN(2) == 0 {
				// Half the summaries' steps without a query, half with.
				req.Query, req.QueryKey, req.Relevance, req.NewestTurnQuery = nil, "", nil, false
			}
			if req.Query != nil || req.Relevance != nil || req.NewestTurnQuery {
				queried++
			}
			if crng.IntN(2) == 0 {
				req.Chat = assemble.ChatCost{Format: chat.Format(1 + crng.IntN(3)), PerMessage: 3, Reply: 3}
			}
			if prev != nil && vrng.IntN(8) == 0 {
				if d, ok := writtenTwice(vrng, prev); ok {
					prev = d
					damaged++
				}
			}
			switch rng.IntN(5) {
			case 0: // no conversation
			case 1:
				req.Previous, req.Fresh, req.Record = prev, true, true
			default:
				req.Previous, req.Record = prev, true
			}
			describe := fmt.Sprintf("run %d step %d (now %s, %d blocks, summaries %v)", run, step, at.Format(time.TimeOnly), len(s.blocks), summaries)
			full, errFull := fullAsm.AssembleRefs(tpl, s.blocks, req, tok)
			fast, heat, ok, errFast := fastAsm.AssembleIndexed(x, req, tok, s.get)
			passedUnits += fastAsm.PassedUnits()
			remembered += fastAsm.Remembered()
			if errFull == nil && len(full.Conflicts) > 0 {
				conflicts++
				if ok {
					t.Fatalf("%s: the index served a request with conflicts %v", describe, full.Conflicts)
				}
			}
			if !ok {
				fallback++
				if errFull == nil {
					countRows(want, full, s.blocks)
					recordRows(full, s.blocks) // as the engine counts a full assembly
					prev = full.Decision
				}
				continue
			}
			if (errFull != nil) != (errFast != nil) || errFull != nil && errFull.Error() != errFast.Error() {
				t.Fatalf("%s: full %v, incremental %v", describe, errFull, errFast)
			}
			if errFull != nil {
				var re *truncate.RequiredError
				if !errors.As(errFast, &re) && !errors.Is(errFast, truncate.ErrBudgetTooSmall) {
					t.Fatalf("%s: error %v", describe, errFast)
				}
				failed++
				continue
			}
			served++
			if req.Chat.Format != 0 {
				chats++
			}
			if tools {
				toolServed++
				if slices.ContainsFunc(s.blocks, func(b *assemble.Block) bool { return len(b.ToolCalls()) > 0 }) {
					withCalls++
				}
			}
			if keys && slices.ContainsFunc(s.blocks, func(b *assemble.Block) bool { return b.ConflictKey() != "" }) {
				keyedServed++
			}
			compareOutputs(t, describe, full, fast)
			for _, b := range x.NearBlocks() { // the places remembered are of blocks the store holds
				if got, ok := s.get(b.ID); !ok || got != b {
					t.Fatalf("%s: the index remembers the place of %q, which the store no longer holds", describe, b.ID)
				}
				near++
			}
			if slices.ContainsFunc(s.blocks, func(b *assemble.Block) bool { return len(b.Replaces()) > 0 }) {
				sumServed++
				if req.Chat.Format != 0 {
					sumChats++
				}
				if req.Query != nil || req.Relevance != nil || req.NewestTurnQuery {
					sumQueried++
				}
				if keptSummary(full) {
					sumKept++
				}
				if !req.Fresh && req.Previous != nil && slices.ContainsFunc(req.Previous.Sections, func(d assemble.SectionDecision) bool { return d.Floor != nil }) {
					sumFloors++ // following a floor (a section that shed)
				}
			}
			if (full.QueryTurn == nil) != (fast.QueryTurn == nil) || full.QueryTurn != nil && full.QueryTurn.ID != fast.QueryTurn.ID {
				t.Fatalf("%s: the query turns differ: full %v, incremental %v", describe, full.QueryTurn, fast.QueryTurn)
			}
			if full.QueryTurn != nil {
				turnQueries++
			}
			if fast.Sections != nil || fast.Events != nil {
				t.Fatalf("%s: the incremental Output lists sections or events", describe)
			}
			countRows(want, full, s.blocks)
			if eligible(full) > pulledAtMost(full) {
				skippedSome++
			}
			if full.Prefix != nil {
				prefixes++
			}
			if full.Decision != nil && slices.ContainsFunc(full.Decision.Sections, func(d assemble.SectionDecision) bool { return d.Floor != nil }) {
				floors++
			}
			// Served again unchanged (a warm re-assembly): the same heat
			// again.
			if rng.IntN(4) == 0 {
				if !heat.Again() {
					t.Fatalf("%s: the record does not count again with nothing changed", describe)
				}
				countRows(want, full, s.blocks)
				warm++
			}
			prev = full.Decision
			if vrng.IntN(2) == 0 {
				// The served assembly's own decision, as the engine keeps
				// it: the next call finds its incumbents as it wrote them.
				prev = fast.Decision
			}
			offered = full.SummarizeCandidates
			if rng.IntN(5) == 0 {
				x.Settle()
				checkHeat(t, describe, s, want)
			}
		}
		x.Settle()
		checkHeat(t, fmt.Sprintf("run %d, at the end", run), s, want)
		extendedPlans += fastAsm.PlansExtended()
	}
	t.Logf("%d assemblies served incrementally (%d failed alike; %d with a prefix, %d with a floor), %d by the full assembly only, %d refreshed sections, %d warm, %d with a query",
		served, failed, prefixes, floors, fallback, rebuilt, warm, queried)
	t.Logf("%d with conflicts (the full assembly), %d served with a conflict_key in the store, %d served in a chat format", conflicts, keyedServed, chats)
	t.Logf("%d served with tool calls in the store (%d served in the runs with tool exchanges), %d units passed over whole, %d places remembered", withCalls, toolServed, passedUnits, near)
	t.Logf("%d served with summaries in the store (%d with one in the text, %d in a chat format, %d with a query, %d following a floor)", sumServed, sumKept, sumChats, sumQueried, sumFloors)
	if sumServed < served/10 || sumKept < sumServed/10 || sumChats < sumServed/5 || sumQueried < sumServed/5 || sumFloors == 0 {
		t.Errorf("the runs do not cover summaries: %d served with them, %d with one kept, %d in a chat format, %d with a query, %d following a floor, of %d served", sumServed, sumKept, sumChats, sumQueried, sumFloors, served)
	}
	t.Logf("%d plans of summaries extended (each checked against one made again)", extendedPlans)
	if extendedPlans == 0 {
		t.Errorf("no plan of summaries was extended: the runs do not cover extendPlan")
	}
	t.Logf("%d indexes made with the documents of another session's, %d retargeted to it and back", donated, retargeted)
	if donated == 0 || retargeted == 0 {
		t.Errorf("%d indexes were made with another's documents and %d retargeted: the runs do not cover BuildFrom and Retarget", donated, retargeted)
	}
	if passedUnits == 0 && !testing.Short() { // the runs with tool exchanges are few in -short
		t.Errorf("no walk passed a unit over whole: the runs do not cover passUnit")
	}
	if remembered == 0 {
		t.Errorf("no incumbent was found as the assembly before wrote it: the runs do not cover Index.writtenOf")
	}
	if damaged == 0 {
		t.Errorf("no previous decision wrote a block twice: the runs do not cover a damaged record")
	}
	if near == 0 {
		t.Errorf("no index remembered where a block's entry was: the runs do not cover entryOfBlock")
	}
	if withCalls == 0 || withCalls < toolServed/2 {
		t.Errorf("the runs do not cover tool exchanges: %d of the %d served in their runs", withCalls, toolServed)
	}
	if chats < served/4 {
		t.Errorf("the runs do not cover the chat formats: %d of %d served", chats, served)
	}
	if conflicts == 0 || keyedServed == 0 {
		t.Errorf("the runs do not cover conflicts: %d with conflicts, %d served with a key", conflicts, keyedServed)
	}
	if served < runs*steps*2/5 || fallback == 0 || failed == 0 || rebuilt == 0 || warm == 0 || skippedSome == 0 || floors == 0 || prefixes == 0 || queried < runs*steps/4 || turnQueries == 0 {
		t.Errorf("the runs do not cover enough: %d served, %d fallback, %d failed, %d refreshed, %d warm, %d with blocks passed over, %d floors, %d prefixes",
			served, fallback, failed, rebuilt, warm, skippedSome, floors, prefixes)
	}
}

func eligible(out *assemble.Output) int {
	n := 0
	for _, s := range out.Sections {
		n += len(s.Blocks)
	}
	return n
}

// pulledAtMost is a crude upper bound of what an incremental fill must
// look at: every block counted (tokens > 0).
func pulledAtMost(out *assemble.Output) int {
	n := 0
	for _, s := range out.Sections {
		for _, b := range s.Blocks {
			if b.Tokens > 0 || b.Status != outcome.StatusDropped {
				n++
			}
		}
	}
	return n
}

// compareOutputs fails unless the incremental output agrees with the full
// one on everything an incremental Output carries.
func compareOutputs(t *testing.T, describe string, full, fast *assemble.Output) {
	t.Helper()
	switch {
	case fast.Text != full.Text:
		for _, sec := range full.Sections {
			var ids []string
			for _, b := range sec.Blocks {
				ids = append(ids, fmt.Sprintf("%s(%v,%.4f,%v,%s,%d)", b.RequestID, b.Required, b.Score, b.Status, b.Reason, b.Tokens))
			}
			t.Logf("full %s: %v", sec.Name, ids)
		}
		t.Fatalf("%s: texts differ:\nfull %q\nincremental %q\nevents %+v", describe, full.Text, fast.Text, full.Events)
	case fast.TotalTokens != full.TotalTokens:
		t.Fatalf("%s: total tokens %d, full %d", describe, fast.TotalTokens, full.TotalTokens)
	case !maps.Equal(fast.ExcludedCounts, full.ExcludedCounts):
		t.Fatalf("%s: excluded counts %v, full %v", describe, fast.ExcludedCounts, full.ExcludedCounts)
	case !reflect.DeepEqual(fast.Prefix, full.Prefix):
		t.Fatalf("%s: prefix %+v, full %+v", describe, fast.Prefix, full.Prefix)
	case !reflect.DeepEqual(fast.Breakpoints, full.Breakpoints):
		t.Fatalf("%s: breakpoints %+v, full %+v", describe, fast.Breakpoints, full.Breakpoints)
	case !reflect.DeepEqual(fast.Decision, full.Decision):
		t.Fatalf("%s: decision %+v, full %+v", describe, fast.Decision, full.Decision)
	case !reflect.DeepEqual(fast.Messages, full.Messages):
		t.Fatalf("%s: messages %+v, full %+v", describe, fast.Messages, full.Messages)
	case fast.CacheTTL != full.CacheTTL:
		t.Fatalf("%s: cache ttl %q, full %q", describe, fast.CacheTTL, full.CacheTTL)
	case !reflect.DeepEqual(fast.SummarizeCandidates, full.SummarizeCandidates):
		t.Fatalf("%s: summarize candidates %+v, full %+v", describe, fast.SummarizeCandidates, full.SummarizeCandidates)
	}
}

// renderMap is a RenderMemo backed by a map.
type renderMap map[assemble.MemoKey]struct {
	text    string
	escaped bool
}

func (m renderMap) GetRender(k assemble.MemoKey) (string, bool, bool) {
	r, ok := m[k]
	return r.text, r.escaped, ok
}

func (m renderMap) AddRender(k assemble.MemoKey, text string, escaped bool) {
	m[k] = struct {
		text    string
		escaped bool
	}{text, escaped}
}

// heatCount is a block's heat, counted by the test.
type heatCount struct{ kept, dropped, cut int64 }

// countRows counts one full assembly's heat, as package contextasm does.
func countRows(heat map[string]heatCount, out *assemble.Output, blocks []*assemble.Block) {
	eachRow(out, blocks, func(b *assemble.Block, st outcome.Status) {
		h := heat[b.ID]
		switch st {
		case outcome.StatusKept:
			h.kept++
		case outcome.StatusCut:
			h.cut++
		default:
			h.dropped++
		}
		heat[b.ID] = h
	})
}

// recordRows counts a full assembly's rows into the blocks' heat cells.
func recordRows(out *assemble.Output, blocks []*assemble.Block) {
	eachRow(out, blocks, func(b *assemble.Block, st outcome.Status) {
		switch st {
		case outcome.StatusKept:
			b.Heat.Included.Add(1)
		case outcome.StatusCut:
			b.Heat.Cut.Add(1)
		default:
			b.Heat.Dropped.Add(1)
		}
	})
}

// eachRow calls f with the block and status of every row of out.
func eachRow(out *assemble.Output, blocks []*assemble.Block, f func(*assemble.Block, outcome.Status)) {
	for _, s := range out.Sections {
		for _, r := range s.Blocks {
			f(blocks[r.Index], r.Status)
		}
	}
}

func checkHeat(t *testing.T, describe string, s *store, want map[string]heatCount) {
	t.Helper()
	for id, c := range s.heat {
		got := heatCount{c.Included.Load(), c.Dropped.Load(), c.Cut.Load()}
		if got != want[id] {
			t.Fatalf("%s: heat of %s is %+v, the full assemblies counted %+v", describe, id, got, want[id])
		}
	}
}

// TestTurnLooksAtWhatItKeeps pins what makes a turn cheap: an incremental
// assembly looks at the index entries it keeps, counts or passes over by
// the tree, not at the store. A conversation's turn on 2,000 and 20,000
// blocks (the benchmark's template: stop, skip, partial, order time) must
// look at about as many entries, and at a small part of the store.
func TestTurnLooksAtWhatItKeeps(t *testing.T) {
	tpl := mustParse(t, `{"template_version": "1.2", "budget": 8192, "sections": [
    {"name": "CONSTRAINTS", "priority": 1, "memory_types": ["constraint"], "max_tokens": 2048, "render": "<rule id=\"{request_id}\">{content}</rule>"},
    {"name": "CONTEXT", "priority": 2, "memory_types": ["context"], "max_tokens": 2730, "render": "<context>{content}</context>", "fill": "skip"},
    {"name": "SOURCES", "priority": 3, "memory_types": ["external"], "max_tokens": 2048, "render": "<source id=\"{request_id}\">{content}</source>", "partial": true},
    {"name": "HISTORY", "priority": 4, "memory_types": ["history"], "max_tokens": 4096, "render": "{content}", "order": "time", "partial": true}]}`)
	tok := boundedCounter{&memoCounter{Counter: realTokenizer(t), counts: map[string]int{}}}
	var looked [2]int
	for k, n := range []int{2000, 20000} {
		rng := rand.New(rand.NewPCG(1, 2))
		s := &store{heat: map[string]*assemble.Heat{}}
		for i := range n {
			b := &assemble.Block{ID: fmt.Sprintf("b%06d", i), Type: declare.MemoryTypes()[rng.IntN(declare.NumMemoryTypes)], Scope: declare.ScopeGlobal,
				ForAssistant: true, Weight: float64(rng.IntN(101)) / 100, Trust: 0.5, Content: randomContent(rng, 3+rng.IntN(8)),
				LastModified: now.Add(-time.Duration(n-i) * time.Minute)}
			b.MinTokens = int32(max(0, boundOf(b.Content)))
			s.put(keyedPtr(b))
		}
		x := assemble.NewIndex(tpl, assemble.Request{}, truncate.Scoring{})
		x.Build(s.blocks, now)
		var a assemble.Assembler
		first, _, ok, err := a.AssembleIndexed(x, assemble.Request{Now: now, Record: true}, tok, s.get)
		if !ok || err != nil {
			t.Fatalf("%d blocks: first assembly: %v, %v", n, ok, err)
		}
		turn := &assemble.Block{ID: "turn", Type: declare.History, Scope: declare.ScopeGlobal, ForAssistant: true, Weight: 0.97, Trust: 0.5,
			Content: "USER: one more question about the fees?", LastModified: now}
		x.Update(s.put(keyedPtr(turn)), turn)
		if _, _, ok, err := a.AssembleIndexed(x, assemble.Request{Now: now, Previous: first.Decision, Record: true}, tok, s.get); !ok || err != nil {
			t.Fatalf("%d blocks: the turn: %v, %v", n, ok, err)
		}
		looked[k] = a.Looked()
		t.Logf("%d blocks: the turn looked at %d index entries", n, looked[k])
	}
	if looked[1] > 2*looked[0]+200 || looked[1] > 20000/20 {
		t.Errorf("a turn looked at %d entries of 2,000 blocks and %d of 20,000: it should look at what it keeps, not at the store", looked[0], looked[1])
	}
}

// boundOf is a lower bound of a rendering's count, as package contextasm
// computes it.
func boundOf(content string) int { return bpe.LowerBound(content) }

// withSectionScoring returns tpl with some sections' relevance share,
// recency weight and half-age set, zero among them.
func withSectionScoring(t *testing.T, rng *rand.Rand, tpl *template.Template) *template.Template {
	t.Helper()
	def := tpl.Definition()
	for i := range def.Sections {
		if rng.IntN(3) == 0 {
			v := float64(rng.IntN(5)) / 4
			def.Sections[i].Relevance = &v
		}
		if rng.IntN(4) == 0 {
			v := []float64{0, 0.5, 3}[rng.IntN(3)]
			def.Sections[i].Recency = &v
		}
		if rng.IntN(4) == 0 {
			v := declare.Duration(time.Duration(1+rng.IntN(180)) * time.Minute)
			def.Sections[i].RecencyHalfAge = &v
		}
	}
	out, err := template.Compile(def)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// randomExchange is the n-th tool exchange of a conversation around at:
// an assistant turn making one to three calls, of session s1 mostly, and
// the results that answer them; now and then a result is missing or
// given twice (the exchange cannot be sent whole), one is required, the
// turn carries reasoning, or its blocks share a group.
func randomExchange(rng *rand.Rand, n int, at time.Time) []*assemble.Block {
	when := at.Add(time.Duration(rng.IntN(200)-150) * time.Minute)
	session := []string{"s1", "s1", "s1", "other"}[rng.IntN(4)]
	turn := func(id string, role declare.Role, content string) *assemble.Block {
		b := &assemble.Block{ID: id, Type: declare.History, Scope: declare.ScopeSession, SessionID: session, ForAssistant: true,
			Weight: float64(rng.IntN(5)) / 4, Trust: 0.5, Role: role, Content: content, LastModified: when}
		when = when.Add(time.Duration(rng.IntN(3)) * time.Second)
		b.MinTokens = int32(rng.IntN(len(b.Content)/3 + 1))
		return b
	}
	asst := turn(fmt.Sprintf("x%03d-a", n), declare.RoleAssistant, randomContent(rng, 1+rng.IntN(3)))
	var calls []declare.ToolCall
	for c := range 1 + rng.IntN(3) {
		calls = append(calls, declare.ToolCall{ID: fmt.Sprintf("call_%d_%d", n, c), Name: []string{"get_rate", "search_docs"}[rng.IntN(2)], Arguments: `{"q":"x"}`})
	}
	asst.EditRare().ToolCalls = calls
	if rng.IntN(4) == 0 {
		asst.EditRare().Reasoning = []declare.Reasoning{{Type: "thinking", JSON: []byte(`{"type":"thinking","thinking":"weigh it","signature":"sig"}`)}}
	}
	out := []*assemble.Block{asst}
	for c, call := range calls {
		if rng.IntN(10) == 0 {
			continue // no result: the call is an orphan
		}
		for dup := range 1 + btoi(rng.IntN(12) == 0) {
			res := turn(fmt.Sprintf("x%03d-r%d%c", n, c, 'a'+dup), declare.RoleTool, randomContent(rng, 1+rng.IntN(12)))
			res.EditRare().ToolCallID = call.ID
			res.Required = rng.IntN(15) == 0
			out = append(out, res)
		}
	}
	if rng.IntN(6) == 0 {
		for _, b := range out {
			b.EditRare().Group = fmt.Sprintf("g-x%03d", n)
		}
	}
	for _, b := range out {
		keyedPtr(b)
	}
	return out
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// withToolOptions gives tpl's sections random tool result clips and
// clearing.
func withToolOptions(t *testing.T, rng *rand.Rand, tpl *template.Template) *template.Template {
	t.Helper()
	def := tpl.Definition()
	for i := range def.Sections {
		def.Sections[i].ToolResultMaxTokens = []int{0, 0, template.NoToolResultClip, 5 + rng.IntN(60)}[rng.IntN(4)]
		if rng.IntN(2) == 0 {
			keep := rng.IntN(4)
			def.Sections[i].ClearToolResults = &template.ClearToolResults{Keep: &keep, AtLeast: []int{0, 5 + rng.IntN(50)}[rng.IntN(2)]}
		}
	}
	out, err := template.Compile(def)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// randomSummary returns a summary (a history block with replaces) dated
// at, as a host declares one: mostly of a run the last assembly offered,
// else of history turns of the store (kept or dropped), other summaries,
// ids the store does not hold, or a mix.
func randomSummary(rng *rand.Rand, id string, at time.Time, offered []outcome.SummarizeCandidate, blocks []*assemble.Block) *assemble.Block {
	var ids []string
	if len(offered) > 0 && rng.IntN(3) > 0 {
		ids = slices.Clone(offered[rng.IntN(len(offered))].IDs)
		if rng.IntN(2) == 0 {
			// As a host summarises: a run it was offered, and only that
			// (what extendPlan extends a plan with).
			return newSummary(rng, id, at, ids)
		}
	}
	var history []string
	for _, b := range blocks {
		if b.Type == declare.History {
			history = append(history, b.ID)
		}
	}
	for range rng.IntN(3) {
		switch k := rng.IntN(6); {
		case k < 3 && len(history) > 0:
			ids = append(ids, history[rng.IntN(len(history))])
		case k < 4:
			ids = append(ids, fmt.Sprintf("gone%03d", rng.IntN(50)))
		default:
			ids = append(ids, fmt.Sprintf("sum%03d", rng.IntN(40)))
		}
	}
	if len(ids) == 0 {
		ids = []string{"gone000"}
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	ids = slices.DeleteFunc(ids, func(s string) bool { return s == id })
	if len(ids) == 0 {
		ids = []string{"gone001"}
	}
	return newSummary(rng, id, at, ids)
}

// newSummary returns a summary of ids (randomSummary's).
func newSummary(rng *rand.Rand, id string, at time.Time, ids []string) *assemble.Block {
	b := &assemble.Block{ID: id, Type: declare.History, Scope: declare.ScopeGlobal, ForAssistant: true, Weight: float64(rng.IntN(5)) / 4,
		Content: "SUMMARY: " + randomContent(rng, 1+rng.IntN(2)), LastModified: at}
	if rng.IntN(8) == 0 {
		b.Scope, b.SessionID = declare.ScopeSession, "s1" // a chat's current turn, now and then: the full assembly
	}
	if rng.IntN(40) == 0 {
		b.Required = true
	}
	b.EditRare().Replaces = ids
	b.MinTokens = int32(rng.IntN(len(b.Content)/3 + 1))
	return keyedPtr(b)
}

// keptSummary reports whether a summary is in out's text or messages.
func keptSummary(out *assemble.Output) bool {
	for _, sec := range out.Sections {
		for _, b := range sec.Blocks {
			if b.Status != outcome.StatusDropped && strings.HasPrefix(b.RequestID, "sum") {
				return true
			}
		}
	}
	return false
}

// TestToolTurnMakesWhatItReads: a chat turn of a long tool-using
// conversation makes the units (tool exchanges) it reads, the ones it
// keeps and the few around them, not one for every exchange the
// conversation had: the same number with 50 exchanges behind it and with
// 500, give or take.
func TestToolTurnMakesWhatItReads(t *testing.T) {
	tpl := mustParse(t, `{"template_version": "1.2", "budget": 4096, "sections": [
    {"name": "CONTEXT", "priority": 1, "memory_types": ["context"], "max_tokens": 1024, "render": "<context>{content}</context>"},
    {"name": "HISTORY", "priority": 2, "memory_types": ["history"], "max_tokens": 2048, "render": "{content}", "order": "time"}]}`)
	tok := boundedCounter{&memoCounter{Counter: realTokenizer(t), counts: map[string]int{}}}
	var made [2]int
	for k, n := range []int{50, 500} {
		s := &store{heat: map[string]*assemble.Heat{}}
		for i := range 20 {
			s.put(keyedPtr(&assemble.Block{ID: fmt.Sprintf("c%03d", i), Type: declare.Context, Scope: declare.ScopeGlobal, ForAssistant: true,
				Weight: 0.5, Trust: 0.5, Content: "a document about the fees", LastModified: now}))
		}
		turn := func(id string, role declare.Role, content string, at time.Time) *assemble.Block {
			return &assemble.Block{ID: id, Type: declare.History, Scope: declare.ScopeSession, SessionID: "s1", ForAssistant: true,
				Weight: 0.5, Trust: 0.5, Role: role, Content: content, LastModified: at}
		}
		exchange := func(i int, at time.Time) {
			call := fmt.Sprintf("call_%04d", i)
			a := turn(fmt.Sprintf("t%04d-a", i), declare.RoleAssistant, "", at)
			a.EditRare().ToolCalls = []declare.ToolCall{{ID: call, Name: "get_fees", Arguments: `{"account":"PT50"}`}}
			r := turn(fmt.Sprintf("t%04d-r", i), declare.RoleTool, `{"fee_eur": 2.5, "arrival": "2026-12-03", "rate": 0.004}`, at.Add(time.Second))
			r.EditRare().ToolCallID = call
			s.put(keyedPtr(a))
			s.put(keyedPtr(r))
		}
		at := now.Add(-time.Duration(n+1) * time.Minute)
		for i := range n {
			at = at.Add(time.Minute)
			exchange(i, at)
		}
		x := assemble.NewIndex(tpl, assemble.Request{SessionID: "s1"}, truncate.Scoring{})
		x.Build(s.blocks, now)
		var a assemble.Assembler
		req := assemble.Request{Now: now, SessionID: "s1", Record: true, Chat: assemble.ChatCost{Format: chat.FormatOpenAI, PerMessage: 3, Reply: 3}}
		first, _, ok, err := a.AssembleIndexed(x, req, tok, s.get)
		if !ok || err != nil {
			t.Fatalf("%d exchanges: first assembly: %v, %v", n, ok, err)
		}
		u := turn("user-last", declare.RoleUser, "USER: and the fees?", now)
		x.Update(s.put(keyedPtr(u)), u)
		req.Previous = first.Decision
		if _, _, ok, err := a.AssembleIndexed(x, req, tok, s.get); !ok || err != nil {
			t.Fatalf("%d exchanges: the turn: %v, %v", n, ok, err)
		}
		made[k] = a.UnitsMade()
		t.Logf("%d exchanges behind it: the turn made %d units", n, made[k])
	}
	if made[0] == 0 || made[1] > 2*made[0]+20 || made[1] >= 500/2 {
		t.Errorf("a turn made %d units with 50 exchanges behind it and %d with 500: it should make the ones it reads", made[0], made[1])
	}
}

// writtenTwice returns a copy of d in which one section writes one of its
// blocks a second time, somewhere else and perhaps with another key or
// cut (a damaged record); false when d writes nothing. Both assemblies
// must read it alike.
func writtenTwice(rng *rand.Rand, d *assemble.Decision) (*assemble.Decision, bool) {
	var secs []int
	for si, s := range d.Sections {
		if len(s.Blocks) > 0 {
			secs = append(secs, si)
		}
	}
	if len(secs) == 0 {
		return nil, false
	}
	c := *d
	c.Sections = slices.Clone(d.Sections)
	sd := &c.Sections[secs[rng.IntN(len(secs))]]
	w := sd.Blocks[rng.IntN(len(sd.Blocks))]
	switch rng.IntN(3) {
	case 0:
		w.Key = "0000000000000000"
	case 1:
		w.Cut = 1 + rng.IntN(40)
	}
	at := rng.IntN(len(sd.Blocks) + 1)
	sd.Blocks = slices.Insert(slices.Clone(sd.Blocks), at, w)
	return &c, true
}
