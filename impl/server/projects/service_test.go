package projects_test

import (
	"context"
	"testing"

	"github.com/sdods/sdods/gen/db"
	"github.com/sdods/sdods/impl/server/apierr"
	"github.com/sdods/sdods/impl/server/projects"
	"github.com/sdods/sdods/impl/server/store"
	"github.com/sdods/sdods/impl/server/store/storetest"
)

func mustWorkspace(t *testing.T, st *store.Store, slug string) projects.Workspace {
	t.Helper()
	ctx := context.Background()
	o, err := st.CreateOrg(ctx, db.CreateOrgParams{Slug: "org-" + slug, Name: "Org"})
	if err != nil {
		t.Fatal(err)
	}
	w, err := st.CreateWorkspace(ctx, db.CreateWorkspaceParams{OrgID: o.ID, Slug: slug, Name: "Workspace " + slug})
	if err != nil {
		t.Fatal(err)
	}
	return projects.Workspace{ID: w.ID, Slug: w.Slug, Name: w.Name}
}

func auditCount(t *testing.T, st *store.Store, kind string) int {
	t.Helper()
	var n int
	if err := st.Pool.QueryRow(context.Background(), "SELECT count(*) FROM audit_entries WHERE target_kind = $1", kind).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestProjectLifecycle(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, _ := storetest.Open(t)
	svc := projects.NewService(st)
	shop, lab := mustWorkspace(t, st, "shop"), mustWorkspace(t, st, "lab")

	settings := projects.DefaultSettings()
	settings.Retries = 2
	p, err := svc.Create(ctx, shop, "web", "Web", "the web shop", settings)
	if err != nil {
		t.Fatal(err)
	}
	if p.WorkspaceSlug != "shop" || projects.DecodeSettings(p.Settings).Retries != 2 {
		t.Fatalf("created %+v", p)
	}
	_, err = svc.Create(ctx, lab, "web", "Web again", "", settings)
	if apierr.From(err).Code != apierr.Conflict {
		t.Fatalf("a taken slug: %v", err)
	}
	if _, err := svc.Create(ctx, lab, "api", "API", "", projects.DefaultSettings()); err != nil {
		t.Fatal(err)
	}

	settings.Retries = 0
	u, err := svc.Update(ctx, p, "Web Shop", "", settings)
	if err != nil {
		t.Fatal(err)
	}
	got, err := svc.BySlug(ctx, "web")
	if err != nil || got.Name != "Web Shop" || got.Description != "" || projects.DecodeSettings(got.Settings).Retries != 0 || !got.UpdatedAt.Equal(u.UpdatedAt) {
		t.Fatalf("after update: %+v %v", got, err)
	}
	if _, err := svc.BySlug(ctx, "nope"); !store.IsNotFound(err) {
		t.Fatalf("unknown slug: %v", err)
	}
	// Each change has its audit entry; the refused create has none.
	if n := auditCount(t, st, "project"); n != 3 {
		t.Fatalf("%d audit entries, want 3", n)
	}

	all, err := svc.List(ctx, projects.Filter{InstanceAdmin: true, Limit: 1})
	if err != nil || len(all) != 2 || all[0].Slug != "api" {
		t.Fatalf("first page (limit 1 returns 2 rows): %+v %v", all, err)
	}
	after := "api"
	rest, err := svc.List(ctx, projects.Filter{InstanceAdmin: true, After: &after, Limit: 10})
	if err != nil || len(rest) != 1 || rest[0].Slug != "web" {
		t.Fatalf("second page: %+v %v", rest, err)
	}
	ws := "lab"
	inLab, err := svc.List(ctx, projects.Filter{InstanceAdmin: true, WorkspaceSlug: &ws, Limit: 10})
	if err != nil || len(inLab) != 1 || inLab[0].Slug != "api" {
		t.Fatalf("lab's projects: %+v %v", inLab, err)
	}
}
