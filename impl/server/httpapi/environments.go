package httpapi

import (
	"context"
	"encoding/json"

	"github.com/sdods/sdods/gen/db"
	"github.com/sdods/sdods/gen/serverapi"
	"github.com/sdods/sdods/impl/server/apierr"
	"github.com/sdods/sdods/impl/server/audit"
	"github.com/sdods/sdods/impl/server/projects"
	"github.com/sdods/sdods/impl/server/store"
)

func envNotFound(name string) error {
	return apierr.New(apierr.NotFound, "environment "+name+" not found", "list environments with GET /api/projects/{slug}/envs")
}

// toEnvironment masks secrets: their value is never returned.
func toEnvironment(e db.Environment) (serverapi.Environment, error) {
	vs, err := projects.DecodeVariables(e.Variables)
	if err != nil {
		return serverapi.Environment{}, err
	}
	out := serverapi.Environment{Id: e.ID, Name: e.Name, BaseUrl: nonEmpty(e.BaseUrl), Description: nonEmpty(e.Description),
		Variables: make([]serverapi.EnvVariable, 0, len(vs)), CreatedAt: e.CreatedAt, UpdatedAt: e.UpdatedAt}
	for _, v := range vs {
		ev := serverapi.EnvVariable{Name: v.Name, Secret: v.Secret}
		if !v.Secret {
			ev.Value = ptr(v.Value)
		}
		out.Variables = append(out.Variables, ev)
	}
	return out, nil
}

// sealVariables checks input variables and returns their stored form: secrets sealed, and an
// absent value of an existing secret kept from old.
func (s *Server) sealVariables(p project, env string, in *[]serverapi.EnvVariableInput, old []projects.Variable) ([]byte, error) {
	prev := map[string]projects.Variable{}
	for _, v := range old {
		prev[v.Name] = v
	}
	out := []projects.Variable{}
	seen := map[string]bool{}
	if in != nil {
		for i, v := range *in {
			member := "body member /variables/" + itoa(i)
			if seen[v.Name] {
				return nil, apierr.New(apierr.ValidationFailed, "variable "+v.Name+" appears twice", member+"/name: name each variable once")
			}
			seen[v.Name] = true
			secret := v.Secret != nil && *v.Secret
			if v.Value == nil {
				if p, ok := prev[v.Name]; ok && p.Secret && secret {
					out = append(out, p)
					continue
				}
				return nil, apierr.New(apierr.ValidationFailed, "variable "+v.Name+" needs a value",
					member+"/value: required for new and non-secret variables; only an existing secret may omit it to keep its value")
			}
			sv := projects.Variable{Name: v.Name, Secret: secret, Value: *v.Value}
			if secret {
				ct, err := s.Secrets.SealString(*v.Value, projects.VariableAD(p.ID, env, v.Name))
				if err != nil {
					return nil, err
				}
				sv.Value = ct
			}
			out = append(out, sv)
		}
	}
	return json.Marshal(out)
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
	rows, err := s.Store.ListEnvironments(ctx, db.ListEnvironmentsParams{ProjectID: p.ID, AfterName: after, RowLimit: int32(limit + 1)})
	if err != nil {
		return nil, err
	}
	out := serverapi.ListEnvironments200JSONResponse{Items: []serverapi.Environment{}}
	for i, e := range rows {
		if i == limit {
			out.NextCursor = encodeCursor(rows[i-1].Name)
			break
		}
		env, err := toEnvironment(e)
		if err != nil {
			return nil, err
		}
		out.Items = append(out.Items, env)
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
	vars, err := s.sealVariables(p, b.Name, b.Variables, nil)
	if err != nil {
		return nil, err
	}
	var e db.Environment
	err = s.Store.WithTx(ctx, func(q *db.Queries) error {
		e, err = q.CreateEnvironment(ctx, db.CreateEnvironmentParams{ProjectID: p.ID, Name: b.Name, BaseUrl: deref(b.BaseUrl), Description: deref(b.Description), Variables: vars})
		if store.IsUniqueViolation(err) {
			return apierr.Wrap(err, apierr.Conflict, "environment "+b.Name+" exists", "body member /name: choose another name, or PUT /api/projects/{slug}/envs/{envName}")
		}
		if err != nil {
			return err
		}
		return audit.Record(ctx, q, audit.Target{Kind: "environment", ID: e.ID.String(), Name: p.Slug + "/" + e.Name}, nil)
	})
	if err != nil {
		return nil, err
	}
	out, err := toEnvironment(e)
	if err != nil {
		return nil, err
	}
	return serverapi.CreateEnvironment201JSONResponse(out), nil
}

// GetEnvironment returns an environment with its secrets masked.
func (s *Server) GetEnvironment(ctx context.Context, req serverapi.GetEnvironmentRequestObject) (serverapi.GetEnvironmentResponseObject, error) {
	p, _, err := s.projectBySlug(ctx, req.Slug)
	if err != nil {
		return nil, err
	}
	e, err := s.Store.GetEnvironment(ctx, db.GetEnvironmentParams{ProjectID: p.ID, Name: req.EnvName})
	if store.IsNotFound(err) {
		return nil, envNotFound(req.EnvName)
	}
	if err != nil {
		return nil, err
	}
	out, err := toEnvironment(e)
	if err != nil {
		return nil, err
	}
	return serverapi.GetEnvironment200JSONResponse(out), nil
}

// UpdateEnvironment replaces an environment's base URL, description and variables.
func (s *Server) UpdateEnvironment(ctx context.Context, req serverapi.UpdateEnvironmentRequestObject) (serverapi.UpdateEnvironmentResponseObject, error) {
	p, _, err := s.projectBySlug(ctx, req.Slug)
	if err != nil {
		return nil, err
	}
	b := req.Body
	var e db.Environment
	err = s.Store.WithTx(ctx, func(q *db.Queries) error {
		old, err := q.GetEnvironmentForUpdate(ctx, db.GetEnvironmentForUpdateParams{ProjectID: p.ID, Name: req.EnvName})
		if store.IsNotFound(err) {
			return envNotFound(req.EnvName)
		}
		if err != nil {
			return err
		}
		prev, err := projects.DecodeVariables(old.Variables)
		if err != nil {
			return err
		}
		vars, err := s.sealVariables(p, old.Name, b.Variables, prev)
		if err != nil {
			return err
		}
		e, err = q.UpdateEnvironment(ctx, db.UpdateEnvironmentParams{ID: old.ID, BaseUrl: deref(b.BaseUrl), Description: deref(b.Description), Variables: vars})
		if err != nil {
			return err
		}
		return audit.Record(ctx, q, audit.Target{Kind: "environment", ID: e.ID.String(), Name: p.Slug + "/" + e.Name}, nil)
	})
	if err != nil {
		return nil, err
	}
	out, err := toEnvironment(e)
	if err != nil {
		return nil, err
	}
	return serverapi.UpdateEnvironment200JSONResponse(out), nil
}

// DeleteEnvironment deletes an environment.
func (s *Server) DeleteEnvironment(ctx context.Context, req serverapi.DeleteEnvironmentRequestObject) (serverapi.DeleteEnvironmentResponseObject, error) {
	p, _, err := s.projectBySlug(ctx, req.Slug)
	if err != nil {
		return nil, err
	}
	err = s.Store.WithTx(ctx, func(q *db.Queries) error {
		n, err := q.DeleteEnvironment(ctx, db.DeleteEnvironmentParams{ProjectID: p.ID, Name: req.EnvName})
		if err != nil {
			return err
		}
		if n == 0 {
			return envNotFound(req.EnvName)
		}
		return audit.Record(ctx, q, audit.Target{Kind: "environment", Name: p.Slug + "/" + req.EnvName}, nil)
	})
	if err != nil {
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
