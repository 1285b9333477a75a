//go:build wasip1

package main

import (
	"context"
	"errors"
	"io"
	"os"
	"syscall"
	"time"
)

// WASI preview 1 has no signals.
func notifyContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithCancel(ctx)
}

// stdin returns standard input. Some WASI hosts (Node's node:wasi) hand the module a
// non-blocking pipe, whose reads fail with EAGAIN while no line is waiting: wait and retry.
func stdin() io.Reader { return retryReader{os.Stdin} }

type retryReader struct{ r io.Reader }

func (r retryReader) Read(p []byte) (int, error) {
	wait := 20 * time.Microsecond
	for {
		n, err := r.r.Read(p)
		if n > 0 || !errors.Is(err, syscall.EAGAIN) {
			return n, err
		}
		time.Sleep(wait)
		if wait < time.Millisecond {
			wait *= 2
		}
	}
}
