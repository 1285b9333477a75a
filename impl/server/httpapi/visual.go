package httpapi

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/sdods/sdods/gen/db"
	"github.com/sdods/sdods/gen/serverapi"
	"github.com/sdods/sdods/impl/server/apierr"
	"github.com/sdods/sdods/impl/server/audit"
)

type baselineCursor struct {
	At time.Time `json:"t"`
	ID uuid.UUID `json:"i"`
}

// ListRunBaselines returns a page of the run's visual checks that need review (failed: the
// capture differs from the baseline; pending: no baseline existed) or were accepted since.
func (s *Server) ListRunBaselines(ctx context.Context, req serverapi.ListRunBaselinesRequestObject) (serverapi.ListRunBaselinesResponseObject, error) {
	r, err := s.runOf(ctx, req.RunId)
	if err != nil {
		return nil, err
	}
	var cur *baselineCursor
	if err := decodeCursor(req.Params.Cursor, &cur); err != nil {
		return nil, err
	}
	limit := pageLimit(req.Params.Limit)
	params := db.ListRunBaselineChecksParams{RunID: r.Run.ID, RowLimit: int32(limit + 1)}
	if cur != nil {
		params.AfterAt, params.AfterID = &cur.At, uuid.NullUUID{UUID: cur.ID, Valid: true}
	}
	rows, err := s.Store.ListRunBaselineChecks(ctx, params)
	if err != nil {
		return nil, err
	}
	out := serverapi.ListRunBaselines200JSONResponse{Items: []serverapi.BaselineCheck{}}
	for i, c := range rows {
		if i == limit {
			out.NextCursor = encodeCursor(baselineCursor{At: rows[i-1].CreatedAt, ID: rows[i-1].ID})
			break
		}
		out.Items = append(out.Items, baselineCheck(c))
	}
	return out, nil
}

func baselineCheck(c db.VisualCheck) serverapi.BaselineCheck {
	b := serverapi.BaselineCheck{Name: c.Name, ScenarioId: c.ScenarioID, StepIndex: ptr(int(c.StepIndex)), Browser: c.Browser,
		Status: serverapi.BaselineCheckStatus(c.Status), ActualArtifactId: c.ActualArtifactID.UUID,
		ExpectedArtifactId: nullUUID(c.ExpectedArtifactID), DiffArtifactId: nullUUID(c.DiffArtifactID), Threshold: ptr(float32(c.Threshold))}
	b.Viewport.Width, b.Viewport.Height = viewportSize(c.Viewport)
	if c.MismatchPixels != nil {
		b.MismatchPixels, b.MismatchRatio = ptr(int(*c.MismatchPixels)), ptr(float32(c.MismatchRatio))
	}
	return b
}

// viewportSize reads "1280x800".
func viewportSize(v string) (int, int) {
	w, h, _ := strings.Cut(v, "x")
	wi, _ := strconv.Atoi(w)
	hi, _ := strconv.Atoi(h)
	return max(wi, 1), max(hi, 1)
}

// AcceptBaselines makes the actual images of the run's named visual checks (or of all that failed
// or are pending) the project's baselines for the following runs, in one transaction with its audit
// entry. A name the run has no failed, pending or accepted check of is refused with the list of them.
// When the run captured a name several times for one browser and viewport, its last capture wins.
func (s *Server) AcceptBaselines(ctx context.Context, req serverapi.AcceptBaselinesRequestObject) (serverapi.AcceptBaselinesResponseObject, error) {
	r, err := s.runOf(ctx, req.RunId)
	if err != nil {
		return nil, err
	}
	var names []string
	all := false
	if byName, err := req.Body.AsAcceptBaselinesByName(); err == nil && byName.Names != nil {
		names = byName.Names
	} else if a, err := req.Body.AsAcceptAllBaselines(); err == nil && a.All {
		all = true
	} else {
		return nil, apierr.New(apierr.BadRequest, "the body is neither { names } nor { all: true }", "send {\"names\": [\"…\"]} or {\"all\": true}")
	}
	accepted := []string{}
	err = s.Store.WithTx(ctx, func(q *db.Queries) error {
		checks, err := q.LockRunBaselineChecks(ctx, r.Run.ID)
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
					"unknown names: "+strings.Join(unknown, ", ")+"; list them with GET /api/runs/"+r.Run.ID.String()+"/baselines")
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
		by := callerID(ctx)
		for _, c := range last {
			if err := q.AcceptBaseline(ctx, db.AcceptBaselineParams{ProjectID: r.Run.ProjectID, Name: c.Name, Browser: c.Browser, Viewport: c.Viewport,
				MediaType: c.ActualMediaType, SizeBytes: c.ActualSizeBytes, Sha256: c.ActualSha256, BlobKey: c.ActualBlobKey,
				SourceRunID: uuid.NullUUID{UUID: r.Run.ID, Valid: true}, AcceptedBy: by}); err != nil {
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
		return audit.Record(ctx, q, audit.Target{Kind: "run", ID: r.Run.ID.String(), Name: r.ProjectSlug}, map[string]any{"accepted": accepted, "all": all})
	})
	if err != nil {
		return nil, err
	}
	return serverapi.AcceptBaselines200JSONResponse{Accepted: accepted}, nil
}

func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	return strings.Join(q, ", ")
}
