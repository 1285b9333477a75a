package httpapi

import (
	"context"

	"github.com/google/uuid"

	"github.com/sdods/sdods/gen/serverapi"
	"github.com/sdods/sdods/impl/server/identity"
)

// ListUsers lists the instance's users by email.
func (s *Server) ListUsers(ctx context.Context, req serverapi.ListUsersRequestObject) (serverapi.ListUsersResponseObject, error) {
	var after *string
	if err := decodeCursor(req.Params.Cursor, &after); err != nil {
		return nil, err
	}
	limit := pageLimit(req.Params.Limit)
	rows, err := s.Identity.ListUsers(ctx, identity.UserFilter{After: after, Query: req.Params.Q, Disabled: req.Params.Disabled, Limit: limit})
	if err != nil {
		return nil, err
	}
	items, next := page(rows, limit, func(u identity.User) string { return u.Email })
	out := serverapi.ListUsers200JSONResponse{Items: []serverapi.User{}, NextCursor: next}
	for _, u := range items {
		out.Items = append(out.Items, toUser(u))
	}
	return out, nil
}

// CreateUser adds a user with a password (instance admins only).
func (s *Server) CreateUser(ctx context.Context, req serverapi.CreateUserRequestObject) (serverapi.CreateUserResponseObject, error) {
	b := req.Body
	u, err := s.Identity.CreateUser(ctx, string(b.Email), b.DisplayName, b.Password, b.InstanceRole != nil && *b.InstanceRole == serverapi.InstanceRoleAdmin)
	if err != nil {
		return nil, err
	}
	return serverapi.CreateUser201JSONResponse(toUser(u)), nil
}

// UpdateUser changes a user's profile, instance role, disabled flag or password. Disabling a user
// or setting a password ends their sessions; the last active instance admin cannot be demoted or
// disabled.
func (s *Server) UpdateUser(ctx context.Context, req serverapi.UpdateUserRequestObject) (serverapi.UpdateUserResponseObject, error) {
	b := req.Body
	c := identity.UserChange{DisplayName: b.DisplayName, Disabled: b.Disabled, Password: b.Password}
	if b.Email != nil {
		c.Email = ptr(string(*b.Email))
	}
	if b.InstanceRole != nil {
		c.InstanceAdmin = ptr(*b.InstanceRole == serverapi.InstanceRoleAdmin)
	}
	u, err := s.Identity.UpdateUser(ctx, uuid.UUID(req.UserId), c)
	if err != nil {
		return nil, err
	}
	return serverapi.UpdateUser200JSONResponse(toUser(u)), nil
}
