package app_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/sdods/sdods/gen/serverclient"
	"github.com/sdods/sdods/impl/server/app/apptest"
)

// Issue 19: the last-admin rule lives in one place (the membership service), so a sync that
// would leave a workspace without its admin is refused as PATCH and DELETE refuse it, and the
// whole document is rolled back: nothing of it is half-applied.
func TestSyncCannotRemoveTheLastWorkspaceAdmin(t *testing.T) {
	t.Parallel()
	s := apptest.Start(t)
	admin := s.Setup(t)
	ctx := context.Background()
	_, a := s.SignIn(t, admin, "a@example.com")
	s.SignIn(t, admin, "b@example.com")
	ws := func(members ...serverclient.HierarchyMember) serverclient.HierarchyWorkspace {
		all := append([]serverclient.HierarchyMember{}, members...)
		return serverclient.HierarchyWorkspace{Slug: "shop", Name: "Shop", Members: &all}
	}
	start := serverclient.SyncHierarchyJSONRequestBody{Orgs: []serverclient.HierarchyOrg{{Slug: "acme", Name: "Acme",
		Workspaces: &[]serverclient.HierarchyWorkspace{ws(member("a@example.com", "admin"), member("b@example.com", "editor"))}}}}
	if r, err := admin.SyncHierarchyWithResponse(ctx, start); err != nil || r.StatusCode() != http.StatusOK {
		t.Fatalf("sync: %v %s", err, r.Body)
	}
	for name, doc := range map[string]serverclient.SyncHierarchyJSONRequestBody{
		"prune every member": {Prune: ptr(true), Orgs: []serverclient.HierarchyOrg{{Slug: "acme", Name: "Acme Renamed",
			Workspaces: &[]serverclient.HierarchyWorkspace{ws()}}, {Slug: "beta", Name: "Beta"}}},
		"demote the admin and promote nobody": {Orgs: []serverclient.HierarchyOrg{{Slug: "acme", Name: "Acme Renamed",
			Workspaces: &[]serverclient.HierarchyWorkspace{ws(member("a@example.com", "editor"))}}, {Slug: "beta", Name: "Beta"}}},
	} {
		r, err := admin.SyncHierarchyWithResponse(ctx, doc)
		if err != nil {
			t.Fatal(err)
		}
		expect(t, name, r.StatusCode(), r.Body, http.StatusConflict, "conflict")
	}
	// Nothing of the refused documents was applied: no org beta, acme not renamed, a still admin.
	orgs, _ := admin.ListOrgsWithResponse(ctx, &serverclient.ListOrgsParams{})
	if orgs.JSON200 == nil {
		t.Fatalf("orgs: %s", orgs.Body)
	}
	names := map[string]string{}
	for _, o := range orgs.JSON200.Items {
		names[o.Slug] = o.Name
	}
	if _, ok := names["beta"]; ok || names["acme"] != "Acme" || names["default"] == "" {
		t.Fatalf("orgs after refused syncs: %s", orgs.Body)
	}
	m, _ := admin.GetWorkspaceMemberWithResponse(ctx, "shop", a.Id)
	if m.JSON200 == nil || m.JSON200.Role != serverclient.RoleAdmin {
		t.Fatalf("a after refused syncs: %s", m.Body)
	}
	// Handing the role over in the same document is allowed.
	over := serverclient.SyncHierarchyJSONRequestBody{Orgs: []serverclient.HierarchyOrg{{Slug: "acme", Name: "Acme",
		Workspaces: &[]serverclient.HierarchyWorkspace{ws(member("a@example.com", "viewer"), member("b@example.com", "admin"))}}}}
	if r, err := admin.SyncHierarchyWithResponse(ctx, over); err != nil || r.StatusCode() != http.StatusOK {
		t.Fatalf("hand over: %v %s", err, r.Body)
	}
}
