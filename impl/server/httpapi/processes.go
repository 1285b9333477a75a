package httpapi

import (
	"context"
	"fmt"

	"github.com/sdods/sdods/gen/db"
	"github.com/sdods/sdods/gen/serverapi"
	"github.com/sdods/sdods/impl/server/apierr"
	"github.com/sdods/sdods/impl/server/audit"
	"github.com/sdods/sdods/impl/server/features"
	"github.com/sdods/sdods/impl/server/projects"
	"github.com/sdods/sdods/impl/server/runs"
	"github.com/sdods/sdods/impl/server/store"
)

func processNotFound(name string) error {
	return apierr.New(apierr.NotFound, "process "+name+" not found", "list processes with GET /api/projects/{slug}/processes")
}

func toProcess(p db.Process, usage int) serverapi.Process {
	params := p.Parameters
	if params == nil {
		params = []string{}
	}
	return serverapi.Process{Id: p.ID, Name: p.Name, Description: nonEmpty(p.Description), Content: p.Content, Parameters: params,
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

// stepUsage counts, over the project's features, the steps matching each step definition id
// (processes as process:<name>). Files that do not parse count nothing.
func (s *Server) stepUsage(ctx context.Context, q *db.Queries, p project) (map[string]int, error) {
	rows, err := q.AllFeatures(ctx, p.ID)
	if err != nil {
		return nil, err
	}
	cfg, err := s.lintConfig(ctx, q, p)
	if err != nil {
		return nil, err
	}
	matcher := cfg.Steps
	if matcher == nil {
		matcher = features.Catalog{Processes: map[string]bool{}}
	}
	usage := map[string]int{}
	for _, f := range rows {
		doc, _ := features.Parse(f.Content)
		if doc == nil {
			continue
		}
		for _, st := range doc.Steps {
			if name, ok := features.ProcessCalled(st.Text); ok {
				usage["process:"+name]++
				continue
			}
			for _, id := range matcher.Match(st.Text) {
				usage[id]++
			}
		}
	}
	return usage, nil
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
	rows, err := s.Store.ListProcesses(ctx, db.ListProcessesParams{ProjectID: p.ID, AfterName: after, RowLimit: int32(limit + 1)})
	if err != nil {
		return nil, err
	}
	usage, err := s.stepUsage(ctx, s.Store.Queries, p)
	if err != nil {
		return nil, err
	}
	out := serverapi.ListProcesses200JSONResponse{Items: []serverapi.Process{}}
	for i, pr := range rows {
		if i == limit {
			out.NextCursor = encodeCursor(rows[i-1].Name)
			break
		}
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
	var pr db.Process
	err = s.Store.WithTx(ctx, func(q *db.Queries) error {
		pr, err = q.CreateProcess(ctx, db.CreateProcessParams{ProjectID: p.ID, Name: b.Name, Description: deref(b.Description), Content: b.Content, Parameters: params})
		if store.IsUniqueViolation(err) {
			return apierr.Wrap(err, apierr.Conflict, "process "+b.Name+" exists", "body member /name: choose another name, or PUT /api/projects/{slug}/processes/{processName}")
		}
		if err != nil {
			return err
		}
		return audit.Record(ctx, q, audit.Target{Kind: "process", ID: pr.ID.String(), Name: p.Slug + "/" + pr.Name}, nil)
	})
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
	pr, err := s.Store.GetProcess(ctx, db.GetProcessParams{ProjectID: p.ID, Name: req.ProcessName})
	if store.IsNotFound(err) {
		return nil, processNotFound(req.ProcessName)
	}
	if err != nil {
		return nil, err
	}
	usage, err := s.stepUsage(ctx, s.Store.Queries, p)
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
	var pr db.Process
	err = s.Store.WithTx(ctx, func(q *db.Queries) error {
		pr, err = q.UpdateProcess(ctx, db.UpdateProcessParams{ProjectID: p.ID, Name: req.ProcessName, Description: deref(req.Body.Description), Content: req.Body.Content, Parameters: params})
		if store.IsNotFound(err) {
			return processNotFound(req.ProcessName)
		}
		if err != nil {
			return err
		}
		return audit.Record(ctx, q, audit.Target{Kind: "process", ID: pr.ID.String(), Name: p.Slug + "/" + pr.Name}, nil)
	})
	if err != nil {
		return nil, err
	}
	usage, err := s.stepUsage(ctx, s.Store.Queries, p)
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
	err = s.Store.WithTx(ctx, func(q *db.Queries) error {
		usage, err := s.stepUsage(ctx, q, p)
		if err != nil {
			return err
		}
		if n := usage["process:"+req.ProcessName]; n > 0 {
			return apierr.New(apierr.Conflict, fmt.Sprintf("process %s is called by %d step(s)", req.ProcessName, n),
				"remove the steps `"+features.ProcessStepText(req.ProcessName)+"` from the features first")
		}
		n, err := q.DeleteProcess(ctx, db.DeleteProcessParams{ProjectID: p.ID, Name: req.ProcessName})
		if err != nil {
			return err
		}
		if n == 0 {
			return processNotFound(req.ProcessName)
		}
		return audit.Record(ctx, q, audit.Target{Kind: "process", Name: p.Slug + "/" + req.ProcessName}, nil)
	})
	if err != nil {
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
	if _, err := s.Store.GetProcess(ctx, db.GetProcessParams{ProjectID: p.ID, Name: req.ProcessName}); store.IsNotFound(err) {
		return nil, processNotFound(req.ProcessName)
	} else if err != nil {
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
	if err := s.checkRunInputs(ctx, p.ID, params); err != nil {
		return nil, err
	}
	r, err := s.queueRun(ctx, params, p.Slug)
	if err != nil {
		return nil, err
	}
	url := "/api/runs/" + r.ID.String()
	return serverapi.RunProcess202JSONResponse{Body: serverapi.RunAccepted{Id: r.ID, Status: serverapi.RunStatus(r.Status), Project: p.Slug,
		CreatedAt: r.CreatedAt, Url: url}, Headers: serverapi.RunProcess202ResponseHeaders{Location: &url}}, nil
}
