package httpapi

import (
	"context"

	"github.com/google/uuid"

	"github.com/sdods/sdods/gen/db"
	"github.com/sdods/sdods/gen/serverapi"
	"github.com/sdods/sdods/impl/server/apierr"
	"github.com/sdods/sdods/impl/server/audit"
	"github.com/sdods/sdods/impl/server/identity"
)

// ListUsers lists the instance's users by email.
func (s *Server) ListUsers(ctx context.Context, req serverapi.ListUsersRequestObject) (serverapi.ListUsersResponseObject, error) {
	var after *string
	if err := decodeCursor(req.Params.Cursor, &after); err != nil {
		return nil, err
	}
	limit := pageLimit(req.Params.Limit)
	rows, err := s.Store.ListUsers(ctx, db.ListUsersParams{AfterEmail: after, Query: req.Params.Q, Disabled: req.Params.Disabled, RowLimit: int32(limit + 1)})
	if err != nil {
		return nil, err
	}
	out := serverapi.ListUsers200JSONResponse{Items: []serverapi.User{}}
	for i, u := range rows {
		if i == limit {
			out.NextCursor = encodeCursor(rows[i-1].Email)
			break
		}
		out.Items = append(out.Items, toUser(u))
	}
	return out, nil
}

// CreateUser adds a user with a password (instance admins only).
func (s *Server) CreateUser(ctx context.Context, req serverapi.CreateUserRequestObject) (serverapi.CreateUserResponseObject, error) {
	b := req.Body
	if err := identity.CheckPassword(b.Password); err != nil {
		return nil, err
	}
	hash, err := s.Identity.Hash(ctx, b.Password)
	if err != nil {
		return nil, err
	}
	var u db.User
	err = s.Store.WithTx(ctx, func(q *db.Queries) error {
		u, err = q.CreateUser(ctx, db.CreateUserParams{Email: identity.NormalizeEmail(string(b.Email)), DisplayName: b.DisplayName,
			PasswordHash: hash, InstanceAdmin: b.InstanceRole != nil && *b.InstanceRole == serverapi.InstanceRoleAdmin})
		if err != nil {
			return userWriteError(err)
		}
		return audit.Record(ctx, q, audit.Target{Kind: "user", ID: u.ID.String(), Name: u.Email}, map[string]any{"instanceRole": string(instanceRole(u.InstanceAdmin))})
	})
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
	id := uuid.UUID(req.UserId)
	params := db.UpdateUserParams{ID: id, DisplayName: b.DisplayName, Disabled: b.Disabled}
	if b.Email != nil {
		params.Email = ptr(identity.NormalizeEmail(string(*b.Email)))
	}
	if b.InstanceRole != nil {
		params.InstanceAdmin = ptr(*b.InstanceRole == serverapi.InstanceRoleAdmin)
	}
	var hash string
	if b.Password != nil {
		if err := identity.CheckPassword(*b.Password); err != nil {
			return nil, err
		}
		var err error
		if hash, err = s.Identity.Hash(ctx, *b.Password); err != nil {
			return nil, err
		}
	}
	var u db.User
	err := s.Store.WithTx(ctx, func(q *db.Queries) error {
		// Taken before reading, so that two requests demoting or disabling two admins at once
		// are serialised and the second sees the first's change.
		if err := q.LockInstanceAdmins(ctx); err != nil {
			return err
		}
		before, err := q.GetUser(ctx, id)
		if err != nil {
			return notFoundOr(err, "user")
		}
		if u, err = q.UpdateUser(ctx, params); err != nil {
			return userWriteError(err)
		}
		if before.InstanceAdmin && !before.Disabled && (!u.InstanceAdmin || u.Disabled) {
			n, err := q.CountInstanceAdmins(ctx)
			if err != nil {
				return err
			}
			if n == 0 {
				return apierr.New(apierr.Conflict, "this is the last instance admin", "make another user an instance admin first")
			}
		}
		if hash != "" {
			if err := q.SetUserPassword(ctx, db.SetUserPasswordParams{ID: id, PasswordHash: hash}); err != nil {
				return err
			}
		}
		if hash != "" || (u.Disabled && !before.Disabled) {
			if err := q.DeleteSessionsOfUser(ctx, id); err != nil {
				return err
			}
		}
		return audit.Record(ctx, q, audit.Target{Kind: "user", ID: u.ID.String(), Name: u.Email},
			map[string]any{"passwordSet": hash != "", "disabled": u.Disabled, "instanceRole": string(instanceRole(u.InstanceAdmin))})
	})
	if err != nil {
		return nil, err
	}
	return serverapi.UpdateUser200JSONResponse(toUser(u)), nil
}
