package httpapi

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/sdods/sdods/gen/serverapi"
	"github.com/sdods/sdods/impl/server/apierr"
	"github.com/sdods/sdods/impl/server/authz"
	"github.com/sdods/sdods/impl/server/identity"
)

func toToken(t identity.Token) serverapi.ApiToken {
	scopes := make([]serverapi.Scope, len(t.Scopes))
	for i, s := range t.Scopes {
		scopes[i] = serverapi.Scope(s)
	}
	return serverapi.ApiToken{Id: t.ID, Name: t.Name, Prefix: t.Prefix, Scopes: scopes, ExpiresAt: t.ExpiresAt, LastUsedAt: t.LastUsedAt, CreatedAt: t.CreatedAt}
}

type tokenCursor struct {
	CreatedAt time.Time `json:"c"`
	ID        uuid.UUID `json:"i"`
}

// ListTokens lists the caller's live tokens, newest first, never with their secret.
func (s *Server) ListTokens(ctx context.Context, req serverapi.ListTokensRequestObject) (serverapi.ListTokensResponseObject, error) {
	_, uid, err := principal(ctx)
	if err != nil {
		return nil, err
	}
	var cur *tokenCursor
	if err := decodeCursor(req.Params.Cursor, &cur); err != nil {
		return nil, err
	}
	limit := pageLimit(req.Params.Limit)
	pg := identity.TokenPage{Limit: limit}
	if cur != nil {
		pg.BeforeCreated, pg.BeforeID = &cur.CreatedAt, cur.ID
	}
	rows, err := s.Identity.Tokens(ctx, uid, pg)
	if err != nil {
		return nil, err
	}
	items, next := page(rows, limit, func(t identity.Token) tokenCursor { return tokenCursor{CreatedAt: t.CreatedAt, ID: t.ID} })
	out := serverapi.ListTokens200JSONResponse{Items: []serverapi.ApiToken{}, NextCursor: next}
	for _, t := range items {
		out.Items = append(out.Items, toToken(t))
	}
	return out, nil
}

// CreateToken issues an API token for the caller; its secret is in this response only.
func (s *Server) CreateToken(ctx context.Context, req serverapi.CreateTokenRequestObject) (serverapi.CreateTokenResponseObject, error) {
	p, uid, err := principal(ctx)
	if err != nil {
		return nil, err
	}
	scopes := make([]string, len(req.Body.Scopes))
	for i, sc := range req.Body.Scopes {
		scopes[i] = string(sc)
		// A token cannot create a token with more power than its own.
		if !p.HasScope(scopes[i]) {
			return nil, apierr.New(apierr.ScopeMissing, "a token can only grant scopes it carries itself", "drop scope "+scopes[i]+" or sign in to create the token")
		}
	}
	expiresAt := req.Body.ExpiresAt
	if p.Method == authz.MethodToken && !p.ExpiresAt.IsZero() {
		// Nor one that outlives it: no expiry means the parent's, a later one is refused.
		switch {
		case expiresAt == nil:
			expiresAt = ptr(p.ExpiresAt)
		case expiresAt.After(p.ExpiresAt):
			return nil, apierr.New(apierr.ValidationFailed, "a token cannot create a token that outlives it",
				"body member /expiresAt: give a time no later than "+p.ExpiresAt.UTC().Format(time.RFC3339)+", the expiry of the token you sent, or leave it out")
		}
	}
	created, err := s.Identity.CreateToken(ctx, uid, req.Body.Name, scopes, expiresAt)
	if err != nil {
		return nil, err
	}
	t := toToken(created.Token)
	return serverapi.CreateToken201JSONResponse{Id: t.Id, Name: t.Name, Prefix: t.Prefix, Scopes: t.Scopes, ExpiresAt: t.ExpiresAt,
		CreatedAt: t.CreatedAt, Token: created.Secret}, nil
}

// RevokeToken revokes one of the caller's tokens (an instance admin may revoke anyone's).
func (s *Server) RevokeToken(ctx context.Context, req serverapi.RevokeTokenRequestObject) (serverapi.RevokeTokenResponseObject, error) {
	p, uid, err := principal(ctx)
	if err != nil {
		return nil, err
	}
	if err := s.Identity.RevokeToken(ctx, uid, p.InstanceAdmin, uuid.UUID(req.TokenId)); err != nil {
		return nil, err
	}
	return serverapi.RevokeToken204Response{}, nil
}
