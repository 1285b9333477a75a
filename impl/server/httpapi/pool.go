package httpapi

import (
	"context"

	"github.com/sdods/sdods/gen/serverapi"
	"github.com/sdods/sdods/impl/server/pool"
)

func poolProject(p project) pool.Project { return pool.Project{ID: p.ID, Slug: p.Slug} }

// toPoolAccount never includes the password; the lease shows only while it is live.
func toPoolAccount(a pool.Stored) serverapi.PoolAccount {
	out := serverapi.PoolAccount{Id: a.ID, Username: a.Username, HasPassword: a.HasPassword, Tags: a.Tags,
		Attributes: a.Attributes, Environment: a.Environment, CreatedAt: a.CreatedAt, UpdatedAt: a.UpdatedAt}
	if l := a.Lease; l != nil {
		out.Lease = &serverapi.PoolLease{RunId: l.RunID, LeasedAt: l.LeasedAt, ExpiresAt: l.ExpiresAt, ScenarioId: l.ScenarioID}
	}
	return out
}

func poolFields(username string, password *string, tags *[]string, attributes *map[string]string, environment *string) pool.Fields {
	f := pool.Fields{Username: username, Password: password, Environment: environment}
	if tags != nil {
		f.Tags = *tags
	}
	if attributes != nil {
		f.Attributes = *attributes
	}
	return f
}

// ListPoolAccounts lists the users pool by username.
func (s *Server) ListPoolAccounts(ctx context.Context, req serverapi.ListPoolAccountsRequestObject) (serverapi.ListPoolAccountsResponseObject, error) {
	p, _, err := s.projectBySlug(ctx, req.Slug)
	if err != nil {
		return nil, err
	}
	var after *string
	if err := decodeCursor(req.Params.Cursor, &after); err != nil {
		return nil, err
	}
	limit := pageLimit(req.Params.Limit)
	rows, err := s.Pool.List(ctx, p.ID, req.Params.Tag, after, limit)
	if err != nil {
		return nil, err
	}
	items, next := page(rows, limit, func(a pool.Stored) string { return a.Username })
	out := serverapi.ListPoolAccounts200JSONResponse{Items: []serverapi.PoolAccount{}, NextCursor: next}
	for _, a := range items {
		out.Items = append(out.Items, toPoolAccount(a))
	}
	return out, nil
}

// CreatePoolAccount adds a test account; its password is sealed before it is stored.
func (s *Server) CreatePoolAccount(ctx context.Context, req serverapi.CreatePoolAccountRequestObject) (serverapi.CreatePoolAccountResponseObject, error) {
	p, _, err := s.projectBySlug(ctx, req.Slug)
	if err != nil {
		return nil, err
	}
	b := req.Body
	a, err := s.Pool.Create(ctx, poolProject(p), poolFields(b.Username, &b.Password, b.Tags, b.Attributes, b.Environment))
	if err != nil {
		return nil, err
	}
	return serverapi.CreatePoolAccount201JSONResponse(toPoolAccount(a)), nil
}

// GetPoolAccount returns a test account without its password.
func (s *Server) GetPoolAccount(ctx context.Context, req serverapi.GetPoolAccountRequestObject) (serverapi.GetPoolAccountResponseObject, error) {
	p, _, err := s.projectBySlug(ctx, req.Slug)
	if err != nil {
		return nil, err
	}
	a, err := s.Pool.Get(ctx, p.ID, req.AccountId)
	if err != nil {
		return nil, err
	}
	return serverapi.GetPoolAccount200JSONResponse(toPoolAccount(a)), nil
}

// UpdatePoolAccount replaces a test account; an absent password keeps the stored one.
func (s *Server) UpdatePoolAccount(ctx context.Context, req serverapi.UpdatePoolAccountRequestObject) (serverapi.UpdatePoolAccountResponseObject, error) {
	p, _, err := s.projectBySlug(ctx, req.Slug)
	if err != nil {
		return nil, err
	}
	b := req.Body
	a, err := s.Pool.Replace(ctx, poolProject(p), req.AccountId, poolFields(b.Username, b.Password, b.Tags, b.Attributes, b.Environment))
	if err != nil {
		return nil, err
	}
	return serverapi.UpdatePoolAccount200JSONResponse(toPoolAccount(a)), nil
}

// DeletePoolAccount removes a test account; one under a live lease is 409.
func (s *Server) DeletePoolAccount(ctx context.Context, req serverapi.DeletePoolAccountRequestObject) (serverapi.DeletePoolAccountResponseObject, error) {
	p, _, err := s.projectBySlug(ctx, req.Slug)
	if err != nil {
		return nil, err
	}
	if err := s.Pool.Delete(ctx, poolProject(p), req.AccountId); err != nil {
		return nil, err
	}
	return serverapi.DeletePoolAccount204Response{}, nil
}
