package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
)

// Resources: feature files and run reports, read through getFeature and getRunReport (so with the
// caller's token, checked as the REST reads are).
const (
	featureTemplate = "sdods://projects/{slug}/features/{+path}"
	reportTemplate  = "sdods://runs/{runId}/report"
)

func (s *Server) addResources() error {
	if _, err := s.needOps("getFeature", "getRunReport"); err != nil {
		return err
	}
	s.mcp.AddResourceTemplate(mcp.NewResourceTemplate(featureTemplate, "Feature file",
		mcp.WithTemplateDescription("A project's Gherkin feature file, e.g. sdods://projects/shop-web/features/auth/login.feature"),
		mcp.WithTemplateMIMEType("text/x-gherkin")), s.readFeature)
	s.mcp.AddResourceTemplate(mcp.NewResourceTemplate(reportTemplate, "Run report",
		mcp.WithTemplateDescription("A run's report (JSON): counts, failures, flaky and slowest scenarios, the HTML report's URL"),
		mcp.WithTemplateMIMEType("application/json")), s.readReport)
	return nil
}

// resourceError is a refusal of the REST read behind a resource.
func resourceError(res *mcp.CallToolResult) error {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return fmt.Errorf("%s", strings.TrimSpace(b.String()))
}

func (s *Server) readFeature(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
	rest, ok := strings.CutPrefix(req.Params.URI, "sdods://projects/")
	slug, path, ok2 := strings.Cut(rest, "/features/")
	if !ok || !ok2 || slug == "" || path == "" {
		return nil, fmt.Errorf("a feature resource is sdods://projects/{slug}/features/{path}")
	}
	if p, err := url.PathUnescape(path); err == nil {
		path = p
	}
	var feature struct {
		Content string `json:"content"`
	}
	res, err := s.json(ctx, "getFeature", map[string]any{"slug": slug, "path": path}, &feature)
	if err != nil {
		return nil, err
	}
	if res != nil {
		return nil, resourceError(res)
	}
	return []mcp.ResourceContents{mcp.TextResourceContents{URI: req.Params.URI, MIMEType: "text/x-gherkin", Text: feature.Content}}, nil
}

func (s *Server) readReport(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
	rest, ok := strings.CutPrefix(req.Params.URI, "sdods://runs/")
	runID, ok2 := strings.CutSuffix(rest, "/report")
	if !ok || !ok2 || runID == "" {
		return nil, fmt.Errorf("a report resource is sdods://runs/{runId}/report")
	}
	var report json.RawMessage
	res, err := s.json(ctx, "getRunReport", map[string]any{"runId": runID}, &report)
	if err != nil {
		return nil, err
	}
	if res != nil {
		return nil, resourceError(res)
	}
	return []mcp.ResourceContents{mcp.TextResourceContents{URI: req.Params.URI, MIMEType: "application/json", Text: string(report)}}, nil
}
