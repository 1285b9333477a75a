package httpapi

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html/template"
	"io"

	"github.com/google/uuid"

	"github.com/sdods/sdods/gen/db"
	"github.com/sdods/sdods/gen/serverapi"
	"github.com/sdods/sdods/impl/server/reports"
	"github.com/sdods/sdods/impl/server/safecontent"
)

// maxInlineImages caps the screenshots inlined into one HTML report (bytes before encoding);
// the failures' screenshots are inlined first.
const maxInlineImages = 24 << 20

// GetRunReport returns the run's summary: counts by status, durations, failures with their step
// and error, retried scenarios and the slowest ones.
func (s *Server) GetRunReport(ctx context.Context, req serverapi.GetRunReportRequestObject) (serverapi.GetRunReportResponseObject, error) {
	r, err := s.runOf(ctx, req.RunId)
	if err != nil {
		return nil, err
	}
	run, _, err := s.reportRun(ctx, r)
	if err != nil {
		return nil, err
	}
	return serverapi.GetRunReport200JSONResponse(reports.Build(run, htmlReportURL(r.Run.ID))), nil
}

func buildReport(run reports.Run, id uuid.UUID) serverapi.RunReport {
	return reports.Build(run, htmlReportURL(id))
}

func htmlReportURL(id uuid.UUID) string { return "/reports/" + id.String() + "/index.html" }

// reportRun loads a run's scenarios with their steps.
func (s *Server) reportRun(ctx context.Context, r db.GetRunRow) (reports.Run, []db.RunScenario, error) {
	rows, err := s.Store.ListRunScenarios(ctx, r.Run.ID)
	if err != nil {
		return reports.Run{}, nil, err
	}
	out := reports.Run{ID: r.Run.ID, Project: r.ProjectSlug, Status: r.Run.Status, Source: r.Run.Source, CreatedAt: r.Run.CreatedAt, StartedAt: r.Run.StartedAt, FinishedAt: r.Run.FinishedAt}
	if r.Run.Label != nil {
		out.Label = *r.Run.Label
	}
	if r.Run.Error != nil {
		out.Error = *r.Run.Error
	}
	for _, sc := range rows {
		rs := reports.Scenario{ID: sc.ID, Module: sc.Module, FeaturePath: sc.FeaturePath, FeatureName: sc.FeatureName, Name: sc.Name,
			Line: int(sc.Line), Tags: sc.Tags, Status: sc.Status, Attempts: int(sc.Attempts), DurationMs: sc.DurationMs}
		if len(sc.Error) > 0 {
			var e serverapi.RunStepError
			if json.Unmarshal(sc.Error, &e) == nil && e.Message != "" {
				rs.Error = &e
			}
		}
		if err := json.Unmarshal(sc.Steps, &rs.Steps); err != nil {
			return out, nil, fmt.Errorf("scenario %s steps: %w", sc.ID, err)
		}
		out.Scenarios = append(out.Scenarios, rs)
	}
	return out, rows, nil
}

// htmlReport renders the self-contained HTML report of a run, screenshots inlined as data URIs.
func (s *Server) htmlReport(ctx context.Context, r db.GetRunRow) ([]byte, error) {
	run, _, err := s.reportRun(ctx, r)
	if err != nil {
		return nil, err
	}
	arts, err := s.Store.ListRunArtifacts(ctx, uuid.NullUUID{UUID: r.Run.ID, Valid: true})
	if err != nil {
		return nil, err
	}
	byID := map[uuid.UUID]db.Artifact{}
	for _, a := range arts {
		byID[a.ID] = a
	}
	// Failures' screenshots first, then the others in run order, while the budget lasts.
	var order []uuid.UUID
	for _, sc := range run.Scenarios {
		if f, ok := reports.FailureOf(sc); ok && f.Screenshot != nil {
			order = append(order, *f.Screenshot)
		}
	}
	for _, sc := range run.Scenarios {
		for _, st := range sc.Steps {
			for _, a := range st.Attachments {
				if a.Kind == serverapi.AttachmentKindScreenshot || a.Kind == serverapi.AttachmentKindDiff {
					order = append(order, a.ArtifactId)
				}
			}
		}
	}
	images := map[uuid.UUID]template.URL{}
	budget := int64(maxInlineImages)
	for _, id := range order {
		a, ok := byID[id]
		if _, done := images[id]; done || !ok || !safecontent.IsImage(a.MediaType) || a.SizeBytes > budget {
			continue
		}
		data, err := s.readBlob(ctx, a.BlobKey)
		if err != nil {
			s.Log.WarnContext(ctx, "report: screenshot unreadable", "artifact", a.ID, "error", err)
			continue
		}
		budget -= int64(len(data))
		// The media type is a raster image of the allow-list, so the URI cannot carry script.
		images[id] = template.URL("data:" + safecontent.MediaType(a.MediaType) + ";base64," + base64.StdEncoding.EncodeToString(data))
	}
	var buf bytes.Buffer
	if err := reports.WriteHTML(&buf, reports.Page{Run: run, Report: reports.Build(run, htmlReportURL(r.Run.ID)), Images: images}); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func (s *Server) readBlob(ctx context.Context, key string) ([]byte, error) {
	rc, err := s.Blobs.Open(ctx, key)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return io.ReadAll(rc)
}
