package projects_test

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"github.com/sdods/sdods/impl/server/apierr"
	"github.com/sdods/sdods/impl/server/blob"
	"github.com/sdods/sdods/impl/server/projects"
	"github.com/sdods/sdods/impl/server/store/storetest"
)

func TestDatasetsShareAndDropTheirContent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, _ := storetest.Open(t)
	blobs, err := blob.NewFS(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	p, err := projects.NewService(st).Create(ctx, mustWorkspace(t, st, "shop"), "web", "Web", "", projects.DefaultSettings())
	if err != nil {
		t.Fatal(err)
	}
	ds := projects.NewDatasets(st, blobs, slog.New(slog.NewTextHandler(io.Discard, nil)))
	csv := []byte("user,age\nada,36\nbob,41\n")

	users, err := ds.Create(ctx, p, projects.Upload{Filename: "users.csv", Content: csv})
	if err != nil || users.Name != "users" || users.Format != "csv" || users.RowCount != 2 || users.Columns[1].Type != "integer" {
		t.Fatalf("create: %+v %v", users, err)
	}
	if _, err := ds.Create(ctx, p, projects.Upload{Name: "users", Content: csv}); apierr.From(err).Code != apierr.Conflict {
		t.Fatalf("a name twice: %v", err)
	}
	for name, bad := range map[string]projects.Upload{
		"a bad name":    {Name: "-x", Content: csv},
		"a bad format":  {Name: "x", Format: "xml", Content: csv},
		"a bad content": {Name: "x", Format: "json", Content: []byte("{")},
	} {
		if _, err := ds.Create(ctx, p, bad); apierr.From(err).Code != apierr.ValidationFailed {
			t.Errorf("%s: %v", name, err)
		}
	}
	// Same content under two names: stored once, kept while one of them references it.
	if _, err := ds.Create(ctx, p, projects.Upload{Name: "copy", Content: csv}); err != nil {
		t.Fatal(err)
	}
	if err := ds.Delete(ctx, p, "users"); err != nil {
		t.Fatal(err)
	}
	_, rows, total, err := ds.Preview(ctx, p.ID, "copy", 1)
	if err != nil || total != 2 || len(rows) != 1 || rows[0][0] != "ada" {
		t.Fatalf("preview of the shared content: %v %d %v", rows, total, err)
	}
	replaced, err := ds.Replace(ctx, p, "copy", projects.Upload{Content: []byte(`[{"id":1}]`), Filename: "copy.json"})
	if err != nil || replaced.Format != "json" || replaced.RowCount != 1 {
		t.Fatalf("replace: %+v %v", replaced, err)
	}
	if rc, err := blobs.Open(ctx, users.Sha256); err == nil {
		rc.Close()
		t.Fatal("content no dataset references is still stored")
	}
	if _, err := ds.Replace(ctx, p, "copy", projects.Upload{Name: "other", Content: csv}); apierr.From(err).Code != apierr.ValidationFailed {
		t.Fatalf("a name part that differs: %v", err)
	}
	if err := ds.Delete(ctx, p, "users"); apierr.From(err).Code != apierr.NotFound {
		t.Fatalf("delete twice: %v", err)
	}
}
