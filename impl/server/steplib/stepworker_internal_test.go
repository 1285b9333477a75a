package steplib

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"time"
)

// Steps run one after the other reuse the workers of the steps before them (a step may start a
// worker while the one before is still on its way back to idle: at most maxIdleStepWorkers are); a stuck step keeps its
// worker and the next step runs on another; a step that panics leaves its worker usable.
func TestStepWorkersReused(t *testing.T) {
	s := NewSession(Config{})
	c := &call{def: Definition{ID: "test.step"}, rep: nopReporter{}}
	ctx := context.Background()
	ok := func(context.Context, *Session, *call) error { return nil }
	for range 3 {
		if err := s.run(ctx, ok, c); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(10 * time.Millisecond) // the last worker parks
	before, started := runtime.NumGoroutine(), stepWorkersStarted.Load()
	for range 500 {
		if err := s.run(ctx, ok, c); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(10 * time.Millisecond)
	if after, n := runtime.NumGoroutine(), stepWorkersStarted.Load()-started; after > before+maxIdleStepWorkers || n > maxIdleStepWorkers {
		t.Fatalf("%d goroutines before 500 steps, %d after; %d workers started", before, after, n)
	}

	release := make(chan struct{})
	stuckCtx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	err := s.run(stuckCtx, func(context.Context, *Session, *call) error { <-release; return nil }, c)
	if err == nil || !strings.Contains(err.Error(), "timed out") {
		t.Fatalf("stuck step: %v", err)
	}
	if err := s.run(ctx, ok, c); err != nil {
		t.Fatalf("the step after a stuck one: %v", err)
	}
	close(release)

	for range 3 {
		err := s.run(ctx, func(context.Context, *Session, *call) error { panic("boom") }, c)
		if err == nil || !strings.Contains(err.Error(), "panicked: boom") {
			t.Fatalf("panic: %v", err)
		}
		if err := s.run(ctx, ok, c); err != nil {
			t.Fatalf("after a panic: %v", err)
		}
	}
}
