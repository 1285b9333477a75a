package runs

import (
	"testing"

	"github.com/riverqueue/river"
)

// A run job has no River timeout (River's default would cancel every run after a minute): the run's
// own timeout ends it as timed_out (TestCancelAndTimeout in impl/server/app). It goes to the runs
// queue, whose concurrency is -workers, and may be retried, since Work starts only a queued run
// (TestRunJobWorkedAgainDoesNotExecuteTwice).
func TestRunJobOptions(t *testing.T) {
	w := &runWorker{}
	if d := w.Timeout(&river.Job[RunArgs]{}); d >= 0 {
		t.Fatalf("run job timeout %s, want none (negative)", d)
	}
	opts := RunArgs{}.InsertOpts()
	if opts.Queue != QueueRuns || opts.MaxAttempts < 2 {
		t.Fatalf("run job insert options %+v", opts)
	}
}
