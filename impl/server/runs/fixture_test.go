package runs

import (
	"context"
	"testing"

	"github.com/sdods/sdods/gen/db"
	"github.com/sdods/sdods/impl/server/projects"
	"github.com/sdods/sdods/impl/server/store"
)

// testProject creates an organisation "org-<ws>", its workspace ws and the workspace's project
// "web" on st, for the tests on a real database.
func testProject(t *testing.T, st *store.Store, ws string) projects.Project {
	t.Helper()
	ctx := context.Background()
	o, err := st.CreateOrg(ctx, db.CreateOrgParams{Slug: "org-" + ws, Name: "Org"})
	if err != nil {
		t.Fatal(err)
	}
	w, err := st.CreateWorkspace(ctx, db.CreateWorkspaceParams{OrgID: o.ID, Slug: ws, Name: ws})
	if err != nil {
		t.Fatal(err)
	}
	p, err := projects.NewService(st).Create(ctx, projects.Workspace{ID: w.ID, Slug: w.Slug, Name: w.Name}, "web", "Web", "", projects.DefaultSettings())
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestProject is testProject for the package's external tests.
var TestProject = testProject
