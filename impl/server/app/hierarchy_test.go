package app_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	openapi_types "github.com/oapi-codegen/runtime/types"

	"github.com/sdods/sdods/gen/serverclient"
	"github.com/sdods/sdods/impl/server/app/apptest"
)

func member(email, role string) serverclient.HierarchyMember {
	return serverclient.HierarchyMember{Email: openapi_types.Email(email), Role: serverclient.HierarchyMemberRole(role)}
}

func TestHierarchySyncMembersAndRoles(t *testing.T) {
	s := apptest.Start(t)
	ctx := context.Background()
	admin := s.Setup(t)
	vera, veraUser := s.SignIn(t, admin, "vera@example.com")
	eddy, eddyUser := s.SignIn(t, admin, "eddy@example.com")
	nina, _ := s.SignIn(t, admin, "nina@example.com")

	doc := serverclient.SyncHierarchyJSONRequestBody{Orgs: []serverclient.HierarchyOrg{{
		Slug: "acme", Name: "Acme",
		Members: &[]serverclient.HierarchyMember{member("eddy@example.com", "member")},
		Workspaces: &[]serverclient.HierarchyWorkspace{{
			Slug: "shop", Name: "Shop",
			Members: &[]serverclient.HierarchyMember{member("vera@example.com", "viewer"), member("eddy@example.com", "editor"), member("admin@example.com", "admin")},
		}},
	}}}
	// A dry run reports without applying.
	dry := doc
	dry.DryRun = ptr(true)
	r, err := admin.SyncHierarchyWithResponse(ctx, dry)
	if err != nil || r.JSON200 == nil || !r.JSON200.DryRun || len(r.JSON200.Changes) != 6 {
		t.Fatalf("dry run: %v %s", err, r.Body)
	}
	if w, _ := admin.GetWorkspaceWithResponse(ctx, "shop"); w.StatusCode() != http.StatusNotFound {
		t.Fatalf("dry run applied: %d", w.StatusCode())
	}
	r, _ = admin.SyncHierarchyWithResponse(ctx, doc)
	if r.JSON200 == nil || len(r.JSON200.Changes) != 6 {
		t.Fatalf("sync: %s", r.Body)
	}
	r, _ = admin.SyncHierarchyWithResponse(ctx, doc)
	if r.JSON200 == nil || len(r.JSON200.Changes) != 0 || r.JSON200.Unchanged != 6 {
		t.Fatalf("second sync is not idempotent: %s", r.Body)
	}
	bad := serverclient.SyncHierarchyJSONRequestBody{Orgs: []serverclient.HierarchyOrg{{Slug: "x", Name: "X", Members: &[]serverclient.HierarchyMember{member("ghost@example.com", "member")}}}}
	if r, _ := admin.SyncHierarchyWithResponse(ctx, bad); r.StatusCode() != http.StatusBadRequest || !strings.Contains(string(r.Body), "ghost@example.com") {
		t.Fatalf("unknown user: %d %s", r.StatusCode(), r.Body)
	}

	// Each user sees the workspace with their effective role.
	for _, tc := range []struct {
		b    *apptest.Browser
		role string
	}{{vera, "viewer"}, {eddy, "editor"}, {admin, "admin"}} {
		l, _ := tc.b.ListWorkspacesWithResponse(ctx, nil)
		found := false
		for _, w := range l.JSON200.Items {
			if w.Slug == "shop" {
				found = true
				if w.Role == nil || string(*w.Role) != tc.role || w.MemberCount != 3 || w.ProjectCount != 0 || w.Org.Slug != "acme" {
					t.Errorf("%s sees %+v", tc.role, w)
				}
			}
		}
		if !found {
			t.Errorf("%s does not see shop: %s", tc.role, l.Body)
		}
	}
	// A non-member is told the workspace does not exist.
	if w, _ := nina.GetWorkspaceWithResponse(ctx, "shop"); w.StatusCode() != http.StatusNotFound {
		t.Fatalf("non-member: %d %s", w.StatusCode(), w.Body)
	}
	// A viewer reads members but cannot manage them; an admin can.
	if l, _ := vera.ListWorkspaceMembersWithResponse(ctx, "shop", nil); l.JSON200 == nil || len(l.JSON200.Items) != 3 {
		t.Fatalf("viewer lists members: %s", l.Body)
	}
	if u, _ := vera.UpdateWorkspaceMemberWithResponse(ctx, "shop", eddyUser.Id, serverclient.UpdateWorkspaceMemberJSONRequestBody{Role: "admin"}); u.StatusCode() != http.StatusForbidden {
		t.Fatalf("viewer manages: %d %s", u.StatusCode(), u.Body)
	}
	if u, _ := admin.UpdateWorkspaceMemberWithResponse(ctx, "shop", veraUser.Id, serverclient.UpdateWorkspaceMemberJSONRequestBody{Role: "editor"}); u.JSON200 == nil || u.JSON200.Role != "editor" {
		t.Fatalf("admin manages: %s", u.Body)
	}
	if a, _ := admin.AddWorkspaceMemberWithResponse(ctx, "shop", serverclient.AddWorkspaceMemberJSONRequestBody{UserId: veraUser.Id, Role: "viewer"}); a.StatusCode() != http.StatusConflict {
		t.Fatalf("adding a member twice: %d", a.StatusCode())
	}
	me, _ := admin.GetAuthMeWithResponse(ctx)
	if d, _ := admin.RemoveWorkspaceMemberWithResponse(ctx, "shop", me.JSON200.User.Id); d.StatusCode() != http.StatusConflict {
		t.Fatalf("removing the last admin: %d %s", d.StatusCode(), d.Body)
	}
	if d, _ := admin.RemoveWorkspaceMemberWithResponse(ctx, "shop", veraUser.Id); d.StatusCode() != http.StatusNoContent {
		t.Fatalf("remove member: %d %s", d.StatusCode(), d.Body)
	}
	if w, _ := vera.GetWorkspaceWithResponse(ctx, "shop"); w.StatusCode() != http.StatusNotFound {
		t.Fatalf("removed member still sees the workspace: %d", w.StatusCode())
	}

	// Org members, and org admins hold admin in the org's workspaces.
	if a, _ := admin.AddOrgMemberWithResponse(ctx, "acme", serverclient.AddOrgMemberJSONRequestBody{UserId: veraUser.Id, Role: ptr(serverclient.OrgRoleAdmin)}); a.StatusCode() != http.StatusCreated {
		t.Fatalf("add org member: %d %s", a.StatusCode(), a.Body)
	}
	if w, _ := vera.GetWorkspaceWithResponse(ctx, "shop"); w.JSON200 == nil || string(*w.JSON200.Role) != "admin" {
		t.Fatalf("org admin's effective role: %s", w.Body)
	}
	if l, _ := admin.ListOrgMembersWithResponse(ctx, "acme", nil); l.JSON200 == nil || len(l.JSON200.Items) != 2 {
		t.Fatalf("org members: %s", l.Body)
	}
	if o, _ := eddy.ListOrgsWithResponse(ctx, nil); o.JSON200 == nil || len(o.JSON200.Items) != 1 || o.JSON200.Items[0].Slug != "acme" {
		t.Fatalf("eddy's orgs: %s", o.Body)
	}
	if o, _ := eddy.ListOrgMembersWithResponse(ctx, "acme", nil); o.StatusCode() != http.StatusForbidden {
		t.Fatalf("a member lists org members (instance admins only): %d", o.StatusCode())
	}
	if d, _ := admin.RemoveOrgMemberWithResponse(ctx, "acme", &serverclient.RemoveOrgMemberParams{UserId: veraUser.Id}); d.StatusCode() != http.StatusNoContent {
		t.Fatalf("remove org member: %d %s", d.StatusCode(), d.Body)
	}

	// Prune removes what the document does not name (default org, eddy's org membership).
	pruned := serverclient.SyncHierarchyJSONRequestBody{Prune: ptr(true), Orgs: []serverclient.HierarchyOrg{{Slug: "acme", Name: "Acme Inc",
		Workspaces: &[]serverclient.HierarchyWorkspace{{Slug: "shop", Name: "Shop", Members: &[]serverclient.HierarchyMember{member("admin@example.com", "admin")}}}}}}
	r, _ = admin.SyncHierarchyWithResponse(ctx, pruned)
	if r.JSON200 == nil {
		t.Fatalf("prune: %s", r.Body)
	}
	got := map[string]bool{}
	for _, c := range r.JSON200.Changes {
		got[string(c.Action)+" "+string(c.Kind)+" "+c.Target] = true
	}
	for _, want := range []string{"updated org acme", "deleted orgMember acme/eddy@example.com", "deleted workspaceMember shop/eddy@example.com", "deleted org default"} {
		if !got[want] {
			t.Errorf("prune did not report %q: %v", want, got)
		}
	}

	// The audit log has the changes and the refusals, with actors.
	a, _ := admin.ListAuditWithResponse(ctx, &serverclient.ListAuditParams{Action: ptr("updateWorkspaceMember")})
	if a.JSON200 == nil || len(a.JSON200.Items) != 2 {
		t.Fatalf("audit of updateWorkspaceMember: %s", a.Body)
	}
	outcomes := map[string]int{}
	for _, e := range a.JSON200.Items {
		outcomes[string(e.Outcome)]++
		if e.Actor.Id == nil || e.ClientAddress == nil {
			t.Errorf("entry without actor or address: %+v", e)
		}
	}
	if outcomes["success"] != 1 || outcomes["denied"] != 1 {
		t.Fatalf("outcomes %v", outcomes)
	}
	if !strings.Contains(s.Logs(), "request") || strings.Contains(s.Logs(), "recorded no audit entry") {
		t.Fatal("a mutating operation succeeded without an audit entry")
	}
}

func TestTokenCreateCommand(t *testing.T) {
	s := apptest.Start(t)
	s.Setup(t)
	token, err := createTokenCLI(t, s, "admin@example.com", "runs:read,projects:read", "ci")
	if err != nil {
		t.Fatal(err)
	}
	me, _ := s.Bearer(t, token).GetAuthMeWithResponse(context.Background())
	if me.StatusCode() != http.StatusForbidden { // /api/auth/me needs account:read, which this token lacks
		t.Fatalf("me with a token lacking account:read: %d %s", me.StatusCode(), me.Body)
	}
	ws, _ := s.Bearer(t, token).ListWorkspacesWithResponse(context.Background(), nil)
	if ws.JSON200 == nil || len(ws.JSON200.Items) != 1 {
		t.Fatalf("workspaces by CLI token: %d %s", ws.StatusCode(), ws.Body)
	}
	if _, err := createTokenCLI(t, s, "admin@example.com", "runs:fly", "bad"); err == nil || !strings.Contains(err.Error(), "unknown scope") {
		t.Fatalf("unknown scope accepted: %v", err)
	}
}
