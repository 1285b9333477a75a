package pool_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/sdods/sdods/gen/db"
	"github.com/sdods/sdods/impl/server/apierr"
	"github.com/sdods/sdods/impl/server/pool"
	"github.com/sdods/sdods/impl/server/secrets"
	"github.com/sdods/sdods/impl/server/store/storetest"
)

func TestPoolAccountsSealedAndGuardedByTheirLease(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, _ := storetest.Open(t)
	box, err := secrets.New(bytes.Repeat([]byte{3}, 32))
	if err != nil {
		t.Fatal(err)
	}
	o, err := st.CreateOrg(ctx, db.CreateOrgParams{Slug: "acme", Name: "Acme"})
	if err != nil {
		t.Fatal(err)
	}
	w, err := st.CreateWorkspace(ctx, db.CreateWorkspaceParams{OrgID: o.ID, Slug: "shop", Name: "Shop"})
	if err != nil {
		t.Fatal(err)
	}
	pr, err := st.CreateProject(ctx, db.CreateProjectParams{WorkspaceID: w.ID, Slug: "web", Name: "Web", Settings: []byte(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	p := pool.Project{ID: pr.ID, Slug: pr.Slug}
	svc := pool.NewService(st, box)

	secret := "pool-password-in-the-clear"
	a, err := svc.Create(ctx, p, pool.Fields{Username: "alice", Password: &secret, Tags: []string{"admin"}})
	if err != nil || !a.HasPassword || a.Lease != nil || a.Attributes == nil {
		t.Fatalf("create: %+v %v", a, err)
	}
	if _, err := svc.Create(ctx, p, pool.Fields{Username: "alice", Password: &secret}); apierr.From(err).Code != apierr.Conflict {
		t.Fatalf("a username twice: %v", err)
	}
	var stored []byte
	if err := st.Pool.QueryRow(ctx, "SELECT password_enc FROM pool_accounts WHERE id = $1", a.ID).Scan(&stored); err != nil || bytes.Contains(stored, []byte(secret)) {
		t.Fatalf("the password is stored in the clear (%v)", err)
	}
	// Replacing without a password keeps it: the lease opens it.
	if a, err = svc.Replace(ctx, p, a.ID, pool.Fields{Username: "alice", Tags: []string{"admin", "eu"}}); err != nil || !a.HasPassword || len(a.Tags) != 2 {
		t.Fatalf("replace: %+v %v", a, err)
	}
	run, err := st.CreateRun(ctx, db.CreateRunParams{ProjectID: pr.ID, Status: "running", Trigger: "api", Source: "execute", Paths: []string{}, Variables: []byte(`{}`), Datasets: []byte(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	leased, err := pool.Lease(ctx, st.Queries, box, pool.Request{ProjectID: pr.ID, RunID: run.ID, Tags: []string{"eu"}, TTL: time.Minute})
	if err != nil || leased.Password != secret {
		t.Fatalf("lease: %+v %v", leased, err)
	}
	if a, err = svc.Get(ctx, p.ID, a.ID); err != nil || a.Lease == nil || a.Lease.RunID != run.ID {
		t.Fatalf("leased account: %+v %v", a, err)
	}
	if err := svc.Delete(ctx, p, a.ID); apierr.From(err).Code != apierr.Conflict {
		t.Fatalf("delete under a lease: %v", err)
	}
	if _, err := pool.ReleaseRun(ctx, st.Queries, run.ID); err != nil {
		t.Fatal(err)
	}
	if err := svc.Delete(ctx, p, a.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Get(ctx, p.ID, a.ID); apierr.From(err).Code != apierr.NotFound {
		t.Fatalf("after delete: %v", err)
	}
	if err := svc.Delete(ctx, p, uuid.New()); apierr.From(err).Code != apierr.NotFound {
		t.Fatalf("delete an unknown account: %v", err)
	}
}
