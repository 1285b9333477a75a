package httpapi

import (
	"context"

	"github.com/sdods/sdods/gen/serverapi"
	"github.com/sdods/sdods/impl/server/projects"
)

// toEnvironment masks secrets: their value is never returned.
func toEnvironment(e projects.Environment) serverapi.Environment {
	out := serverapi.Environment{Id: e.ID, Name: e.Name, BaseUrl: nonEmpty(e.BaseURL), Description: nonEmpty(e.Description),
		Variables: make([]serverapi.EnvVariable, 0, len(e.Variables)), CreatedAt: e.CreatedAt, UpdatedAt: e.UpdatedAt}
	for _, v := range e.Variables {
		out.Variables = append(out.Variables, serverapi.EnvVariable{Name: v.Name, Secret: v.Secret, Value: v.Value})
	}
	return out
}

func environmentInput(baseURL, description *string, vars *[]serverapi.EnvVariableInput) projects.EnvironmentInput {
	in := projects.EnvironmentInput{BaseURL: deref(baseURL), Description: deref(description)}
	if vars != nil {
		for _, v := range *vars {
			in.Variables = append(in.Variables, projects.VariableInput{Name: v.Name, Secret: v.Secret != nil && *v.Secret, Value: v.Value})
		}
	}
	return in
}

// ListEnvironments lists a project's environments by name.
func (s *Server) ListEnvironments(ctx context.Context, req serverapi.ListEnvironmentsRequestObject) (serverapi.ListEnvironmentsResponseObject, error) {
	p, _, err := s.projectBySlug(ctx, req.Slug)
	if err != nil {
		return nil, err
	}
	var after *string
	if err := decodeCursor(req.Params.Cursor, &after); err != nil {
		return nil, err
	}
	limit := pageLimit(req.Params.Limit)
	rows, err := s.Environments.List(ctx, p.ID, after, limit)
	if err != nil {
		return nil, err
	}
	items, next := page(rows, limit, func(e projects.Environment) string { return e.Name })
	out := serverapi.ListEnvironments200JSONResponse{Items: []serverapi.Environment{}, NextCursor: next}
	for _, e := range items {
		out.Items = append(out.Items, toEnvironment(e))
	}
	return out, nil
}

// CreateEnvironment creates an environment; its secrets are sealed before they are stored.
func (s *Server) CreateEnvironment(ctx context.Context, req serverapi.CreateEnvironmentRequestObject) (serverapi.CreateEnvironmentResponseObject, error) {
	p, _, err := s.projectBySlug(ctx, req.Slug)
	if err != nil {
		return nil, err
	}
	b := req.Body
	e, err := s.Environments.Create(ctx, p, b.Name, environmentInput(b.BaseUrl, b.Description, b.Variables))
	if err != nil {
		return nil, err
	}
	return serverapi.CreateEnvironment201JSONResponse(toEnvironment(e)), nil
}

// GetEnvironment returns an environment with its secrets masked.
func (s *Server) GetEnvironment(ctx context.Context, req serverapi.GetEnvironmentRequestObject) (serverapi.GetEnvironmentResponseObject, error) {
	p, _, err := s.projectBySlug(ctx, req.Slug)
	if err != nil {
		return nil, err
	}
	e, err := s.Environments.Get(ctx, p.ID, req.EnvName)
	if err != nil {
		return nil, err
	}
	return serverapi.GetEnvironment200JSONResponse(toEnvironment(e)), nil
}

// UpdateEnvironment replaces an environment's base URL, description and variables.
func (s *Server) UpdateEnvironment(ctx context.Context, req serverapi.UpdateEnvironmentRequestObject) (serverapi.UpdateEnvironmentResponseObject, error) {
	p, _, err := s.projectBySlug(ctx, req.Slug)
	if err != nil {
		return nil, err
	}
	b := req.Body
	e, err := s.Environments.Replace(ctx, p, req.EnvName, environmentInput(b.BaseUrl, b.Description, b.Variables))
	if err != nil {
		return nil, err
	}
	return serverapi.UpdateEnvironment200JSONResponse(toEnvironment(e)), nil
}

// DeleteEnvironment deletes an environment.
func (s *Server) DeleteEnvironment(ctx context.Context, req serverapi.DeleteEnvironmentRequestObject) (serverapi.DeleteEnvironmentResponseObject, error) {
	p, _, err := s.projectBySlug(ctx, req.Slug)
	if err != nil {
		return nil, err
	}
	if err := s.Environments.Delete(ctx, p, req.EnvName); err != nil {
		return nil, err
	}
	return serverapi.DeleteEnvironment204Response{}, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
