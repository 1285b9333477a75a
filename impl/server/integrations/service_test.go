package integrations_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/sdods/sdods/gen/db"
	"github.com/sdods/sdods/impl/server/apierr"
	"github.com/sdods/sdods/impl/server/features"
	"github.com/sdods/sdods/impl/server/integrations"
	"github.com/sdods/sdods/impl/server/secrets"
	"github.com/sdods/sdods/impl/server/store"
	"github.com/sdods/sdods/impl/server/store/storetest"
)

func mustService(t *testing.T) (*store.Store, *integrations.Service, integrations.Project) {
	t.Helper()
	ctx := context.Background()
	st, _ := storetest.Open(t)
	box, err := secrets.New(bytes.Repeat([]byte{7}, 32))
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
	p, err := st.CreateProject(ctx, db.CreateProjectParams{WorkspaceID: w.ID, Slug: "web", Name: "Web", Settings: []byte(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	svc := integrations.NewService(st, box, integrations.Git{AllowLocal: true}, integrations.Webhook{})
	return st, svc, integrations.Project{ID: p.ID, Slug: p.Slug}
}

// mustRepo makes a local repository with files on branch main and returns its path.
func mustRepo(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	repo, err := git.PlainInitWithOptions(dir, &git.PlainInitOptions{InitOptions: git.InitOptions{DefaultBranch: "refs/heads/main"}})
	if err != nil {
		t.Fatal(err)
	}
	wt, _ := repo.Worktree()
	for name, content := range files {
		p := filepath.Join(dir, name)
		_ = os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := wt.Add(name); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := wt.Commit("c", &git.CommitOptions{Author: &object.Signature{Name: "t", Email: "t@example.com", When: time.Now()}}); err != nil {
		t.Fatal(err)
	}
	return dir
}

func code(err error) apierr.Code { return apierr.From(err).Code }

func TestPutSealsSecretsAndKeepsThem(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, svc, p := mustService(t)
	secret := "whsec-never-in-the-clear"
	hook := integrations.Put{Kind: integrations.KindWebhook, Enabled: true, Webhook: &integrations.WebhookConfig{URL: "https://example.com/hook", Events: []string{"run.failed"}}, Secret: &secret}
	in, created, err := svc.Put(ctx, p, hook)
	if err != nil || !created || !in.HasSecret || in.Webhook.URL != "https://example.com/hook" {
		t.Fatalf("put: %+v %v %v", in, created, err)
	}
	var raw []byte
	if err := st.Pool.QueryRow(ctx, "SELECT config::text || encode(secret_enc, 'escape') FROM integrations WHERE project_id = $1", p.ID).Scan(&raw); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(raw, []byte(secret)) {
		t.Fatal("the secret is stored in the clear")
	}
	hook.Secret = nil // kept
	if in, created, err = svc.Put(ctx, p, hook); err != nil || created || !in.HasSecret {
		t.Fatalf("put again: %+v %v %v", in, created, err)
	}
	hook.Webhook.URL = "ftp://example.com"
	if _, _, err := svc.Put(ctx, p, hook); code(err) != apierr.ValidationFailed {
		t.Fatalf("an ftp webhook: %v", err)
	}
	noSecret := integrations.Put{Kind: integrations.KindGit, Enabled: true, Git: &integrations.GitConfig{URL: t.TempDir(), Branch: "main", AuthMethod: "token"}}
	if _, _, err := svc.Put(ctx, p, noSecret); code(err) != apierr.ValidationFailed {
		t.Fatalf("token authentication without a secret: %v", err)
	}
	if err := svc.Delete(ctx, p, integrations.KindWebhook); err != nil {
		t.Fatal(err)
	}
	if err := svc.Delete(ctx, p, integrations.KindWebhook); code(err) != apierr.NotFound {
		t.Fatalf("delete twice: %v", err)
	}
}

func TestSyncReconcilesFeaturesInOneTransaction(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, svc, p := mustService(t)
	login := "Feature: Login\n\n  Scenario: Sign in\n    Given I open \"/login\"\n"
	dir := mustRepo(t, map[string]string{"tests/auth/login.feature": login, "tests/README.md": "x", "other.feature": login})
	if _, err := svc.Sync(ctx, p, integrations.KindGit, false); code(err) != apierr.NotFound {
		t.Fatalf("sync without an integration: %v", err)
	}
	git := integrations.Put{Kind: integrations.KindGit, Enabled: false, Git: &integrations.GitConfig{URL: dir, Branch: "main", Directory: "tests", AuthMethod: "none"}}
	if _, _, err := svc.Put(ctx, p, git); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Sync(ctx, p, integrations.KindGit, false); code(err) != apierr.Conflict {
		t.Fatalf("sync of a disabled integration: %v", err)
	}
	git.Enabled = true
	if _, _, err := svc.Put(ctx, p, git); err != nil {
		t.Fatal(err)
	}
	dry, err := svc.Sync(ctx, p, integrations.KindGit, true)
	if err != nil || !dry.DryRun || len(dry.Changes) != 1 {
		t.Fatalf("dry run: %+v %v", dry, err)
	}
	res, err := svc.Sync(ctx, p, integrations.KindGit, false)
	if err != nil || res.Commit == nil || len(res.Changes) != 1 || res.Changes[0] != (features.FileChange{Path: "auth/login.feature", Change: "added"}) {
		t.Fatalf("sync: %+v %v", res, err)
	}
	f, err := features.NewService(st, nil).Get(ctx, p.ID, "auth/login.feature")
	if err != nil || f.Content != login {
		t.Fatalf("synced feature: %+v %v", f, err)
	}
	in, err := svc.Get(ctx, p.ID, integrations.KindGit)
	if err != nil || in.LastSync == nil || *in.LastSync.Commit != *res.Commit || len(in.LastSync.Changes) != 1 {
		t.Fatalf("last sync: %+v %v", in.LastSync, err)
	}
	if _, err := svc.Sync(ctx, p, integrations.KindWebhook, false); code(err) != apierr.Conflict {
		t.Fatalf("a webhook syncs: %v", err)
	}
}
