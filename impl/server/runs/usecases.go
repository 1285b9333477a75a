package runs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/sdods/sdods/gen/db"
	"github.com/sdods/sdods/impl/server/apierr"
	"github.com/sdods/sdods/impl/server/audit"
	"github.com/sdods/sdods/impl/server/runner"
	"github.com/sdods/sdods/impl/server/stats"
	"github.com/sdods/sdods/impl/server/store"
	"github.com/sdods/sdods/impl/textclip"
)

// Run is a run as stored: what was asked, where it stands, and its counts as the JSON the
// worker and ingest keep up to date.
type Run struct {
	ID, ProjectID         uuid.UUID
	Status, Trigger       string
	Source                string
	Label                 *string
	Paths                 []string
	Tags, Environment     *string
	Branch, CommitSha     *string
	Variables             json.RawMessage
	ProcessName           *string
	ScheduleID, CreatedBy *uuid.UUID
	CreatedAt, UpdatedAt  time.Time
	StartedAt, FinishedAt *time.Time
	Error                 *string
	Counts                json.RawMessage
}

// ProjectRun is a run with the project and workspace it belongs to.
type ProjectRun struct {
	Run         Run
	ProjectSlug string
	WorkspaceID uuid.UUID
}

func nullable(u uuid.NullUUID) *uuid.UUID {
	if !u.Valid {
		return nil
	}
	id := u.UUID
	return &id
}

func runOf(r db.Run) Run {
	return Run{ID: r.ID, ProjectID: r.ProjectID, Status: r.Status, Trigger: r.Trigger, Source: r.Source, Label: r.Label, Paths: r.Paths,
		Tags: r.Tags, Environment: r.Environment, Branch: r.Branch, CommitSha: r.CommitSha, Variables: r.Variables, ProcessName: r.ProcessName,
		ScheduleID: nullable(r.ScheduleID), CreatedBy: nullable(r.CreatedBy), CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt,
		StartedAt: r.StartedAt, FinishedAt: r.FinishedAt, Error: r.Error, Counts: r.Counts}
}

// Get returns a run with its project; an unknown id is an error store.IsNotFound accepts.
func (s *Service) Get(ctx context.Context, id uuid.UUID) (ProjectRun, error) {
	r, err := s.st.GetRun(ctx, id)
	if err != nil {
		return ProjectRun{}, err
	}
	return ProjectRun{Run: runOf(r.Run), ProjectSlug: r.ProjectSlug, WorkspaceID: r.WorkspaceID}, nil
}

// ListFilter selects runs, newest first: those of UserID's workspaces (of every workspace with
// AllWorkspaces), matching the filters set, before (BeforeAt, BeforeID) when BeforeAt is set;
// Limit rows at most.
type ListFilter struct {
	AllWorkspaces bool
	UserID        uuid.UUID
	Project       *string
	Statuses      []string
	// Any of Branches, Triggers, Tags (a tag matches as a substring of the run's tag expression)
	// and none of the Not lists; an empty list does not filter.
	Branches, NotBranches []string
	Triggers, NotTriggers []string
	Tags, NotTags         []string
	ScheduleID            *uuid.UUID
	Since, Until          *time.Time
	BeforeAt              *time.Time
	BeforeID              uuid.UUID
	Limit                 int
}

// List lists runs by f: each run's summary (no variables, error or creator: the list shows none),
// decoded from ListRuns's binary rows (list.go), or from those of a statement that gives the
// same rows under one generic plan for a project's hottest filters (genericList).
func (s *Service) List(ctx context.Context, f ListFilter) ([]ProjectRun, error) {
	params, err := s.listParams(ctx, f)
	if err != nil {
		return nil, err
	}
	if _, call := genericList(ctx, params); call != nil {
		return s.listGeneric(ctx, call)
	}
	return s.listRuns(ctx, params)
}

// listParams are ListRuns's arguments for f.
func (s *Service) listParams(ctx context.Context, f ListFilter) (db.ListRunsParams, error) {
	params := db.ListRunsParams{AllWorkspaces: f.AllWorkspaces, WorkspaceIds: []uuid.UUID{}, Project: f.Project, Statuses: f.Statuses,
		Branches: orEmpty(f.Branches), NotBranches: orEmpty(f.NotBranches), Triggers: orEmpty(f.Triggers), NotTriggers: orEmpty(f.NotTriggers),
		TagPatterns: tagPatterns(f.Tags), NotTagPatterns: tagPatterns(f.NotTags), Since: f.Since, Until: f.Until, RowLimit: int32(f.Limit)}
	if params.Statuses == nil {
		params.Statuses = []string{}
	}
	if !f.AllWorkspaces {
		var err error
		if params.WorkspaceIds, err = s.st.UserWorkspaceIDs(ctx, f.UserID); err != nil {
			return params, err
		}
	}
	if f.ScheduleID != nil {
		params.ScheduleID = uuid.NullUUID{UUID: *f.ScheduleID, Valid: true}
	}
	if f.BeforeAt != nil {
		params.BeforeAt, params.BeforeID = f.BeforeAt, uuid.NullUUID{UUID: f.BeforeID, Valid: true}
	}
	return params, nil
}

// CheckInputs refuses a run whose tag expression does not compile, or whose environment,
// datasets or paths do not exist, before it is queued.
func (s *Service) CheckInputs(ctx context.Context, p CreateParams) error {
	if p.Tags != nil {
		// Checked here, as features are validated, rather than erroring the queued run.
		if _, err := runner.ParseTagExpr(*p.Tags); err != nil {
			var te *runner.TagExprError
			if errors.As(err, &te) {
				return apierr.Wrap(err, apierr.ValidationFailed, "the tag expression does not compile",
					fmt.Sprintf("body member /tags, column %d: %s", te.Column, textclip.Counted(te.Msg, 200)))
			}
			return apierr.Wrap(err, apierr.ValidationFailed, "the tag expression does not compile", "body member /tags: "+textclip.Counted(err.Error(), 200))
		}
	}
	if p.Environment != nil {
		if _, err := s.st.GetEnvironment(ctx, db.GetEnvironmentParams{ProjectID: p.ProjectID, Name: *p.Environment}); err != nil {
			if store.IsNotFound(err) {
				return apierr.New(apierr.ValidationFailed, "environment "+*p.Environment+" does not exist", "body member /environment: name one of the project's environments")
			}
			return err
		}
	}
	for alias, name := range p.Datasets {
		if _, err := s.st.GetDataset(ctx, db.GetDatasetParams{ProjectID: p.ProjectID, Name: name}); err != nil {
			if store.IsNotFound(err) {
				return apierr.New(apierr.ValidationFailed, "dataset "+name+" does not exist", "body member /datasets/"+alias+": name one of the project's datasets")
			}
			return err
		}
	}
	if len(p.Paths) == 0 {
		return nil
	}
	features, err := s.st.AllFeatures(ctx, p.ProjectID)
	if err != nil {
		return err
	}
	var missing []string
	for _, want := range p.Paths {
		w := strings.Trim(want, "/")
		found := false
		for _, f := range features {
			if f.Path == w || strings.HasPrefix(f.Path, w+"/") || w == "" || w == "." {
				found = true
				break
			}
		}
		if !found {
			missing = append(missing, want)
		}
	}
	if len(missing) > 0 {
		return apierr.New(apierr.ValidationFailed, "some paths match no feature", "body member /paths: no feature at "+strings.Join(missing, ", "))
	}
	return nil
}

// Queue inserts a queued run, its job and its audit entry in one transaction; a worker of any
// sdods process executes it.
func (s *Service) Queue(ctx context.Context, p CreateParams, projectSlug string) (Run, error) {
	var r db.Run
	err := s.st.WithTx(ctx, func(q *db.Queries) error {
		var err error
		if r, err = Create(ctx, q, p); err != nil {
			return err
		}
		return audit.Record(ctx, q, audit.Target{Kind: "run", ID: r.ID.String(), Name: projectSlug}, map[string]any{"paths": p.Paths, "trigger": p.Trigger})
	})
	return runOf(r), err
}

// Stop cancels a run at a caller's request, audited: a queued or ingested run ends at once, a
// running one within a second; a run that already ended is a conflict.
func (s *Service) Stop(ctx context.Context, r ProjectRun) (Run, error) {
	if Terminal(r.Run.Status) {
		return Run{}, apierr.New(apierr.Conflict, "the run already ended ("+r.Run.Status+")", "only queued and running runs can be cancelled")
	}
	var after db.Run
	err := s.st.WithTx(ctx, func(q *db.Queries) error {
		var err error
		if r.Run.Source == "ingest" { // no worker executes it: it ends at once
			after, err = q.CancelIngestRun(ctx, r.Run.ID)
			if store.IsNotFound(err) {
				return apierr.New(apierr.Conflict, "the run already ended", "only queued and running runs can be cancelled")
			}
			if err == nil {
				err = stats.QueueRollup(ctx, q, after.ProjectID)
			}
		} else {
			after, err = s.Cancel(ctx, q, r.Run.ID)
		}
		if err != nil {
			return err
		}
		return audit.Record(ctx, q, audit.Target{Kind: "run", ID: r.Run.ID.String(), Name: r.ProjectSlug}, map[string]any{"was": r.Run.Status})
	})
	if err != nil {
		return Run{}, err
	}
	if after.Status == "cancelled" {
		s.EndQueued(after)
	}
	return runOf(after), nil
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// tagPatterns turns tags into ILIKE patterns matching them anywhere, with LIKE's wildcards escaped.
func tagPatterns(tags []string) []string {
	out := make([]string, 0, len(tags))
	esc := strings.NewReplacer(`\`, `\\`, "%", `\%`, "_", `\_`)
	for _, t := range tags {
		out = append(out, "%"+esc.Replace(t)+"%")
	}
	return out
}
