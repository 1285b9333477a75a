package httpapi

import (
	"context"

	"github.com/google/uuid"

	"github.com/sdods/sdods/gen/serverapi"
	"github.com/sdods/sdods/impl/server/reports"
	"github.com/sdods/sdods/impl/server/runs"
)

// GetRunReport returns the run's summary: counts by status, durations, failures with their step
// and error, retried scenarios and the slowest ones.
func (s *Server) GetRunReport(ctx context.Context, req serverapi.GetRunReportRequestObject) (serverapi.GetRunReportResponseObject, error) {
	r, err := s.runByID(ctx, req.RunId)
	if err != nil {
		return nil, err
	}
	run, err := s.reportRun(ctx, r)
	if err != nil {
		return nil, err
	}
	return runReportJSON(reports.Build(run, htmlReportURL(r.Run.ID))), nil
}

func buildReport(run reports.Run, id uuid.UUID) serverapi.RunReport {
	return reports.Build(run, htmlReportURL(id))
}

func htmlReportURL(id uuid.UUID) string { return "/reports/" + id.String() + "/index.html" }

// reportHead is the run a report is of, without its scenarios.
func reportHead(r runs.ProjectRun) reports.Run {
	out := reports.Run{ID: r.Run.ID, Project: r.ProjectSlug, Status: r.Run.Status, Source: r.Run.Source, CreatedAt: r.Run.CreatedAt,
		StartedAt: r.Run.StartedAt, FinishedAt: r.Run.FinishedAt}
	if r.Run.Label != nil {
		out.Label = *r.Run.Label
	}
	if r.Run.Error != nil {
		out.Error = *r.Run.Error
	}
	return out
}

// reportRun loads what a run's report is built of: its scenarios, with the steps of those that
// did not pass.
func (s *Server) reportRun(ctx context.Context, r runs.ProjectRun) (reports.Run, error) {
	return s.Reports.LoadSummary(ctx, reportHead(r))
}

// htmlReport renders the self-contained HTML report of a run, screenshots inlined as data URIs.
func (s *Server) htmlReport(ctx context.Context, r runs.ProjectRun) ([]byte, error) {
	return s.Reports.HTML(ctx, reportHead(r), htmlReportURL(r.Run.ID))
}
