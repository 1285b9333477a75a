package httpapi

import (
	"context"

	"github.com/google/uuid"

	"github.com/sdods/sdods/gen/db"
)

// runOf loads a run the caller may act on with the current operation, as the stored row that
// the report and ingest handlers (reports.go, ingest.go) still take, and that GetRunFile and
// GetRunHtmlReport hand to the report builder; the runs handlers use runByID. It goes when those read paths move to services (issue 19).
func (s *Server) runOf(ctx context.Context, id uuid.UUID) (db.GetRunRow, error) {
	r, err := s.Store.GetRun(ctx, id)
	if err != nil {
		return r, runNotFoundOr(err, id)
	}
	return r, s.authorizeRun(ctx, id, r.WorkspaceID)
}
