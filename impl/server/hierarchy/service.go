package hierarchy

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/sdods/sdods/gen/db"
	"github.com/sdods/sdods/impl/server/apierr"
	"github.com/sdods/sdods/impl/server/audit"
	"github.com/sdods/sdods/impl/server/store"
)

// Service owns organisations, workspaces and their memberships: every change of a membership,
// through the member operations or a sync, goes through it, and so through the one rule that a
// workspace which has an admin keeps one (keepsAdmin).
type Service struct {
	st *store.Store
}

// New returns the membership service on st.
func New(st *store.Store) *Service { return &Service{st: st} }

// UserSummary names a member.
type UserSummary struct {
	ID          uuid.UUID
	Email       string
	DisplayName string
}

func summary(u db.User) UserSummary {
	return UserSummary{ID: u.ID, Email: u.Email, DisplayName: u.DisplayName}
}

// OrgInfo is an organisation with its counts.
type OrgInfo struct {
	ID                          uuid.UUID
	Slug, Name                  string
	MemberCount, WorkspaceCount int
	CreatedAt, UpdatedAt        time.Time
}

// OrgMember is a membership of an organisation.
type OrgMember struct {
	Role      string
	CreatedAt time.Time
	User      UserSummary
}

// WorkspaceInfo is a workspace with its organisation; Role (the caller's effective role) and the
// counts are filled where the operation computes them.
type WorkspaceInfo struct {
	ID, OrgID                 uuid.UUID
	Slug, Name, Description   string
	OrgSlug, OrgName          string
	Role                      string
	MemberCount, ProjectCount int
	CreatedAt, UpdatedAt      time.Time
}

// WorkspaceMember is an explicit membership of a workspace.
type WorkspaceMember struct {
	Role                 string
	CreatedAt, UpdatedAt time.Time
	User                 UserSummary
}

// Page selects one page of a list ordered by its key: items after After (nil: from the start),
// at most Limit+1 of them so that the caller sees whether there are more.
type Page struct {
	After *string
	Limit int
}

func (p Page) rows() int32 { return int32(p.Limit + 1) }

// ListOrgs lists the organisations userID belongs to (all of them when all), by slug.
func (s *Service) ListOrgs(ctx context.Context, userID uuid.UUID, all bool, query *string, page Page) ([]OrgInfo, error) {
	rows, err := s.st.ListOrgs(ctx, db.ListOrgsParams{AllOrgs: all, UserID: userID, AfterSlug: page.After, Query: query, RowLimit: page.rows()})
	if err != nil {
		return nil, err
	}
	out := make([]OrgInfo, len(rows))
	for i, o := range rows {
		out[i] = OrgInfo{ID: o.ID, Slug: o.Slug, Name: o.Name, MemberCount: int(o.MemberCount), WorkspaceCount: int(o.WorkspaceCount),
			CreatedAt: o.CreatedAt, UpdatedAt: o.UpdatedAt}
	}
	return out, nil
}

// Org returns the organisation with slug, or not_found.
func (s *Service) Org(ctx context.Context, slug string) (OrgInfo, error) {
	o, err := s.st.GetOrgBySlug(ctx, slug)
	if store.IsNotFound(err) {
		return OrgInfo{}, apierr.New(apierr.NotFound, "organisation "+slug+" not found", "list organisations with GET /api/orgs")
	}
	if err != nil {
		return OrgInfo{}, err
	}
	return OrgInfo{ID: o.ID, Slug: o.Slug, Name: o.Name, CreatedAt: o.CreatedAt, UpdatedAt: o.UpdatedAt}, nil
}

// ListOrgMembers lists an organisation's members by email.
func (s *Service) ListOrgMembers(ctx context.Context, orgID uuid.UUID, page Page) ([]OrgMember, error) {
	rows, err := s.st.ListOrgMembers(ctx, db.ListOrgMembersParams{OrgID: orgID, AfterEmail: page.After, RowLimit: page.rows()})
	if err != nil {
		return nil, err
	}
	out := make([]OrgMember, len(rows))
	for i, m := range rows {
		out[i] = OrgMember{Role: m.Role, CreatedAt: m.CreatedAt, User: summary(m.User)}
	}
	return out, nil
}

func userForMembership(ctx context.Context, q *db.Queries, id uuid.UUID) (db.User, error) {
	u, err := q.GetUser(ctx, id)
	if store.IsNotFound(err) {
		return u, apierr.New(apierr.ValidationFailed, "no such user", "body member /userId: name an existing user")
	}
	return u, err
}

// SetOrgMember adds userID to the organisation with role, or changes the role of a member.
func (s *Service) SetOrgMember(ctx context.Context, org OrgInfo, userID uuid.UUID, role string) (OrgMember, error) {
	var out OrgMember
	err := s.st.WithTx(ctx, func(q *db.Queries) error {
		u, err := userForMembership(ctx, q, userID)
		if err != nil {
			return err
		}
		m, err := q.UpsertOrgMember(ctx, db.UpsertOrgMemberParams{OrgID: org.ID, UserID: u.ID, Role: role})
		if err != nil {
			return err
		}
		out = OrgMember{Role: m.Role, CreatedAt: m.CreatedAt, User: summary(u)}
		return audit.Record(ctx, q, audit.Target{Kind: "orgMember", ID: org.Slug + "/" + u.ID.String(), Name: u.Email}, map[string]any{"role": role})
	})
	return out, err
}

// RemoveOrgMember removes userID from the organisation (not_found when not a member).
func (s *Service) RemoveOrgMember(ctx context.Context, org OrgInfo, userID uuid.UUID) error {
	return s.st.WithTx(ctx, func(q *db.Queries) error {
		n, err := q.RemoveOrgMember(ctx, db.RemoveOrgMemberParams{OrgID: org.ID, UserID: userID})
		if err != nil {
			return err
		}
		if n == 0 {
			return apierr.New(apierr.NotFound, "the user is not a member of "+org.Slug, "list members with GET /api/orgs/{orgSlug}/members")
		}
		return audit.Record(ctx, q, audit.Target{Kind: "orgMember", ID: org.Slug + "/" + userID.String()}, nil)
	})
}

// WorkspaceFilter selects the workspaces of ListWorkspaces.
type WorkspaceFilter struct {
	UserID        uuid.UUID
	InstanceAdmin bool
	OrgSlug       *string
	Query         *string
}

// ListWorkspaces lists the workspaces the user sees, by slug, with the user's role and the counts.
func (s *Service) ListWorkspaces(ctx context.Context, f WorkspaceFilter, page Page) ([]WorkspaceInfo, error) {
	rows, err := s.st.ListWorkspacesForUser(ctx, db.ListWorkspacesForUserParams{InstanceAdmin: f.InstanceAdmin, UserID: f.UserID,
		OrgSlug: f.OrgSlug, AfterSlug: page.After, Query: f.Query, RowLimit: page.rows()})
	if err != nil {
		return nil, err
	}
	out := make([]WorkspaceInfo, len(rows))
	for i, w := range rows {
		out[i] = WorkspaceInfo{ID: w.ID, OrgID: w.OrgID, Slug: w.Slug, Name: w.Name, Description: w.Description, OrgSlug: w.OrgSlug,
			OrgName: w.OrgName, Role: w.Role, MemberCount: int(w.MemberCount), ProjectCount: int(w.ProjectCount),
			CreatedAt: w.CreatedAt, UpdatedAt: w.UpdatedAt}
	}
	return out, nil
}

// CreateWorkspace creates a workspace in org (conflict when the slug is taken).
func (s *Service) CreateWorkspace(ctx context.Context, org OrgInfo, slug, name, description string) (WorkspaceInfo, error) {
	var out WorkspaceInfo
	err := s.st.WithTx(ctx, func(q *db.Queries) error {
		w, err := q.CreateWorkspace(ctx, db.CreateWorkspaceParams{OrgID: org.ID, Slug: slug, Name: name, Description: description})
		if store.IsUniqueViolation(err) {
			return apierr.Wrap(err, apierr.Conflict, "workspace "+slug+" exists", "body member /slug: choose another slug")
		}
		if err != nil {
			return err
		}
		out = WorkspaceInfo{ID: w.ID, OrgID: org.ID, Slug: w.Slug, Name: w.Name, Description: w.Description, OrgSlug: org.Slug, OrgName: org.Name,
			CreatedAt: w.CreatedAt, UpdatedAt: w.UpdatedAt}
		return audit.Record(ctx, q, audit.Target{Kind: "workspace", ID: w.ID.String(), Name: w.Slug}, nil)
	})
	return out, err
}

// Workspace returns the workspace with slug (store's not_found when there is none).
func (s *Service) Workspace(ctx context.Context, slug string) (WorkspaceInfo, error) {
	w, err := s.st.GetWorkspaceBySlug(ctx, slug)
	if err != nil {
		return WorkspaceInfo{}, err
	}
	return WorkspaceInfo{ID: w.ID, OrgID: w.OrgID, Slug: w.Slug, Name: w.Name, Description: w.Description, OrgSlug: w.OrgSlug, OrgName: w.OrgName,
		CreatedAt: w.CreatedAt, UpdatedAt: w.UpdatedAt}, nil
}

// WithCounts returns w with its member and project counts.
func (s *Service) WithCounts(ctx context.Context, w WorkspaceInfo) (WorkspaceInfo, error) {
	c, err := s.st.WorkspaceCounts(ctx, w.ID)
	if err != nil {
		return w, err
	}
	w.MemberCount, w.ProjectCount = int(c.MemberCount), int(c.ProjectCount)
	return w, nil
}

// EffectiveRole returns the user's role in the workspace: the explicit membership or, for an
// organisation admin, admin; "" when the user has neither.
func (s *Service) EffectiveRole(ctx context.Context, userID, workspaceID uuid.UUID) (string, error) {
	return s.st.EffectiveWorkspaceRole(ctx, db.EffectiveWorkspaceRoleParams{UserID: userID, WorkspaceID: workspaceID})
}

// ListWorkspaceMembers lists a workspace's explicit members by email, those with role only when
// role is set.
func (s *Service) ListWorkspaceMembers(ctx context.Context, workspaceID uuid.UUID, role *string, page Page) ([]WorkspaceMember, error) {
	rows, err := s.st.ListWorkspaceMembers(ctx, db.ListWorkspaceMembersParams{WorkspaceID: workspaceID, Role: role, AfterEmail: page.After, RowLimit: page.rows()})
	if err != nil {
		return nil, err
	}
	out := make([]WorkspaceMember, len(rows))
	for i, m := range rows {
		out[i] = WorkspaceMember{Role: m.Role, CreatedAt: m.CreatedAt, UpdatedAt: m.UpdatedAt, User: summary(m.User)}
	}
	return out, nil
}

// AddWorkspaceMember gives userID role in the workspace (conflict when already a member).
func (s *Service) AddWorkspaceMember(ctx context.Context, w WorkspaceInfo, userID uuid.UUID, role string) (WorkspaceMember, error) {
	var out WorkspaceMember
	err := s.st.WithTx(ctx, func(q *db.Queries) error {
		u, err := userForMembership(ctx, q, userID)
		if err != nil {
			return err
		}
		m, err := q.AddWorkspaceMember(ctx, db.AddWorkspaceMemberParams{WorkspaceID: w.ID, UserID: u.ID, Role: role})
		if store.IsUniqueViolation(err) {
			return apierr.Wrap(err, apierr.Conflict, u.Email+" is already a member", "change the role with PATCH …/members/{userId}")
		}
		if err != nil {
			return err
		}
		out = WorkspaceMember{Role: m.Role, CreatedAt: m.CreatedAt, UpdatedAt: m.UpdatedAt, User: summary(u)}
		return audit.Record(ctx, q, audit.Target{Kind: "workspaceMember", ID: w.Slug + "/" + u.ID.String(), Name: u.Email}, map[string]any{"role": role})
	})
	return out, err
}

func memberOf(ctx context.Context, q *db.Queries, workspaceID, userID uuid.UUID) (WorkspaceMember, error) {
	m, err := q.GetWorkspaceMember(ctx, db.GetWorkspaceMemberParams{WorkspaceID: workspaceID, UserID: userID})
	if store.IsNotFound(err) {
		return WorkspaceMember{}, apierr.New(apierr.NotFound, "not a member of this workspace", "list members with GET …/members")
	}
	if err != nil {
		return WorkspaceMember{}, err
	}
	return WorkspaceMember{Role: m.Role, CreatedAt: m.CreatedAt, UpdatedAt: m.UpdatedAt, User: summary(m.User)}, nil
}

// WorkspaceMember returns one explicit member (not_found when userID is none).
func (s *Service) WorkspaceMember(ctx context.Context, workspaceID, userID uuid.UUID) (WorkspaceMember, error) {
	return memberOf(ctx, s.st.Queries, workspaceID, userID)
}

// UpdateWorkspaceMember changes a member's role; a workspace's last admin keeps the role.
func (s *Service) UpdateWorkspaceMember(ctx context.Context, w WorkspaceInfo, userID uuid.UUID, role string) (WorkspaceMember, error) {
	var out WorkspaceMember
	err := s.changeMembers(ctx, w, func(q *db.Queries) error {
		before, err := memberOf(ctx, q, w.ID, userID)
		if err != nil {
			return err
		}
		if _, err := q.UpdateWorkspaceMember(ctx, db.UpdateWorkspaceMemberParams{WorkspaceID: w.ID, UserID: userID, Role: role}); err != nil {
			return err
		}
		if out, err = memberOf(ctx, q, w.ID, userID); err != nil {
			return err
		}
		return audit.Record(ctx, q, audit.Target{Kind: "workspaceMember", ID: w.Slug + "/" + userID.String(), Name: out.User.Email},
			map[string]any{"from": before.Role, "to": out.Role})
	})
	return out, err
}

// RemoveWorkspaceMember removes a member; a workspace's last admin stays.
func (s *Service) RemoveWorkspaceMember(ctx context.Context, w WorkspaceInfo, userID uuid.UUID) error {
	return s.changeMembers(ctx, w, func(q *db.Queries) error {
		before, err := memberOf(ctx, q, w.ID, userID)
		if err != nil {
			return err
		}
		if _, err := q.RemoveWorkspaceMember(ctx, db.RemoveWorkspaceMemberParams{WorkspaceID: w.ID, UserID: userID}); err != nil {
			return err
		}
		return audit.Record(ctx, q, audit.Target{Kind: "workspaceMember", ID: w.Slug + "/" + userID.String(), Name: before.User.Email}, nil)
	})
}

// changeMembers runs fn, which changes the explicit members of w, in one transaction under the
// workspace's member lock, and refuses (rolls back) a change that leaves w without an admin.
func (s *Service) changeMembers(ctx context.Context, w WorkspaceInfo, fn func(q *db.Queries) error) error {
	return s.st.WithTx(ctx, func(q *db.Queries) error {
		return guardMembers(ctx, q, w.ID, w.Slug, func() error { return fn(q) })
	})
}

// guardMembers is the one place of the last-admin rule: a workspace that has an explicit admin
// before change keeps one after it. It takes the workspace's member lock first, so that
// concurrent changes (member operations and syncs alike) are serialised and none of them counts
// an admin that another one is removing. It runs inside the caller's transaction.
func guardMembers(ctx context.Context, q *db.Queries, workspaceID uuid.UUID, slug string, change func() error) error {
	if err := q.LockWorkspaceMembers(ctx, workspaceID); err != nil {
		return err
	}
	before, err := q.CountWorkspaceAdmins(ctx, workspaceID)
	if err != nil {
		return err
	}
	if err := change(); err != nil {
		return err
	}
	if before == 0 {
		return nil
	}
	after, err := q.CountWorkspaceAdmins(ctx, workspaceID)
	if err != nil {
		return err
	}
	if after == 0 {
		return apierr.New(apierr.Conflict, fmt.Sprintf("the change leaves workspace %s without an admin: this is its last admin", slug),
			"make another member admin first")
	}
	return nil
}
