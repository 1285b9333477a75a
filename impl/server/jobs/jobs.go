// Package jobs is the one job system of the test automation server: River
// (github.com/riverqueue/river) on the server's pgx/v5 pool. Run execution, periodic clean-up,
// schedules, agent jobs and webhook deliveries are River jobs; nothing else runs work in the
// background. River's tables are created by store.MigrateUp with ours.
//
// A package that has background work defines its job's arguments and worker, and registers them
// on the process's Registry (built by app.New, handed to the services):
//
//	type PruneArgs struct{ Days int `json:"days"` }
//	func (PruneArgs) Kind() string { return "prune" }
//
//	type pruneWorker struct {
//		river.WorkerDefaults[PruneArgs] // defaults: 25 attempts with backoff, 1 minute timeout
//		st *store.Store
//	}
//	func (w *pruneWorker) Work(ctx context.Context, j *river.Job[PruneArgs]) error { … }
//
//	jobs.Register(reg, &pruneWorker{st: st})            // who works PruneArgs
//	reg.Periodic(time.Hour, PruneArgs{Days: 30})        // inserted hourly, once per hour for all processes
//	reg.Queue("runs", 4)                                // a queue of its own, 4 at once per process
//
// A job that must exist exactly when some rows do is inserted in the transaction that writes them,
// so that both commit or neither does:
//
//	err := st.WithTx(ctx, func(q *db.Queries) error {
//		… q.CreateThing(ctx, …) …
//		_, err := jobs.InsertTx(ctx, q, PruneArgs{Days: 7}, nil)
//		return err
//	})
//
// app.Serve starts the Client (jobs.New + Start) in processes that work jobs (`sdods serve
// --role worker|all`) and stops it on shutdown; an API-only process (`--role api`) only inserts.
// Jobs go to river.QueueDefault unless their InsertOpts (or the args' InsertOpts method) name a
// queue declared with Registry.Queue. docs/jobs.md is the operator's side.
package jobs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertype"

	"github.com/sdods/sdods/gen/db"
	"github.com/sdods/sdods/impl/server/store"
)

// DefaultWorkers is how many jobs of river.QueueDefault one process works at once.
const DefaultWorkers = 10

// Registry collects the workers, periodic jobs and queues of one process before its Client is
// built. It is not safe for concurrent use; register everything while wiring the process.
type Registry struct {
	workers  *river.Workers
	periodic []*river.PeriodicJob
	queues   map[string]int
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{workers: river.NewWorkers(), queues: map[string]int{}}
}

// Register makes w the worker of the jobs whose args are of type T (their Kind). A kind
// registered twice panics, as river.AddWorker does: it is a wiring mistake.
func Register[T river.JobArgs](r *Registry, w river.Worker[T]) {
	river.AddWorker(r.workers, w)
}

// Periodic inserts args every interval, the first time when the client starts. Only the elected
// leader among the processes that work jobs inserts, and the job is unique per period (its kind
// and the interval's time slot), so a leader change never doubles it.
func (r *Registry) Periodic(interval time.Duration, args river.JobArgs) {
	r.periodic = append(r.periodic, river.NewPeriodicJob(river.PeriodicInterval(interval),
		func() (river.JobArgs, *river.InsertOpts) {
			return args, &river.InsertOpts{UniqueOpts: river.UniqueOpts{ByPeriod: interval}}
		}, &river.PeriodicJobOpts{RunOnStart: true, ID: args.Kind()}))
}

// Queue declares a queue worked with at most maxWorkers jobs at once in each working process; a
// queue with maxWorkers < 1 is not worked by this process (its jobs wait for another).
func (r *Registry) Queue(name string, maxWorkers int) { r.queues[name] = maxWorkers }

// Config is how a process uses the job system.
type Config struct {
	// Work makes the client work jobs (and insert periodic ones when it leads); without it the
	// client only inserts.
	Work bool
	// ID names this process among River's clients (River makes one up when empty).
	ID string
	// Logger receives River's own log lines (warnings and errors; info is dropped).
	Logger *slog.Logger
	// DefaultWorkers overrides DefaultWorkers.
	DefaultWorkers int
	// PollInterval is how often idle workers look for jobs whose notification they missed
	// (default 1s).
	PollInterval time.Duration
	// StopGrace is how long Stop lets running jobs finish before cancelling their contexts
	// (default 5s).
	StopGrace time.Duration
	// FetchCooldown is the least time between two fetches of a queue's workers (default
	// DefaultFetchCooldown).
	FetchCooldown time.Duration
}

// DefaultFetchCooldown is the workers' FetchCooldown. River's default, 100 ms, made a job
// inserted within 100 ms of its queue's last fetch wait for the rest of those 100 ms (River fetches
// at once on a notification, then at most once per cooldown): the second of two runs started
// together, or a run started just after another was picked up, began up to 100 ms late, as long
// as a run of a few hundred scenarios takes (docs/benchmarks.md, "Runner: round 3"). At 10 ms a
// queue's workers still fetch at most 100 times a second under a steady stream of inserts.
const DefaultFetchCooldown = 10 * time.Millisecond

// Client is River's client of one process.
type Client struct {
	river *river.Client[pgx.Tx]
	cfg   Config
}

// New builds the client of reg's workers and queues on pool. It does not start it.
func New(pool *pgxpool.Pool, reg *Registry, cfg Config) (*Client, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.StopGrace <= 0 {
		cfg.StopGrace = 5 * time.Second
	}
	if cfg.FetchCooldown <= 0 {
		cfg.FetchCooldown = DefaultFetchCooldown
	}
	if cfg.PollInterval > 0 && cfg.PollInterval < cfg.FetchCooldown {
		cfg.FetchCooldown = cfg.PollInterval // River refuses a poll shorter than the cooldown
	}
	rc := &river.Config{ID: cfg.ID, Logger: slog.New(atLeast{cfg.Logger.Handler(), slog.LevelWarn}), FetchPollInterval: cfg.PollInterval,
		FetchCooldown: cfg.FetchCooldown, SoftStopTimeout: cfg.StopGrace}
	if cfg.Work {
		n := cfg.DefaultWorkers
		if n <= 0 {
			n = DefaultWorkers
		}
		rc.Queues = map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: n}}
		for name, max := range reg.queues {
			if max < 1 {
				delete(rc.Queues, name)
				continue
			}
			rc.Queues[name] = river.QueueConfig{MaxWorkers: max}
		}
		rc.Workers = reg.workers
		rc.PeriodicJobs = reg.periodic
	}
	rc.ErrorHandler = errorLogger{cfg.Logger}
	c, err := river.NewClient(riverpgxv5.New(pool), rc)
	if err != nil {
		return nil, fmt.Errorf("jobs: %w", err)
	}
	return &Client{river: c, cfg: cfg}, nil
}

// Start begins working jobs (a no-op for an insert-only client); Stop ends it. Cancelling ctx
// stops at once, cancelling running jobs: pass a context that lives as long as the process.
func (c *Client) Start(ctx context.Context) error {
	if !c.cfg.Work {
		return nil
	}
	if err := c.river.Start(ctx); err != nil {
		return fmt.Errorf("jobs: start: %w", err)
	}
	return nil
}

// Stop stops fetching jobs, lets the running ones finish for Config.StopGrace, then cancels their
// contexts and waits for them to return (or for ctx to end). A worker sees its context cancelled and ends its job as
// it should end when the process stops (a run is recorded as errored).
func (c *Client) Stop(ctx context.Context) {
	if !c.cfg.Work {
		return
	}
	if err := c.river.Stop(ctx); err != nil {
		c.cfg.Logger.Warn("jobs: stop", "error", err)
	}
}

// Insert inserts one job on its own, outside any transaction.
func (c *Client) Insert(ctx context.Context, args river.JobArgs, opts *river.InsertOpts) (*rivertype.JobInsertResult, error) {
	return c.river.Insert(ctx, args, opts)
}

// River is the underlying client, for what this package does not wrap (job lists, cancel).
func (c *Client) River() *river.Client[pgx.Tx] { return c.river }

// InsertTx inserts a job in the transaction q runs in (q must come from store.WithTx): the job
// exists if and only if that transaction commits. Workers of any process are told when it does.
func InsertTx(ctx context.Context, q *db.Queries, args river.JobArgs, opts *river.InsertOpts) (*rivertype.JobInsertResult, error) {
	tx, ok := store.TxOf(q)
	if !ok {
		return nil, errors.New("jobs: InsertTx needs the queries of a store.WithTx transaction")
	}
	c, err := inserter()
	if err != nil {
		return nil, err
	}
	return c.InsertTx(ctx, tx, args, opts)
}

var (
	inserterOnce sync.Once
	inserterC    *river.Client[pgx.Tx]
	inserterErr  error
)

// inserter is the insert-only client InsertTx uses: it needs no pool (it writes through the given
// transaction) and knows no workers, so any process can insert any job.
//
// Its FetchCooldown is the least River allows because River uses it for one more thing: an insert
// notifies the workers only if the queue's last notification from this client is older than it.
// At the default (100 ms), a run queued within 100 ms of the one before (runs of a few hundred
// scenarios take about that long) waited for the workers' next poll, up to PollInterval (1 s). The
// workers' own FetchCooldown still bounds how often they fetch.
func inserter() (*river.Client[pgx.Tx], error) {
	inserterOnce.Do(func() {
		inserterC, inserterErr = river.NewClient(riverpgxv5.New(nil), &river.Config{Logger: slog.New(atLeast{slog.Default().Handler(), slog.LevelWarn}),
			FetchCooldown: river.FetchCooldownMin})
	})
	return inserterC, inserterErr
}

// errorLogger logs a job that failed or panicked; River retries it per its attempts.
type errorLogger struct{ log *slog.Logger }

func (e errorLogger) HandleError(ctx context.Context, job *rivertype.JobRow, err error) *river.ErrorHandlerResult {
	e.log.Warn("job failed", "kind", job.Kind, "job_id", job.ID, "attempt", job.Attempt, "max_attempts", job.MaxAttempts, "error", err)
	return nil
}

func (e errorLogger) HandlePanic(ctx context.Context, job *rivertype.JobRow, panicVal any, trace string) *river.ErrorHandlerResult {
	e.log.Error("job panicked", "kind", job.Kind, "job_id", job.ID, "attempt", job.Attempt, "panic", fmt.Sprint(panicVal), "trace", trace)
	return nil
}

// atLeast drops records below a level (River logs every start and stop at info).
type atLeast struct {
	slog.Handler
	min slog.Level
}

func (h atLeast) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= h.min && h.Handler.Enabled(ctx, l)
}

func (h atLeast) WithAttrs(as []slog.Attr) slog.Handler {
	return atLeast{h.Handler.WithAttrs(as), h.min}
}
func (h atLeast) WithGroup(name string) slog.Handler {
	return atLeast{h.Handler.WithGroup(name), h.min}
}
