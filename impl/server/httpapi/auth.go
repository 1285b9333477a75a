package httpapi

import (
	"context"
	"time"

	"github.com/sdods/sdods/gen/serverapi"
	"github.com/sdods/sdods/impl/server/apierr"
	"github.com/sdods/sdods/impl/server/authz"
	"github.com/sdods/sdods/impl/server/identity"
	"github.com/sdods/sdods/impl/server/store"
)

// GetSetupStatus reports whether the first administrator must still be created.
func (s *Server) GetSetupStatus(ctx context.Context, _ serverapi.GetSetupStatusRequestObject) (serverapi.GetSetupStatusResponseObject, error) {
	required, err := s.Identity.SetupRequired(ctx)
	if err != nil {
		return nil, err
	}
	return serverapi.GetSetupStatus200JSONResponse{SetupRequired: required}, nil
}

// Setup creates the first administrator (once; afterwards 409) and signs them in.
func (s *Server) Setup(ctx context.Context, req serverapi.SetupRequestObject) (serverapi.SetupResponseObject, error) {
	b := req.Body
	if _, err := s.Identity.Setup(ctx, string(b.Email), b.Password, b.DisplayName); err != nil {
		return nil, err
	}
	meta := metaFrom(ctx)
	res, err := s.Identity.Login(ctx, string(b.Email), b.Password, identity.ClientMeta{UserAgent: meta.UserAgent, ClientAddr: meta.ClientAddr})
	if err != nil {
		return nil, err
	}
	return serverapi.Setup201JSONResponse{
		Body:    s.sessionMe(res.User, res.Session, res.Secret),
		Headers: serverapi.Setup201ResponseHeaders{SetCookie: ptr(sessionCookie(res.Secret, res.Session.ExpiresAt, meta.Secure))},
	}, nil
}

// Login opens a browser session.
func (s *Server) Login(ctx context.Context, req serverapi.LoginRequestObject) (serverapi.LoginResponseObject, error) {
	meta := metaFrom(ctx)
	res, err := s.Identity.Login(ctx, string(req.Body.Email), req.Body.Password, identity.ClientMeta{UserAgent: meta.UserAgent, ClientAddr: meta.ClientAddr})
	if err != nil {
		return nil, err
	}
	return serverapi.Login200JSONResponse{
		Body:    s.sessionMe(res.User, res.Session, res.Secret),
		Headers: serverapi.Login200ResponseHeaders{SetCookie: ptr(sessionCookie(res.Secret, res.Session.ExpiresAt, meta.Secure))},
	}, nil
}

func (s *Server) sessionMe(u identity.User, sess identity.Session, secret string) serverapi.AuthMe {
	return serverapi.AuthMe{User: toUser(u), AuthMethod: serverapi.AuthMethodSession,
		CsrfToken: ptr(identity.CSRFToken(secret)), SessionExpiresAt: ptr(sess.ExpiresAt)}
}

// Logout ends the caller's browser session and clears the cookie.
func (s *Server) Logout(ctx context.Context, _ serverapi.LogoutRequestObject) (serverapi.LogoutResponseObject, error) {
	p, _, err := principal(ctx)
	if err != nil {
		return nil, err
	}
	if p.Method != authz.MethodSession {
		return nil, apierr.New(apierr.SessionRequired, "logout ends a browser session", "revoke an API token with DELETE /api/tokens/{tokenId}")
	}
	sid, err := parseUUID(p.CredentialID)
	if err != nil {
		return nil, err
	}
	if err := s.Identity.Logout(ctx, sid); err != nil {
		return nil, err
	}
	return serverapi.Logout204Response{Headers: serverapi.Logout204ResponseHeaders{SetCookie: ptr(sessionCookie("", time.Time{}, metaFrom(ctx).Secure))}}, nil
}

// GetAuthMe returns the caller, how it authenticated and, for a browser session, the CSRF token.
func (s *Server) GetAuthMe(ctx context.Context, _ serverapi.GetAuthMeRequestObject) (serverapi.GetAuthMeResponseObject, error) {
	p, id, err := principal(ctx)
	if err != nil {
		return nil, err
	}
	u, err := s.Identity.User(ctx, id)
	if err != nil {
		return nil, err
	}
	out := serverapi.GetAuthMe200JSONResponse{User: toUser(u), AuthMethod: serverapi.AuthMethodSession}
	if p.Method == authz.MethodToken {
		out.AuthMethod = serverapi.AuthMethodToken
		scopes := make([]serverapi.Scope, len(p.Scopes))
		for i, sc := range p.Scopes {
			scopes[i] = serverapi.Scope(sc)
		}
		out.Scopes = &scopes
	} else {
		out.CsrfToken = ptr(p.CSRFToken)
		out.SessionExpiresAt = ptr(p.ExpiresAt)
	}
	return out, nil
}

// notFoundOr maps a missing row to not_found and keeps any other error.
func notFoundOr(err error, what string) error {
	if store.IsNotFound(err) {
		return apierr.Wrap(err, apierr.NotFound, what+" not found", "")
	}
	return err
}
