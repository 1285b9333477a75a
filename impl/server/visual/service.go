// Package visual is the review of a run's visual checks: listing those that need review and
// accepting their captures as the project's baselines for the following runs.
package visual

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/sdods/sdods/gen/db"
	"github.com/sdods/sdods/impl/server/apierr"
	"github.com/sdods/sdods/impl/server/audit"
	"github.com/sdods/sdods/impl/server/store"
)

// Service owns baseline review.
type Service struct {
	st *store.Store
}

// NewService returns the baseline review service.
func NewService(st *store.Store) *Service { return &Service{st: st} }

// Run is what the service needs of a run.
type Run struct {
	ID, ProjectID uuid.UUID
	ProjectSlug   string
}

// Check is a visual check of a run: failed (the capture differs from the baseline), pending (no
// baseline existed) or accepted since.
type Check struct {
	ID                                 uuid.UUID
	Name, Browser, Viewport, Status    string
	ScenarioID                         uuid.UUID
	StepIndex                          int
	ActualArtifactID                   uuid.UUID
	ExpectedArtifactID, DiffArtifactID *uuid.UUID
	MismatchPixels                     *int64
	MismatchRatio, Threshold           float64
	CreatedAt                          time.Time
}

func nullable(u uuid.NullUUID) *uuid.UUID {
	if !u.Valid {
		return nil
	}
	id := u.UUID
	return &id
}

// Page selects checks after (AfterAt, AfterID) when AfterAt is set, oldest first, Limit+1 at most.
type Page struct {
	AfterAt *time.Time
	AfterID uuid.UUID
	Limit   int
}

// Checks returns a page of the run's checks that need review or were accepted.
func (s *Service) Checks(ctx context.Context, runID uuid.UUID, page Page) ([]Check, error) {
	params := db.ListRunBaselineChecksParams{RunID: runID, RowLimit: int32(page.Limit + 1)}
	if page.AfterAt != nil {
		params.AfterAt, params.AfterID = page.AfterAt, uuid.NullUUID{UUID: page.AfterID, Valid: true}
	}
	rows, err := s.st.ListRunBaselineChecks(ctx, params)
	if err != nil {
		return nil, err
	}
	out := make([]Check, len(rows))
	for i, c := range rows {
		out[i] = Check{ID: c.ID, Name: c.Name, Browser: c.Browser, Viewport: c.Viewport, Status: c.Status, ScenarioID: c.ScenarioID,
			StepIndex: int(c.StepIndex), ActualArtifactID: c.ActualArtifactID.UUID, ExpectedArtifactID: nullable(c.ExpectedArtifactID),
			DiffArtifactID: nullable(c.DiffArtifactID), MismatchPixels: c.MismatchPixels, MismatchRatio: c.MismatchRatio, Threshold: c.Threshold,
			CreatedAt: c.CreatedAt}
	}
	return out, nil
}

func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	return strings.Join(q, ", ")
}

// Accept makes the actual images of the run's checks named names (or, when all, of every check
// not accepted yet) the project's baselines, in one transaction with its audit entry, and returns
// the names accepted. A name the run has no failed, pending or accepted check of is refused with
// the list of them. When the run captured a name several times for one browser and viewport,
// its last capture wins. by is who accepts (none for a command).
func (s *Service) Accept(ctx context.Context, r Run, names []string, all bool, by uuid.NullUUID) ([]string, error) {
	accepted := []string{}
	err := s.st.WithTx(ctx, func(q *db.Queries) error {
		checks, err := q.LockRunBaselineChecks(ctx, r.ID)
		if err != nil {
			return err
		}
		known := map[string]bool{}
		for _, c := range checks {
			known[c.Name] = true
		}
		want := map[string]bool{}
		if all {
			for _, c := range checks {
				if c.Status != "accepted" {
					want[c.Name] = true
				}
			}
		} else {
			var unknown []string
			for _, n := range names {
				if !known[n] {
					unknown = append(unknown, n)
				}
				want[n] = true
			}
			if len(unknown) > 0 {
				return apierr.New(apierr.BadRequest, "the run has no failed or pending visual check named "+quoteList(unknown),
					"unknown names: "+strings.Join(unknown, ", ")+"; list them with GET /api/runs/"+r.ID.String()+"/baselines")
			}
		}
		// The last capture of each name, browser and viewport wins (checks come oldest first).
		type key struct{ name, browser, viewport string }
		last := map[key]db.LockRunBaselineChecksRow{}
		var ids []uuid.UUID
		for _, c := range checks {
			if want[c.Name] {
				last[key{c.Name, c.Browser, c.Viewport}] = c
				ids = append(ids, c.ID)
			}
		}
		for _, c := range last {
			if err := q.AcceptBaseline(ctx, db.AcceptBaselineParams{ProjectID: r.ProjectID, Name: c.Name, Browser: c.Browser, Viewport: c.Viewport,
				MediaType: c.ActualMediaType, SizeBytes: c.ActualSizeBytes, Sha256: c.ActualSha256, BlobKey: c.ActualBlobKey,
				SourceRunID: uuid.NullUUID{UUID: r.ID, Valid: true}, AcceptedBy: by}); err != nil {
				return err
			}
		}
		if err := q.MarkVisualChecksAccepted(ctx, db.MarkVisualChecksAcceptedParams{Ids: ids, AcceptedBy: by}); err != nil {
			return err
		}
		for n := range want {
			accepted = append(accepted, n)
		}
		slices.Sort(accepted)
		return audit.Record(ctx, q, audit.Target{Kind: "run", ID: r.ID.String(), Name: r.ProjectSlug}, map[string]any{"accepted": accepted, "all": all})
	})
	if err != nil {
		return nil, err
	}
	return accepted, nil
}
