package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/contextasm/contextasm/contextasm"
	"github.com/contextasm/contextasm/feedback"
)

// stateTimeout bounds each call of a command to its learned-state store.
const stateTimeout = 3 * time.Second

// stateStore is a store named by --state.
type stateStore interface {
	contextasm.StateStore
	Close() error
}

// fileStore is a feedback.FileStore with nothing to close.
type fileStore struct{ *feedback.FileStore }

func (fileStore) Close() error { return nil }

// openState opens the store --state names: a file path.
func openState(spec string) (stateStore, error) {
	return fileStore{feedback.NewFileStore(spec)}, nil
}

// loadState reads the whole learned state. A store out of reach is an
// empty state and the error, wrapping feedback.ErrUnavailable.
func loadState(ctx context.Context, store stateStore) (*feedback.State, error) {
	ctx, cancel := context.WithTimeout(ctx, stateTimeout)
	defer cancel()
	u, err := store.Changes(ctx, feedback.Version{}, "")
	if err != nil {
		return feedback.NewState(), err
	}
	if u.Full == nil {
		return feedback.NewState(), nil
	}
	return u.Full, nil
}

// storeBatch applies b as a one-shot writer of its own.
func storeBatch(ctx context.Context, store stateStore, b *feedback.Batch) error {
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
	if errors.Is(err, feedback.ErrUnavailable) {
		return fmt.Errorf("%s: the learned state is out of reach: %d delta(s) NOT stored: %w", cmd, n, err)
	}
	return fmt.Errorf("%s: %d delta(s) NOT stored: %w", cmd, n, err)
}
