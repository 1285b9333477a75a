package agents

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/sdods/sdods/gen/db"
	"github.com/sdods/sdods/impl/server/apierr"
	"github.com/sdods/sdods/impl/server/audit"
	"github.com/sdods/sdods/impl/server/store"
)

// Scope bounds what a caller sees: every workspace, or the listed ones.
type Scope struct {
	AllWorkspaces bool
	WorkspaceIDs  []uuid.UUID
}

// JobFilter selects jobs.
type JobFilter struct {
	Project, Status, Kind *string
	BeforeAt              *time.Time
	BeforeID              uuid.UUID
	Limit                 int
}

// JobView is a job with its project's slug and workspace, its creator (nil when none, or when the
// user was deleted) and the proposals it made, oldest first.
type JobView struct {
	db.AgentJob
	ProjectSlug string
	WorkspaceID uuid.UUID
	Creator     *Creator
	ProposalIDs []uuid.UUID
}

// Creator is the user who created a job.
type Creator struct {
	ID                 uuid.UUID
	Email, DisplayName string
}

// creatorOf is the creator of a job read with its user's email and name (both null when the job
// has no creator or the user is gone).
func creatorOf(id uuid.NullUUID, email, name *string) *Creator {
	if !id.Valid || email == nil || name == nil {
		return nil
	}
	return &Creator{ID: id.UUID, Email: *email, DisplayName: *name}
}

func nonNilUUIDs(ids []uuid.UUID) []uuid.UUID {
	if ids == nil {
		return []uuid.UUID{}
	}
	return ids
}

// ProposalView is a proposal with its project's slug and workspace.
type ProposalView struct {
	db.Proposal
	ProjectSlug string
	WorkspaceID uuid.UUID
	// Decider is the user who decided (nil when none or gone), when DeciderRead: read with the
	// list, where the single item's view looks it up.
	Decider     *Creator
	DeciderRead bool
}

// ScopeOf is the scope of a caller: every workspace for an instance admin, else the user's.
func (s *Service) ScopeOf(ctx context.Context, admin bool, user uuid.UUID) (Scope, error) {
	if admin {
		return Scope{AllWorkspaces: true}, nil
	}
	ids, err := s.st.UserWorkspaceIDs(ctx, user)
	return Scope{WorkspaceIDs: ids}, err
}

// GetJob returns a job with its project and workspace (not found as apierr.NotFound).
func (s *Service) GetJob(ctx context.Context, id uuid.UUID) (JobView, error) {
	r, err := s.st.GetAgentJob(ctx, id)
	if store.IsNotFound(err) {
		return JobView{}, apierr.New(apierr.NotFound, "agent job "+id.String()+" not found", "list jobs with GET /api/agents/jobs")
	}
	return JobView{AgentJob: db.AgentJob{ID: r.ID, ProjectID: r.ProjectID, Kind: r.Kind, Status: r.Status, Input: r.Input, MaxSeconds: r.MaxSeconds,
		MaxTokens: r.MaxTokens, TokensUsed: r.TokensUsed, Progress: r.Progress, Summary: r.Summary, Error: r.Error, CancelRequested: r.CancelRequested,
		WorkerID: r.WorkerID, HeartbeatAt: r.HeartbeatAt, LastSeq: r.LastSeq, ActorKind: r.ActorKind, ActorID: r.ActorID, ActorName: r.ActorName,
		CreatedBy: r.CreatedBy, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt, StartedAt: r.StartedAt, FinishedAt: r.FinishedAt},
		ProjectSlug: r.ProjectSlug, WorkspaceID: r.WorkspaceID, Creator: creatorOf(r.CreatedBy, r.CreatorEmail, r.CreatorName),
		ProposalIDs: nonNilUUIDs(r.ProposalIds)}, err
}

// Page is a page of a list as the API's JSON: N items, each the API's document, in the list's
// order, comma-separated in Items; whether another page follows, with the sort key (created_at,
// id) of the page's last item, which the next page's cursor names.
type Page struct {
	Items  []byte
	N      int
	More   bool
	LastAt time.Time
	LastID uuid.UUID
}

// ListJobs lists a page of f.Limit jobs in scope, newest first, each one the API's AgentJob
// document.
func (s *Service) ListJobs(ctx context.Context, sc Scope, f JobFilter) (Page, error) {
	return s.listJobs(ctx, db.ListAgentJobsParams{AllWorkspaces: sc.AllWorkspaces, WorkspaceIds: nonNilIDs(sc.WorkspaceIDs), Project: f.Project,
		Status: f.Status, Kind: f.Kind, BeforeAt: f.BeforeAt, BeforeID: uuid.NullUUID{UUID: f.BeforeID, Valid: f.BeforeAt != nil}, RowLimit: int32(f.Limit + 1)}, f.Limit)
}

// ProposalFilter selects proposals.
type ProposalFilter struct {
	Project, Status, Kind *string
	JobID                 uuid.NullUUID
	MinConfidence         float32
	BeforeAt              *time.Time
	BeforeID              uuid.UUID
	Limit                 int
}

// ListProposals lists the review inbox in scope, newest first (created_at, then id, both
// descending): agent proposals and visual checks, read as two lists in that order, each stopped at
// f.Limit, and merged; each item with its decider. Visual checks are read only when the kind, job
// and status filters can match one.
func (s *Service) ListProposals(ctx context.Context, sc Scope, f ProposalFilter) ([]ProposalView, error) {
	before := uuid.NullUUID{UUID: f.BeforeID, Valid: f.BeforeAt != nil}
	d := inboxDecoder{text: make([]byte, 0, 8<<10)}
	withChecks := (f.Kind == nil || *f.Kind == "baseline_update") && !f.JobID.Valid && (f.Status == nil || visualCheckStatus(*f.Status))
	if f.Project != nil && f.Status != nil && !f.JobID.Valid {
		props, checks, err := s.projectInbox(ctx, &d, sc, f, withChecks)
		if err != nil {
			return nil, err
		}
		return d.views(mergeInbox(props, checks, f.Limit)), nil
	}
	props, err := s.inboxQuery(ctx, &d, func(q *db.Queries) error {
		_, err := q.ListInboxProposals(ctx, db.ListInboxProposalsParams{AllWorkspaces: sc.AllWorkspaces, WorkspaceIds: nonNilIDs(sc.WorkspaceIDs),
			Project: f.Project, Status: f.Status, Kind: f.Kind, JobID: f.JobID, MinConfidence: f.MinConfidence, BeforeAt: f.BeforeAt, BeforeID: before,
			RowLimit: int32(f.Limit)})
		return err
	}, int32(f.Limit))
	if err != nil {
		return nil, err
	}
	var checks []inboxRow
	if withChecks {
		checks, err = s.inboxQuery(ctx, &d, func(q *db.Queries) error {
			_, err := q.ListInboxVisualChecks(ctx, db.ListInboxVisualChecksParams{AllWorkspaces: sc.AllWorkspaces, WorkspaceIds: nonNilIDs(sc.WorkspaceIDs),
				Project: f.Project, Status: f.Status, MinConfidence: f.MinConfidence, BeforeAt: f.BeforeAt, BeforeID: before, RowLimit: int32(f.Limit)})
			return err
		}, int32(f.Limit))
		if err != nil {
			return nil, err
		}
	}
	return d.views(mergeInbox(props, checks, f.Limit)), nil
}

// visualCheckStatus reports whether a visual check can have the inbox status st: the view
// inbox_visual_checks (schema 000025) gives each one accepted, rejected or pending, never stale
// or verified, so a list of those statuses does not ask for visual checks.
func visualCheckStatus(st string) bool {
	return st == "pending" || st == "accepted" || st == "rejected"
}

// mergeInbox merges two lists ordered newest first (created_at, then id, descending, as
// PostgreSQL orders them) into at most limit rows in the same order.
func mergeInbox(props, checks []inboxRow, limit int) []inboxRow {
	out := make([]inboxRow, 0, min(limit, len(props)+len(checks)))
	i, j := 0, 0
	for len(out) < limit && (i < len(props) || j < len(checks)) {
		if j == len(checks) || (i < len(props) && newerFirst(props[i].createdAt, props[i].id, checks[j].createdAt, checks[j].id)) {
			out = append(out, props[i])
			i++
		} else {
			out = append(out, checks[j])
			j++
		}
	}
	return out
}

// newerFirst reports whether (at, id) comes before (at2, id2) newest first; uuids compare as bytes.
func newerFirst(at time.Time, id uuid.UUID, at2 time.Time, id2 uuid.UUID) bool {
	if !at.Equal(at2) {
		return at.After(at2)
	}
	return bytes.Compare(id[:], id2[:]) > 0
}

// GetProposal returns a proposal with its project and workspace.
func (s *Service) GetProposal(ctx context.Context, id uuid.UUID) (ProposalView, error) {
	r, err := s.st.GetProposal(ctx, id)
	if store.IsNotFound(err) {
		return ProposalView{}, apierr.New(apierr.NotFound, "proposal "+id.String()+" not found", "list proposals with GET /api/proposals")
	}
	return ProposalView{Proposal: db.Proposal{ID: r.ID, ProjectID: r.ProjectID, JobID: r.JobID, Kind: r.Kind, Status: r.Status, Title: r.Title,
		Target: r.Target, Diff: r.Diff, Evidence: r.Evidence, Confidence: r.Confidence, DecidedBy: r.DecidedBy, DecidedAt: r.DecidedAt, Reason: r.Reason,
		CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}, ProjectSlug: r.ProjectSlug, WorkspaceID: r.WorkspaceID}, err
}

// Decision is a person's decision on a proposal.
type Decision struct {
	By     uuid.NullUUID
	Reason string
	Force  bool
	// Admin is set when the decider is an instance admin (force needs it).
	Admin bool
}

// Target is a proposal's target as stored.
type Target struct {
	FeaturePath  string     `json:"featurePath,omitempty"`
	Etag         string     `json:"etag,omitempty"`
	Scenario     string     `json:"scenario,omitempty"`
	ScenarioName string     `json:"scenarioName,omitempty"`
	ExampleRow   *int32     `json:"exampleRow,omitempty"`
	RunID        *uuid.UUID `json:"runId,omitempty"`
	Baseline     string     `json:"baseline,omitempty"`
}

// Accept applies a proposal and records who accepted it, atomically. Only a verified proposal
// is accepted unless d.Force by an instance admin; a classification needs no verification (it
// changes nothing but the record).
func (s *Service) Accept(ctx context.Context, id uuid.UUID, d Decision) (ProposalView, error) {
	if d.Force && !d.Admin {
		return ProposalView{}, apierr.New(apierr.Forbidden, "only an instance admin can force an unverified proposal", "wait for the verification, or ask an instance admin")
	}
	err := s.st.WithTx(ctx, func(q *db.Queries) error {
		p, err := q.LockProposal(ctx, id)
		if store.IsNotFound(err) {
			return acceptCheck(ctx, q, id, d)
		}
		if err != nil {
			return err
		}
		if p.Status == "accepted" || p.Status == "rejected" || p.Status == "stale" {
			return apierr.New(apierr.Conflict, "the proposal is already "+p.Status, "only pending and verified proposals can be decided")
		}
		if p.Status != "verified" && p.Kind != "classification" && !d.Force {
			return apierr.New(apierr.Conflict, "the proposal is not verified", "accept it once it is verified, or (instance admins) pass force")
		}
		var t Target
		_ = json.Unmarshal(p.Target, &t)
		detail := map[string]any{"kind": p.Kind, "force": d.Force, "wasStatus": p.Status}
		switch p.Kind {
		case "quarantine":
			var ev struct {
				Owner         string `json:"owner"`
				ExpiresInDays int    `json:"expiresInDays"`
			}
			_ = json.Unmarshal(p.Evidence, &ev)
			exp := time.Now().Add(time.Duration(max(ev.ExpiresInDays, 1)) * 24 * time.Hour)
			owner := strings.TrimSpace(ev.Owner)
			if owner == "" {
				owner = "unassigned"
			}
			qr, err := q.CreateQuarantine(ctx, db.CreateQuarantineParams{ProjectID: p.ProjectID, FeaturePath: t.FeaturePath, Name: t.ScenarioName, ExampleRow: t.ExampleRow,
				Owner: owner, Reason: "accepted proposal " + p.ID.String() + ": " + p.Title, ExpiresAt: &exp, CreatedBy: d.By})
			if store.IsUniqueViolation(err) {
				return apierr.Wrap(err, apierr.Conflict, "the scenario is already quarantined", "reject the proposal, or release the quarantine first")
			}
			if err != nil {
				return err
			}
			detail["quarantineId"] = qr.ID
		case "feature_patch":
			if p.ContentAfter == nil {
				return apierr.New(apierr.Unprocessable, "the patch has no content to apply", "re-run the heal job")
			}
			saved, ok, err := applyPatch(ctx, q, p.ProjectID, t.FeaturePath, t.Etag, *p.ContentAfter)
			if err != nil {
				return apierr.Wrap(err, apierr.Unprocessable, "the patch no longer applies: "+err.Error(), "re-run the heal job")
			}
			if !ok {
				return errStale
			}
			detail["featureEtag"] = saved.Etag
			detail["featurePath"] = t.FeaturePath
		case "classification":
		default:
			return apierr.New(apierr.Unprocessable, "accepting a "+p.Kind+" proposal is not supported by this server", "reject it, or apply the change by hand")
		}
		_, err = q.DecideProposal(ctx, db.DecideProposalParams{ID: id, Status: "accepted", DecidedBy: d.By, Reason: nonEmpty(d.Reason)})
		if err != nil {
			return err
		}
		return audit.Record(ctx, q, audit.Target{Kind: "proposal", ID: id.String(), Name: p.Title}, detail)
	})
	if errors.Is(err, errStale) {
		// The feature changed since the proposal was made: it can never apply again.
		if e := s.st.WithTx(ctx, func(q *db.Queries) error {
			if err := q.MarkProposalStale(ctx, id); err != nil {
				return err
			}
			return audit.Record(ctx, q, audit.Target{Kind: "proposal", ID: id.String()}, map[string]any{"status": "stale"})
		}); e != nil {
			return ProposalView{}, e
		}
		return ProposalView{}, apierr.New(apierr.Conflict, "the feature changed since the proposal was made (If-Match failed); the proposal is now stale",
			"re-run the job that made it against the current feature")
	}
	if err != nil {
		return ProposalView{}, err
	}
	return s.GetProposal(ctx, id)
}

var errStale = errors.New("stale")

// Reject records the decision and its reason (required).
func (s *Service) Reject(ctx context.Context, id uuid.UUID, d Decision) (ProposalView, error) {
	if strings.TrimSpace(d.Reason) == "" {
		return ProposalView{}, apierr.New(apierr.ValidationFailed, "a rejection needs a reason", "body member /reason: say why, so the agents learn from it")
	}
	err := s.st.WithTx(ctx, func(q *db.Queries) error {
		p, err := q.LockProposal(ctx, id)
		if store.IsNotFound(err) {
			return rejectCheck(ctx, q, id, d)
		}
		if err != nil {
			return err
		}
		if p.Status == "accepted" || p.Status == "rejected" || p.Status == "stale" {
			return apierr.New(apierr.Conflict, "the proposal is already "+p.Status, "only pending and verified proposals can be decided")
		}
		_, err = q.DecideProposal(ctx, db.DecideProposalParams{ID: id, Status: "rejected", DecidedBy: d.By, Reason: &d.Reason})
		if err != nil {
			return err
		}
		return audit.Record(ctx, q, audit.Target{Kind: "proposal", ID: id.String(), Name: p.Title}, map[string]any{"kind": p.Kind, "reason": d.Reason})
	})
	if err != nil {
		return ProposalView{}, err
	}
	return s.GetProposal(ctx, id)
}

// acceptCheck promotes a visual check's capture to its baseline, as POST
// /api/runs/{runId}/baselines/accept does, and marks the check accepted.
func acceptCheck(ctx context.Context, q *db.Queries, id uuid.UUID, d Decision) error {
	c, err := q.LockVisualCheck(ctx, id)
	if store.IsNotFound(err) {
		return apierr.New(apierr.NotFound, "proposal "+id.String()+" not found", "list proposals with GET /api/proposals")
	}
	if err != nil {
		return err
	}
	if c.Status == "accepted" || c.Rejected {
		return apierr.New(apierr.Conflict, "the baseline update is already decided", "only pending baseline updates can be decided")
	}
	if err := q.AcceptBaseline(ctx, db.AcceptBaselineParams{ProjectID: c.ProjectID, Name: c.Name, Browser: c.Browser, Viewport: c.Viewport,
		MediaType: c.ActualMediaType, SizeBytes: c.ActualSizeBytes, Sha256: c.ActualSha256, BlobKey: c.ActualBlobKey,
		SourceRunID: uuid.NullUUID{UUID: c.RunID, Valid: true}, AcceptedBy: d.By}); err != nil {
		return err
	}
	if err := q.MarkVisualChecksAccepted(ctx, db.MarkVisualChecksAcceptedParams{Ids: []uuid.UUID{c.ID}, AcceptedBy: d.By}); err != nil {
		return err
	}
	return audit.Record(ctx, q, audit.Target{Kind: "baseline", ID: c.ID.String(), Name: c.Name}, map[string]any{"runId": c.RunID, "browser": c.Browser, "viewport": c.Viewport})
}

// rejectCheck records the rejection of a visual check's capture; the baseline stays.
func rejectCheck(ctx context.Context, q *db.Queries, id uuid.UUID, d Decision) error {
	c, err := q.LockVisualCheck(ctx, id)
	if store.IsNotFound(err) {
		return apierr.New(apierr.NotFound, "proposal "+id.String()+" not found", "list proposals with GET /api/proposals")
	}
	if err != nil {
		return err
	}
	if c.Status == "accepted" || c.Rejected {
		return apierr.New(apierr.Conflict, "the baseline update is already decided", "only pending baseline updates can be decided")
	}
	if err := q.RejectVisualCheck(ctx, db.RejectVisualCheckParams{CheckID: id, Reason: d.Reason, DecidedBy: d.By}); err != nil {
		return err
	}
	return audit.Record(ctx, q, audit.Target{Kind: "baseline", ID: c.ID.String(), Name: c.Name}, map[string]any{"reason": d.Reason})
}

func nonEmpty(s string) *string {
	if strings.TrimSpace(s) == "" {
		return nil
	}
	return &s
}

func nonNilIDs(ids []uuid.UUID) []uuid.UUID {
	if ids == nil {
		return []uuid.UUID{}
	}
	return ids
}
