package artifacts_test

import (
	"context"
	"errors"
	"io"
	"testing"

	"github.com/google/uuid"

	"github.com/sdods/sdods/gen/db"
	"github.com/sdods/sdods/impl/server/artifacts"
	"github.com/sdods/sdods/impl/server/blob"
	"github.com/sdods/sdods/impl/server/projects"
	"github.com/sdods/sdods/impl/server/store"
	"github.com/sdods/sdods/impl/server/store/storetest"
)

// A diff image is kept once under its id: the same comparison again neither makes the image nor
// adds a row; the artifact reads back with its workspace and content.
func TestKeepDiffOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, _ := storetest.Open(t)
	blobs, err := blob.NewFS(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	o, err := st.CreateOrg(ctx, db.CreateOrgParams{Slug: "org-shop", Name: "Org"})
	if err != nil {
		t.Fatal(err)
	}
	w, err := st.CreateWorkspace(ctx, db.CreateWorkspaceParams{OrgID: o.ID, Slug: "shop", Name: "Shop"})
	if err != nil {
		t.Fatal(err)
	}
	p, err := projects.NewService(st).Create(ctx, projects.Workspace{ID: w.ID, Slug: w.Slug, Name: w.Name}, "web", "Web", "", projects.DefaultSettings())
	if err != nil {
		t.Fatal(err)
	}
	svc := artifacts.NewService(st, blobs)
	id := uuid.New()
	if _, err := svc.Get(ctx, id); !store.IsNotFound(err) {
		t.Fatalf("get before: %v", err)
	}
	made := 0
	image := func() ([]byte, error) { made++; return []byte("\x89PNG not really"), nil }
	for range 2 {
		if err := svc.KeepDiff(ctx, id, p.ID, "diff.png", image); err != nil {
			t.Fatal(err)
		}
	}
	if made != 1 {
		t.Fatalf("the image was made %d times, want once", made)
	}
	a, err := svc.Get(ctx, id)
	if err != nil || a.WorkspaceID != w.ID || a.ProjectID != p.ID || a.Kind != "diff" || a.MediaType != "image/png" || a.RunID != nil || a.SizeBytes != 15 {
		t.Fatalf("get: %+v %v", a, err)
	}
	rc, err := blobs.Open(ctx, a.BlobKey)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	if b, _ := io.ReadAll(rc); string(b) != "\x89PNG not really" {
		t.Fatalf("content %q", b)
	}
	failed := errors.New("encode failed")
	if err := svc.KeepDiff(ctx, uuid.New(), p.ID, "x.png", func() ([]byte, error) { return nil, failed }); !errors.Is(err, failed) {
		t.Fatalf("an image that cannot be made: %v", err)
	}
}
