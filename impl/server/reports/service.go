package reports

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"log/slog"

	"github.com/google/uuid"

	"github.com/sdods/sdods/gen/db"
	"github.com/sdods/sdods/impl/server/blob"
	"github.com/sdods/sdods/impl/server/results"
	"github.com/sdods/sdods/impl/server/safecontent"
	"github.com/sdods/sdods/impl/server/store"
)

// MaxInlineImages caps the screenshots inlined into one HTML report (bytes before encoding);
// the failures' screenshots are inlined first.
const MaxInlineImages = 24 << 20

// Service reads what a run's report is made of: its scenarios with their steps and, for the
// HTML report, its screenshots.
type Service struct {
	st    *store.Store
	blobs blob.Store
	log   *slog.Logger
}

// NewService returns the report service.
func NewService(st *store.Store, blobs blob.Store, log *slog.Logger) *Service {
	return &Service{st: st, blobs: blobs, log: log}
}

// Load returns head (the run, without scenarios) with the run's scenarios and their steps.
func (s *Service) Load(ctx context.Context, head Run) (Run, error) {
	rows, err := s.st.ListRunScenarios(ctx, head.ID)
	if err != nil {
		return Run{}, err
	}
	out := head
	out.Scenarios = nil
	for _, sc := range rows {
		rs := Scenario{ID: sc.ID, Module: sc.Module, FeaturePath: sc.FeaturePath, FeatureName: sc.FeatureName, Name: sc.Name,
			Line: int(sc.Line), Tags: sc.Tags, Status: sc.Status, Attempts: int(sc.Attempts), DurationMs: sc.DurationMs}
		if len(sc.Error) > 0 {
			var e results.StepError
			if json.Unmarshal(sc.Error, &e) == nil && e.Message != "" {
				rs.Error = &e
			}
		}
		if err := json.Unmarshal(sc.Steps, &rs.Steps); err != nil {
			return out, fmt.Errorf("scenario %s steps: %w", sc.ID, err)
		}
		out.Scenarios = append(out.Scenarios, rs)
	}
	return out, nil
}

// LoadSummary returns head with what Build needs of the run's scenarios, computed by the
// database: the counts, durations and slowest over all of them (Summary), and as Scenarios only
// those the report lists — the failed ones with their steps and error, the flaky and the slowest
// ones — so that the report of a large run reads and decodes a few rows, not all of them.
func (s *Service) LoadSummary(ctx context.Context, head Run) (Run, error) {
	sum, err := s.st.RunReportSummary(ctx, db.RunReportSummaryParams{RunID: head.ID, Slowest: SlowestCount})
	if err != nil {
		return Run{}, err
	}
	rows, err := s.st.ListRunReportScenarios(ctx, db.ListRunReportScenariosParams{RunID: head.ID, Slowest: nonNil(sum.Slowest)})
	if err != nil {
		return Run{}, err
	}
	out := head
	out.Summary = &Summary{DurationMs: sum.DurationMs, Slowest: sum.Slowest, Counts: results.Counts{Total: int(sum.Total), Passed: int(sum.Passed),
		Flaky: int(sum.Flaky), Failed: int(sum.Failed), Pending: int(sum.Pending), Skipped: int(sum.Skipped), Undefined: int(sum.Undefined)}}
	out.Scenarios = make([]Scenario, 0, len(rows))
	for _, sc := range rows {
		rs := Scenario{ID: sc.ID, Module: sc.Module, FeaturePath: sc.FeaturePath, FeatureName: sc.FeatureName, Name: sc.Name,
			Line: int(sc.Line), Tags: sc.Tags, Status: sc.Status, Attempts: int(sc.Attempts), DurationMs: sc.DurationMs}
		if len(sc.Error) > 0 {
			var e results.StepError
			if json.Unmarshal(sc.Error, &e) == nil && e.Message != "" {
				rs.Error = &e
			}
		}
		if len(sc.Steps) > 0 {
			if err := json.Unmarshal(sc.Steps, &rs.Steps); err != nil {
				return out, fmt.Errorf("scenario %s steps: %w", sc.ID, err)
			}
		}
		out.Scenarios = append(out.Scenarios, rs)
	}
	return out, nil
}

func nonNil(ids []uuid.UUID) []uuid.UUID {
	if ids == nil {
		return []uuid.UUID{}
	}
	return ids
}

// HTML renders the self-contained HTML report of the run head is of, screenshots inlined as
// data URIs; htmlURL is the report's own address.
func (s *Service) HTML(ctx context.Context, head Run, htmlURL string) ([]byte, error) {
	run, err := s.Load(ctx, head)
	if err != nil {
		return nil, err
	}
	arts, err := s.st.ListRunArtifacts(ctx, uuid.NullUUID{UUID: run.ID, Valid: true})
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
		if f, ok := FailureOf(sc); ok && f.Screenshot != nil {
			order = append(order, *f.Screenshot)
		}
	}
	for _, sc := range run.Scenarios {
		for _, st := range sc.Steps {
			for _, a := range st.Attachments {
				if a.Kind == results.KindScreenshot || a.Kind == results.KindDiff {
					order = append(order, a.ArtifactID)
				}
			}
		}
	}
	images := map[uuid.UUID]template.URL{}
	budget := int64(MaxInlineImages)
	for _, id := range order {
		a, ok := byID[id]
		if _, done := images[id]; done || !ok || !safecontent.IsImage(a.MediaType) || a.SizeBytes > budget {
			continue
		}
		data, err := s.readArtifact(ctx, a)
		if err != nil {
			s.log.WarnContext(ctx, "report: screenshot unreadable", "artifact", a.ID, "error", err)
			continue
		}
		budget -= int64(len(data))
		// The media type is a raster image of the allow-list, so the URI cannot carry script.
		images[id] = template.URL("data:" + safecontent.MediaType(a.MediaType) + ";base64," + base64.StdEncoding.EncodeToString(data))
	}
	var buf bytes.Buffer
	if err := WriteHTML(&buf, Page{Run: run, Report: Build(run, htmlURL), Images: images}); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func (s *Service) readArtifact(ctx context.Context, a db.Artifact) ([]byte, error) {
	rc, err := s.st.OpenArtifact(ctx, s.blobs, a.ID, a.BlobKey)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return io.ReadAll(rc)
}
