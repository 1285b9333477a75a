package httpapi

import (
	"context"
	"fmt"

	"github.com/sdods/sdods/gen/serverapi"
	"github.com/sdods/sdods/impl/server/apierr"
	"github.com/sdods/sdods/impl/server/features"
	"github.com/sdods/sdods/impl/server/projects"
	"github.com/sdods/sdods/impl/server/runs"
)

func toProcess(p features.Process, usage int) serverapi.Process {
	return serverapi.Process{Id: p.ID, Name: p.Name, Description: nonEmpty(p.Description), Content: p.Content, Parameters: p.Parameters,
		UsageCount: usage, CreatedAt: p.CreatedAt, UpdatedAt: p.UpdatedAt}
}

// parseProcess parses a process body; a syntax error is 422 with the diagnostics as details.
func parseProcess(content string) ([]string, error) {
	_, params, diags := features.ParseProcess(content)
	if len(diags) > 0 {
		d := diags[0]
		return nil, &apierr.Error{Code: apierr.Unprocessable, Message: fmt.Sprintf("the process does not parse: line %d, column %d: %s", d.Line, d.Column, d.Message),
			Hint: "body member /content: Gherkin steps, one per line (Given/When/Then/And/But …)", Details: map[string]any{"diagnostics": toDiagnostics(diags)}}
	}
	return params, nil
}

// stepUsage counts, over the project's features, the steps matching each step definition id.
func (s *Server) stepUsage(ctx context.Context, p project) (map[string]int, error) {
	return s.Features.StepUsage(ctx, featureProject(p))
}

// ListProcesses lists a project's processes by name with their usage counts.
func (s *Server) ListProcesses(ctx context.Context, req serverapi.ListProcessesRequestObject) (serverapi.ListProcessesResponseObject, error) {
	p, _, err := s.projectBySlug(ctx, req.Slug)
	if err != nil {
		return nil, err
	}
	var after *string
	if err := decodeCursor(req.Params.Cursor, &after); err != nil {
		return nil, err
	}
	limit := pageLimit(req.Params.Limit)
	rows, err := s.Features.ListProcesses(ctx, p.ID, after, limit)
	if err != nil {
		return nil, err
	}
	usage, err := s.stepUsage(ctx, p)
	if err != nil {
		return nil, err
	}
	items, next := page(rows, limit, func(pr features.Process) string { return pr.Name })
	out := serverapi.ListProcesses200JSONResponse{Items: []serverapi.Process{}, NextCursor: next}
	for _, pr := range items {
		out.Items = append(out.Items, toProcess(pr, usage["process:"+pr.Name]))
	}
	return out, nil
}

// CreateProcess creates a process from Gherkin steps.
func (s *Server) CreateProcess(ctx context.Context, req serverapi.CreateProcessRequestObject) (serverapi.CreateProcessResponseObject, error) {
	p, _, err := s.projectBySlug(ctx, req.Slug)
	if err != nil {
		return nil, err
	}
	b := req.Body
	params, err := parseProcess(b.Content)
	if err != nil {
		return nil, err
	}
	pr, err := s.Features.CreateProcess(ctx, featureProject(p), b.Name, deref(b.Description), b.Content, params)
	if err != nil {
		return nil, err
	}
	return serverapi.CreateProcess201JSONResponse(toProcess(pr, 0)), nil
}

// GetProcess returns a process with its usage count.
func (s *Server) GetProcess(ctx context.Context, req serverapi.GetProcessRequestObject) (serverapi.GetProcessResponseObject, error) {
	p, _, err := s.projectBySlug(ctx, req.Slug)
	if err != nil {
		return nil, err
	}
	pr, err := s.Features.GetProcess(ctx, p.ID, req.ProcessName)
	if err != nil {
		return nil, err
	}
	usage, err := s.stepUsage(ctx, p)
	if err != nil {
		return nil, err
	}
	return serverapi.GetProcess200JSONResponse(toProcess(pr, usage["process:"+pr.Name])), nil
}

// UpdateProcess replaces a process's steps and description.
func (s *Server) UpdateProcess(ctx context.Context, req serverapi.UpdateProcessRequestObject) (serverapi.UpdateProcessResponseObject, error) {
	p, _, err := s.projectBySlug(ctx, req.Slug)
	if err != nil {
		return nil, err
	}
	params, err := parseProcess(req.Body.Content)
	if err != nil {
		return nil, err
	}
	pr, err := s.Features.UpdateProcess(ctx, featureProject(p), req.ProcessName, deref(req.Body.Description), req.Body.Content, params)
	if err != nil {
		return nil, err
	}
	usage, err := s.stepUsage(ctx, p)
	if err != nil {
		return nil, err
	}
	return serverapi.UpdateProcess200JSONResponse(toProcess(pr, usage["process:"+pr.Name])), nil
}

// DeleteProcess deletes a process no feature calls (409 otherwise).
func (s *Server) DeleteProcess(ctx context.Context, req serverapi.DeleteProcessRequestObject) (serverapi.DeleteProcessResponseObject, error) {
	p, _, err := s.projectBySlug(ctx, req.Slug)
	if err != nil {
		return nil, err
	}
	if err := s.Features.DeleteProcess(ctx, featureProject(p), req.ProcessName); err != nil {
		return nil, err
	}
	return serverapi.DeleteProcess204Response{}, nil
}

// RunProcess queues a run of just this process, through the same path as POST /api/runs.
func (s *Server) RunProcess(ctx context.Context, req serverapi.RunProcessRequestObject) (serverapi.RunProcessResponseObject, error) {
	p, _, err := s.projectBySlug(ctx, req.Slug)
	if err != nil {
		return nil, err
	}
	if _, err := s.Features.GetProcess(ctx, p.ID, req.ProcessName); err != nil {
		return nil, err
	}
	settings := projects.DecodeSettings(p.Settings)
	params := runs.CreateParams{ProjectID: p.ID, Trigger: triggerOf(ctx), ProcessName: ptr(req.ProcessName), CreatedBy: callerID(ctx),
		TimeoutSeconds: settings.RunTimeoutSeconds, Retries: settings.Retries}
	if b := req.Body; b != nil {
		params.Environment, params.Label = b.Environment, b.Label
		if b.Variables != nil {
			params.Variables = *b.Variables
		}
	}
	if params.Environment == nil && settings.DefaultEnvironment != "" {
		params.Environment = &settings.DefaultEnvironment
	}
	if err := s.Runs.CheckInputs(ctx, params); err != nil {
		return nil, err
	}
	r, err := s.Runs.Queue(ctx, params, p.Slug)
	if err != nil {
		return nil, err
	}
	url := "/api/runs/" + r.ID.String()
	return serverapi.RunProcess202JSONResponse{Body: serverapi.RunAccepted{Id: r.ID, Status: serverapi.RunStatus(r.Status), Project: p.Slug,
		CreatedAt: r.CreatedAt, Url: url}, Headers: serverapi.RunProcess202ResponseHeaders{Location: &url}}, nil
}
