package features_test

import (
	"context"
	"testing"

	"github.com/google/uuid"

	"github.com/sdods/sdods/gen/db"
	"github.com/sdods/sdods/impl/server/apierr"
	"github.com/sdods/sdods/impl/server/features"
	"github.com/sdods/sdods/impl/server/store"
	"github.com/sdods/sdods/impl/server/store/storetest"
)

func mustProject(t *testing.T) (*store.Store, features.Project) {
	t.Helper()
	st, p := storetest.OpenWithProject(t)
	return st, features.Project{ID: p.ID, Slug: p.Slug}
}

func code(err error) apierr.Code { return apierr.From(err).Code }

const login = "Feature: Login\n\n  Scenario: Sign in\n    Given I open \"/login\"\n"

func TestSaveNeedsIfMatchAndRefusesErrors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, p := mustProject(t)
	svc := features.NewService(st, nil)

	if _, err := svc.Save(ctx, p, "auth/login.feature", login, strPtr(`"nope"`)); code(err) != apierr.PreconditionFailed {
		t.Fatalf("create with a stale If-Match: %v", err)
	}
	created, err := svc.Save(ctx, p, "auth/login.feature", login, nil)
	if err != nil || !created.Created || created.Feature.Module != "auth" || created.Feature.ScenarioCount != 1 {
		t.Fatalf("create: %+v %v", created, err)
	}
	if _, err := svc.Save(ctx, p, "auth/login.feature", login+"\n", nil); code(err) != apierr.PreconditionFailed {
		t.Fatalf("replace without If-Match: %v", err)
	}
	// A document with an error diagnostic is refused, and nothing changes.
	bad := "Feature: Login\n\n  Scenario: A\n    Given x\n  Scenario: A\n    Given y\n"
	refused, err := svc.Save(ctx, p, "auth/login.feature", bad, &created.Feature.Etag)
	if err != nil || !refused.Refused || !features.HasErrors(refused.Diagnostics) {
		t.Fatalf("a duplicate scenario name: %+v %v", refused, err)
	}
	if got, _ := svc.Get(ctx, p.ID, "auth/login.feature"); got.Etag != created.Feature.Etag {
		t.Fatal("a refused save changed the feature")
	}
	replaced, err := svc.Save(ctx, p, "auth/login.feature", login+"\n", &created.Feature.Etag)
	if err != nil || replaced.Created || replaced.Feature.Etag == created.Feature.Etag {
		t.Fatalf("replace: %+v %v", replaced, err)
	}
	if err := svc.Delete(ctx, p, "auth/login.feature", &created.Feature.Etag); code(err) != apierr.PreconditionFailed {
		t.Fatalf("delete with a stale If-Match: %v", err)
	}
	if err := svc.Delete(ctx, p, "auth/login.feature", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Get(ctx, p.ID, "auth/login.feature"); code(err) != apierr.NotFound {
		t.Fatalf("after delete: %v", err)
	}
	if _, err := svc.SaveNew(ctx, p, "rec.feature", login, nil, "actions"); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.SaveNew(ctx, p, "rec.feature", login, nil, "actions"); code(err) != apierr.Conflict {
		t.Fatalf("a recording over a feature: %v", err)
	}
	var entries int
	if err := st.Pool.QueryRow(ctx, "SELECT count(*) FROM audit_entries WHERE target_kind = 'feature'").Scan(&entries); err != nil || entries != 4 {
		t.Fatalf("%d audit entries (%v), want 4: create, replace, delete, record", entries, err)
	}
}

func TestReconcileOwnsOnlyWhatItWrote(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, p := mustProject(t)
	svc := features.NewService(st, nil)
	if _, err := svc.Save(ctx, p, "local.feature", login, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Save(ctx, p, "shared.feature", login, nil); err != nil {
		t.Fatal(err)
	}
	reconcile := func(files map[string]string, dryRun bool) []features.FileChange {
		t.Helper()
		var out []features.FileChange
		err := st.WithTx(ctx, func(q *db.Queries) error {
			var err error
			out, err = features.Reconcile(ctx, q, p.ID, files, dryRun)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	files := map[string]string{"a.feature": login, "shared.feature": login, "../escape.feature": login}
	if got := reconcile(files, true); len(got) != 1 || got[0] != (features.FileChange{Path: "a.feature", Change: "added"}) {
		t.Fatalf("dry run: %+v", got)
	}
	if _, err := svc.Get(ctx, p.ID, "a.feature"); code(err) != apierr.NotFound {
		t.Fatal("a dry run wrote")
	}
	// shared.feature has the same content: taken over without a change reported.
	if got := reconcile(files, false); len(got) != 1 {
		t.Fatalf("first reconcile: %+v", got)
	}
	if got := reconcile(files, false); len(got) != 0 {
		t.Fatalf("an unchanged repository changes: %+v", got)
	}
	got := reconcile(map[string]string{"a.feature": login + "\n"}, false)
	want := []features.FileChange{{Path: "a.feature", Change: "modified"}, {Path: "shared.feature", Change: "deleted"}}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("second reconcile: %+v, want %+v", got, want)
	}
	all, err := svc.All(ctx, p.ID)
	if err != nil || len(all) != 2 || all[0].Path != "a.feature" || all[1].Path != "local.feature" {
		t.Fatalf("features left: %+v %v (the local feature stays)", all, err)
	}
}

func TestListByFolderAndTag(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, p := mustProject(t)
	svc := features.NewService(st, nil)
	for path, content := range map[string]string{
		"checkout/pay.feature":     "@smoke\n" + login,
		"checkout-old/pay.feature": login,
		"a_b/x.feature":            login,
		"axb/x.feature":            login,
	} {
		if _, err := svc.Save(ctx, p, path, content, nil); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		f    features.ListFilter
		want int
	}{
		{features.ListFilter{Prefix: "checkout", Limit: 10}, 1},
		{features.ListFilter{Prefix: "a_b/", Limit: 10}, 1}, // _ is no wildcard
		{features.ListFilter{Tag: "smoke", Limit: 10}, 1},
		{features.ListFilter{Tag: "@smoke", Limit: 10}, 1},
		{features.ListFilter{Limit: 2}, 3}, // one more than the page: there is a next page
	} {
		got, err := svc.List(ctx, p.ID, tc.f)
		if err != nil || len(got) != tc.want {
			t.Errorf("%+v: %d features (%v), want %d", tc.f, len(got), err, tc.want)
		}
	}
	if got, _ := svc.List(ctx, uuid.New(), features.ListFilter{Limit: 10}); len(got) != 0 {
		t.Errorf("another project sees %d features", len(got))
	}
}

func strPtr(s string) *string { return &s }
