package mcpsource

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// commandTransport runs a stdio server as the SDK's CommandTransport does
// (closing stdin ends the session; the server gets terminate to exit, then
// SIGTERM, then SIGKILL), with one message bounded by maxMessage: the
// SDK's own bound is 16 MiB and cannot be set.
type commandTransport struct {
	cmd        *exec.Cmd
	terminate  time.Duration
	maxMessage int
}

func (t *commandTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	stdout, err := t.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stdin, err := t.cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	if err := t.cmd.Start(); err != nil {
		return nil, err
	}
	tr := &mcp.IOTransport{
		Reader:        io.NopCloser(stdout), // the session ends by closing stdin
		Writer:        &stdinCloser{WriteCloser: stdin, cmd: t.cmd, terminate: t.terminate},
		MaxLineLength: t.maxMessage,
	}
	return tr.Connect(ctx)
}

// stdinCloser is a server's stdin whose Close waits for the server to exit.
type stdinCloser struct {
	io.WriteCloser
	cmd       *exec.Cmd
	terminate time.Duration
}

// Close closes stdin and waits terminate for the server to exit, then
// sends SIGTERM and waits again, then kills it. It is called once (the
// SDK's connection closes once).
func (s *stdinCloser) Close() error {
	closeErr := s.WriteCloser.Close()
	exited := make(chan error, 1)
	go func() { exited <- s.cmd.Wait() }()
	wait := func() bool {
		t := time.NewTimer(s.terminate)
		defer t.Stop()
		select {
		case <-exited:
			return true
		case <-t.C:
			return false
		}
	}
	if wait() {
		return closeErr
	}
	if s.cmd.Process.Signal(syscall.SIGTERM) == nil && wait() {
		return closeErr
	}
	if err := s.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return err
	}
	if !wait() {
		return fmt.Errorf("stdio server %s did not exit after SIGKILL", s.cmd.Path)
	}
	return closeErr
}
