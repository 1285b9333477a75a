package httpapi

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/sdods/sdods/gen/serverapi"
	"github.com/sdods/sdods/impl/server/apierr"
	"github.com/sdods/sdods/impl/server/visual"
)

type baselineCursor struct {
	At time.Time `json:"t"`
	ID uuid.UUID `json:"i"`
}

// ListRunBaselines returns a page of the run's visual checks that need review (failed: the
// capture differs from the baseline; pending: no baseline existed) or were accepted since.
func (s *Server) ListRunBaselines(ctx context.Context, req serverapi.ListRunBaselinesRequestObject) (serverapi.ListRunBaselinesResponseObject, error) {
	r, err := s.runByID(ctx, req.RunId)
	if err != nil {
		return nil, err
	}
	var cur *baselineCursor
	if err := decodeCursor(req.Params.Cursor, &cur); err != nil {
		return nil, err
	}
	limit := pageLimit(req.Params.Limit)
	pg := visual.Page{Limit: limit}
	if cur != nil {
		pg.AfterAt, pg.AfterID = &cur.At, cur.ID
	}
	rows, err := s.Visual.Checks(ctx, r.Run.ID, pg)
	if err != nil {
		return nil, err
	}
	items, next := page(rows, limit, func(c visual.Check) baselineCursor { return baselineCursor{At: c.CreatedAt, ID: c.ID} })
	out := serverapi.ListRunBaselines200JSONResponse{Items: []serverapi.BaselineCheck{}, NextCursor: next}
	for _, c := range items {
		out.Items = append(out.Items, baselineCheck(c))
	}
	return out, nil
}

func baselineCheck(c visual.Check) serverapi.BaselineCheck {
	b := serverapi.BaselineCheck{Name: c.Name, ScenarioId: c.ScenarioID, StepIndex: ptr(c.StepIndex), Browser: c.Browser,
		Status: serverapi.BaselineCheckStatus(c.Status), ActualArtifactId: c.ActualArtifactID,
		ExpectedArtifactId: c.ExpectedArtifactID, DiffArtifactId: c.DiffArtifactID, Threshold: ptr(float32(c.Threshold))}
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
	r, err := s.runByID(ctx, req.RunId)
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
	accepted, err := s.Visual.Accept(ctx, visual.Run{ID: r.Run.ID, ProjectID: r.Run.ProjectID, ProjectSlug: r.ProjectSlug}, names, all, callerID(ctx))
	if err != nil {
		return nil, err
	}
	return serverapi.AcceptBaselines200JSONResponse{Accepted: accepted}, nil
}
