package projects

import (
	"context"
	"encoding/json"
	"time"

	"github.com/google/uuid"

	"github.com/sdods/sdods/gen/db"
	"github.com/sdods/sdods/impl/server/apierr"
	"github.com/sdods/sdods/impl/server/audit"
	"github.com/sdods/sdods/impl/server/store"
)

// Project is a project with the slug and name of its workspace.
type Project struct {
	ID, WorkspaceID              uuid.UUID
	Slug, Name, Description      string
	WorkspaceSlug, WorkspaceName string
	// Settings is the stored settings document; DecodeSettings reads it.
	Settings             json.RawMessage
	CreatedAt, UpdatedAt time.Time
}

// Service owns projects: creating, reading and changing them, each change audited in its
// transaction.
type Service struct {
	st *store.Store
}

// NewService returns the project service on st.
func NewService(st *store.Store) *Service { return &Service{st: st} }

// Filter selects the projects of List.
type Filter struct {
	UserID        uuid.UUID
	InstanceAdmin bool
	WorkspaceSlug *string
	Query         *string
	// After is the slug the page starts after (nil: from the start); Limit+1 rows are returned
	// at most, so that the caller sees whether there are more.
	After *string
	Limit int
}

// List lists the projects of the workspaces where the user has a role (all for an instance
// admin), by slug.
func (s *Service) List(ctx context.Context, f Filter) ([]Project, error) {
	rows, err := s.st.ListProjectsForUser(ctx, db.ListProjectsForUserParams{InstanceAdmin: f.InstanceAdmin, UserID: f.UserID,
		WorkspaceSlug: f.WorkspaceSlug, AfterSlug: f.After, Query: f.Query, RowLimit: int32(f.Limit + 1)})
	if err != nil {
		return nil, err
	}
	out := make([]Project, len(rows))
	for i, r := range rows {
		out[i] = FromRow(db.GetProjectBySlugRow(r))
	}
	return out, nil
}

// FromRow returns the project of a stored row.
func FromRow(r db.GetProjectBySlugRow) Project {
	return Project{ID: r.ID, WorkspaceID: r.WorkspaceID, Slug: r.Slug, Name: r.Name, Description: r.Description,
		WorkspaceSlug: r.WorkspaceSlug, WorkspaceName: r.WorkspaceName, Settings: r.Settings, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}
}

// BySlug returns the project with slug (the store's not_found when there is none).
func (s *Service) BySlug(ctx context.Context, slug string) (Project, error) {
	r, err := s.st.GetProjectBySlug(ctx, slug)
	if err != nil {
		return Project{}, err
	}
	return FromRow(r), nil
}

// Workspace names the workspace a project is created in.
type Workspace struct {
	ID         uuid.UUID
	Slug, Name string
}

// Create creates a project in w (conflict when the slug is taken).
func (s *Service) Create(ctx context.Context, w Workspace, slug, name, description string, st Settings) (Project, error) {
	raw, err := json.Marshal(st)
	if err != nil {
		return Project{}, err
	}
	var out Project
	err = s.st.WithTx(ctx, func(q *db.Queries) error {
		p, err := q.CreateProject(ctx, db.CreateProjectParams{WorkspaceID: w.ID, Slug: slug, Name: name, Description: description, Settings: raw})
		if store.IsUniqueViolation(err) {
			return apierr.Wrap(err, apierr.Conflict, "project "+slug+" exists", "body member /slug: choose another slug")
		}
		if err != nil {
			return err
		}
		out = Project{ID: p.ID, WorkspaceID: w.ID, Slug: p.Slug, Name: p.Name, Description: p.Description, WorkspaceSlug: w.Slug,
			WorkspaceName: w.Name, Settings: p.Settings, CreatedAt: p.CreatedAt, UpdatedAt: p.UpdatedAt}
		return audit.Record(ctx, q, audit.Target{Kind: "project", ID: p.ID.String(), Name: p.Slug}, map[string]any{"workspace": w.Slug})
	})
	return out, err
}

// Update replaces p's name, description and settings and returns the project as changed.
func (s *Service) Update(ctx context.Context, p Project, name, description string, st Settings) (Project, error) {
	raw, err := json.Marshal(st)
	if err != nil {
		return p, err
	}
	err = s.st.WithTx(ctx, func(q *db.Queries) error {
		u, err := q.UpdateProject(ctx, db.UpdateProjectParams{ID: p.ID, Name: name, Description: description, Settings: raw})
		if err != nil {
			return err
		}
		p.Name, p.Description, p.Settings, p.UpdatedAt = u.Name, u.Description, u.Settings, u.UpdatedAt
		return audit.Record(ctx, q, audit.Target{Kind: "project", ID: p.ID.String(), Name: p.Slug}, nil)
	})
	return p, err
}

// ProcessNames returns the names of the project's processes (for the unknown-step lint rule).
func (s *Service) ProcessNames(ctx context.Context, projectID uuid.UUID) (map[string]bool, error) {
	return processNames(ctx, s.st.Queries, projectID)
}

func processNames(ctx context.Context, q *db.Queries, projectID uuid.UUID) (map[string]bool, error) {
	procs, err := q.AllProcesses(ctx, projectID)
	if err != nil {
		return nil, err
	}
	names := map[string]bool{}
	for _, pr := range procs {
		names[pr.Name] = true
	}
	return names, nil
}
