// Package runs is the life of a run: created queued with its River job in one transaction, executed
// by the one worker of any sdods process that River hands the job to (impl/server/jobs, queue
// "runs"), executed by impl/server/runner, observed through events stored in PostgreSQL and announced
// with NOTIFY, cancelled, timed out, or reconciled when its worker died.
//
// States: queued → running → passed | failed | errored | timed_out; queued | running → cancelled.
// A run is errored when it could not execute (its inputs failed to load, or its worker stopped).
//
// A run's liveness is ours, not River's: its worker renews runs.heartbeat_at, and any process
// ends a run whose heartbeat is stale as errored (reconcile), keeping what its scenarios recorded.
// A run's job only starts a run that is still queued, so a job that River retries, or rescues from a
// dead process (after an hour), never executes its run twice.
package runs

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/sdods/sdods/gen/db"
	"github.com/sdods/sdods/impl/server/blob"
	"github.com/sdods/sdods/impl/server/integrations"
	"github.com/sdods/sdods/impl/server/jobs"
	"github.com/sdods/sdods/impl/server/livefeed"
	"github.com/sdods/sdods/impl/server/runner"
	"github.com/sdods/sdods/impl/server/secrets"
	"github.com/sdods/sdods/impl/server/stats"
	"github.com/sdods/sdods/impl/server/store"
)

// Config tunes the workers.
type Config struct {
	// Workers is how many runs this process executes at once (the River queue "runs"); 0 makes a
	// process that executes no run (it still reconciles runs whose worker died).
	Workers int
	// Heartbeat is how often a worker proves its runs are alive (default 5s).
	Heartbeat time.Duration
	// StaleAfter is how old a heartbeat may get before its run is taken for lost (default 30s).
	StaleAfter time.Duration
	// Webhook delivers the run events to the project's webhooks.
	Webhook integrations.Webhook
}

func (c *Config) defaults() {
	if c.Workers < 0 {
		c.Workers = 0
	}
	if c.Heartbeat <= 0 {
		c.Heartbeat = 5 * time.Second
	}
	if c.StaleAfter <= 0 {
		c.StaleAfter = 30 * time.Second
	}
}

// Service runs runs.
type Service struct {
	st       *store.Store
	blobs    blob.Store
	box      *secrets.Box
	runner   *runner.Runner
	log      *slog.Logger
	cfg      Config
	workerID string
	hub      *livefeed.Hub

	mu     sync.Mutex
	active map[uuid.UUID]context.CancelFunc
	// stopping is Start's context: the process stops when it ends.
	stopping context.Context
	// onFinish runs in the transaction that finishes a run (SetFinishHook).
	onFinish func(ctx context.Context, q *db.Queries, run db.Run) error
}

// SetFinishHook makes f run in the transaction that gives a run its final status, after the run's
// webhook deliveries are queued (for example, to start an agent job); an error of f rolls the
// finish back. Set it before Start.
func (s *Service) SetFinishHook(f func(ctx context.Context, q *db.Queries, run db.Run) error) {
	s.onFinish = f
}

// New returns the service; Register adds its job worker, Start its heartbeat and listener.
func New(st *store.Store, blobs blob.Store, box *secrets.Box, r *runner.Runner, log *slog.Logger, cfg Config) *Service {
	cfg.defaults()
	host, _ := os.Hostname()
	var b [4]byte
	_, _ = rand.Read(b[:])
	return &Service{st: st, blobs: blobs, box: box, runner: r, log: log, cfg: cfg,
		workerID: host + "-" + hex.EncodeToString(b[:]), hub: newHub(st), active: map[uuid.UUID]context.CancelFunc{}}
}

// WorkerID names this process's workers in runs.worker_id.
func (s *Service) WorkerID() string { return s.workerID }

// Terminal reports whether a run status is final.
func Terminal(status string) bool {
	switch status {
	case "passed", "failed", "errored", "cancelled", "timed_out":
		return true
	}
	return false
}

// CreateParams are the inputs of a new run.
type CreateParams struct {
	ProjectID      uuid.UUID
	Trigger        string
	Label          *string
	Paths          []string
	Tags           *string
	Environment    *string
	Branch, Commit *string
	Variables      map[string]string
	Datasets       map[string]string
	ProcessName    *string
	ScheduleID     uuid.NullUUID
	Retries        int
	TimeoutSeconds int
	CreatedBy      uuid.NullUUID
}

// Create inserts a queued run and its River job through q (the caller's store.WithTx transaction,
// which also audits it): both exist when that transaction commits, and River tells the workers of
// every process then.
func Create(ctx context.Context, q *db.Queries, p CreateParams) (db.Run, error) {
	vars, _ := json.Marshal(nonNilMap(p.Variables))
	ds, _ := json.Marshal(nonNilMap(p.Datasets))
	if p.Paths == nil {
		p.Paths = []string{}
	}
	if p.TimeoutSeconds <= 0 {
		p.TimeoutSeconds = 3600
	}
	r, err := q.CreateRun(ctx, db.CreateRunParams{ProjectID: p.ProjectID, Status: "queued", Trigger: p.Trigger, Source: "execute",
		Label: p.Label, Paths: p.Paths, Tags: p.Tags, Environment: p.Environment, Branch: p.Branch, CommitSha: p.Commit,
		Variables: vars, Datasets: ds, ProcessName: p.ProcessName, ScheduleID: p.ScheduleID, Retries: int32(p.Retries),
		TimeoutSeconds: int32(p.TimeoutSeconds), CreatedBy: p.CreatedBy})
	if err != nil {
		return r, err
	}
	if _, err := jobs.InsertTx(ctx, q, RunArgs{RunID: r.ID}, nil); err != nil {
		return r, err
	}
	return r, nil
}

func nonNilMap(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

// Cancel asks a run to stop: a queued run is cancelled at once, a running one stops within a
// second on whichever process executes it. It returns the run as it is after the request.
func (s *Service) Cancel(ctx context.Context, q *db.Queries, id uuid.UUID) (db.Run, error) {
	r, err := q.RequestCancel(ctx, id)
	if err != nil {
		return r, err
	}
	if r.Status == "cancelled" { // it was queued: it ends now, with its deliveries
		if err := s.queueDeliveries(ctx, q, r.ProjectID, r.ID, r.Status); err != nil {
			return r, err
		}
		if err := stats.QueueRollup(ctx, q, r.ProjectID); err != nil {
			return r, err
		}
	}
	if err := q.NotifyRunEvent(ctx, cancelPrefix+id.String()); err != nil {
		return r, err
	}
	return r, nil
}

// cancelPrefix marks a cancel request on the events channel.
const cancelPrefix = "cancel:"
