package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/contextasm/contextasm/learned"
	"github.com/contextasm/contextasm/learned/redisstore"
)

// stateTimeout bounds each call of a command to its learned-state store.
const stateTimeout = 2 * time.Second

// stateStore is a store named by --state.
type stateStore interface {
	learned.Store
	Close() error
}

// fileStore is a learned.FileStore that folds its log into the state file
// when the command is done: the file then reads as the whole state.
type fileStore struct{ *learned.FileStore }

func (s fileStore) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), stateTimeout)
	defer cancel()
	return s.Compact(ctx)
}

// openState opens the store --state names: a file path, or a Redis URL
// (redis://[user:pass@]host:port/db?prefix=NAME, rediss:// for TLS).
func openState(spec string) (stateStore, error) {
	if strings.HasPrefix(spec, "redis://") || strings.HasPrefix(spec, "rediss://") {
		// The commands say what went wrong with the store themselves; the
		// client's own log lines would repeat it, less clearly.
		redis.SetLogger(quietLog{})
		return redisstore.Open(spec)
	}
	return fileStore{learned.NewFileStore(spec)}, nil
}

// quietLog drops the Redis client's log lines.
type quietLog struct{}

func (quietLog) Printf(context.Context, string, ...any) {}

// loadState reads the whole learned state. A store out of reach is an
// empty state and the error, wrapping learned.ErrUnavailable.
func loadState(ctx context.Context, store stateStore) (*learned.State, error) {
	ctx, cancel := context.WithTimeout(ctx, stateTimeout)
	defer cancel()
	u, err := store.Changes(ctx, learned.Version{}, "")
	if err != nil {
		return learned.NewState(), err
	}
	if u.Full == nil {
		return learned.NewState(), nil
	}
	return u.Full, nil
}

// storeBatch applies b as a one-shot writer of its own.
func storeBatch(ctx context.Context, store stateStore, b *learned.Batch) error {
	if b.Len() == 0 {
		return nil
	}
	var id [8]byte
	rand.Read(id[:])
	b.Writer, b.Seq = "cli-"+hex.EncodeToString(id[:]), 1
	ctx, cancel := context.WithTimeout(ctx, stateTimeout)
	defer cancel()
	_, err := store.Apply(ctx, b)
	return err
}

// notStored says that the deltas of a command were not stored.
func notStored(cmd string, n int, err error) error {
	if errors.Is(err, learned.ErrUnavailable) {
		return fmt.Errorf("%s: the learned state is out of reach: %d delta(s) NOT stored: %w", cmd, n, err)
	}
	return fmt.Errorf("%s: %d delta(s) NOT stored: %w", cmd, n, err)
}
