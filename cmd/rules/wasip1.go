//go:build wasip1

package main

import "context"

// WASI preview 1 has no signals.
func notifyContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithCancel(ctx)
}
