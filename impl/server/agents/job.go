package agents

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/google/uuid"

	"github.com/sdods/sdods/gen/db"
	"github.com/sdods/sdods/impl/server/audit"
)

// Job is what a kind's Run works with: the job's row and input, and the ways to report.
type Job struct {
	s     *Service
	Row   db.AgentJob
	Input Input

	mu      sync.Mutex
	pct     int
	used    int
	summary string
}

func (j *Job) progress() int { j.mu.Lock(); defer j.mu.Unlock(); return j.pct }
func (j *Job) tokens() int   { j.mu.Lock(); defer j.mu.Unlock(); return j.used }

// Queries reads the database outside any transaction.
func (j *Job) Queries() *db.Queries { return j.s.st.Queries }

// Summarize sets the job's summary.
func (j *Job) Summarize(s string) { j.mu.Lock(); j.summary = s; j.mu.Unlock() }

// Progress records how far the job got (0–100) with a message, as a progress event.
func (j *Job) Progress(ctx context.Context, pct int, msg string) error {
	j.mu.Lock()
	if pct > j.pct {
		j.pct = pct
	}
	p := j.pct
	j.mu.Unlock()
	return j.s.st.WithTx(ctx, func(q *db.Queries) error {
		return appendEvent(ctx, q, j.Row.ID, Event{Type: "progress", Progress: &p, Message: msg})
	})
}

// Log records a log line as an event.
func (j *Job) Log(ctx context.Context, format string, args ...any) error {
	return j.s.st.WithTx(ctx, func(q *db.Queries) error {
		return appendEvent(ctx, q, j.Row.ID, Event{Type: "log", Message: fmt.Sprintf(format, args...)})
	})
}

// UseTokens counts n tokens against the job's token budget; beyond it the job fails.
func (j *Job) UseTokens(n int) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.used += n
	if j.Row.MaxTokens != nil && j.used > int(*j.Row.MaxTokens) {
		return fmt.Errorf("%w: the token budget of %d is spent (%d used)", ErrBudget, *j.Row.MaxTokens, j.used)
	}
	return nil
}

// Draft is a proposal a job makes.
type Draft struct {
	Kind       string
	Title      string
	Target     map[string]any
	Diff       *string
	Evidence   map[string]any
	Confidence float64
}

// Propose records a pending proposal of the job's project, its proposal event and an audit entry
// whose actor is the job.
func (j *Job) Propose(ctx context.Context, d Draft) (uuid.UUID, error) { return j.propose(ctx, d, nil) }

// actor is the audit request of what the job writes on its own.
func (j *Job) actor() *audit.Request {
	return &audit.Request{Operation: "agentJob", Actor: audit.Actor{Kind: "agent", ID: j.Row.ID, Name: "agent job " + j.Row.Kind}}
}

func (j *Job) propose(ctx context.Context, d Draft, contentAfter *string) (uuid.UUID, error) {
	target, _ := json.Marshal(nonNil(d.Target))
	ev, _ := json.Marshal(nonNil(d.Evidence))
	actx := audit.WithRequest(ctx, j.actor())
	var id uuid.UUID
	err := j.s.st.WithTx(ctx, func(q *db.Queries) error {
		var (
			p   db.Proposal
			err error
		)
		job := uuid.NullUUID{UUID: j.Row.ID, Valid: true}
		if d.Kind == "feature_patch" {
			p, err = q.CreateFeaturePatchProposal(ctx, db.CreateFeaturePatchProposalParams{ProjectID: j.Row.ProjectID, JobID: job, Title: d.Title,
				Target: target, Diff: d.Diff, Evidence: ev, Confidence: float32(d.Confidence), ContentAfter: contentAfter})
		} else {
			p, err = q.CreateProposal(ctx, db.CreateProposalParams{ProjectID: j.Row.ProjectID, JobID: job,
				Kind: d.Kind, Status: "pending", Title: d.Title, Target: target, Diff: d.Diff, Evidence: ev, Confidence: float32(d.Confidence)})
		}
		if err != nil {
			return err
		}
		id = p.ID
		if err := appendEvent(ctx, q, j.Row.ID, Event{Type: "proposal", ProposalID: &p.ID, Message: d.Title}); err != nil {
			return err
		}
		return audit.Record(actx, q, audit.Target{Kind: "proposal", ID: p.ID.String(), Name: d.Title}, map[string]any{"kind": d.Kind, "jobId": j.Row.ID})
	})
	return id, err
}

func nonNil(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}
