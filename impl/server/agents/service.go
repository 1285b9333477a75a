package agents

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/sdods/sdods/impl/server/egress"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"

	"github.com/sdods/sdods/gen/db"
	"github.com/sdods/sdods/impl/server/apierr"
	"github.com/sdods/sdods/impl/server/audit"
	"github.com/sdods/sdods/impl/server/jobs"
	"github.com/sdods/sdods/impl/server/livefeed"
	"github.com/sdods/sdods/impl/server/secrets"
	"github.com/sdods/sdods/impl/server/store"
)

// Budget defaults and bounds.
const (
	DefaultMaxSeconds = 300
	DefaultMaxTokens  = 20000
)

// Config tunes the service.
type Config struct {
	// WorkerID names this process in agent_jobs.worker_id.
	WorkerID string
	// Heartbeat is how often a working job proves it is alive and reads a cancel request
	// (default 250ms, so that a cancel stops it within a second).
	Heartbeat time.Duration
	// StaleAfter is how old a running job's heartbeat may get before the job is failed as lost
	// with its process (default 30s).
	StaleAfter time.Duration
	// Reconcile is how often the lost jobs are looked for (default 15s).
	Reconcile time.Duration
	// Egress decides which addresses an agent may reach (the llm kind's endpoint); nil: the
	// built-in denies only.
	Egress *egress.Policy
}

// Service creates, works, cancels and streams agent jobs and decides proposals.
type Service struct {
	st    *store.Store
	box   *secrets.Box
	kinds *Registry
	log   *slog.Logger
	cfg   Config
	hub   *livefeed.Hub

	llmOnce sync.Once
	llmHTTP *http.Client
}

// New returns the service of kinds; Register puts its workers on the job registry and Start
// listens for events.
func New(st *store.Store, box *secrets.Box, kinds *Registry, log *slog.Logger, cfg Config) *Service {
	if cfg.Heartbeat <= 0 {
		cfg.Heartbeat = 250 * time.Millisecond
	}
	if cfg.StaleAfter <= 0 {
		cfg.StaleAfter = 30 * time.Second
	}
	if cfg.Reconcile <= 0 {
		cfg.Reconcile = 15 * time.Second
	}
	return &Service{st: st, box: box, kinds: kinds, log: log, cfg: cfg, hub: newHub(st)}
}

// Kinds is the registry of kinds.
func (s *Service) Kinds() *Registry { return s.kinds }

// JobArgs is the River job that works one agent job.
type JobArgs struct {
	JobID      uuid.UUID `json:"jobId"`
	MaxSeconds int       `json:"maxSeconds"`
}

// Kind names the River job.
func (JobArgs) Kind() string { return "agent_job" }

// ReconcileArgs is the periodic River job that fails jobs lost with their process.
type ReconcileArgs struct{}

// Kind names the River job.
func (ReconcileArgs) Kind() string { return "agent_jobs_reconcile" }

// Register puts the workers on reg.
func (s *Service) Register(reg *jobs.Registry) {
	jobs.Register(reg, &worker{s: s})
	jobs.Register(reg, &reconciler{s: s})
	reg.Periodic(s.cfg.Reconcile, ReconcileArgs{})
}

// Terminal reports whether a job status is final.
func Terminal(status string) bool {
	return status == "succeeded" || status == "failed" || status == "cancelled"
}

// CreateParams are the inputs of a new job.
type CreateParams struct {
	ProjectID  uuid.UUID
	Kind       string
	Input      json.RawMessage
	MaxSeconds int
	MaxTokens  int
	CreatedBy  uuid.NullUUID
}

// Create checks the kind and input, and inserts the queued job, its first event, its River job
// and its audit entry in one transaction.
func (s *Service) Create(ctx context.Context, p CreateParams) (db.AgentJob, error) {
	var j db.AgentJob
	k, ok := s.kinds.Get(p.Kind)
	if !ok {
		return j, apierr.New(apierr.ValidationFailed, "unknown agent kind "+p.Kind, "GET /api/agents/kinds lists the kinds")
	}
	if k.Enabled != nil && !k.Enabled(ctx) {
		return j, apierr.New(apierr.Unprocessable, "agent kind "+p.Kind+" is not enabled", "an instance admin enables it (docs/agents.md)")
	}
	if _, err := k.decodeInput(p.Input); err != nil {
		return j, err
	}
	if len(p.Input) == 0 || string(p.Input) == "null" {
		p.Input = json.RawMessage("{}")
	}
	if p.MaxSeconds <= 0 {
		p.MaxSeconds = DefaultMaxSeconds
	}
	var maxTokens *int32
	if p.Kind == "llm" {
		if p.MaxTokens <= 0 {
			p.MaxTokens = DefaultMaxTokens
		}
		maxTokens = ptr(int32(p.MaxTokens))
	}
	actor := audit.Actor{Kind: "system", Name: "sdods"}
	if r := audit.RequestFrom(ctx); r != nil {
		actor = r.Actor
	}
	err := s.st.WithTx(ctx, func(q *db.Queries) error {
		var err error
		j, err = createTx(ctx, q, p, maxTokens, actor)
		return err
	})
	return j, err
}

// createTx inserts the queued job, its first event, its River job and its audit entry in q's
// transaction.
func createTx(ctx context.Context, q *db.Queries, p CreateParams, maxTokens *int32, actor audit.Actor) (db.AgentJob, error) {
	j, err := q.CreateAgentJob(ctx, db.CreateAgentJobParams{ProjectID: p.ProjectID, Kind: p.Kind, Input: p.Input, MaxSeconds: int32(p.MaxSeconds),
		MaxTokens: maxTokens, ActorKind: actor.Kind, ActorID: uuid.NullUUID{UUID: actor.ID, Valid: actor.ID != uuid.Nil}, ActorName: actor.Name,
		CreatedBy: p.CreatedBy})
	if err != nil {
		return j, err
	}
	if err := appendEvent(ctx, q, j.ID, Event{Type: "job.status", Status: "queued"}); err != nil {
		return j, err
	}
	if _, err := jobs.InsertTx(ctx, q, JobArgs{JobID: j.ID, MaxSeconds: p.MaxSeconds}, &river.InsertOpts{MaxAttempts: 1}); err != nil {
		return j, err
	}
	return j, audit.Record(ctx, q, audit.Target{Kind: "agent_job", ID: j.ID.String(), Name: p.Kind}, map[string]any{"kind": p.Kind})
}

// QueueHealTx starts a heal job automatically in the transaction that finishes run, when a step
// of the run recorded a selector heal and the project has no heal job waiting yet (at most one
// queued heal job per project: a waiting job will read this run's heals when it runs). The job
// is the system's, with the heal kind's default input.
func (s *Service) QueueHealTx(ctx context.Context, q *db.Queries, run db.Run) error {
	if _, ok := s.kinds.Get("heal"); !ok || run.Trigger == "agent" {
		return nil // an agent's verification run executes a patch: its heals are not the project's
	}
	healed, err := q.RunHasHeals(ctx, run.ID)
	if err != nil || !healed {
		return err
	}
	if err := q.LockProjectAutoHeal(ctx, run.ProjectID); err != nil {
		return err
	}
	pending, err := q.PendingHealJobExists(ctx, run.ProjectID)
	if err != nil || pending {
		return err
	}
	_, err = createTx(ctx, q, CreateParams{ProjectID: run.ProjectID, Kind: "heal", Input: json.RawMessage("{}"), MaxSeconds: DefaultMaxSeconds}, nil,
		audit.Actor{Kind: "system", Name: "sdods"})
	return err
}

// Cancel stops a job: a queued one at once, a running one within a second wherever it runs.
func (s *Service) Cancel(ctx context.Context, id uuid.UUID) (db.AgentJob, error) {
	var j db.AgentJob
	err := s.st.WithTx(ctx, func(q *db.Queries) error {
		var err error
		j, err = q.RequestAgentJobCancel(ctx, id)
		if store.IsNotFound(err) {
			return apierr.New(apierr.Conflict, "the job already ended", "only queued and running jobs can be cancelled")
		}
		if err != nil {
			return err
		}
		if j.Status == "cancelled" {
			if err := appendEvent(ctx, q, id, Event{Type: "job.status", Status: "cancelled", Message: "cancelled before it started"}); err != nil {
				return err
			}
			if err := appendEvent(ctx, q, id, Event{Type: "end", Status: "cancelled"}); err != nil {
				return err
			}
		}
		return audit.Record(ctx, q, audit.Target{Kind: "agent_job", ID: id.String(), Name: j.Kind}, nil)
	})
	return j, err
}

// Event is the data of one job event (the API's AgentJobEvent).
type Event struct {
	Type       string     `json:"type"`
	JobID      uuid.UUID  `json:"jobId"`
	At         time.Time  `json:"at"`
	Sequence   int64      `json:"sequence"`
	Status     string     `json:"status,omitempty"`
	Progress   *int       `json:"progress,omitempty"`
	Message    string     `json:"message,omitempty"`
	ProposalID *uuid.UUID `json:"proposalId,omitempty"`
}

// appendEvent stores e as the job's next event and announces it when q's transaction commits.
func appendEvent(ctx context.Context, q *db.Queries, job uuid.UUID, e Event) error {
	seq, err := q.NextAgentJobSeq(ctx, job)
	if err != nil {
		return err
	}
	e.JobID, e.Sequence, e.At = job, seq, time.Now().UTC()
	data, err := json.Marshal(e)
	if err != nil {
		return err
	}
	if err := q.AppendAgentJobEvent(ctx, db.AppendAgentJobEventParams{JobID: job, Seq: seq, At: e.At, Type: e.Type, Data: data}); err != nil {
		return err
	}
	return q.NotifyAgentJobEvent(ctx, job.String())
}

// worker works the River job of one agent job.
type worker struct {
	river.WorkerDefaults[JobArgs]
	s *Service
}

// Timeout leaves the time budget to the job itself (it ends with a clear reason), with a margin.
func (w *worker) Timeout(j *river.Job[JobArgs]) time.Duration {
	return time.Duration(j.Args.MaxSeconds)*time.Second + 30*time.Second
}

var (
	errCancelled = errors.New("cancelled by request")
	errLost      = errors.New("the job is no longer running here")
)

// ErrBudget marks a spent budget; the job fails with its message.
var ErrBudget = errors.New("budget spent")

func (w *worker) Work(ctx context.Context, rj *river.Job[JobArgs]) error {
	s := w.s
	row, err := s.st.ClaimAgentJob(ctx, db.ClaimAgentJobParams{ID: rj.Args.JobID, WorkerID: &s.cfg.WorkerID})
	if store.IsNotFound(err) {
		return nil // cancelled while queued, or worked already
	}
	if err != nil {
		return err
	}
	if err := s.st.WithTx(ctx, func(q *db.Queries) error {
		return appendEvent(ctx, q, row.ID, Event{Type: "job.status", Status: "running"})
	}); err != nil {
		return err
	}
	j := &Job{s: s, Row: row}
	status, summary, reason := s.work(ctx, j)
	// The end is written even when the process is stopping: a fresh context, bounded.
	ectx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	return s.st.WithTx(ectx, func(q *db.Queries) error {
		_, err := q.FinishAgentJob(ectx, db.FinishAgentJobParams{ID: row.ID, Status: status, Summary: summary, Error: reason, TokensUsed: int32(j.tokens())})
		if store.IsNotFound(err) {
			return nil // reconciled as lost meanwhile
		}
		if err != nil {
			return err
		}
		msg := ""
		if reason != nil {
			msg = *reason
		}
		if err := appendEvent(ectx, q, row.ID, Event{Type: "job.status", Status: status, Message: msg}); err != nil {
			return err
		}
		return appendEvent(ectx, q, row.ID, Event{Type: "end", Status: status, Message: msg})
	})
}

// work runs the kind under the job's time budget, a heartbeat and the cancel watch, and says how
// the job ended.
func (s *Service) work(ctx context.Context, j *Job) (status string, summary, reason *string) {
	k, ok := s.kinds.Get(j.Row.Kind)
	if !ok {
		return "failed", nil, ptr("agent kind " + j.Row.Kind + " is not registered in this server")
	}
	in, err := k.decodeInput(j.Row.Input)
	if err != nil {
		return "failed", nil, ptr(apierr.From(err).Message)
	}
	j.Input = in
	budget := time.Duration(j.Row.MaxSeconds) * time.Second
	runCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	runCtx, cancelT := context.WithTimeoutCause(runCtx, budget, fmt.Errorf("%w: the time budget of %ds is spent", ErrBudget, j.Row.MaxSeconds))
	defer cancelT()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(s.cfg.Heartbeat)
		defer t.Stop()
		for {
			select {
			case <-runCtx.Done():
				return
			case <-t.C:
			}
			stop, err := s.st.HeartbeatAgentJob(runCtx, db.HeartbeatAgentJobParams{ID: j.Row.ID, Progress: int32(j.progress()), TokensUsed: int32(j.tokens())})
			switch {
			case store.IsNotFound(err):
				cancel(errLost)
				return
			case err != nil:
				continue
			case stop:
				cancel(errCancelled)
				return
			}
		}
	}()
	runErr := k.Run(runCtx, j)
	cause := context.Cause(runCtx)
	cancel(nil)
	wg.Wait()
	switch {
	case errors.Is(cause, errCancelled):
		return "cancelled", nil, ptr("cancelled by request")
	case errors.Is(cause, errLost):
		return "failed", nil, ptr(errLost.Error())
	case errors.Is(cause, ErrBudget):
		return "failed", nil, ptr(strings.TrimPrefix(cause.Error(), ErrBudget.Error()+": "))
	case errors.Is(runErr, ErrBudget):
		return "failed", nil, ptr(strings.TrimPrefix(runErr.Error(), ErrBudget.Error()+": "))
	case ctx.Err() != nil:
		return "failed", nil, ptr("the server stopped while the job ran")
	case runErr != nil:
		return "failed", nil, ptr(runErr.Error())
	}
	return "succeeded", ptr(j.summary), nil
}

// reconciler fails the running jobs whose process stopped heartbeating.
type reconciler struct {
	river.WorkerDefaults[ReconcileArgs]
	s *Service
}

func (r *reconciler) Work(ctx context.Context, _ *river.Job[ReconcileArgs]) error {
	_, err := r.s.ReconcileLost(ctx)
	return err
}

// ReconcileLost fails the running jobs without a heartbeat for Config.StaleAfter, with their end
// events, and returns how many.
func (s *Service) ReconcileLost(ctx context.Context) (int, error) {
	n := 0
	err := s.st.WithTx(ctx, func(q *db.Queries) error {
		lost, err := q.ReconcileLostAgentJobs(ctx, s.cfg.StaleAfter.Seconds())
		if err != nil {
			return err
		}
		n = len(lost)
		for _, j := range lost {
			msg := ""
			if j.Error != nil {
				msg = *j.Error
			}
			if err := appendEvent(ctx, q, j.ID, Event{Type: "job.status", Status: "failed", Message: msg}); err != nil {
				return err
			}
			if err := appendEvent(ctx, q, j.ID, Event{Type: "end", Status: "failed", Message: msg}); err != nil {
				return err
			}
			actx := audit.WithRequest(ctx, &audit.Request{Operation: "reconcileAgentJobs", Actor: audit.Actor{Kind: "system", Name: "sdods"}})
			if err := audit.Record(actx, q, audit.Target{Kind: "agent_job", ID: j.ID.String(), Name: j.Kind}, map[string]any{"status": "failed", "reason": msg}); err != nil {
				return err
			}
		}
		return nil
	})
	return n, err
}

func ptr[T any](v T) *T { return &v }
