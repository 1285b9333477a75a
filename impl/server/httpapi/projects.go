package httpapi

import (
	"context"
	"regexp"
	"strconv"

	"github.com/sdods/sdods/gen/serverapi"
	"github.com/sdods/sdods/impl/server/apierr"
	"github.com/sdods/sdods/impl/server/authz"
	"github.com/sdods/sdods/impl/server/features"
	"github.com/sdods/sdods/impl/server/projects"
	"github.com/sdods/sdods/impl/server/store"
)

// project is a project with its workspace, as the handlers load it.
type project = projects.Project

// projectBySlug loads a project the caller may act on with the current operation. A caller with
// no role in its workspace is told the project does not exist.
func (s *Server) projectBySlug(ctx context.Context, slug string) (project, authz.Role, error) {
	notFound := apierr.New(apierr.NotFound, "project "+slug+" not found", "list your projects with GET /api/projects")
	p, err := s.Projects.BySlug(ctx, slug)
	if store.IsNotFound(err) {
		return p, "", notFound
	}
	if err != nil {
		return p, "", err
	}
	role, err := s.authorizeWorkspace(ctx, p.WorkspaceID)
	if err != nil {
		if e := apierr.From(err); e.Code == apierr.NotFound {
			return p, "", notFound
		}
		return p, "", err
	}
	return p, role, nil
}

func toProject(p project) serverapi.Project {
	st := projects.DecodeSettings(p.Settings)
	out := serverapi.Project{Id: p.ID, Slug: p.Slug, Name: p.Name, Description: nonEmpty(p.Description), CreatedAt: p.CreatedAt, UpdatedAt: p.UpdatedAt,
		Settings: serverapi.ProjectSettings{DisabledLintRules: st.DisabledLintRules, TagPattern: nonEmpty(st.TagPattern),
			DefaultEnvironment: nonEmpty(st.DefaultEnvironment), RunTimeoutSeconds: st.RunTimeoutSeconds, Retries: st.Retries,
			Tracing: serverapi.TracingMode(st.Tracing), ScenarioConcurrency: nonZero(st.ScenarioConcurrency)}}
	out.Workspace.Slug, out.Workspace.Name = p.WorkspaceSlug, p.WorkspaceName
	return out
}

// settingsFrom checks settings input and returns the stored form; absent members take defaults.
func settingsFrom(in *serverapi.ProjectSettingsInput) (projects.Settings, error) {
	st := projects.DefaultSettings()
	if in == nil {
		return st, nil
	}
	if in.DisabledLintRules != nil {
		for i, r := range *in.DisabledLintRules {
			if !features.KnownRule(r) {
				return st, apierr.New(apierr.ValidationFailed, "unknown lint rule "+r,
					"body member /settings/disabledLintRules/"+itoa(i)+": use a rule id listed by POST /api/projects/{slug}/lint")
			}
		}
		st.DisabledLintRules = *in.DisabledLintRules
	}
	if in.TagPattern != nil && *in.TagPattern != "" {
		if _, err := regexp.Compile(*in.TagPattern); err != nil {
			return st, apierr.New(apierr.ValidationFailed, "the tag pattern is not a valid regular expression", "body member /settings/tagPattern: "+err.Error())
		}
		st.TagPattern = *in.TagPattern
	}
	if in.DefaultEnvironment != nil {
		st.DefaultEnvironment = *in.DefaultEnvironment
	}
	if in.RunTimeoutSeconds != nil {
		st.RunTimeoutSeconds = *in.RunTimeoutSeconds
	}
	if in.Retries != nil {
		st.Retries = *in.Retries
	}
	if in.Tracing != nil {
		st.Tracing = string(*in.Tracing)
	}
	if in.ScenarioConcurrency != nil {
		st.ScenarioConcurrency = *in.ScenarioConcurrency
	}
	return st, nil
}

// ListProjects lists the projects of the workspaces where the caller has a role.
func (s *Server) ListProjects(ctx context.Context, req serverapi.ListProjectsRequestObject) (serverapi.ListProjectsResponseObject, error) {
	p, uid, err := principal(ctx)
	if err != nil {
		return nil, err
	}
	var after *string
	if err := decodeCursor(req.Params.Cursor, &after); err != nil {
		return nil, err
	}
	limit := pageLimit(req.Params.Limit)
	rows, err := s.Projects.List(ctx, projects.Filter{InstanceAdmin: p.InstanceAdmin, UserID: uid,
		WorkspaceSlug: req.Params.Workspace, After: after, Query: req.Params.Q, Limit: limit})
	if err != nil {
		return nil, err
	}
	items, next := page(rows, limit, func(p project) string { return p.Slug })
	out := serverapi.ListProjects200JSONResponse{Items: []serverapi.Project{}, NextCursor: next}
	for _, r := range items {
		out.Items = append(out.Items, toProject(r))
	}
	return out, nil
}

// CreateProject creates a project in a workspace the caller administers.
func (s *Server) CreateProject(ctx context.Context, req serverapi.CreateProjectRequestObject) (serverapi.CreateProjectResponseObject, error) {
	b := req.Body
	w, _, err := s.workspaceBySlug(ctx, b.WorkspaceSlug)
	if err != nil {
		return nil, err
	}
	st, err := settingsFrom(b.Settings)
	if err != nil {
		return nil, err
	}
	desc := ""
	if b.Description != nil {
		desc = *b.Description
	}
	created, err := s.Projects.Create(ctx, projects.Workspace{ID: w.ID, Slug: w.Slug, Name: w.Name}, b.Slug, b.Name, desc, st)
	if err != nil {
		return nil, err
	}
	return serverapi.CreateProject201JSONResponse(toProject(created)), nil
}

// GetProject returns a project.
func (s *Server) GetProject(ctx context.Context, req serverapi.GetProjectRequestObject) (serverapi.GetProjectResponseObject, error) {
	p, _, err := s.projectBySlug(ctx, req.Slug)
	if err != nil {
		return nil, err
	}
	return serverapi.GetProject200JSONResponse(toProject(p)), nil
}

// UpdateProject replaces a project's name, description and settings.
func (s *Server) UpdateProject(ctx context.Context, req serverapi.UpdateProjectRequestObject) (serverapi.UpdateProjectResponseObject, error) {
	p, _, err := s.projectBySlug(ctx, req.Slug)
	if err != nil {
		return nil, err
	}
	st, err := settingsFrom(req.Body.Settings)
	if err != nil {
		return nil, err
	}
	desc := ""
	if req.Body.Description != nil {
		desc = *req.Body.Description
	}
	if p, err = s.Projects.Update(ctx, p, req.Body.Name, desc, st); err != nil {
		return nil, err
	}
	return serverapi.UpdateProject200JSONResponse(toProject(p)), nil
}

func itoa(i int) string { return strconv.Itoa(i) }
