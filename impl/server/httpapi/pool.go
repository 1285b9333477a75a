package httpapi

import (
	"context"
	"encoding/json"
	"time"

	"github.com/google/uuid"

	"github.com/sdods/sdods/gen/db"
	"github.com/sdods/sdods/gen/serverapi"
	"github.com/sdods/sdods/impl/server/apierr"
	"github.com/sdods/sdods/impl/server/audit"
	"github.com/sdods/sdods/impl/server/pool"
	"github.com/sdods/sdods/impl/server/store"
)

func accountNotFound(id uuid.UUID) error {
	return apierr.New(apierr.NotFound, "test account "+id.String()+" not found", "list accounts with GET /api/projects/{slug}/users-pool")
}

// toPoolAccount never includes the password; the lease shows only while it is live.
func toPoolAccount(a db.PoolAccount) serverapi.PoolAccount {
	out := serverapi.PoolAccount{Id: a.ID, Username: a.Username, HasPassword: len(a.PasswordEnc) > 0, Tags: a.Tags,
		Attributes: map[string]string{}, Environment: a.Environment, CreatedAt: a.CreatedAt, UpdatedAt: a.UpdatedAt}
	_ = json.Unmarshal(a.Attributes, &out.Attributes)
	if out.Tags == nil {
		out.Tags = []string{}
	}
	if a.LeaseRunID.Valid && a.LeasedAt != nil && (a.LeaseExpiresAt == nil || a.LeaseExpiresAt.After(time.Now())) {
		l := &serverapi.PoolLease{RunId: a.LeaseRunID.UUID, LeasedAt: *a.LeasedAt, ExpiresAt: a.LeaseExpiresAt}
		if a.LeaseScenarioID.Valid {
			l.ScenarioId = &a.LeaseScenarioID.UUID
		}
		out.Lease = l
	}
	return out
}

// accountFields are the members of a create or replace.
type accountFields struct {
	username    string
	password    *string
	tags        *[]string
	attributes  *map[string]string
	environment *string
}

func (s *Server) accountParams(p project, f accountFields, old []byte) ([]byte, []string, []byte, error) {
	enc := old
	if f.password != nil {
		var err error
		if enc, err = s.Secrets.Seal([]byte(*f.password), pool.PasswordAD(p.ID)); err != nil {
			return nil, nil, nil, err
		}
	}
	tags := []string{}
	if f.tags != nil {
		tags = *f.tags
	}
	attrs := map[string]string{}
	if f.attributes != nil {
		attrs = *f.attributes
	}
	raw, _ := json.Marshal(attrs)
	return enc, tags, raw, nil
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
	rows, err := s.Store.ListPoolAccounts(ctx, db.ListPoolAccountsParams{ProjectID: p.ID, Tag: req.Params.Tag, AfterUsername: after, RowLimit: int32(limit + 1)})
	if err != nil {
		return nil, err
	}
	out := serverapi.ListPoolAccounts200JSONResponse{Items: []serverapi.PoolAccount{}}
	for i, a := range rows {
		if i == limit {
			out.NextCursor = encodeCursor(rows[i-1].Username)
			break
		}
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
	enc, tags, attrs, err := s.accountParams(p, accountFields{b.Username, &b.Password, b.Tags, b.Attributes, b.Environment}, nil)
	if err != nil {
		return nil, err
	}
	var a db.PoolAccount
	err = s.Store.WithTx(ctx, func(q *db.Queries) error {
		a, err = q.CreatePoolAccount(ctx, db.CreatePoolAccountParams{ProjectID: p.ID, Username: b.Username, PasswordEnc: enc, Tags: tags, Attributes: attrs, Environment: b.Environment})
		if store.IsUniqueViolation(err) {
			return apierr.Wrap(err, apierr.Conflict, "account "+b.Username+" exists", "body member /username: each username is in the pool once")
		}
		if err != nil {
			return err
		}
		return audit.Record(ctx, q, audit.Target{Kind: "poolAccount", ID: a.ID.String(), Name: p.Slug + "/" + a.Username}, nil)
	})
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
	a, err := s.Store.GetPoolAccount(ctx, db.GetPoolAccountParams{ProjectID: p.ID, ID: req.AccountId})
	if store.IsNotFound(err) {
		return nil, accountNotFound(req.AccountId)
	}
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
	var a db.PoolAccount
	err = s.Store.WithTx(ctx, func(q *db.Queries) error {
		old, err := q.GetPoolAccount(ctx, db.GetPoolAccountParams{ProjectID: p.ID, ID: req.AccountId})
		if store.IsNotFound(err) {
			return accountNotFound(req.AccountId)
		}
		if err != nil {
			return err
		}
		enc, tags, attrs, err := s.accountParams(p, accountFields{b.Username, b.Password, b.Tags, b.Attributes, b.Environment}, old.PasswordEnc)
		if err != nil {
			return err
		}
		a, err = q.UpdatePoolAccount(ctx, db.UpdatePoolAccountParams{ProjectID: p.ID, ID: old.ID, Username: b.Username, PasswordEnc: enc, Tags: tags, Attributes: attrs, Environment: b.Environment})
		if store.IsUniqueViolation(err) {
			return apierr.Wrap(err, apierr.Conflict, "account "+b.Username+" exists", "body member /username: each username is in the pool once")
		}
		if err != nil {
			return err
		}
		return audit.Record(ctx, q, audit.Target{Kind: "poolAccount", ID: a.ID.String(), Name: p.Slug + "/" + a.Username}, map[string]any{"passwordChanged": b.Password != nil})
	})
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
	err = s.Store.WithTx(ctx, func(q *db.Queries) error {
		a, err := q.GetPoolAccount(ctx, db.GetPoolAccountParams{ProjectID: p.ID, ID: req.AccountId})
		if store.IsNotFound(err) {
			return accountNotFound(req.AccountId)
		}
		if err != nil {
			return err
		}
		n, err := q.DeletePoolAccount(ctx, db.DeletePoolAccountParams{ProjectID: p.ID, ID: a.ID})
		if err != nil {
			return err
		}
		if n == 0 {
			return apierr.New(apierr.Conflict, "the account is leased by a running scenario", "delete it after the run "+a.LeaseRunID.UUID.String()+" ends")
		}
		return audit.Record(ctx, q, audit.Target{Kind: "poolAccount", ID: a.ID.String(), Name: p.Slug + "/" + a.Username}, nil)
	})
	if err != nil {
		return nil, err
	}
	return serverapi.DeletePoolAccount204Response{}, nil
}
