package runs

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/sdods/sdods/impl/server/pool"
	"github.com/sdods/sdods/impl/server/runner"
)

// leaseTTL is how long a lease survives without its run: a run that dies without releasing
// frees its accounts after this long (runs end their leases when they finish, and reconciliation
// ends a dead run's leases at once).
const leaseTTL = 10 * time.Minute

// leaser hands users-pool accounts to a run's scenarios, waiting for one to become free.
type leaser struct {
	s           *Service
	projectID   uuid.UUID
	runID       uuid.UUID
	environment string
}

func (l *leaser) Lease(ctx context.Context, req runner.LeaseRequest) (runner.Account, error) {
	var tags []string
	if req.Label != "" {
		tags = strings.Split(req.Label, ",")
	}
	for {
		a, err := pool.Lease(ctx, l.s.st.Queries, l.s.box, pool.Request{ProjectID: l.projectID, RunID: l.runID,
			Environment: l.environment, Tags: tags, TTL: leaseTTL})
		if err == nil {
			return runner.Account{LeaseID: a.ID.String(), Username: a.Username, Password: a.Password, Attributes: a.Attributes}, nil
		}
		if !errors.Is(err, pool.ErrNoneFree) {
			return runner.Account{}, err
		}
		select {
		case <-ctx.Done():
			return runner.Account{}, fmt.Errorf("no free account in the users pool: %w", ctx.Err())
		case <-time.After(500 * time.Millisecond):
		}
	}
}

func (l *leaser) Release(ctx context.Context, acc runner.Account) error {
	id, err := uuid.Parse(acc.LeaseID)
	if err != nil {
		return err
	}
	return pool.Release(ctx, l.s.st.Queries, id, l.runID)
}
