package redisstore

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/contextasm/contextasm/declare"
)

// announced is a global block as it travels: the declaration, and whether
// it came from an untrusted source (which its JSON form does not carry).
type announced struct {
	Declaration declare.Declaration `json:"declaration"`
	Untrusted   bool                `json:"untrusted,omitempty"`
}

type announcement struct {
	Declared  []announced `json:"declared,omitempty"`
	Forgotten []string    `json:"forgotten,omitempty"`
}

// AnnounceGlobal records declared (scope global) and forgotten global
// blocks in {PREFIX}:global and publishes them on {PREFIX}:global, one
// script: the record and the message never disagree.
func (s *Store) AnnounceGlobal(ctx context.Context, declared []declare.Declaration, forgotten []string) error {
	var a announcement
	args := []any{s.k.globalCh, "", len(declared)}
	for _, d := range declared {
		if d.Scope != declare.ScopeGlobal {
			return fmt.Errorf("redisstore: announcing %q: scope %q is not global", d.RequestID, d.Scope)
		}
		ad := announced{Declaration: d, Untrusted: d.Untrusted}
		val, err := json.Marshal(ad)
		if err != nil {
			return fmt.Errorf("redisstore: announcing %q: %w", d.RequestID, err)
		}
		a.Declared = append(a.Declared, ad)
		args = append(args, d.RequestID, string(val))
	}
	for _, id := range forgotten {
		args = append(args, id)
	}
	a.Forgotten = forgotten
	payload, err := json.Marshal(a)
	if err != nil {
		return fmt.Errorf("redisstore: announcing: %w", err)
	}
	args[1] = string(payload)
	if err := announceScript.Run(ctx, s.client, []string{s.k.global, s.k.globalv}, args...).Err(); err != nil {
		return wrap("announcing global blocks", err)
	}
	return nil
}

// WatchGlobal delivers the announced global blocks to apply: all of them
// first (with those it delivered before and the store no longer has as
// forgotten), then each announcement as it arrives, in the store's order.
// It subscribes before it reads, so nothing falls between; a message lost
// while a connection is re-established shows as a gap in the count (or as
// a count ahead of the last message, checked every Config.GlobalCheck),
// and then it delivers everything again. It returns when ctx is done, or
// with an error the caller retries after.
func (s *Store) WatchGlobal(ctx context.Context, apply func(declared []declare.Declaration, forgotten []string)) error {
	sub := s.client.Subscribe(ctx, s.k.globalCh)
	defer sub.Close()
	if _, err := sub.Receive(ctx); err != nil { // the subscription's confirmation
		return wrap("watching global blocks", err)
	}
	ch := sub.Channel()
	known := map[string]bool{}
	last, err := s.resync(ctx, known, apply)
	if err != nil {
		return err
	}
	tick := time.NewTicker(s.cfg.GlobalCheck)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case msg, ok := <-ch:
			if !ok {
				return nil
			}
			n, payload, _ := strings.Cut(msg.Payload, " ")
			v, err := strconv.ParseInt(n, 10, 64)
			var a announcement
			switch {
			case err != nil || json.Unmarshal([]byte(payload), &a) != nil:
				return fmt.Errorf("redisstore: a malformed announcement on %s", s.k.globalCh)
			case v <= last: // in what resync read already
				continue
			case v > last+1: // missed one
				if last, err = s.resync(ctx, known, apply); err != nil {
					return err
				}
				continue
			}
			decls := make([]declare.Declaration, len(a.Declared))
			for i, d := range a.Declared {
				decls[i] = d.Declaration
				decls[i].Untrusted = d.Untrusted
				known[d.Declaration.RequestID] = true
			}
			for _, id := range a.Forgotten {
				delete(known, id)
			}
			apply(decls, a.Forgotten)
			last = v
		case <-tick.C:
			n, err := s.client.Get(ctx, s.k.globalv).Int64()
			if err != nil && err != redis.Nil {
				return wrap("watching global blocks", err)
			}
			if n > last {
				if last, err = s.resync(ctx, known, apply); err != nil {
					return err
				}
			}
		}
	}
}

// resync delivers every announced block, and forgets the ones known before
// that are gone; it returns the count it read.
func (s *Store) resync(ctx context.Context, known map[string]bool, apply func([]declare.Declaration, []string)) (int64, error) {
	var all *redis.MapStringStringCmd
	var count *redis.StringCmd
	_, err := s.client.TxPipelined(ctx, func(p redis.Pipeliner) error {
		all, count = p.HGetAll(ctx, s.k.global), p.Get(ctx, s.k.globalv)
		return nil
	})
	if err != nil && err != redis.Nil {
		return 0, wrap("reading global blocks", err)
	}
	v, _ := strconv.ParseInt(count.Val(), 10, 64)
	decls := make([]declare.Declaration, 0, len(all.Val()))
	now := map[string]bool{}
	for id, val := range all.Val() {
		var a announced
		if err := json.Unmarshal([]byte(val), &a); err != nil {
			return 0, fmt.Errorf("redisstore: global block %q: %w", id, err)
		}
		a.Declaration.Untrusted = a.Untrusted
		decls = append(decls, a.Declaration)
		now[id] = true
	}
	slices.SortFunc(decls, func(a, b declare.Declaration) int { return strings.Compare(a.RequestID, b.RequestID) })
	var gone []string
	for id := range known {
		if !now[id] {
			gone = append(gone, id)
		}
	}
	slices.Sort(gone)
	clear(known)
	for id := range now {
		known[id] = true
	}
	apply(decls, gone)
	return v, nil
}
