package runs

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"

	"github.com/sdods/sdods/gen/db"
	"github.com/sdods/sdods/impl/server/jobs"
	"github.com/sdods/sdods/impl/server/store"
)

// QueueRuns is the River queue of run jobs; each process works Config.Workers of them at once.
const QueueRuns = "runs"

// RunArgs is the River job that executes one run, inserted with the run by Create.
type RunArgs struct {
	RunID uuid.UUID `json:"run_id"`
}

// Kind names run jobs in river_job.
func (RunArgs) Kind() string { return "run" }

// InsertOpts puts run jobs on their queue. A job is attempted again only when it could not start its
// run (the database failed); a run that started is ended by this package (passed, failed, errored,
// cancelled, timed out) and never executed twice: Work starts only a queued run, so a job that River
// retries or rescues finds its run started already and does nothing.
// A run has one job (unique by its args), whoever inserts it.
func (RunArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: QueueRuns, MaxAttempts: 5, UniqueOpts: river.UniqueOpts{ByArgs: true}}
}

// adoptQueued gives a job to the queued runs that have none: those queued before runs were River
// jobs (an upgrade with runs waiting). Their jobs are unique, so processes starting at once insert
// one each.
func (s *Service) adoptQueued(ctx context.Context) {
	ids, err := s.st.QueuedRunIDs(ctx)
	if err != nil || len(ids) == 0 {
		if err != nil && ctx.Err() == nil {
			s.log.Warn("runs: list queued runs", "error", err)
		}
		return
	}
	adopted := 0
	err = s.st.WithTx(ctx, func(q *db.Queries) error {
		for _, id := range ids {
			res, err := jobs.InsertTx(ctx, q, RunArgs{RunID: id}, nil)
			if err != nil {
				return err
			}
			if !res.UniqueSkippedAsDuplicate {
				adopted++
			}
		}
		return nil
	})
	switch {
	case err != nil && ctx.Err() == nil:
		s.log.Warn("runs: give queued runs a job", "error", err)
	case adopted > 0:
		s.log.Info("runs: queued runs without a job given one", "runs", adopted)
	}
}

// Register adds the run worker, the runs queue (Config.Workers at once in this process) and the
// webhook delivery worker to reg.
func (s *Service) Register(reg *jobs.Registry) {
	jobs.Register(reg, &runWorker{s: s})
	jobs.Register(reg, &webhookWorker{s: s})
	reg.Queue(QueueRuns, s.cfg.Workers)
}

type runWorker struct {
	river.WorkerDefaults[RunArgs]
	s *Service
}

// Timeout is none: a run has its own (runs.timeout_seconds), enforced by the runner, which ends it
// as timed_out rather than as a failed job.
func (w *runWorker) Timeout(*river.Job[RunArgs]) time.Duration { return -1 }

// Work starts the run when it is still queued and executes it to its end. The outcome is the run's
// status; the job itself always completes.
func (w *runWorker) Work(ctx context.Context, j *river.Job[RunArgs]) error {
	s := w.s
	r, err := s.st.ClaimQueuedRun(ctx, db.ClaimQueuedRunParams{ID: j.Args.RunID, WorkerID: &s.workerID})
	if store.IsNotFound(err) {
		return nil // cancelled while queued, or started already
	}
	if err != nil {
		return err // not started: River tries again with backoff
	}
	s.execute(ctx, r)
	return nil
}
