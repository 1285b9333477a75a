// Package runs is the life of a run: created queued, claimed by one worker of any sdods process
// (SELECT … FOR UPDATE SKIP LOCKED), executed by impl/server/runner, observed through events stored in
// PostgreSQL and announced with NOTIFY, cancelled, timed out, or reconciled when its worker died.
//
// States: queued → running → passed | failed | errored | timed_out; queued | running → cancelled.
// A run is errored when it could not execute (its inputs failed to load, or its worker stopped).
package runs

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"github.com/sdods/sdods/impl/server/integrations"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/sdods/sdods/gen/db"
	"github.com/sdods/sdods/impl/server/blob"
	"github.com/sdods/sdods/impl/server/runner"
	"github.com/sdods/sdods/impl/server/secrets"
	"github.com/sdods/sdods/impl/server/store"
)

// Config tunes the workers.
type Config struct {
	// Workers is how many runs this process executes at once; 0 makes an API-only process that
	// executes nothing (it still reconciles runs whose worker died).
	Workers int
	// Heartbeat is how often a worker proves its runs are alive (default 5s).
	Heartbeat time.Duration
	// StaleAfter is how old a heartbeat may get before its run is taken for lost (default 30s).
	StaleAfter time.Duration
	// Poll is how often idle workers look for queued runs without a notification (default 5s).
	Poll time.Duration
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
	if c.Poll <= 0 {
		c.Poll = 5 * time.Second
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
	hub      *hub
	wake     chan struct{}

	mu     sync.Mutex
	active map[uuid.UUID]context.CancelFunc
}

// New returns the service; Start runs its workers.
func New(st *store.Store, blobs blob.Store, box *secrets.Box, r *runner.Runner, log *slog.Logger, cfg Config) *Service {
	cfg.defaults()
	host, _ := os.Hostname()
	var b [4]byte
	_, _ = rand.Read(b[:])
	return &Service{st: st, blobs: blobs, box: box, runner: r, log: log, cfg: cfg,
		workerID: host + "-" + hex.EncodeToString(b[:]), hub: newHub(), wake: make(chan struct{}, 1), active: map[uuid.UUID]context.CancelFunc{}}
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

// Create inserts a queued run through q (the caller's transaction, which also audits it) and
// announces it to the workers of every process when that transaction commits.
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
	return r, q.NotifyRunQueued(ctx, r.ID.String())
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
	if err := q.NotifyRunEvent(ctx, cancelPrefix+id.String()); err != nil {
		return r, err
	}
	return r, nil
}

// cancelPrefix marks a cancel request on the events channel.
const cancelPrefix = "cancel:"
