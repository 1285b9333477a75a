// Package pool leases the test accounts of a project's users pool: a lease gives one account
// exclusively to one running scenario until the scenario releases it, its run ends, or — when its
// holder died without releasing — the lease expires. Holders renew long leases while they run.
// Service owns the accounts as a project's editors manage them.
package pool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/sdods/sdods/gen/db"
	"github.com/sdods/sdods/impl/server/secrets"
	"github.com/sdods/sdods/impl/server/store"
)

// ErrNoneFree is returned when every matching account is leased.
var ErrNoneFree = errors.New("no free account in the users pool")

// Account is a leased account with its password in the clear (in memory only; never log it).
type Account struct {
	ID         uuid.UUID
	Username   string
	Password   string
	Attributes map[string]string
	Tags       []string
	ExpiresAt  time.Time
}

// Request selects an account.
type Request struct {
	ProjectID   uuid.UUID
	RunID       uuid.UUID
	ScenarioID  uuid.UUID // optional
	Environment string    // only accounts without an environment or with this one; "" any
	Tags        []string  // the account carries all of them
	TTL         time.Duration
}

// PasswordAD is the additional data binding a pool password's ciphertext to its project.
func PasswordAD(projectID uuid.UUID) []byte { return []byte("pool-password:" + projectID.String()) }

// Lease gives a free account to the requesting scenario, or ErrNoneFree.
func Lease(ctx context.Context, q *db.Queries, box *secrets.Box, r Request) (Account, error) {
	if r.TTL <= 0 {
		r.TTL = 10 * time.Minute
	}
	p := db.LeasePoolAccountParams{RunID: uuid.NullUUID{UUID: r.RunID, Valid: true}, ScenarioID: uuid.NullUUID{UUID: r.ScenarioID, Valid: r.ScenarioID != uuid.Nil},
		TtlSeconds: r.TTL.Seconds(), ProjectID: r.ProjectID, Tags: r.Tags}
	if p.Tags == nil {
		p.Tags = []string{}
	}
	if r.Environment != "" {
		p.Environment = &r.Environment
	}
	a, err := q.LeasePoolAccount(ctx, p)
	if store.IsNotFound(err) {
		return Account{}, ErrNoneFree
	}
	if err != nil {
		return Account{}, fmt.Errorf("lease pool account: %w", err)
	}
	out := Account{ID: a.ID, Username: a.Username, Tags: a.Tags, Attributes: map[string]string{}}
	if a.LeaseExpiresAt != nil {
		out.ExpiresAt = *a.LeaseExpiresAt
	}
	_ = json.Unmarshal(a.Attributes, &out.Attributes)
	if len(a.PasswordEnc) > 0 {
		pw, err := box.Open(a.PasswordEnc, PasswordAD(r.ProjectID))
		if err != nil {
			return Account{}, fmt.Errorf("pool account %s: %w", a.ID, err)
		}
		out.Password = string(pw)
	}
	return out, nil
}

// Renew extends a lease the run holds; false when it no longer holds it.
func Renew(ctx context.Context, q *db.Queries, accountID, runID uuid.UUID, ttl time.Duration) (bool, error) {
	n, err := q.RenewPoolLease(ctx, db.RenewPoolLeaseParams{ID: accountID, RunID: uuid.NullUUID{UUID: runID, Valid: true}, TtlSeconds: ttl.Seconds()})
	return n == 1, err
}

// Release ends a lease the run holds (a no-op when it no longer does).
func Release(ctx context.Context, q *db.Queries, accountID, runID uuid.UUID) error {
	_, err := q.ReleasePoolLease(ctx, db.ReleasePoolLeaseParams{ID: accountID, LeaseRunID: uuid.NullUUID{UUID: runID, Valid: true}})
	return err
}

// ReleaseRun ends every lease of a run: when it ends, and when a dead run is reconciled.
func ReleaseRun(ctx context.Context, q *db.Queries, runID uuid.UUID) (int64, error) {
	return q.ReleaseRunLeases(ctx, uuid.NullUUID{UUID: runID, Valid: true})
}
