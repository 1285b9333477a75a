package httpapi

import (
	"context"

	"github.com/google/uuid"

	"github.com/sdods/sdods/impl/server/apierr"
	"github.com/sdods/sdods/impl/server/authz"
	"github.com/sdods/sdods/impl/server/hierarchy"
	"github.com/sdods/sdods/impl/server/store"
)

// workspaceRole returns the caller's effective role in a workspace ("" when none).
func (s *Server) workspaceRole(ctx context.Context, p *authz.Principal, workspaceID uuid.UUID) (authz.Role, error) {
	if p.InstanceAdmin {
		return authz.RoleAdmin, nil
	}
	uid, err := parseUUID(p.UserID)
	if err != nil {
		return "", err
	}
	role, err := s.Hierarchy.EffectiveRole(ctx, uid, workspaceID)
	if err != nil {
		return "", err
	}
	return authz.Role(role), nil
}

// authorizeWorkspace checks the current operation's action against the caller's role in the
// workspace. A caller with no role there is told the workspace does not exist.
func (s *Server) authorizeWorkspace(ctx context.Context, workspaceID uuid.UUID) (authz.Role, error) {
	p, _, err := principal(ctx)
	if err != nil {
		return "", err
	}
	op, ok := OperationFrom(ctx)
	if !ok || op.Permission.Target != authz.TargetWorkspace {
		return "", apierr.New(apierr.Forbidden, "operation has no workspace permission", "")
	}
	role, err := s.workspaceRole(ctx, p, workspaceID)
	if err != nil {
		return "", err
	}
	return role, s.Enforcer.CheckWorkspace(p, role, op.Permission.Action)
}

// workspaceBySlug loads a workspace the caller may act on with the current operation.
func (s *Server) workspaceBySlug(ctx context.Context, slug string) (hierarchy.WorkspaceInfo, authz.Role, error) {
	notFound := apierr.New(apierr.NotFound, "workspace "+slug+" not found", "list your workspaces with GET /api/workspaces")
	w, err := s.Hierarchy.Workspace(ctx, slug)
	if store.IsNotFound(err) {
		return w, "", notFound
	}
	if err != nil {
		return w, "", err
	}
	role, err := s.authorizeWorkspace(ctx, w.ID)
	if err != nil {
		if e := apierr.From(err); e.Code == apierr.NotFound {
			return w, "", notFound
		}
		return w, "", err
	}
	return w, role, nil
}
