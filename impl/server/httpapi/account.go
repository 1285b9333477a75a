package httpapi

import (
	"context"

	"github.com/google/uuid"

	"github.com/sdods/sdods/gen/serverapi"
)

// Account operations accept a browser session only; the pipeline refuses a bearer token for them
// because the document gives them cookieAuth alone.

// UpdateMe changes the caller's display name or email.
func (s *Server) UpdateMe(ctx context.Context, req serverapi.UpdateMeRequestObject) (serverapi.UpdateMeResponseObject, error) {
	_, uid, err := principal(ctx)
	if err != nil {
		return nil, err
	}
	var email *string
	if req.Body.Email != nil {
		email = ptr(string(*req.Body.Email))
	}
	u, err := s.Identity.UpdateProfile(ctx, uid, req.Body.DisplayName, email)
	if err != nil {
		return nil, err
	}
	return serverapi.UpdateMe200JSONResponse(toUser(u)), nil
}

// ChangePassword checks the current password (throttled like logins), sets the new one, ends
// every other session and revokes the caller's API tokens.
func (s *Server) ChangePassword(ctx context.Context, req serverapi.ChangePasswordRequestObject) (serverapi.ChangePasswordResponseObject, error) {
	p, uid, err := principal(ctx)
	if err != nil {
		return nil, err
	}
	current, err := parseUUID(p.CredentialID)
	if err != nil {
		return nil, err
	}
	if _, err := s.Identity.ChangePassword(ctx, uid, current, req.Body.CurrentPassword, req.Body.NewPassword); err != nil {
		return nil, notFoundOr(err, "user")
	}
	return serverapi.ChangePassword204Response{}, nil
}

// ListSessions lists the caller's live sessions, newest first, the current one marked.
func (s *Server) ListSessions(ctx context.Context, req serverapi.ListSessionsRequestObject) (serverapi.ListSessionsResponseObject, error) {
	p, uid, err := principal(ctx)
	if err != nil {
		return nil, err
	}
	rows, err := s.Identity.Sessions(ctx, uid)
	if err != nil {
		return nil, err
	}
	// A user has few sessions: page over the ordered list by position.
	start := 0
	if err := decodeCursor(req.Params.Cursor, &start); err != nil {
		return nil, err
	}
	limit := pageLimit(req.Params.Limit)
	out := serverapi.ListSessions200JSONResponse{Items: []serverapi.Session{}}
	for i := start; i < len(rows) && i < start+limit; i++ {
		r := rows[i]
		out.Items = append(out.Items, serverapi.Session{Id: r.ID, Current: r.ID.String() == p.CredentialID, CreatedAt: r.CreatedAt,
			LastSeenAt: r.LastSeenAt, ExpiresAt: r.ExpiresAt, UserAgent: nonEmpty(r.UserAgent), ClientAddress: nonEmpty(r.ClientAddr)})
	}
	if start+limit < len(rows) {
		out.NextCursor = encodeCursor(start + limit)
	}
	return out, nil
}

// RevokeSession ends one of the caller's sessions.
func (s *Server) RevokeSession(ctx context.Context, req serverapi.RevokeSessionRequestObject) (serverapi.RevokeSessionResponseObject, error) {
	_, uid, err := principal(ctx)
	if err != nil {
		return nil, err
	}
	if err := s.Identity.RevokeSession(ctx, uid, uuid.UUID(req.SessionId)); err != nil {
		return nil, err
	}
	return serverapi.RevokeSession204Response{}, nil
}

// RevokeOtherSessions ends every session of the caller but the current one.
func (s *Server) RevokeOtherSessions(ctx context.Context, _ serverapi.RevokeOtherSessionsRequestObject) (serverapi.RevokeOtherSessionsResponseObject, error) {
	p, uid, err := principal(ctx)
	if err != nil {
		return nil, err
	}
	current, err := parseUUID(p.CredentialID)
	if err != nil {
		return nil, err
	}
	n, err := s.Identity.RevokeOtherSessions(ctx, uid, current)
	if err != nil {
		return nil, err
	}
	return serverapi.RevokeOtherSessions200JSONResponse{Revoked: int(n)}, nil
}
