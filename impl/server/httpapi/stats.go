package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/google/uuid"

	"github.com/sdods/sdods/gen/serverapi"
	"github.com/sdods/sdods/impl/server/stats"
)

// statsScope is the caller's part of the statistics: its workspaces (all for instance admins)
// narrowed by the request's filters.
func (s *Server) statsScope(ctx context.Context, project *string, workspace *uuid.UUID, since, until *time.Time, branch, environment *string,
	trigger *serverapi.RunTrigger, tag *string) (stats.Scope, error) {
	p, uid, err := principal(ctx)
	if err != nil {
		return stats.Scope{}, err
	}
	sc := stats.Scope{AllWorkspaces: p.InstanceAdmin, Workspace: workspace, Project: project, Since: since, Until: until, Branch: branch,
		Environment: environment, Tag: tag}
	if trigger != nil {
		sc.Trigger = ptr(string(*trigger))
	}
	if !p.InstanceAdmin {
		if sc.WorkspaceIDs, err = s.Services.Stats.Workspaces(ctx, uid); err != nil {
			return sc, err
		}
	}
	return sc, nil
}

// GetTrends answers run and scenario outcomes per bucket, with the period-over-period change.
func (s *Server) GetTrends(ctx context.Context, req serverapi.GetTrendsRequestObject) (serverapi.GetTrendsResponseObject, error) {
	q := req.Params
	sc, err := s.statsScope(ctx, q.Project, q.Workspace, q.Since, q.Until, q.Branch, q.Environment, q.Trigger, q.Tag)
	if err != nil {
		return nil, err
	}
	var bucket, tz string
	if q.Bucket != nil {
		bucket = string(*q.Bucket)
	}
	if q.Tz != nil {
		tz = *q.Tz
	}
	out, err := s.Services.Stats.Trends(ctx, sc, bucket, tz)
	if err != nil {
		return nil, err
	}
	return serverapi.GetTrends200JSONResponse(out), nil
}

type flakyCursor struct {
	Offset int `json:"o"`
}

// ListFlakyScenarios answers one page of scenario identities with their flakiness metrics.
func (s *Server) ListFlakyScenarios(ctx context.Context, req serverapi.ListFlakyScenariosRequestObject) (serverapi.ListFlakyScenariosResponseObject, error) {
	q := req.Params
	sc, err := s.statsScope(ctx, q.Project, q.Workspace, q.Since, q.Until, q.Branch, q.Environment, q.Trigger, q.Tag)
	if err != nil {
		return nil, err
	}
	var cur flakyCursor
	if err := decodeCursor(q.Cursor, &cur); err != nil {
		return nil, err
	}
	fq := stats.FlakyQuery{FlakyOnly: q.FlakyOnly == nil || *q.FlakyOnly, Descending: q.Order == nil || *q.Order == serverapi.ListFlakyScenariosParamsOrderDesc,
		Offset: max(cur.Offset, 0), Limit: pageLimit(q.Limit)}
	if q.MinResults != nil {
		fq.MinResults = *q.MinResults
	}
	if q.MaxFailedShare != nil {
		fq.MaxFailedShare = q.MaxFailedShare
	}
	if q.Sort != nil {
		fq.Sort = string(*q.Sort)
	}
	page, err := s.Services.Stats.FlakyPage(ctx, sc, fq)
	if err != nil {
		return nil, err
	}
	if page.Body != nil {
		if b := page.Body.Load(); b != nil {
			return encodedFlaky(*b), nil
		}
	}
	out := serverapi.ListFlakyScenarios200JSONResponse{Items: page.Items}
	if page.More {
		out.NextCursor = encodeCursor(flakyCursor{Offset: fq.Offset + fq.Limit})
	}
	if page.Body == nil {
		return out, nil
	}
	// A cached page: encode it once (as the generated response does) for every request it serves.
	var buf bytes.Buffer
	if err := json.NewEncoder(&buf).Encode(out); err != nil {
		return nil, err
	}
	b := buf.Bytes()
	page.Body.Store(&b)
	return encodedFlaky(b), nil
}

// encodedFlaky is a flaky page already encoded as ListFlakyScenarios200JSONResponse encodes it.
type encodedFlaky []byte

func (r encodedFlaky) VisitListFlakyScenariosResponse(w http.ResponseWriter) error {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, err := w.Write(r)
	return err
}

// GetHealStats answers the heals of the window by strategy, selector and scenario.
func (s *Server) GetHealStats(ctx context.Context, req serverapi.GetHealStatsRequestObject) (serverapi.GetHealStatsResponseObject, error) {
	q := req.Params
	sc, err := s.statsScope(ctx, q.Project, q.Workspace, q.Since, q.Until, q.Branch, q.Environment, q.Trigger, q.Tag)
	if err != nil {
		return nil, err
	}
	out, err := s.Services.Stats.Heal(ctx, sc)
	if err != nil {
		return nil, err
	}
	return serverapi.GetHealStats200JSONResponse(out), nil
}

// GetInsights answers the window's insights: slow and failing steps and scenarios, failure clusters,
// new failures and scenarios that became flaky.
func (s *Server) GetInsights(ctx context.Context, req serverapi.GetInsightsRequestObject) (serverapi.GetInsightsResponseObject, error) {
	q := req.Params
	sc, err := s.statsScope(ctx, q.Project, q.Workspace, q.Since, q.Until, q.Branch, q.Environment, q.Trigger, q.Tag)
	if err != nil {
		return nil, err
	}
	out, err := s.Services.Stats.Insights(ctx, sc)
	if err != nil {
		return nil, err
	}
	return serverapi.GetInsights200JSONResponse(out), nil
}

// ListQuarantines answers a project's quarantined scenarios and their export for other runners.
func (s *Server) ListQuarantines(ctx context.Context, req serverapi.ListQuarantinesRequestObject) (serverapi.ListQuarantinesResponseObject, error) {
	p, _, err := s.projectBySlug(ctx, req.Slug)
	if err != nil {
		return nil, err
	}
	f := stats.QuarantineFilter{IncludeReleased: req.Params.IncludeReleased != nil && *req.Params.IncludeReleased, Limit: pageLimit(req.Params.Limit)}
	if err := decodeCursor(req.Params.Cursor, &f.After); err != nil {
		return nil, err
	}
	out, next, err := s.Services.Quarantines.List(ctx, p.ID, p.Slug, f)
	if err != nil {
		return nil, err
	}
	if next != nil {
		out.NextCursor = encodeCursor(next)
	}
	return quarantineListJSON(out), nil
}

// CreateQuarantine quarantines a scenario identity of a project.
func (s *Server) CreateQuarantine(ctx context.Context, req serverapi.CreateQuarantineRequestObject) (serverapi.CreateQuarantineResponseObject, error) {
	p, _, err := s.projectBySlug(ctx, req.Slug)
	if err != nil {
		return nil, err
	}
	out, err := s.Services.Quarantines.Create(ctx, p.ID, p.Slug, *req.Body, callerID(ctx))
	if err != nil {
		return nil, err
	}
	return serverapi.CreateQuarantine201JSONResponse(out), nil
}

// ReleaseQuarantine ends a project's open quarantine.
func (s *Server) ReleaseQuarantine(ctx context.Context, req serverapi.ReleaseQuarantineRequestObject) (serverapi.ReleaseQuarantineResponseObject, error) {
	p, _, err := s.projectBySlug(ctx, req.Slug)
	if err != nil {
		return nil, err
	}
	if err := s.Services.Quarantines.Release(ctx, p.ID, p.Slug, req.QuarantineId); err != nil {
		return nil, err
	}
	return serverapi.ReleaseQuarantine204Response{}, nil
}
