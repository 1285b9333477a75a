package stats

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"

	"github.com/sdods/sdods/gen/db"
	"github.com/sdods/sdods/impl/server/jobs"
)

// A run's finish records it as pending in the statistics rollup (schema 000035); a RollupArgs job,
// inserted in the same transaction (QueueRollup), applies it afterwards, so a finish — the ingest
// request's transaction, the runner's last write — does not pay for the rollup. A read of the
// rollup applies what is still pending in its scope first (Service.settle), and a sweep every
// RollupSweepInterval applies what no job was inserted for (a run finished by a path that does not
// call QueueRollup, a job lost with its process). docs/stats.md, "How it is kept current".

// RollupQueue is the queue of the rollup's jobs: one at a time per process, since two drains of
// one project wait for each other on its lock, and a drain holds a database connection.
const RollupQueue = "stats_rollup"

// RollupBatch is how many runs one transaction of a drain applies.
const RollupBatch = 50

// RollupSweepInterval is how often every pending run is applied, whatever inserted it.
const RollupSweepInterval = time.Minute

// RollupArgs asks for a project's pending runs to be applied to the rollup.
type RollupArgs struct {
	ProjectID uuid.UUID `json:"project_id"`
}

// Kind names the job.
func (RollupArgs) Kind() string { return "stats_rollup" }

// InsertOpts puts the job on RollupQueue.
func (RollupArgs) InsertOpts() river.InsertOpts { return river.InsertOpts{Queue: RollupQueue} }

// RollupSweepArgs asks for every project's pending runs to be applied.
type RollupSweepArgs struct{}

// Kind names the job.
func (RollupSweepArgs) Kind() string { return "stats_rollup_sweep" }

// InsertOpts puts the sweep on RollupQueue; a failed one is not retried, the next comes soon.
func (RollupSweepArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: RollupQueue, MaxAttempts: 1}
}

// QueueRollup inserts the job that applies a finished run of project, in the transaction of q
// (from store.WithTx) that finishes it.
func QueueRollup(ctx context.Context, q *db.Queries, project uuid.UUID) error {
	_, err := jobs.InsertTx(ctx, q, RollupArgs{ProjectID: project}, nil)
	return err
}

// Roller is what the rollup's jobs need of the store.
type Roller interface {
	StatsRollupDrain(ctx context.Context, arg db.StatsRollupDrainParams) (int32, error)
	StatsRollupPendingProjects(ctx context.Context) ([]uuid.UUID, error)
}

// RegisterRollup registers the rollup's workers, its queue and its sweep on reg.
func RegisterRollup(reg *jobs.Registry, st Roller) {
	jobs.Register(reg, &rollupWorker{st: st})
	jobs.Register(reg, &rollupSweepWorker{st: st})
	reg.Queue(RollupQueue, 1)
	reg.Periodic(RollupSweepInterval, RollupSweepArgs{})
}

// Drain applies every pending run of project, RollupBatch per transaction, and returns how many.
func Drain(ctx context.Context, st Roller, project uuid.UUID) (int, error) {
	total := 0
	for {
		n, err := st.StatsRollupDrain(ctx, db.StatsRollupDrainParams{ProjectID: project, RowLimit: RollupBatch})
		if err != nil {
			return total, fmt.Errorf("stats rollup of project %s: %w", project, err)
		}
		total += int(n)
		if n < RollupBatch {
			return total, nil
		}
	}
}

type rollupWorker struct {
	river.WorkerDefaults[RollupArgs]
	st Roller
}

// Work applies the project's pending runs: this job's run, and any finished since.
func (w *rollupWorker) Work(ctx context.Context, j *river.Job[RollupArgs]) error {
	_, err := Drain(ctx, w.st, j.Args.ProjectID)
	return err
}

type rollupSweepWorker struct {
	river.WorkerDefaults[RollupSweepArgs]
	st Roller
}

// Work applies every project's pending runs.
func (w *rollupSweepWorker) Work(ctx context.Context, _ *river.Job[RollupSweepArgs]) error {
	projects, err := w.st.StatsRollupPendingProjects(ctx)
	if err != nil {
		return err
	}
	for _, p := range projects {
		if _, err := Drain(ctx, w.st, p); err != nil {
			return err
		}
	}
	return nil
}
