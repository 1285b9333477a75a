package projects

import (
	"context"
	"encoding/json"
	"strconv"
	"time"

	"github.com/google/uuid"

	"github.com/sdods/sdods/gen/db"
	"github.com/sdods/sdods/impl/server/apierr"
	"github.com/sdods/sdods/impl/server/audit"
	"github.com/sdods/sdods/impl/server/secrets"
	"github.com/sdods/sdods/impl/server/store"
)

// Environments owns a project's environments: their variables, secrets sealed at rest and never
// shown, each change audited.
type Environments struct {
	st  *store.Store
	box *secrets.Box
}

// NewEnvironments returns the environment service.
func NewEnvironments(st *store.Store, box *secrets.Box) *Environments {
	return &Environments{st: st, box: box}
}

// ShownVariable is a variable as shown: a secret's value is never shown (nil).
type ShownVariable struct {
	Name   string
	Secret bool
	Value  *string
}

// Environment is an environment as shown.
type Environment struct {
	ID                   uuid.UUID
	Name                 string
	BaseURL, Description string
	Variables            []ShownVariable
	CreatedAt, UpdatedAt time.Time
}

func shownEnvironment(e db.Environment) (Environment, error) {
	vs, err := DecodeVariables(e.Variables)
	if err != nil {
		return Environment{}, err
	}
	out := Environment{ID: e.ID, Name: e.Name, BaseURL: e.BaseUrl, Description: e.Description, Variables: make([]ShownVariable, 0, len(vs)),
		CreatedAt: e.CreatedAt, UpdatedAt: e.UpdatedAt}
	for _, v := range vs {
		sv := ShownVariable{Name: v.Name, Secret: v.Secret}
		if !v.Secret {
			value := v.Value
			sv.Value = &value
		}
		out.Variables = append(out.Variables, sv)
	}
	return out, nil
}

// VariableInput is a variable of a create or replace. Value nil keeps the value of an existing
// secret of that name and is refused otherwise.
type VariableInput struct {
	Name   string
	Secret bool
	Value  *string
}

// EnvironmentInput is the content of a create or replace.
type EnvironmentInput struct {
	BaseURL, Description string
	Variables            []VariableInput
}

// EnvironmentNotFound is the error of a name with no environment in the project.
func EnvironmentNotFound(name string) error {
	return apierr.New(apierr.NotFound, "environment "+name+" not found", "list environments with GET /api/projects/{slug}/envs")
}

// seal checks input variables and returns their stored form: secrets sealed, and an absent
// value of an existing secret kept from old.
func (s *Environments) seal(projectID uuid.UUID, env string, in []VariableInput, old []Variable) ([]byte, error) {
	prev := map[string]Variable{}
	for _, v := range old {
		prev[v.Name] = v
	}
	out := []Variable{}
	seen := map[string]bool{}
	for i, v := range in {
		member := "body member /variables/" + strconv.Itoa(i)
		if seen[v.Name] {
			return nil, apierr.New(apierr.ValidationFailed, "variable "+v.Name+" appears twice", member+"/name: name each variable once")
		}
		seen[v.Name] = true
		if v.Value == nil {
			if p, ok := prev[v.Name]; ok && p.Secret && v.Secret {
				out = append(out, p)
				continue
			}
			return nil, apierr.New(apierr.ValidationFailed, "variable "+v.Name+" needs a value",
				member+"/value: required for new and non-secret variables; only an existing secret may omit it to keep its value")
		}
		sv := Variable{Name: v.Name, Secret: v.Secret, Value: *v.Value}
		if v.Secret {
			ct, err := s.box.SealString(*v.Value, VariableAD(projectID, env, v.Name))
			if err != nil {
				return nil, err
			}
			sv.Value = ct
		}
		out = append(out, sv)
	}
	return json.Marshal(out)
}

// List lists a project's environments by name: those after after, Limit+1 at most.
func (s *Environments) List(ctx context.Context, projectID uuid.UUID, after *string, limit int) ([]Environment, error) {
	rows, err := s.st.ListEnvironments(ctx, db.ListEnvironmentsParams{ProjectID: projectID, AfterName: after, RowLimit: int32(limit + 1)})
	if err != nil {
		return nil, err
	}
	out := make([]Environment, 0, len(rows))
	for _, e := range rows {
		env, err := shownEnvironment(e)
		if err != nil {
			return nil, err
		}
		out = append(out, env)
	}
	return out, nil
}

// Get returns an environment (EnvironmentNotFound when the project has none of that name).
func (s *Environments) Get(ctx context.Context, projectID uuid.UUID, name string) (Environment, error) {
	e, err := s.st.GetEnvironment(ctx, db.GetEnvironmentParams{ProjectID: projectID, Name: name})
	if store.IsNotFound(err) {
		return Environment{}, EnvironmentNotFound(name)
	}
	if err != nil {
		return Environment{}, err
	}
	return shownEnvironment(e)
}

// Create creates an environment of p named name (conflict when the name is taken).
func (s *Environments) Create(ctx context.Context, p Project, name string, in EnvironmentInput) (Environment, error) {
	vars, err := s.seal(p.ID, name, in.Variables, nil)
	if err != nil {
		return Environment{}, err
	}
	var e db.Environment
	err = s.st.WithTx(ctx, func(q *db.Queries) error {
		e, err = q.CreateEnvironment(ctx, db.CreateEnvironmentParams{ProjectID: p.ID, Name: name, BaseUrl: in.BaseURL, Description: in.Description, Variables: vars})
		if store.IsUniqueViolation(err) {
			return apierr.Wrap(err, apierr.Conflict, "environment "+name+" exists", "body member /name: choose another name, or PUT /api/projects/{slug}/envs/{envName}")
		}
		if err != nil {
			return err
		}
		return audit.Record(ctx, q, audit.Target{Kind: "environment", ID: e.ID.String(), Name: p.Slug + "/" + e.Name}, nil)
	})
	if err != nil {
		return Environment{}, err
	}
	return shownEnvironment(e)
}

// Replace replaces an environment's base URL, description and variables.
func (s *Environments) Replace(ctx context.Context, p Project, name string, in EnvironmentInput) (Environment, error) {
	var e db.Environment
	err := s.st.WithTx(ctx, func(q *db.Queries) error {
		old, err := q.GetEnvironmentForUpdate(ctx, db.GetEnvironmentForUpdateParams{ProjectID: p.ID, Name: name})
		if store.IsNotFound(err) {
			return EnvironmentNotFound(name)
		}
		if err != nil {
			return err
		}
		prev, err := DecodeVariables(old.Variables)
		if err != nil {
			return err
		}
		vars, err := s.seal(p.ID, old.Name, in.Variables, prev)
		if err != nil {
			return err
		}
		if e, err = q.UpdateEnvironment(ctx, db.UpdateEnvironmentParams{ID: old.ID, BaseUrl: in.BaseURL, Description: in.Description, Variables: vars}); err != nil {
			return err
		}
		return audit.Record(ctx, q, audit.Target{Kind: "environment", ID: e.ID.String(), Name: p.Slug + "/" + e.Name}, nil)
	})
	if err != nil {
		return Environment{}, err
	}
	return shownEnvironment(e)
}

// Delete deletes an environment (EnvironmentNotFound when there is none).
func (s *Environments) Delete(ctx context.Context, p Project, name string) error {
	return s.st.WithTx(ctx, func(q *db.Queries) error {
		n, err := q.DeleteEnvironment(ctx, db.DeleteEnvironmentParams{ProjectID: p.ID, Name: name})
		if err != nil {
			return err
		}
		if n == 0 {
			return EnvironmentNotFound(name)
		}
		return audit.Record(ctx, q, audit.Target{Kind: "environment", Name: p.Slug + "/" + name}, nil)
	})
}
