package httpapi

import (
	"context"

	"github.com/google/uuid"
	openapi_types "github.com/oapi-codegen/runtime/types"

	"github.com/sdods/sdods/gen/serverapi"
	"github.com/sdods/sdods/impl/server/apierr"
	"github.com/sdods/sdods/impl/server/authz"
	"github.com/sdods/sdods/impl/server/hierarchy"
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
	rows, err := s.Hierarchy.ListOrgs(ctx, uid, p.InstanceAdmin, req.Params.Q, hierarchy.Page{After: after, Limit: limit})
	if err != nil {
		return nil, err
	}
	items, next := page(rows, limit, func(o hierarchy.OrgInfo) string { return o.Slug })
	out := serverapi.ListOrgs200JSONResponse{Items: []serverapi.Org{}, NextCursor: next}
	for _, o := range items {
		out.Items = append(out.Items, serverapi.Org{Id: o.ID, Slug: o.Slug, Name: o.Name, MemberCount: o.MemberCount,
			WorkspaceCount: o.WorkspaceCount, CreatedAt: o.CreatedAt, UpdatedAt: o.UpdatedAt})
	}
	return out, nil
}

// ListOrgMembers lists an organisation's members by email.
func (s *Server) ListOrgMembers(ctx context.Context, req serverapi.ListOrgMembersRequestObject) (serverapi.ListOrgMembersResponseObject, error) {
	o, err := s.Hierarchy.Org(ctx, req.OrgSlug)
	if err != nil {
		return nil, err
	}
	var after *string
	if err := decodeCursor(req.Params.Cursor, &after); err != nil {
		return nil, err
	}
	limit := pageLimit(req.Params.Limit)
	rows, err := s.Hierarchy.ListOrgMembers(ctx, o.ID, hierarchy.Page{After: after, Limit: limit})
	if err != nil {
		return nil, err
	}
	items, next := page(rows, limit, func(m hierarchy.OrgMember) string { return m.User.Email })
	out := serverapi.ListOrgMembers200JSONResponse{Items: []serverapi.OrgMember{}, NextCursor: next}
	for _, m := range items {
		out.Items = append(out.Items, toOrgMember(m))
	}
	return out, nil
}

func toOrgMember(m hierarchy.OrgMember) serverapi.OrgMember {
	return serverapi.OrgMember{Role: serverapi.OrgRole(m.Role), CreatedAt: m.CreatedAt, User: toMemberSummary(m.User)}
}

func toWorkspaceMember(m hierarchy.WorkspaceMember) serverapi.WorkspaceMember {
	return serverapi.WorkspaceMember{Role: serverapi.Role(m.Role), CreatedAt: m.CreatedAt, UpdatedAt: m.UpdatedAt, User: toMemberSummary(m.User)}
}

func toMemberSummary(u hierarchy.UserSummary) serverapi.UserSummary {
	return serverapi.UserSummary{Id: u.ID, Email: openapi_types.Email(u.Email), DisplayName: u.DisplayName}
}

func toWorkspace(w hierarchy.WorkspaceInfo) serverapi.Workspace {
	out := serverapi.Workspace{Id: w.ID, Slug: w.Slug, Name: w.Name, Description: nonEmpty(w.Description), MemberCount: w.MemberCount,
		ProjectCount: w.ProjectCount, CreatedAt: w.CreatedAt, UpdatedAt: w.UpdatedAt}
	out.Org.Slug, out.Org.Name = w.OrgSlug, w.OrgName
	if w.Role != "" {
		out.Role = ptr(serverapi.Role(w.Role))
	}
	return out
}

// AddOrgMember adds a user to an organisation, or changes the role of a member.
func (s *Server) AddOrgMember(ctx context.Context, req serverapi.AddOrgMemberRequestObject) (serverapi.AddOrgMemberResponseObject, error) {
	o, err := s.Hierarchy.Org(ctx, req.OrgSlug)
	if err != nil {
		return nil, err
	}
	role := serverapi.OrgRoleMember
	if req.Body.Role != nil {
		role = *req.Body.Role
	}
	m, err := s.Hierarchy.SetOrgMember(ctx, o, uuid.UUID(req.Body.UserId), string(role))
	if err != nil {
		return nil, err
	}
	return serverapi.AddOrgMember201JSONResponse(toOrgMember(m)), nil
}

// RemoveOrgMember removes a user from an organisation.
func (s *Server) RemoveOrgMember(ctx context.Context, req serverapi.RemoveOrgMemberRequestObject) (serverapi.RemoveOrgMemberResponseObject, error) {
	o, err := s.Hierarchy.Org(ctx, req.OrgSlug)
	if err != nil {
		return nil, err
	}
	if err := s.Hierarchy.RemoveOrgMember(ctx, o, uuid.UUID(req.Params.UserId)); err != nil {
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
	rows, err := s.Hierarchy.ListWorkspaces(ctx, hierarchy.WorkspaceFilter{UserID: uid, InstanceAdmin: p.InstanceAdmin, OrgSlug: req.Params.Org, Query: req.Params.Q},
		hierarchy.Page{After: after, Limit: limit})
	if err != nil {
		return nil, err
	}
	items, next := page(rows, limit, func(w hierarchy.WorkspaceInfo) string { return w.Slug })
	out := serverapi.ListWorkspaces200JSONResponse{Items: []serverapi.Workspace{}, NextCursor: next}
	for _, w := range items {
		out.Items = append(out.Items, toWorkspace(w))
	}
	return out, nil
}

// CreateWorkspace creates a workspace in an organisation.
func (s *Server) CreateWorkspace(ctx context.Context, req serverapi.CreateWorkspaceRequestObject) (serverapi.CreateWorkspaceResponseObject, error) {
	b := req.Body
	o, err := s.Hierarchy.Org(ctx, b.OrgSlug)
	if apierr.From(err).Code == apierr.NotFound {
		return nil, apierr.New(apierr.ValidationFailed, "organisation "+b.OrgSlug+" not found", "body member /orgSlug: name an existing organisation")
	} else if err != nil {
		return nil, err
	}
	desc := ""
	if b.Description != nil {
		desc = *b.Description
	}
	w, err := s.Hierarchy.CreateWorkspace(ctx, o, b.Slug, b.Name, desc)
	if err != nil {
		return nil, err
	}
	w.Role = string(authz.RoleAdmin)
	return serverapi.CreateWorkspace201JSONResponse(toWorkspace(w)), nil
}

// GetWorkspace returns a workspace with the caller's role and the counts.
func (s *Server) GetWorkspace(ctx context.Context, req serverapi.GetWorkspaceRequestObject) (serverapi.GetWorkspaceResponseObject, error) {
	w, role, err := s.workspaceBySlug(ctx, req.WorkspaceSlug)
	if err != nil {
		return nil, err
	}
	if w, err = s.Hierarchy.WithCounts(ctx, w); err != nil {
		return nil, err
	}
	out := toWorkspace(w)
	out.Role = ptr(serverapi.Role(role))
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
	var role *string
	if req.Params.Role != nil {
		role = ptr(string(*req.Params.Role))
	}
	rows, err := s.Hierarchy.ListWorkspaceMembers(ctx, w.ID, role, hierarchy.Page{After: after, Limit: limit})
	if err != nil {
		return nil, err
	}
	items, next := page(rows, limit, func(m hierarchy.WorkspaceMember) string { return m.User.Email })
	out := serverapi.ListWorkspaceMembers200JSONResponse{Items: []serverapi.WorkspaceMember{}, NextCursor: next}
	for _, m := range items {
		out.Items = append(out.Items, toWorkspaceMember(m))
	}
	return out, nil
}

// AddWorkspaceMember gives a user a role in the workspace (409 when already a member).
func (s *Server) AddWorkspaceMember(ctx context.Context, req serverapi.AddWorkspaceMemberRequestObject) (serverapi.AddWorkspaceMemberResponseObject, error) {
	w, _, err := s.workspaceBySlug(ctx, req.WorkspaceSlug)
	if err != nil {
		return nil, err
	}
	m, err := s.Hierarchy.AddWorkspaceMember(ctx, w, uuid.UUID(req.Body.UserId), string(req.Body.Role))
	if err != nil {
		return nil, err
	}
	return serverapi.AddWorkspaceMember201JSONResponse(toWorkspaceMember(m)), nil
}

// GetWorkspaceMember returns one member.
func (s *Server) GetWorkspaceMember(ctx context.Context, req serverapi.GetWorkspaceMemberRequestObject) (serverapi.GetWorkspaceMemberResponseObject, error) {
	w, _, err := s.workspaceBySlug(ctx, req.WorkspaceSlug)
	if err != nil {
		return nil, err
	}
	m, err := s.Hierarchy.WorkspaceMember(ctx, w.ID, uuid.UUID(req.UserId))
	if err != nil {
		return nil, err
	}
	return serverapi.GetWorkspaceMember200JSONResponse(toWorkspaceMember(m)), nil
}

// UpdateWorkspaceMember changes a member's role.
func (s *Server) UpdateWorkspaceMember(ctx context.Context, req serverapi.UpdateWorkspaceMemberRequestObject) (serverapi.UpdateWorkspaceMemberResponseObject, error) {
	w, _, err := s.workspaceBySlug(ctx, req.WorkspaceSlug)
	if err != nil {
		return nil, err
	}
	m, err := s.Hierarchy.UpdateWorkspaceMember(ctx, w, uuid.UUID(req.UserId), string(req.Body.Role))
	if err != nil {
		return nil, err
	}
	return serverapi.UpdateWorkspaceMember200JSONResponse(toWorkspaceMember(m)), nil
}

// RemoveWorkspaceMember removes a member.
func (s *Server) RemoveWorkspaceMember(ctx context.Context, req serverapi.RemoveWorkspaceMemberRequestObject) (serverapi.RemoveWorkspaceMemberResponseObject, error) {
	w, _, err := s.workspaceBySlug(ctx, req.WorkspaceSlug)
	if err != nil {
		return nil, err
	}
	if err := s.Hierarchy.RemoveWorkspaceMember(ctx, w, uuid.UUID(req.UserId)); err != nil {
		return nil, err
	}
	return serverapi.RemoveWorkspaceMember204Response{}, nil
}

// SyncHierarchy applies a declarative document of organisations, workspaces and members.
func (s *Server) SyncHierarchy(ctx context.Context, req serverapi.SyncHierarchyRequestObject) (serverapi.SyncHierarchyResponseObject, error) {
	res, err := s.Hierarchy.Sync(ctx, hierarchyDoc(req.Body))
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
