package app_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/minio/minio-go/v7"

	"github.com/sdods/sdods/gen/serverclient"
	"github.com/sdods/sdods/impl/server/app"
	"github.com/sdods/sdods/impl/server/app/apptest"
	"github.com/sdods/sdods/impl/server/blob"
	"github.com/sdods/sdods/impl/server/blob/s3test"
	"github.com/sdods/sdods/impl/server/store/storetest"
)

// TestS3BlobBackend: a server configured with -blob-backend s3 keeps a dataset's content in the
// bucket and reads it back from there; with a wrong secret it does not start.
func TestS3BlobBackend(t *testing.T) {
	srv := s3test.Start(t)
	bucket := srv.NewBucket(t)
	s3cfg := blob.S3Config{Endpoint: srv.Endpoint, Bucket: bucket, Region: s3test.Region, Prefix: "sdods/",
		AccessKeyID: s3test.AccessKey, SecretAccessKey: s3test.SecretKey}
	dbURL := storetest.NewDatabase(t)
	s := apptest.StartOn(t, dbURL, func(c *app.Config) { c.Blob = app.BlobConfig{Backend: "s3", S3: s3cfg} })
	ctx := context.Background()
	admin := s.Setup(t)
	sync := serverclient.SyncHierarchyJSONRequestBody{Orgs: []serverclient.HierarchyOrg{{Slug: "acme", Name: "Acme",
		Workspaces: &[]serverclient.HierarchyWorkspace{{Slug: "shop", Name: "Shop"}}}}}
	if r, err := admin.SyncHierarchyWithResponse(ctx, sync); err != nil || r.StatusCode() != http.StatusOK {
		t.Fatalf("sync: %v", err)
	}
	if r, err := admin.CreateProjectWithResponse(ctx, serverclient.CreateProjectJSONRequestBody{Slug: "web", Name: "Web", WorkspaceSlug: "shop"}); err != nil || r.StatusCode() != http.StatusCreated {
		t.Fatalf("create project: %v", err)
	}
	csv := "email,age\nada@example.com,36\ngrace@example.com,45\n"
	ct, body := multipartBody(t, "users.csv", []byte(csv))
	up, _ := admin.UploadDatasetWithBodyWithResponse(ctx, "web", ct, body)
	if up.JSON201 == nil {
		t.Fatalf("upload: %d %s", up.StatusCode(), up.Body)
	}
	key := up.JSON201.Sha256
	obj, err := srv.Client(t).GetObject(ctx, bucket, "sdods/"+key[:2]+"/"+key, minio.GetObjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	stored, err := io.ReadAll(obj)
	obj.Close()
	if err != nil || string(stored) != csv {
		t.Fatalf("the bucket holds %q, %v; want the uploaded CSV", stored, err)
	}
	pv, _ := admin.PreviewDatasetWithResponse(ctx, "web", "users", nil)
	if pv.JSON200 == nil || !strings.Contains(string(pv.Body), "grace@example.com") {
		t.Fatalf("preview from the bucket: %d %s", pv.StatusCode(), pv.Body)
	}

	bad := app.Config{Addr: "127.0.0.1:0", DatabaseURL: dbURL, DataDir: t.TempDir(), MaxBody: 1 << 20, LogFormat: "text",
		Blob: app.BlobConfig{Backend: "s3", S3: s3cfg}}
	bad.Blob.S3.SecretAccessKey = "wrong"
	if a, err := app.New(ctx, bad, slog.New(slog.NewTextHandler(io.Discard, nil))); err == nil {
		a.Close()
		t.Fatal("a server whose S3 credentials are wrong started")
	} else if !strings.Contains(err.Error(), "blob store s3") || strings.Contains(err.Error(), "wrong") {
		t.Fatalf("error %q: want one naming the blob store, without the secret", err)
	}
}
