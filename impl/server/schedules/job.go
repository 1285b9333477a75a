package schedules

import (
	"context"
	"time"

	"github.com/riverqueue/river"

	"github.com/sdods/sdods/impl/server/jobs"
)

// TickInterval is how often the scheduler's tick job is inserted.
const TickInterval = time.Second

// TickArgs is the scheduler's tick: a River periodic job, inserted every second by the leading
// process and worked by any, that fires what is due (FireDue).
type TickArgs struct{}

// Kind names the job.
func (TickArgs) Kind() string { return "schedules_tick" }

// InsertOpts: a failed tick is not retried, the next one comes a second later.
func (TickArgs) InsertOpts() river.InsertOpts { return river.InsertOpts{MaxAttempts: 1} }

type tickWorker struct {
	river.WorkerDefaults[TickArgs]
	svc *Service
}

// Work fires what is due now.
func (w *tickWorker) Work(ctx context.Context, _ *river.Job[TickArgs]) error {
	_, err := w.svc.FireDue(ctx, w.svc.cfg.Now())
	return err
}

// Timeout bounds one tick (a long catch-up is finished by the next ones).
func (w *tickWorker) Timeout(*river.Job[TickArgs]) time.Duration { return time.Minute }

// Register registers the tick's worker and its periodic insertion on the process's job registry.
func (s *Service) Register(reg *jobs.Registry) {
	jobs.Register(reg, &tickWorker{svc: s})
	reg.Periodic(TickInterval, TickArgs{})
}
