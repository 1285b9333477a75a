package projects_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/sdods/sdods/gen/db"
	"github.com/sdods/sdods/impl/server/apierr"
	"github.com/sdods/sdods/impl/server/projects"
	"github.com/sdods/sdods/impl/server/secrets"
	"github.com/sdods/sdods/impl/server/store/storetest"
)

func TestEnvironmentSecretsAreSealedAndKept(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, _ := storetest.Open(t)
	box, err := secrets.New(bytes.Repeat([]byte{9}, 32))
	if err != nil {
		t.Fatal(err)
	}
	p, err := projects.NewService(st).Create(ctx, mustWorkspace(t, st, "shop"), "web", "Web", "", projects.DefaultSettings())
	if err != nil {
		t.Fatal(err)
	}
	envs := projects.NewEnvironments(st, box)
	token, host := "tok-sealed-value", "https://staging.example.com"
	in := projects.EnvironmentInput{BaseURL: host, Variables: []projects.VariableInput{
		{Name: "TOKEN", Secret: true, Value: &token}, {Name: "REGION", Value: strPtr("eu")}}}
	e, err := envs.Create(ctx, p, "staging", in)
	if err != nil || len(e.Variables) != 2 || e.Variables[0].Value != nil || *e.Variables[1].Value != "eu" {
		t.Fatalf("create: %+v %v", e, err)
	}
	if _, err := envs.Create(ctx, p, "staging", in); apierr.From(err).Code != apierr.Conflict {
		t.Fatalf("a name twice: %v", err)
	}
	var raw []byte
	if err := st.Pool.QueryRow(ctx, "SELECT variables::text FROM environments WHERE id = $1", e.ID).Scan(&raw); err != nil || bytes.Contains(raw, []byte(token)) {
		t.Fatalf("the secret is stored in the clear: %s (%v)", raw, err)
	}
	// Without a value the secret keeps its value; a plain variable needs one.
	keep := projects.EnvironmentInput{Variables: []projects.VariableInput{{Name: "TOKEN", Secret: true}}}
	if _, err := envs.Replace(ctx, p, "staging", keep); err != nil {
		t.Fatal(err)
	}
	row, err := st.GetEnvironment(ctx, dbEnvParams(p, "staging"))
	if err != nil {
		t.Fatal(err)
	}
	vars, err := projects.Variables(box, row)
	if err != nil || vars["TOKEN"] != token || len(vars) != 1 {
		t.Fatalf("kept secret: %v %v", vars, err)
	}
	for name, bad := range map[string]projects.EnvironmentInput{
		"a plain variable without a value": {Variables: []projects.VariableInput{{Name: "REGION"}}},
		"a variable twice":                 {Variables: []projects.VariableInput{{Name: "A", Value: strPtr("1")}, {Name: "A", Value: strPtr("2")}}},
	} {
		if _, err := envs.Replace(ctx, p, "staging", bad); apierr.From(err).Code != apierr.ValidationFailed {
			t.Errorf("%s: %v", name, err)
		}
	}
	if err := envs.Delete(ctx, p, "staging"); err != nil {
		t.Fatal(err)
	}
	if _, err := envs.Get(ctx, p.ID, "staging"); apierr.From(err).Code != apierr.NotFound {
		t.Fatalf("after delete: %v", err)
	}
	if n := auditCount(t, st, "environment"); n != 3 {
		t.Fatalf("%d audit entries, want 3 (create, replace, delete)", n)
	}
}

func strPtr(s string) *string { return &s }

func dbEnvParams(p projects.Project, name string) db.GetEnvironmentParams {
	return db.GetEnvironmentParams{ProjectID: p.ID, Name: name}
}
