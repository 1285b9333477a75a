package pool

import (
	"context"
	"encoding/json"
	"time"

	"github.com/google/uuid"

	"github.com/sdods/sdods/gen/db"
	"github.com/sdods/sdods/impl/server/apierr"
	"github.com/sdods/sdods/impl/server/audit"
	"github.com/sdods/sdods/impl/server/secrets"
	"github.com/sdods/sdods/impl/server/store"
)

// Service owns a project's users pool as its editors see it: the accounts, their passwords
// sealed at rest, and the rule that a leased account is not deleted under its scenario.
type Service struct {
	st  *store.Store
	box *secrets.Box
}

// NewService returns the users-pool service.
func NewService(st *store.Store, box *secrets.Box) *Service { return &Service{st: st, box: box} }

// Project is what the service needs of a project.
type Project struct {
	ID   uuid.UUID
	Slug string
}

// LiveLease is the live lease of an account.
type LiveLease struct {
	RunID      uuid.UUID
	ScenarioID *uuid.UUID
	LeasedAt   time.Time
	ExpiresAt  *time.Time
}

// Stored is a pool account as shown: never its password, its lease only while live.
type Stored struct {
	ID                   uuid.UUID
	Username             string
	HasPassword          bool
	Tags                 []string
	Attributes           map[string]string
	Environment          *string
	Lease                *LiveLease
	CreatedAt, UpdatedAt time.Time
}

func shown(a db.PoolAccount, now time.Time) Stored {
	out := Stored{ID: a.ID, Username: a.Username, HasPassword: len(a.PasswordEnc) > 0, Tags: a.Tags, Attributes: map[string]string{},
		Environment: a.Environment, CreatedAt: a.CreatedAt, UpdatedAt: a.UpdatedAt}
	_ = json.Unmarshal(a.Attributes, &out.Attributes)
	if out.Tags == nil {
		out.Tags = []string{}
	}
	if a.LeaseRunID.Valid && a.LeasedAt != nil && (a.LeaseExpiresAt == nil || a.LeaseExpiresAt.After(now)) {
		l := &LiveLease{RunID: a.LeaseRunID.UUID, LeasedAt: *a.LeasedAt, ExpiresAt: a.LeaseExpiresAt}
		if a.LeaseScenarioID.Valid {
			id := a.LeaseScenarioID.UUID
			l.ScenarioID = &id
		}
		out.Lease = l
	}
	return out
}

// AccountNotFound is the error of an id with no account in the project.
func AccountNotFound(id uuid.UUID) error {
	return apierr.New(apierr.NotFound, "test account "+id.String()+" not found", "list accounts with GET /api/projects/{slug}/users-pool")
}

// Fields are the members of a create or replace. Password nil keeps the stored one (replace).
type Fields struct {
	Username    string
	Password    *string
	Tags        []string
	Attributes  map[string]string
	Environment *string
}

func (s *Service) params(p Project, f Fields, old []byte) ([]byte, []string, []byte, error) {
	enc := old
	if f.Password != nil {
		var err error
		if enc, err = s.box.Seal([]byte(*f.Password), PasswordAD(p.ID)); err != nil {
			return nil, nil, nil, err
		}
	}
	tags := f.Tags
	if tags == nil {
		tags = []string{}
	}
	attrs := f.Attributes
	if attrs == nil {
		attrs = map[string]string{}
	}
	raw, _ := json.Marshal(attrs)
	return enc, tags, raw, nil
}

func taken(err error, username string) error {
	if store.IsUniqueViolation(err) {
		return apierr.Wrap(err, apierr.Conflict, "account "+username+" exists", "body member /username: each username is in the pool once")
	}
	return err
}

// List lists the pool by username: accounts with tag (when set) after after, Limit+1 at most.
func (s *Service) List(ctx context.Context, projectID uuid.UUID, tag, after *string, limit int) ([]Stored, error) {
	rows, err := s.st.ListPoolAccounts(ctx, db.ListPoolAccountsParams{ProjectID: projectID, Tag: tag, AfterUsername: after, RowLimit: int32(limit + 1)})
	if err != nil {
		return nil, err
	}
	now := time.Now()
	out := make([]Stored, len(rows))
	for i, a := range rows {
		out[i] = shown(a, now)
	}
	return out, nil
}

// Get returns one account (AccountNotFound when the project has none with id).
func (s *Service) Get(ctx context.Context, projectID, id uuid.UUID) (Stored, error) {
	a, err := s.st.GetPoolAccount(ctx, db.GetPoolAccountParams{ProjectID: projectID, ID: id})
	if store.IsNotFound(err) {
		return Stored{}, AccountNotFound(id)
	}
	if err != nil {
		return Stored{}, err
	}
	return shown(a, time.Now()), nil
}

// Create adds an account, its password sealed (conflict when the username is taken).
func (s *Service) Create(ctx context.Context, p Project, f Fields) (Stored, error) {
	enc, tags, attrs, err := s.params(p, f, nil)
	if err != nil {
		return Stored{}, err
	}
	var a db.PoolAccount
	err = s.st.WithTx(ctx, func(q *db.Queries) error {
		a, err = q.CreatePoolAccount(ctx, db.CreatePoolAccountParams{ProjectID: p.ID, Username: f.Username, PasswordEnc: enc, Tags: tags, Attributes: attrs, Environment: f.Environment})
		if err != nil {
			return taken(err, f.Username)
		}
		return audit.Record(ctx, q, audit.Target{Kind: "poolAccount", ID: a.ID.String(), Name: p.Slug + "/" + a.Username}, nil)
	})
	return shown(a, time.Now()), err
}

// Replace replaces an account; a nil password keeps the stored one.
func (s *Service) Replace(ctx context.Context, p Project, id uuid.UUID, f Fields) (Stored, error) {
	var a db.PoolAccount
	err := s.st.WithTx(ctx, func(q *db.Queries) error {
		old, err := q.GetPoolAccount(ctx, db.GetPoolAccountParams{ProjectID: p.ID, ID: id})
		if store.IsNotFound(err) {
			return AccountNotFound(id)
		}
		if err != nil {
			return err
		}
		enc, tags, attrs, err := s.params(p, f, old.PasswordEnc)
		if err != nil {
			return err
		}
		a, err = q.UpdatePoolAccount(ctx, db.UpdatePoolAccountParams{ProjectID: p.ID, ID: old.ID, Username: f.Username, PasswordEnc: enc, Tags: tags, Attributes: attrs, Environment: f.Environment})
		if err != nil {
			return taken(err, f.Username)
		}
		return audit.Record(ctx, q, audit.Target{Kind: "poolAccount", ID: a.ID.String(), Name: p.Slug + "/" + a.Username}, map[string]any{"passwordChanged": f.Password != nil})
	})
	return shown(a, time.Now()), err
}

// Delete removes an account; one under a live lease is a conflict.
func (s *Service) Delete(ctx context.Context, p Project, id uuid.UUID) error {
	return s.st.WithTx(ctx, func(q *db.Queries) error {
		a, err := q.GetPoolAccount(ctx, db.GetPoolAccountParams{ProjectID: p.ID, ID: id})
		if store.IsNotFound(err) {
			return AccountNotFound(id)
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
}
