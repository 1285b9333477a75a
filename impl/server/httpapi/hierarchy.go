package httpapi

import (
	"context"

	"github.com/google/uuid"
	openapi_types "github.com/oapi-codegen/runtime/types"

	"github.com/sdods/sdods/gen/db"
	"github.com/sdods/sdods/gen/serverapi"
	"github.com/sdods/sdods/impl/server/apierr"
	"github.com/sdods/sdods/impl/server/audit"
	"github.com/sdods/sdods/impl/server/authz"
	"github.com/sdods/sdods/impl/server/hierarchy"
	"github.com/sdods/sdods/impl/server/store"
)

// ListOrgs lists the organisations the caller belongs to (all of them for an instance admin).
func (s *Server) ListOrgs(ctx context.Context, req serverapi.ListOrgsRequestObject) (serverapi.ListOrgsResponseObject, error) {
	p, uid, err := principal(ctx)
	if err != nil {
		return nil, err
	}
	var after *string
	if err := decodeCursor(req.Params.Cursor, &after); err != nil {
		return nil, err
	}
	limit := pageLimit(req.Params.Limit)
	rows, err := s.Store.ListOrgs(ctx, db.ListOrgsParams{AllOrgs: p.InstanceAdmin, UserID: uid, AfterSlug: after, Query: req.Params.Q, RowLimit: int32(limit + 1)})
	if err != nil {
		return nil, err
	}
	out := serverapi.ListOrgs200JSONResponse{Items: []serverapi.Org{}}
	for i, o := range rows {
		if i == limit {
			out.NextCursor = encodeCursor(rows[i-1].Slug)
			break
		}
		out.Items = append(out.Items, serverapi.Org{Id: o.ID, Slug: o.Slug, Name: o.Name, MemberCount: int(o.MemberCount),
			WorkspaceCount: int(o.WorkspaceCount), CreatedAt: o.CreatedAt, UpdatedAt: o.UpdatedAt})
	}
	return out, nil
}

func (s *Server) orgBySlug(ctx context.Context, slug string) (db.Org, error) {
	o, err := s.Store.GetOrgBySlug(ctx, slug)
	if store.IsNotFound(err) {
		return o, apierr.New(apierr.NotFound, "organisation "+slug+" not found", "list organisations with GET /api/orgs")
	}
	return o, err
}

// ListOrgMembers lists an organisation's members by email.
func (s *Server) ListOrgMembers(ctx context.Context, req serverapi.ListOrgMembersRequestObject) (serverapi.ListOrgMembersResponseObject, error) {
	o, err := s.orgBySlug(ctx, req.OrgSlug)
	if err != nil {
		return nil, err
	}
	var after *string
	if err := decodeCursor(req.Params.Cursor, &after); err != nil {
		return nil, err
	}
	limit := pageLimit(req.Params.Limit)
	rows, err := s.Store.ListOrgMembers(ctx, db.ListOrgMembersParams{OrgID: o.ID, AfterEmail: after, RowLimit: int32(limit + 1)})
	if err != nil {
		return nil, err
	}
	out := serverapi.ListOrgMembers200JSONResponse{Items: []serverapi.OrgMember{}}
	for i, m := range rows {
		if i == limit {
			out.NextCursor = encodeCursor(rows[i-1].User.Email)
			break
		}
		out.Items = append(out.Items, serverapi.OrgMember{Role: serverapi.OrgRole(m.Role), CreatedAt: m.CreatedAt, User: toUserSummary(m.User)})
	}
	return out, nil
}

// AddOrgMember adds a user to an organisation, or changes the role of a member.
func (s *Server) AddOrgMember(ctx context.Context, req serverapi.AddOrgMemberRequestObject) (serverapi.AddOrgMemberResponseObject, error) {
	o, err := s.orgBySlug(ctx, req.OrgSlug)
	if err != nil {
		return nil, err
	}
	role := serverapi.OrgRoleMember
	if req.Body.Role != nil {
		role = *req.Body.Role
	}
	var out serverapi.OrgMember
	err = s.Store.WithTx(ctx, func(q *db.Queries) error {
		u, err := q.GetUser(ctx, uuid.UUID(req.Body.UserId))
		if store.IsNotFound(err) {
			return apierr.New(apierr.ValidationFailed, "no such user", "body member /userId: name an existing user")
		} else if err != nil {
			return err
		}
		m, err := q.UpsertOrgMember(ctx, db.UpsertOrgMemberParams{OrgID: o.ID, UserID: u.ID, Role: string(role)})
		if err != nil {
			return err
		}
		out = serverapi.OrgMember{Role: role, CreatedAt: m.CreatedAt, User: toUserSummary(u)}
		return audit.Record(ctx, q, audit.Target{Kind: "orgMember", ID: o.Slug + "/" + u.ID.String(), Name: u.Email}, map[string]any{"role": role})
	})
	if err != nil {
		return nil, err
	}
	return serverapi.AddOrgMember201JSONResponse(out), nil
}

// RemoveOrgMember removes a user from an organisation.
func (s *Server) RemoveOrgMember(ctx context.Context, req serverapi.RemoveOrgMemberRequestObject) (serverapi.RemoveOrgMemberResponseObject, error) {
	o, err := s.orgBySlug(ctx, req.OrgSlug)
	if err != nil {
		return nil, err
	}
	err = s.Store.WithTx(ctx, func(q *db.Queries) error {
		n, err := q.RemoveOrgMember(ctx, db.RemoveOrgMemberParams{OrgID: o.ID, UserID: uuid.UUID(req.Params.UserId)})
		if err != nil {
			return err
		}
		if n == 0 {
			return apierr.New(apierr.NotFound, "the user is not a member of "+o.Slug, "list members with GET /api/orgs/{orgSlug}/members")
		}
		return audit.Record(ctx, q, audit.Target{Kind: "orgMember", ID: o.Slug + "/" + req.Params.UserId.String()}, nil)
	})
	if err != nil {
		return nil, err
	}
	return serverapi.RemoveOrgMember204Response{}, nil
}

// ListWorkspaces lists the caller's workspaces with the caller's effective role and the counts.
func (s *Server) ListWorkspaces(ctx context.Context, req serverapi.ListWorkspacesRequestObject) (serverapi.ListWorkspacesResponseObject, error) {
	p, uid, err := principal(ctx)
	if err != nil {
		return nil, err
	}
	var after *string
	if err := decodeCursor(req.Params.Cursor, &after); err != nil {
		return nil, err
	}
	limit := pageLimit(req.Params.Limit)
	rows, err := s.Store.ListWorkspacesForUser(ctx, db.ListWorkspacesForUserParams{InstanceAdmin: p.InstanceAdmin, UserID: uid,
		OrgSlug: req.Params.Org, AfterSlug: after, Query: req.Params.Q, RowLimit: int32(limit + 1)})
	if err != nil {
		return nil, err
	}
	out := serverapi.ListWorkspaces200JSONResponse{Items: []serverapi.Workspace{}}
	for i, w := range rows {
		if i == limit {
			out.NextCursor = encodeCursor(rows[i-1].Slug)
			break
		}
		ws := serverapi.Workspace{Id: w.ID, Slug: w.Slug, Name: w.Name, Description: nonEmpty(w.Description), MemberCount: int(w.MemberCount),
			ProjectCount: int(w.ProjectCount), CreatedAt: w.CreatedAt, UpdatedAt: w.UpdatedAt}
		ws.Org.Slug, ws.Org.Name = w.OrgSlug, w.OrgName
		if w.Role != "" {
			ws.Role = ptr(serverapi.Role(w.Role))
		}
		out.Items = append(out.Items, ws)
	}
	return out, nil
}

// CreateWorkspace creates a workspace in an organisation.
func (s *Server) CreateWorkspace(ctx context.Context, req serverapi.CreateWorkspaceRequestObject) (serverapi.CreateWorkspaceResponseObject, error) {
	b := req.Body
	o, err := s.orgBySlug(ctx, b.OrgSlug)
	if apierr.From(err).Code == apierr.NotFound {
		return nil, apierr.New(apierr.ValidationFailed, "organisation "+b.OrgSlug+" not found", "body member /orgSlug: name an existing organisation")
	} else if err != nil {
		return nil, err
	}
	desc := ""
	if b.Description != nil {
		desc = *b.Description
	}
	var w db.Workspace
	err = s.Store.WithTx(ctx, func(q *db.Queries) error {
		w, err = q.CreateWorkspace(ctx, db.CreateWorkspaceParams{OrgID: o.ID, Slug: b.Slug, Name: b.Name, Description: desc})
		if store.IsUniqueViolation(err) {
			return apierr.Wrap(err, apierr.Conflict, "workspace "+b.Slug+" exists", "body member /slug: choose another slug")
		}
		if err != nil {
			return err
		}
		return audit.Record(ctx, q, audit.Target{Kind: "workspace", ID: w.ID.String(), Name: w.Slug}, nil)
	})
	if err != nil {
		return nil, err
	}
	out := serverapi.Workspace{Id: w.ID, Slug: w.Slug, Name: w.Name, Description: nonEmpty(w.Description), CreatedAt: w.CreatedAt, UpdatedAt: w.UpdatedAt,
		Role: ptr(serverapi.RoleAdmin)}
	out.Org.Slug, out.Org.Name = o.Slug, o.Name
	return serverapi.CreateWorkspace201JSONResponse(out), nil
}

// GetWorkspace returns a workspace with the caller's role and the counts.
func (s *Server) GetWorkspace(ctx context.Context, req serverapi.GetWorkspaceRequestObject) (serverapi.GetWorkspaceResponseObject, error) {
	w, role, err := s.workspaceBySlug(ctx, req.WorkspaceSlug)
	if err != nil {
		return nil, err
	}
	counts, err := s.Store.WorkspaceCounts(ctx, w.ID)
	if err != nil {
		return nil, err
	}
	out := serverapi.Workspace{Id: w.ID, Slug: w.Slug, Name: w.Name, Description: nonEmpty(w.Description), CreatedAt: w.CreatedAt, UpdatedAt: w.UpdatedAt,
		MemberCount: int(counts.MemberCount), ProjectCount: int(counts.ProjectCount), Role: ptr(serverapi.Role(role))}
	out.Org.Slug, out.Org.Name = w.OrgSlug, w.OrgName
	return serverapi.GetWorkspace200JSONResponse(out), nil
}

// ListWorkspaceMembers lists a workspace's explicit members by email.
func (s *Server) ListWorkspaceMembers(ctx context.Context, req serverapi.ListWorkspaceMembersRequestObject) (serverapi.ListWorkspaceMembersResponseObject, error) {
	w, _, err := s.workspaceBySlug(ctx, req.WorkspaceSlug)
	if err != nil {
		return nil, err
	}
	var after *string
	if err := decodeCursor(req.Params.Cursor, &after); err != nil {
		return nil, err
	}
	limit := pageLimit(req.Params.Limit)
	params := db.ListWorkspaceMembersParams{WorkspaceID: w.ID, AfterEmail: after, RowLimit: int32(limit + 1)}
	if req.Params.Role != nil {
		params.Role = ptr(string(*req.Params.Role))
	}
	rows, err := s.Store.ListWorkspaceMembers(ctx, params)
	if err != nil {
		return nil, err
	}
	out := serverapi.ListWorkspaceMembers200JSONResponse{Items: []serverapi.WorkspaceMember{}}
	for i, m := range rows {
		if i == limit {
			out.NextCursor = encodeCursor(rows[i-1].User.Email)
			break
		}
		out.Items = append(out.Items, serverapi.WorkspaceMember{Role: serverapi.Role(m.Role), CreatedAt: m.CreatedAt, UpdatedAt: m.UpdatedAt, User: toUserSummary(m.User)})
	}
	return out, nil
}

// AddWorkspaceMember gives a user a role in the workspace (409 when already a member).
func (s *Server) AddWorkspaceMember(ctx context.Context, req serverapi.AddWorkspaceMemberRequestObject) (serverapi.AddWorkspaceMemberResponseObject, error) {
	w, _, err := s.workspaceBySlug(ctx, req.WorkspaceSlug)
	if err != nil {
		return nil, err
	}
	var out serverapi.WorkspaceMember
	err = s.Store.WithTx(ctx, func(q *db.Queries) error {
		u, err := q.GetUser(ctx, uuid.UUID(req.Body.UserId))
		if store.IsNotFound(err) {
			return apierr.New(apierr.ValidationFailed, "no such user", "body member /userId: name an existing user")
		} else if err != nil {
			return err
		}
		m, err := q.AddWorkspaceMember(ctx, db.AddWorkspaceMemberParams{WorkspaceID: w.ID, UserID: u.ID, Role: string(req.Body.Role)})
		if store.IsUniqueViolation(err) {
			return apierr.Wrap(err, apierr.Conflict, u.Email+" is already a member", "change the role with PATCH …/members/{userId}")
		}
		if err != nil {
			return err
		}
		out = serverapi.WorkspaceMember{Role: req.Body.Role, CreatedAt: m.CreatedAt, UpdatedAt: m.UpdatedAt, User: toUserSummary(u)}
		return audit.Record(ctx, q, audit.Target{Kind: "workspaceMember", ID: w.Slug + "/" + u.ID.String(), Name: u.Email}, map[string]any{"role": req.Body.Role})
	})
	if err != nil {
		return nil, err
	}
	return serverapi.AddWorkspaceMember201JSONResponse(out), nil
}

func (s *Server) memberOf(ctx context.Context, q *db.Queries, workspaceID uuid.UUID, userID openapi_types.UUID) (db.GetWorkspaceMemberRow, error) {
	m, err := q.GetWorkspaceMember(ctx, db.GetWorkspaceMemberParams{WorkspaceID: workspaceID, UserID: uuid.UUID(userID)})
	if store.IsNotFound(err) {
		return m, apierr.New(apierr.NotFound, "not a member of this workspace", "list members with GET …/members")
	}
	return m, err
}

// GetWorkspaceMember returns one member.
func (s *Server) GetWorkspaceMember(ctx context.Context, req serverapi.GetWorkspaceMemberRequestObject) (serverapi.GetWorkspaceMemberResponseObject, error) {
	w, _, err := s.workspaceBySlug(ctx, req.WorkspaceSlug)
	if err != nil {
		return nil, err
	}
	m, err := s.memberOf(ctx, s.Store.Queries, w.ID, req.UserId)
	if err != nil {
		return nil, err
	}
	return serverapi.GetWorkspaceMember200JSONResponse{Role: serverapi.Role(m.Role), CreatedAt: m.CreatedAt, UpdatedAt: m.UpdatedAt, User: toUserSummary(m.User)}, nil
}

// lastAdminGuard refuses to leave a workspace without an explicit admin. Callers hold
// LockWorkspaceMembers, so concurrent removals cannot each count the other's admin.
func lastAdminGuard(ctx context.Context, q *db.Queries, workspaceID uuid.UUID) error {
	n, err := q.CountWorkspaceAdmins(ctx, workspaceID)
	if err != nil {
		return err
	}
	if n == 0 {
		return apierr.New(apierr.Conflict, "this is the workspace's last admin", "make another member admin first")
	}
	return nil
}

// UpdateWorkspaceMember changes a member's role.
func (s *Server) UpdateWorkspaceMember(ctx context.Context, req serverapi.UpdateWorkspaceMemberRequestObject) (serverapi.UpdateWorkspaceMemberResponseObject, error) {
	w, _, err := s.workspaceBySlug(ctx, req.WorkspaceSlug)
	if err != nil {
		return nil, err
	}
	var out serverapi.WorkspaceMember
	err = s.Store.WithTx(ctx, func(q *db.Queries) error {
		if err := q.LockWorkspaceMembers(ctx, w.ID); err != nil {
			return err
		}
		before, err := s.memberOf(ctx, q, w.ID, req.UserId)
		if err != nil {
			return err
		}
		if _, err := q.UpdateWorkspaceMember(ctx, db.UpdateWorkspaceMemberParams{WorkspaceID: w.ID, UserID: before.User.ID, Role: string(req.Body.Role)}); err != nil {
			return err
		}
		if before.Role == string(authz.RoleAdmin) && req.Body.Role != serverapi.RoleAdmin {
			if err := lastAdminGuard(ctx, q, w.ID); err != nil {
				return err
			}
		}
		m, err := s.memberOf(ctx, q, w.ID, req.UserId)
		if err != nil {
			return err
		}
		out = serverapi.WorkspaceMember{Role: serverapi.Role(m.Role), CreatedAt: m.CreatedAt, UpdatedAt: m.UpdatedAt, User: toUserSummary(m.User)}
		return audit.Record(ctx, q, audit.Target{Kind: "workspaceMember", ID: w.Slug + "/" + m.User.ID.String(), Name: m.User.Email},
			map[string]any{"from": before.Role, "to": m.Role})
	})
	if err != nil {
		return nil, err
	}
	return serverapi.UpdateWorkspaceMember200JSONResponse(out), nil
}

// RemoveWorkspaceMember removes a member.
func (s *Server) RemoveWorkspaceMember(ctx context.Context, req serverapi.RemoveWorkspaceMemberRequestObject) (serverapi.RemoveWorkspaceMemberResponseObject, error) {
	w, _, err := s.workspaceBySlug(ctx, req.WorkspaceSlug)
	if err != nil {
		return nil, err
	}
	err = s.Store.WithTx(ctx, func(q *db.Queries) error {
		if err := q.LockWorkspaceMembers(ctx, w.ID); err != nil {
			return err
		}
		before, err := s.memberOf(ctx, q, w.ID, req.UserId)
		if err != nil {
			return err
		}
		if _, err := q.RemoveWorkspaceMember(ctx, db.RemoveWorkspaceMemberParams{WorkspaceID: w.ID, UserID: before.User.ID}); err != nil {
			return err
		}
		if before.Role == string(authz.RoleAdmin) {
			if err := lastAdminGuard(ctx, q, w.ID); err != nil {
				return err
			}
		}
		return audit.Record(ctx, q, audit.Target{Kind: "workspaceMember", ID: w.Slug + "/" + before.User.ID.String(), Name: before.User.Email}, nil)
	})
	if err != nil {
		return nil, err
	}
	return serverapi.RemoveWorkspaceMember204Response{}, nil
}

// SyncHierarchy applies a declarative document of organisations, workspaces and members.
func (s *Server) SyncHierarchy(ctx context.Context, req serverapi.SyncHierarchyRequestObject) (serverapi.SyncHierarchyResponseObject, error) {
	res, err := hierarchy.Sync(ctx, s.Store, hierarchyDoc(req.Body))
	if err != nil {
		return nil, err
	}
	out := serverapi.SyncHierarchy200JSONResponse{DryRun: res.DryRun, Unchanged: res.Unchanged, Changes: []serverapi.HierarchyChange{}}
	for _, c := range res.Changes {
		out.Changes = append(out.Changes, serverapi.HierarchyChange{Action: serverapi.HierarchyChangeAction(c.Action), Kind: serverapi.HierarchyChangeKind(c.Kind),
			Target: c.Target, Detail: nonEmpty(c.Detail)})
	}
	return out, nil
}

func hierarchyDoc(b *serverapi.SyncHierarchyJSONRequestBody) hierarchy.Document {
	members := func(ms *[]serverapi.HierarchyMember) []hierarchy.Member {
		if ms == nil {
			return nil
		}
		out := make([]hierarchy.Member, len(*ms))
		for i, m := range *ms {
			out[i] = hierarchy.Member{Email: string(m.Email), Role: string(m.Role)}
		}
		return out
	}
	doc := hierarchy.Document{DryRun: b.DryRun != nil && *b.DryRun, Prune: b.Prune != nil && *b.Prune}
	for _, o := range b.Orgs {
		org := hierarchy.Org{Slug: o.Slug, Name: o.Name, Members: members(o.Members)}
		if o.Workspaces != nil {
			for _, w := range *o.Workspaces {
				ws := hierarchy.Workspace{Slug: w.Slug, Name: w.Name, Members: members(w.Members)}
				if w.Description != nil {
					ws.Description = *w.Description
				}
				org.Workspaces = append(org.Workspaces, ws)
			}
		}
		doc.Orgs = append(doc.Orgs, org)
	}
	return doc
}
