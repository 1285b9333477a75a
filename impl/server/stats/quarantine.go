package stats

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/sdods/sdods/gen/db"
	"github.com/sdods/sdods/gen/serverapi"
	"github.com/sdods/sdods/impl/server/apierr"
	"github.com/sdods/sdods/impl/server/audit"
	"github.com/sdods/sdods/impl/server/store"
)

// Quarantines owns a project's quarantined scenario identities. Creating and releasing them are
// audited in the same transaction; the automatic release after consecutive clean results and the
// run outcome (counts.quarantined) are kept by the database as results are written (migration
// 000010_quarantine), so every way a result arrives — executed or ingested — takes part.
type Quarantines struct {
	st  *store.Store
	now func() time.Time
}

// NewQuarantines returns the quarantine use cases over st.
func NewQuarantines(st *store.Store) *Quarantines { return &Quarantines{st: st, now: time.Now} }

// Create quarantines a scenario identity of the project; conflict while one is open for it.
func (qs *Quarantines) Create(ctx context.Context, projectID uuid.UUID, project string, in serverapi.QuarantineCreate, by uuid.NullUUID) (serverapi.Quarantine, error) {
	if in.ExpiresAt != nil && !in.ExpiresAt.After(qs.now()) {
		return serverapi.Quarantine{}, apierr.New(apierr.ValidationFailed, "the expiry is in the past", "body member /expiresAt: a future time, or leave it out")
	}
	p := db.CreateQuarantineParams{ProjectID: projectID, Owner: in.Owner, Reason: in.Reason, ExpiresAt: in.ExpiresAt, CreatedBy: by,
		FeaturePath: in.FeaturePath, Name: in.Scenario}
	if in.ReleaseAfter != nil {
		p.ReleaseAfter = ptr(int32(*in.ReleaseAfter))
	}
	if in.ExampleRow != nil {
		p.ExampleRow = ptr(int32(*in.ExampleRow))
	}
	var row db.ScenarioQuarantine
	err := qs.st.WithTx(ctx, func(q *db.Queries) error {
		var err error
		row, err = q.CreateQuarantine(ctx, p)
		if store.IsUniqueViolation(err) {
			return apierr.Wrap(err, apierr.Conflict, "the scenario is already quarantined", "release it first with DELETE /api/projects/{slug}/quarantine/{quarantineId}")
		}
		if err != nil {
			return err
		}
		return audit.Record(ctx, q, audit.Target{Kind: "quarantine", ID: row.ID.String(), Name: project + "/" + row.FeaturePath + " › " + row.Name},
			map[string]any{"owner": row.Owner, "reason": row.Reason, "expiresAt": row.ExpiresAt, "releaseAfter": row.ReleaseAfter})
	})
	if err != nil {
		return serverapi.Quarantine{}, err
	}
	return qs.toAPI(row, project), nil
}

// QuarantineFilter selects a page of a project's quarantines: open ones (and released ones with
// IncludeReleased), after the cursor of the previous page when After is set.
type QuarantineFilter struct {
	IncludeReleased bool
	After           *QuarantineCursor
	Limit           int
}

// QuarantineCursor is the sort key of a page's last quarantine: open ones come first, then newest first.
type QuarantineCursor struct {
	Open bool      `json:"o"`
	At   time.Time `json:"a"`
	ID   uuid.UUID `json:"i"`
}

// List returns a page of the project's quarantines, the cursor of the next page (nil on the last)
// and the export of every active quarantine (not only the page's).
func (qs *Quarantines) List(ctx context.Context, projectID uuid.UUID, project string, f QuarantineFilter) (serverapi.QuarantineList, *QuarantineCursor, error) {
	p := db.ListQuarantinesParams{ProjectID: projectID, IncludeReleased: f.IncludeReleased, RowLimit: int32(f.Limit + 1)}
	if c := f.After; c != nil {
		p.AfterOpen, p.AfterAt, p.AfterID = &c.Open, &c.At, uuid.NullUUID{UUID: c.ID, Valid: true}
	}
	items, next, err := qs.listQuarantines(ctx, p, project, f.Limit)
	if err != nil {
		return serverapi.QuarantineList{}, nil, err
	}
	out := serverapi.QuarantineList{Items: items, Export: serverapi.QuarantineExport{List: []string{}}}
	if out.Export, err = qs.export(ctx, projectID); err != nil {
		return serverapi.QuarantineList{}, nil, err
	}
	return out, next, nil
}

// Release ends an open quarantine; not found when the project has no open one with this id.
func (qs *Quarantines) Release(ctx context.Context, projectID uuid.UUID, project string, id uuid.UUID) error {
	return qs.st.WithTx(ctx, func(q *db.Queries) error {
		row, err := q.ReleaseQuarantine(ctx, db.ReleaseQuarantineParams{ProjectID: projectID, ID: id, ReleaseReason: ptr("released by a user")})
		if store.IsNotFound(err) {
			return apierr.New(apierr.NotFound, "no open quarantine "+id.String(), "list them with GET /api/projects/{slug}/quarantine")
		}
		if err != nil {
			return err
		}
		return audit.Record(ctx, q, audit.Target{Kind: "quarantine", ID: row.ID.String(), Name: project + "/" + row.FeaturePath + " › " + row.Name},
			map[string]any{"cleanStreak": row.CleanStreak})
	})
}

func (qs *Quarantines) toAPI(r db.ScenarioQuarantine, project string) serverapi.Quarantine {
	q := serverapi.Quarantine{Id: r.ID, Identity: r.Identity, Project: project, FeaturePath: r.FeaturePath, Scenario: r.Name, Owner: r.Owner,
		Reason: r.Reason, ExpiresAt: r.ExpiresAt, CleanStreak: int(r.CleanStreak), CreatedAt: r.CreatedAt, ReleasedAt: r.ReleasedAt,
		ReleaseReason: r.ReleaseReason}
	if r.ExampleRow != nil {
		q.ExampleRow = ptr(int(*r.ExampleRow))
	}
	if r.ReleaseAfter != nil {
		q.ReleaseAfter = ptr(int(*r.ReleaseAfter))
	}
	q.Active = r.ReleasedAt == nil && (r.ExpiresAt == nil || r.ExpiresAt.After(qs.now()))
	return q
}
