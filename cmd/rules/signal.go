//go:build !wasip1

package main

import (
	"context"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func notifyContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
}

func stdin() io.Reader { return os.Stdin }
