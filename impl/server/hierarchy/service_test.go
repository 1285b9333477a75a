package hierarchy_test

import (
	"context"
	"sync"
	"testing"

	"github.com/google/uuid"

	"github.com/sdods/sdods/gen/db"
	"github.com/sdods/sdods/impl/server/apierr"
	"github.com/sdods/sdods/impl/server/hierarchy"
	"github.com/sdods/sdods/impl/server/store"
	"github.com/sdods/sdods/impl/server/store/storetest"
)

type fixture struct {
	st  *store.Store
	svc *hierarchy.Service
	org hierarchy.OrgInfo
	ws  hierarchy.WorkspaceInfo
}

func mustFixture(t *testing.T) fixture {
	t.Helper()
	ctx := context.Background()
	st, _ := storetest.Open(t)
	svc := hierarchy.New(st)
	if _, err := st.CreateOrg(ctx, db.CreateOrgParams{Slug: "acme", Name: "Acme"}); err != nil {
		t.Fatal(err)
	}
	org, err := svc.Org(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	ws, err := svc.CreateWorkspace(ctx, org, "shop", "Shop", "")
	if err != nil {
		t.Fatal(err)
	}
	return fixture{st: st, svc: svc, org: org, ws: ws}
}

func (f fixture) mustUser(t *testing.T, email string) uuid.UUID {
	t.Helper()
	u, err := f.st.CreateUser(context.Background(), db.CreateUserParams{Email: email, DisplayName: email, PasswordHash: "x"})
	if err != nil {
		t.Fatal(err)
	}
	return u.ID
}

func wantCode(t *testing.T, what string, err error, code apierr.Code) {
	t.Helper()
	if got := apierr.From(err).Code; err == nil || got != code {
		t.Fatalf("%s: %v (%s), want %s", what, err, got, code)
	}
}

func TestLastAdminRuleOfEveryMembershipChange(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := mustFixture(t)
	a, b := f.mustUser(t, "a@example.com"), f.mustUser(t, "b@example.com")
	if _, err := f.svc.AddWorkspaceMember(ctx, f.ws, a, "admin"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.AddWorkspaceMember(ctx, f.ws, b, "viewer"); err != nil {
		t.Fatal(err)
	}
	_, err := f.svc.UpdateWorkspaceMember(ctx, f.ws, a, "editor")
	wantCode(t, "demote the last admin", err, apierr.Conflict)
	wantCode(t, "remove the last admin", f.svc.RemoveWorkspaceMember(ctx, f.ws, a), apierr.Conflict)
	_, err = f.svc.Sync(ctx, hierarchy.Document{Prune: true, Orgs: []hierarchy.Org{{Slug: "acme", Name: "Acme",
		Workspaces: []hierarchy.Workspace{{Slug: "shop", Name: "Shop", Members: []hierarchy.Member{{Email: "b@example.com", Role: "editor"}}}}}}})
	wantCode(t, "sync pruning the last admin", err, apierr.Conflict)
	if m, err := f.svc.WorkspaceMember(ctx, f.ws.ID, a); err != nil || m.Role != "admin" {
		t.Fatalf("a after refused changes: %+v %v", m, err)
	}
	// A non-admin member changes freely, and an admin goes once another one exists.
	if err := f.svc.RemoveWorkspaceMember(ctx, f.ws, b); err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.AddWorkspaceMember(ctx, f.ws, b, "admin"); err != nil {
		t.Fatal(err)
	}
	if err := f.svc.RemoveWorkspaceMember(ctx, f.ws, a); err != nil {
		t.Fatal(err)
	}
	_, err = f.svc.AddWorkspaceMember(ctx, f.ws, b, "viewer")
	wantCode(t, "add a member twice", err, apierr.Conflict)
	_, err = f.svc.AddWorkspaceMember(ctx, f.ws, uuid.New(), "viewer")
	wantCode(t, "add an unknown user", err, apierr.ValidationFailed)
}

func TestConcurrentRemovalsKeepOneAdmin(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := mustFixture(t)
	ids := []uuid.UUID{f.mustUser(t, "a@example.com"), f.mustUser(t, "b@example.com"), f.mustUser(t, "c@example.com")}
	for _, id := range ids {
		if _, err := f.svc.AddWorkspaceMember(ctx, f.ws, id, "admin"); err != nil {
			t.Fatal(err)
		}
	}
	errs := make([]error, len(ids))
	var wg sync.WaitGroup
	for i, id := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = f.svc.RemoveWorkspaceMember(ctx, f.ws, id)
		}()
	}
	wg.Wait()
	refused := 0
	for _, err := range errs {
		if err != nil {
			wantCode(t, "concurrent removal", err, apierr.Conflict)
			refused++
		}
	}
	admins, err := f.svc.ListWorkspaceMembers(ctx, f.ws.ID, ptr("admin"), hierarchy.Page{Limit: 10})
	if err != nil || refused != 1 || len(admins) != 1 {
		t.Fatalf("%d refused, %d admins left (%v); want 1 and 1", refused, len(admins), err)
	}
}

func TestAuditedMembershipChanges(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := mustFixture(t)
	a := f.mustUser(t, "a@example.com")
	if _, err := f.svc.SetOrgMember(ctx, f.org, a, "admin"); err != nil {
		t.Fatal(err)
	}
	if err := f.svc.RemoveOrgMember(ctx, f.org, a); err != nil {
		t.Fatal(err)
	}
	wantCode(t, "remove a non-member", f.svc.RemoveOrgMember(ctx, f.org, a), apierr.NotFound)
	var n int
	if err := f.st.Pool.QueryRow(ctx, "SELECT count(*) FROM audit_entries WHERE target_kind IN ('orgMember', 'workspace')").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 3 { // the workspace of the fixture, the membership and its removal
		t.Fatalf("%d audit entries, want 3", n)
	}
}

func ptr[T any](v T) *T { return &v }
