package app_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"io/fs"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/google/uuid"

	"github.com/sdods/sdods/gen/db"
	"github.com/sdods/sdods/gen/serverclient"
	"github.com/sdods/sdods/impl/server/app/apptest"
	"github.com/sdods/sdods/impl/server/integrations"
	"github.com/sdods/sdods/impl/server/pool"
	"github.com/sdods/sdods/impl/server/secrets"
)

// projectWorld is a server with workspace "shop" (editor, viewer), an outsider and project "web".
type projectWorld struct {
	s                     *apptest.Server
	admin, editor, viewer *apptest.Browser
	outsider              *apptest.Browser
	ctx                   context.Context
}

func newProjectWorld(t *testing.T) *projectWorld {
	t.Helper()
	s := apptest.Start(t)
	w := &projectWorld{s: s, ctx: context.Background(), admin: s.Setup(t)}
	w.editor, _ = s.SignIn(t, w.admin, "editor@example.com")
	w.viewer, _ = s.SignIn(t, w.admin, "viewer@example.com")
	w.outsider, _ = s.SignIn(t, w.admin, "outsider@example.com")
	sync := serverclient.SyncHierarchyJSONRequestBody{Orgs: []serverclient.HierarchyOrg{{Slug: "acme", Name: "Acme",
		Workspaces: &[]serverclient.HierarchyWorkspace{{Slug: "shop", Name: "Shop", Members: &[]serverclient.HierarchyMember{
			member("editor@example.com", "editor"), member("viewer@example.com", "viewer")}}}}}}
	if r, err := w.admin.SyncHierarchyWithResponse(w.ctx, sync); err != nil || r.StatusCode() != http.StatusOK {
		t.Fatalf("sync: %v", err)
	}
	r, err := w.admin.CreateProjectWithResponse(w.ctx, serverclient.CreateProjectJSONRequestBody{Slug: "web", Name: "Web", WorkspaceSlug: "shop"})
	if err != nil || r.StatusCode() != http.StatusCreated {
		t.Fatalf("create project: %v %s", err, r.Body)
	}
	return w
}

// expect checks a status and, for an error, the error shape and its code.
func expect(t *testing.T, what string, status int, body []byte, want int, code string) {
	t.Helper()
	if status != want {
		t.Fatalf("%s: status %d, want %d: %s", what, status, want, body)
	}
	if code != "" {
		if e := mustErrorBody(t, body); e.Error.Code != code {
			t.Fatalf("%s: code %s, want %s: %s", what, e.Error.Code, code, body)
		}
	}
}

func TestProjects(t *testing.T) {
	w := newProjectWorld(t)
	ctx := w.ctx
	// Create: validation, unknown workspace, role, duplicate.
	settings := &serverclient.ProjectSettingsInput{DisabledLintRules: &[]string{"trailing-whitespace"}, TagPattern: ptr("^[a-z-]+$"), Retries: ptr(2)}
	for _, tc := range []struct {
		name string
		b    *apptest.Browser
		body serverclient.CreateProjectJSONRequestBody
		want int
		code string
	}{
		{"bad slug", w.admin, serverclient.CreateProjectJSONRequestBody{Slug: "Bad Slug", Name: "x", WorkspaceSlug: "shop"}, 400, "validation_failed"},
		{"unknown workspace", w.admin, serverclient.CreateProjectJSONRequestBody{Slug: "api", Name: "API", WorkspaceSlug: "nope"}, 404, "not_found"},
		{"outsider", w.outsider, serverclient.CreateProjectJSONRequestBody{Slug: "api", Name: "API", WorkspaceSlug: "shop"}, 404, "not_found"},
		{"editor may not manage", w.editor, serverclient.CreateProjectJSONRequestBody{Slug: "api", Name: "API", WorkspaceSlug: "shop"}, 403, "forbidden"},
		{"unknown lint rule", w.admin, serverclient.CreateProjectJSONRequestBody{Slug: "api", Name: "API", WorkspaceSlug: "shop",
			Settings: &serverclient.ProjectSettingsInput{DisabledLintRules: &[]string{"no-such-rule"}}}, 400, "validation_failed"},
		{"bad tag pattern", w.admin, serverclient.CreateProjectJSONRequestBody{Slug: "api", Name: "API", WorkspaceSlug: "shop",
			Settings: &serverclient.ProjectSettingsInput{TagPattern: ptr("([")}}, 400, "validation_failed"},
		{"duplicate", w.admin, serverclient.CreateProjectJSONRequestBody{Slug: "web", Name: "Web", WorkspaceSlug: "shop"}, 409, "conflict"},
		{"created", w.admin, serverclient.CreateProjectJSONRequestBody{Slug: "api", Name: "API", WorkspaceSlug: "shop", Settings: settings}, 201, ""},
	} {
		t.Run("create/"+tc.name, func(t *testing.T) {
			r, err := tc.b.CreateProjectWithResponse(ctx, tc.body)
			if err != nil {
				t.Fatal(err)
			}
			expect(t, tc.name, r.StatusCode(), r.Body, tc.want, tc.code)
			if tc.want == 201 {
				p := r.JSON201
				if p.Workspace.Slug != "shop" || p.Settings.Retries != 2 || p.Settings.RunTimeoutSeconds != 3600 || *p.Settings.TagPattern != "^[a-z-]+$" {
					t.Fatalf("created: %s", r.Body)
				}
			}
		})
	}
	// List: members see the workspace's projects, an outsider nothing; paging and filters.
	l, _ := w.viewer.ListProjectsWithResponse(ctx, &serverclient.ListProjectsParams{Limit: ptr(1)})
	if l.JSON200 == nil || len(l.JSON200.Items) != 1 || l.JSON200.Items[0].Slug != "api" || l.JSON200.NextCursor == nil {
		t.Fatalf("list page 1: %s", l.Body)
	}
	l, _ = w.viewer.ListProjectsWithResponse(ctx, &serverclient.ListProjectsParams{Limit: ptr(1), Cursor: l.JSON200.NextCursor})
	if l.JSON200 == nil || len(l.JSON200.Items) != 1 || l.JSON200.Items[0].Slug != "web" || l.JSON200.NextCursor != nil {
		t.Fatalf("list page 2: %s", l.Body)
	}
	if l, _ = w.viewer.ListProjectsWithResponse(ctx, &serverclient.ListProjectsParams{Q: ptr("we")}); len(l.JSON200.Items) != 1 {
		t.Fatalf("query: %s", l.Body)
	}
	if l, _ = w.outsider.ListProjectsWithResponse(ctx, nil); len(l.JSON200.Items) != 0 {
		t.Fatalf("outsider sees projects: %s", l.Body)
	}
	if l, _ = w.viewer.ListProjectsWithResponse(ctx, &serverclient.ListProjectsParams{Cursor: ptr("%%%")}); l.StatusCode() != 400 {
		t.Fatalf("bad cursor: %d", l.StatusCode())
	}
	// Get and update.
	if g, _ := w.viewer.GetProjectWithResponse(ctx, "web"); g.JSON200 == nil || g.JSON200.Name != "Web" {
		t.Fatalf("get: %s", g.Body)
	}
	for _, tc := range []struct {
		name string
		b    *apptest.Browser
		slug string
		want int
		code string
	}{
		{"outsider", w.outsider, "web", 404, "not_found"},
		{"missing", w.admin, "nope", 404, "not_found"},
	} {
		g, _ := tc.b.GetProjectWithResponse(ctx, tc.slug)
		expect(t, "get "+tc.name, g.StatusCode(), g.Body, tc.want, tc.code)
	}
	up := serverclient.UpdateProjectJSONRequestBody{Name: "Web shop", Description: ptr("the shop"), Settings: &serverclient.ProjectSettingsInput{RunTimeoutSeconds: ptr(60)}}
	u, _ := w.editor.UpdateProjectWithResponse(ctx, "web", up)
	expect(t, "editor updates", u.StatusCode(), u.Body, 403, "forbidden")
	u, _ = w.admin.UpdateProjectWithResponse(ctx, "web", up)
	if u.JSON200 == nil || u.JSON200.Name != "Web shop" || *u.JSON200.Description != "the shop" || u.JSON200.Settings.RunTimeoutSeconds != 60 {
		t.Fatalf("update: %s", u.Body)
	}
	u, _ = w.admin.UpdateProjectWithResponse(ctx, "nope", up)
	expect(t, "update missing", u.StatusCode(), u.Body, 404, "not_found")
	// The workspace counts the projects.
	if ws, _ := w.admin.GetWorkspaceWithResponse(ctx, "shop"); ws.JSON200 == nil || ws.JSON200.ProjectCount != 2 {
		t.Fatalf("workspace count: %s", ws.Body)
	}
}

func TestEnvironmentsSecretsAreWriteOnlyAndEncrypted(t *testing.T) {
	w := newProjectWorld(t)
	ctx := w.ctx
	const secret = "s3cr3t-value-never-shown"
	body := serverclient.CreateEnvironmentJSONRequestBody{Name: "staging", BaseUrl: ptr("https://staging.example.com"), Variables: &[]serverclient.EnvVariableInput{
		{Name: "USER", Value: ptr("ada")}, {Name: "API_KEY", Value: ptr(secret), Secret: ptr(true)}}}
	c, _ := w.viewer.CreateEnvironmentWithResponse(ctx, "web", body)
	expect(t, "viewer creates", c.StatusCode(), c.Body, 403, "forbidden")
	c, _ = w.editor.CreateEnvironmentWithResponse(ctx, "web", body)
	if c.StatusCode() != 201 || bytes.Contains(c.Body, []byte(secret)) {
		t.Fatalf("create: %d %s", c.StatusCode(), c.Body)
	}
	c, _ = w.editor.CreateEnvironmentWithResponse(ctx, "web", body)
	expect(t, "duplicate", c.StatusCode(), c.Body, 409, "conflict")
	dup := serverclient.CreateEnvironmentJSONRequestBody{Name: "dup", Variables: &[]serverclient.EnvVariableInput{{Name: "A", Value: ptr("1")}, {Name: "A", Value: ptr("2")}}}
	c, _ = w.editor.CreateEnvironmentWithResponse(ctx, "web", dup)
	expect(t, "duplicate variable", c.StatusCode(), c.Body, 400, "validation_failed")
	noValue := serverclient.CreateEnvironmentJSONRequestBody{Name: "novalue", Variables: &[]serverclient.EnvVariableInput{{Name: "A"}}}
	c, _ = w.editor.CreateEnvironmentWithResponse(ctx, "web", noValue)
	expect(t, "variable without value", c.StatusCode(), c.Body, 400, "validation_failed")
	status, raw, _ := w.s.Do(t, "POST", "/api/projects/web/envs", "application/json", []byte(`{"name":"x","variables":[{"name":"1bad","value":"v"}]}`))
	expect(t, "bad variable name", status, raw, 400, "validation_failed")

	g, _ := w.viewer.GetEnvironmentWithResponse(ctx, "web", "staging")
	if g.JSON200 == nil || bytes.Contains(g.Body, []byte(secret)) {
		t.Fatalf("get: %s", g.Body)
	}
	vars := map[string]serverclient.EnvVariable{}
	for _, v := range g.JSON200.Variables {
		vars[v.Name] = v
	}
	if v := vars["API_KEY"]; !v.Secret || v.Value != nil {
		t.Fatalf("secret not masked: %+v", v)
	}
	if v := vars["USER"]; v.Secret || v.Value == nil || *v.Value != "ada" {
		t.Fatalf("plain variable: %+v", v)
	}
	// At rest the secret is ciphertext that opens with the server key.
	var stored string
	if err := w.s.App.Store.Pool.QueryRow(ctx, `SELECT variables::text FROM environments WHERE name = 'staging'`).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(stored, secret) {
		t.Fatal("the secret is stored in the clear")
	}
	// Update: an absent secret value keeps the stored one; a plain variable is replaced.
	upd := serverclient.UpdateEnvironmentJSONRequestBody{BaseUrl: ptr("https://staging2.example.com"), Variables: &[]serverclient.EnvVariableInput{
		{Name: "USER", Value: ptr("grace")}, {Name: "API_KEY", Secret: ptr(true)}}}
	u, _ := w.editor.UpdateEnvironmentWithResponse(ctx, "web", "staging", upd)
	if u.JSON200 == nil || *u.JSON200.BaseUrl != "https://staging2.example.com" || len(u.JSON200.Variables) != 2 {
		t.Fatalf("update: %s", u.Body)
	}
	var after string
	_ = w.s.App.Store.Pool.QueryRow(ctx, `SELECT variables::text FROM environments WHERE name = 'staging'`).Scan(&after)
	if !strings.Contains(after, "grace") || strings.Contains(after, secret) {
		t.Fatalf("update stored %s", after)
	}
	u, _ = w.editor.UpdateEnvironmentWithResponse(ctx, "web", "missing", upd)
	expect(t, "update missing", u.StatusCode(), u.Body, 404, "not_found")
	// List, delete.
	if l, _ := w.viewer.ListEnvironmentsWithResponse(ctx, "web", nil); l.JSON200 == nil || len(l.JSON200.Items) != 1 {
		t.Fatalf("list: %s", l.Body)
	}
	if l, _ := w.outsider.ListEnvironmentsWithResponse(ctx, "web", nil); l.StatusCode() != 404 {
		t.Fatalf("outsider list: %d", l.StatusCode())
	}
	d, _ := w.viewer.DeleteEnvironmentWithResponse(ctx, "web", "staging")
	expect(t, "viewer deletes", d.StatusCode(), d.Body, 403, "forbidden")
	d, _ = w.editor.DeleteEnvironmentWithResponse(ctx, "web", "staging")
	expect(t, "delete", d.StatusCode(), d.Body, 204, "")
	d, _ = w.editor.DeleteEnvironmentWithResponse(ctx, "web", "staging")
	expect(t, "delete again", d.StatusCode(), d.Body, 404, "not_found")
	if g, _ := w.viewer.GetEnvironmentWithResponse(ctx, "web", "staging"); g.StatusCode() != 404 {
		t.Fatalf("get deleted: %d", g.StatusCode())
	}
	if strings.Contains(w.s.Logs(), secret) {
		t.Fatal("the secret reached the log")
	}
}

func multipartBody(t *testing.T, filename string, content []byte, fields ...string) (string, *bytes.Buffer) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for i := 0; i+1 < len(fields); i += 2 {
		_ = mw.WriteField(fields[i], fields[i+1])
	}
	fw, _ := mw.CreateFormFile("file", filename)
	_, _ = fw.Write(content)
	_ = mw.Close()
	return mw.FormDataContentType(), &buf
}

func TestDatasets(t *testing.T) {
	w := newProjectWorld(t)
	ctx := w.ctx
	csv := "email,age,score,active,born,seen\nada@example.com,36,1.5,true,1815-12-10,2024-01-02T03:04:05Z\ngrace@example.com,45,2,false,1906-12-09,\n"
	ct, body := multipartBody(t, "users.csv", []byte(csv))
	up, _ := w.editor.UploadDatasetWithBodyWithResponse(ctx, "web", ct, body)
	if up.JSON201 == nil || up.JSON201.Name != "users" || up.JSON201.Format != "csv" || up.JSON201.RowCount != 2 || len(up.JSON201.Sha256) != 64 {
		t.Fatalf("upload: %d %s", up.StatusCode(), up.Body)
	}
	types := map[string]serverclient.ColumnType{}
	for _, c := range up.JSON201.Columns {
		types[c.Name] = c.Type
	}
	want := map[string]serverclient.ColumnType{"email": "string", "age": "integer", "score": "number", "active": "boolean", "born": "date", "seen": "datetime"}
	for k, v := range want {
		if types[k] != v {
			t.Fatalf("column %s: %s, want %s (%s)", k, types[k], v, up.Body)
		}
	}
	// JSON, with an explicit name.
	ct, body = multipartBody(t, "data.json", []byte(`[{"sku":"A1","price":9.5,"stock":3},{"sku":"B2","price":10,"stock":null,"tag":"new"}]`), "name", "products")
	js, _ := w.editor.UploadDatasetWithBodyWithResponse(ctx, "web", ct, body)
	if js.JSON201 == nil || js.JSON201.Format != "json" || js.JSON201.RowCount != 2 || len(js.JSON201.Columns) != 4 {
		t.Fatalf("json upload: %d %s", js.StatusCode(), js.Body)
	}
	for _, tc := range []struct {
		name     string
		b        *apptest.Browser
		filename string
		content  string
		fields   []string
		want     int
		code     string
	}{
		{"duplicate", w.editor, "users.csv", csv, nil, 409, "conflict"},
		{"viewer", w.viewer, "other.csv", csv, nil, 403, "forbidden"},
		{"outsider", w.outsider, "other.csv", csv, nil, 404, "not_found"},
		{"bad csv", w.editor, "bad.csv", "a,b\n1,2,3\n", nil, 400, "validation_failed"},
		{"bad json", w.editor, "bad.json", `[{"a":{"nested":1}}]`, nil, 400, "validation_failed"},
		{"bad name", w.editor, "x.csv", csv, []string{"name", "-bad-"}, 400, "validation_failed"},
		{"bad format", w.editor, "x.csv", csv, []string{"format", "xml"}, 400, "validation_failed"},
		{"too large", w.editor, "big.csv", "a\n" + strings.Repeat("x\n", 600<<10), nil, 413, "payload_too_large"},
	} {
		t.Run("upload/"+tc.name, func(t *testing.T) {
			ct, body := multipartBody(t, tc.filename, []byte(tc.content), tc.fields...)
			r, err := tc.b.UploadDatasetWithBodyWithResponse(ctx, "web", ct, body)
			if err != nil {
				t.Fatal(err)
			}
			expect(t, tc.name, r.StatusCode(), r.Body, tc.want, tc.code)
		})
	}
	// Preview: typed cells of the first rows.
	pv, _ := w.viewer.PreviewDatasetWithResponse(ctx, "web", "users", &serverclient.PreviewDatasetParams{Rows: ptr(1)})
	if pv.JSON200 == nil || pv.JSON200.TotalRows != 2 || len(pv.JSON200.Rows) != 1 {
		t.Fatalf("preview: %s", pv.Body)
	}
	if got, _ := json.Marshal(pv.JSON200.Rows[0]); string(got) != `["ada@example.com",36,1.5,true,"1815-12-10","2024-01-02T03:04:05Z"]` {
		t.Fatalf("preview row: %s", got)
	}
	pv, _ = w.viewer.PreviewDatasetWithResponse(ctx, "web", "nope", nil)
	expect(t, "preview missing", pv.StatusCode(), pv.Body, 404, "not_found")
	// Replace: the name part must agree.
	ct, body = multipartBody(t, "users.csv", []byte("email\nx@example.com\n"), "name", "other")
	rp, _ := w.editor.ReplaceDatasetWithBodyWithResponse(ctx, "web", "users", ct, body)
	expect(t, "replace with another name", rp.StatusCode(), rp.Body, 400, "validation_failed")
	ct, body = multipartBody(t, "users.csv", []byte("email\nx@example.com\n"))
	rp, _ = w.editor.ReplaceDatasetWithBodyWithResponse(ctx, "web", "users", ct, body)
	if rp.JSON200 == nil || rp.JSON200.RowCount != 1 || rp.JSON200.Sha256 == up.JSON201.Sha256 {
		t.Fatalf("replace: %s", rp.Body)
	}
	ct, body = multipartBody(t, "users.csv", []byte("email\n"))
	rp, _ = w.editor.ReplaceDatasetWithBodyWithResponse(ctx, "web", "missing", ct, body)
	expect(t, "replace missing", rp.StatusCode(), rp.Body, 404, "not_found")
	// The content lives in the blob store under the data dir, content-addressed.
	if g, _ := w.viewer.GetDatasetWithResponse(ctx, "web", "users"); g.JSON200 == nil || g.JSON200.SizeBytes != int64(len("email\nx@example.com\n")) {
		t.Fatalf("get: %s", g.Body)
	}
	if l, _ := w.viewer.ListDatasetsWithResponse(ctx, "web", &serverclient.ListDatasetsParams{Limit: ptr(1)}); l.JSON200 == nil || len(l.JSON200.Items) != 1 || l.JSON200.NextCursor == nil {
		t.Fatalf("list: %s", l.Body)
	}
	d, _ := w.editor.DeleteDatasetWithResponse(ctx, "web", "users")
	expect(t, "delete", d.StatusCode(), d.Body, 204, "")
	d, _ = w.editor.DeleteDatasetWithResponse(ctx, "web", "users")
	expect(t, "delete again", d.StatusCode(), d.Body, 404, "not_found")
	g, _ := w.viewer.GetDatasetWithResponse(ctx, "web", "users")
	expect(t, "get deleted", g.StatusCode(), g.Body, 404, "not_found")
}

func TestUsersPoolAndLeases(t *testing.T) {
	w := newProjectWorld(t)
	ctx := w.ctx
	const password = "pool-password-123"
	var ids []uuid.UUID
	for _, name := range []string{"alice", "bob"} {
		c, _ := w.editor.CreatePoolAccountWithResponse(ctx, "web", serverclient.CreatePoolAccountJSONRequestBody{Username: name, Password: password,
			Tags: &[]string{"buyer"}, Attributes: &map[string]string{"country": "NL"}})
		if c.JSON201 == nil || !c.JSON201.HasPassword || bytes.Contains(c.Body, []byte(password)) || c.JSON201.Lease != nil {
			t.Fatalf("create %s: %d %s", name, c.StatusCode(), c.Body)
		}
		ids = append(ids, c.JSON201.Id)
	}
	c, _ := w.editor.CreatePoolAccountWithResponse(ctx, "web", serverclient.CreatePoolAccountJSONRequestBody{Username: "alice", Password: "x"})
	expect(t, "duplicate", c.StatusCode(), c.Body, 409, "conflict")
	c, _ = w.viewer.CreatePoolAccountWithResponse(ctx, "web", serverclient.CreatePoolAccountJSONRequestBody{Username: "carol", Password: "x"})
	expect(t, "viewer", c.StatusCode(), c.Body, 403, "forbidden")
	status, raw, _ := w.s.Do(t, "POST", "/api/projects/web/users-pool", "application/json", []byte(`{"username":"dave"}`))
	expect(t, "missing password", status, raw, 400, "validation_failed")

	var stored []byte
	_ = w.s.App.Store.Pool.QueryRow(ctx, `SELECT password_enc FROM pool_accounts WHERE username = 'alice'`).Scan(&stored)
	if len(stored) == 0 || bytes.Contains(stored, []byte(password)) {
		t.Fatal("the password is not encrypted at rest")
	}
	// Leases: each account goes to one scenario at a time; concurrent leases never share one.
	key, err := secrets.LoadOrCreate("", w.s.DataDir)
	if err != nil {
		t.Fatal(err)
	}
	box, _ := secrets.New(key)
	var projectID uuid.UUID
	_ = w.s.App.Store.Pool.QueryRow(ctx, `SELECT id FROM projects WHERE slug = 'web'`).Scan(&projectID)
	run := uuid.New()
	var mu sync.Mutex
	got := map[uuid.UUID]int{}
	var none int
	var wg sync.WaitGroup
	for i := 0; i < 6; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a, err := pool.Lease(ctx, w.s.App.Store.Queries, box, pool.Request{ProjectID: projectID, RunID: run, Tags: []string{"buyer"}, TTL: time.Minute})
			mu.Lock()
			defer mu.Unlock()
			if err == pool.ErrNoneFree {
				none++
				return
			}
			if err != nil {
				t.Error(err)
				return
			}
			if a.Password != password || a.Attributes["country"] != "NL" {
				t.Errorf("leased %+v", a.Username)
			}
			got[a.ID]++
		}()
	}
	wg.Wait()
	if len(got) != 2 || none != 4 {
		t.Fatalf("leases: %v, %d refused", got, none)
	}
	// A leased account shows its lease and cannot be deleted.
	g, _ := w.viewer.GetPoolAccountWithResponse(ctx, "web", ids[0])
	if g.JSON200 == nil || g.JSON200.Lease == nil || g.JSON200.Lease.RunId != run {
		t.Fatalf("lease not shown: %s", g.Body)
	}
	d, _ := w.editor.DeletePoolAccountWithResponse(ctx, "web", ids[0])
	expect(t, "delete leased", d.StatusCode(), d.Body, 409, "conflict")
	// Releasing the run frees both; an expired lease (a dead holder) is free again.
	if n, err := pool.ReleaseRun(ctx, w.s.App.Store.Queries, run); err != nil || n != 2 {
		t.Fatalf("release run: %d %v", n, err)
	}
	dead := uuid.New()
	if _, err := pool.Lease(ctx, w.s.App.Store.Queries, box, pool.Request{ProjectID: projectID, RunID: dead, TTL: time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond)
	if _, err := pool.Lease(ctx, w.s.App.Store.Queries, box, pool.Request{ProjectID: projectID, RunID: uuid.New(), TTL: time.Minute}); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Lease(ctx, w.s.App.Store.Queries, box, pool.Request{ProjectID: projectID, RunID: uuid.New(), TTL: time.Minute}); err != nil {
		t.Fatalf("the expired lease was not reclaimed: %v", err)
	}
	if _, err := pool.Lease(ctx, w.s.App.Store.Queries, box, pool.Request{ProjectID: projectID, RunID: uuid.New(), Tags: []string{"admin"}}); err != pool.ErrNoneFree {
		t.Fatalf("tag filter: %v", err)
	}
	// Update keeps the password when absent; list filters by tag.
	u, _ := w.editor.UpdatePoolAccountWithResponse(ctx, "web", ids[1], serverclient.UpdatePoolAccountJSONRequestBody{Username: "bobby", Tags: &[]string{"admin"}})
	if u.JSON200 == nil || u.JSON200.Username != "bobby" || !u.JSON200.HasPassword {
		t.Fatalf("update: %s", u.Body)
	}
	u, _ = w.editor.UpdatePoolAccountWithResponse(ctx, "web", ids[1], serverclient.UpdatePoolAccountJSONRequestBody{Username: "alice"})
	expect(t, "rename onto another", u.StatusCode(), u.Body, 409, "conflict")
	u, _ = w.editor.UpdatePoolAccountWithResponse(ctx, "web", uuid.New(), serverclient.UpdatePoolAccountJSONRequestBody{Username: "x"})
	expect(t, "update missing", u.StatusCode(), u.Body, 404, "not_found")
	if l, _ := w.viewer.ListPoolAccountsWithResponse(ctx, "web", &serverclient.ListPoolAccountsParams{Tag: ptr("admin")}); l.JSON200 == nil || len(l.JSON200.Items) != 1 {
		t.Fatalf("list by tag: %s", l.Body)
	}
	if g, _ := w.viewer.GetPoolAccountWithResponse(ctx, "web", uuid.New()); g.StatusCode() != 404 {
		t.Fatalf("get missing: %d", g.StatusCode())
	}
	_, _ = w.s.App.Store.Pool.Exec(ctx, `UPDATE pool_accounts SET lease_run_id = NULL, lease_expires_at = NULL`)
	d, _ = w.editor.DeletePoolAccountWithResponse(ctx, "web", ids[0])
	expect(t, "delete", d.StatusCode(), d.Body, 204, "")
	if strings.Contains(w.s.Logs(), password) {
		t.Fatal("a pool password reached the log")
	}
}

func TestProcesses(t *testing.T) {
	w := newProjectWorld(t)
	ctx := w.ctx
	content := "Given I open \"/login\"\nWhen I fill \"#user\" with \"<username>\"\nAnd I fill \"#password\" with \"<password>\"\nAnd I click \"Sign in\"\n"
	c, _ := w.editor.CreateProcessWithResponse(ctx, "web", serverclient.CreateProcessJSONRequestBody{Name: "sign-in", Content: content, Description: ptr("signs in")})
	if c.JSON201 == nil || strings.Join(c.JSON201.Parameters, ",") != "password,username" || c.JSON201.UsageCount != 0 {
		t.Fatalf("create: %d %s", c.StatusCode(), c.Body)
	}
	for _, tc := range []struct {
		name    string
		b       *apptest.Browser
		process string
		content string
		want    int
		code    string
	}{
		{"duplicate", w.editor, "sign-in", content, 409, "conflict"},
		{"viewer", w.viewer, "other", content, 403, "forbidden"},
		{"not steps", w.editor, "other", "Feature: nested\n", 422, "unprocessable"},
		{"syntax error", w.editor, "other", "Given a\n| x |\n| y | z |\n", 422, "unprocessable"},
		{"bad name", w.editor, "-x-", content, 400, "validation_failed"},
	} {
		r, _ := tc.b.CreateProcessWithResponse(ctx, "web", serverclient.CreateProcessJSONRequestBody{Name: tc.process, Content: tc.content})
		expect(t, "create "+tc.name, r.StatusCode(), r.Body, tc.want, tc.code)
	}
	// A feature calling the process counts as a use; a used process cannot be deleted.
	feature := "Feature: Checkout\n\n  Scenario: Pay\n    Given I run the process \"sign-in\"\n    Then I should see \"Welcome\"\n"
	p, _ := w.editor.PutFeatureWithResponse(ctx, "web", "checkout.feature", nil, serverclient.PutFeatureJSONRequestBody{Content: feature})
	if p.StatusCode() != 201 {
		t.Fatalf("put feature: %s", p.Body)
	}
	g, _ := w.viewer.GetProcessWithResponse(ctx, "web", "sign-in")
	if g.JSON200 == nil || g.JSON200.UsageCount != 1 || *g.JSON200.Description != "signs in" {
		t.Fatalf("get: %s", g.Body)
	}
	d, _ := w.editor.DeleteProcessWithResponse(ctx, "web", "sign-in")
	expect(t, "delete used", d.StatusCode(), d.Body, 409, "conflict")
	u, _ := w.editor.UpdateProcessWithResponse(ctx, "web", "sign-in", serverclient.UpdateProcessJSONRequestBody{Content: "Given I open \"/\"\n"})
	if u.JSON200 == nil || len(u.JSON200.Parameters) != 0 || u.JSON200.UsageCount != 1 {
		t.Fatalf("update: %s", u.Body)
	}
	u, _ = w.editor.UpdateProcessWithResponse(ctx, "web", "sign-in", serverclient.UpdateProcessJSONRequestBody{Content: "Scenario: x\n"})
	expect(t, "update not steps", u.StatusCode(), u.Body, 422, "unprocessable")
	u, _ = w.editor.UpdateProcessWithResponse(ctx, "web", "missing", serverclient.UpdateProcessJSONRequestBody{Content: "Given I open \"/\"\n"})
	expect(t, "update missing", u.StatusCode(), u.Body, 404, "not_found")
	if l, _ := w.viewer.ListProcessesWithResponse(ctx, "web", nil); l.JSON200 == nil || len(l.JSON200.Items) != 1 || l.JSON200.Items[0].UsageCount != 1 {
		t.Fatalf("list: %s", l.Body)
	}
	// Running a process queues a run of just that process.
	r, _ := w.editor.RunProcessWithResponse(ctx, "web", "sign-in", serverclient.RunProcessJSONRequestBody{Label: ptr("smoke")})
	if r.StatusCode() != http.StatusAccepted || r.JSON202 == nil || r.JSON202.Project != "web" || r.HTTPResponse.Header.Get("Location") != r.JSON202.Url {
		t.Fatalf("run process: %d %s", r.StatusCode(), r.Body)
	}
	if g, _ := w.viewer.GetRunWithResponse(ctx, r.JSON202.Id); g.StatusCode() != http.StatusOK {
		t.Fatalf("the process run does not exist: %d %s", g.StatusCode(), g.Body)
	}
	r, _ = w.viewer.RunProcessWithResponse(ctx, "web", "sign-in", serverclient.RunProcessJSONRequestBody{})
	expect(t, "viewer runs", r.StatusCode(), r.Body, 403, "forbidden")
	r, _ = w.editor.RunProcessWithResponse(ctx, "web", "missing", serverclient.RunProcessJSONRequestBody{})
	expect(t, "run missing process", r.StatusCode(), r.Body, 404, "not_found")
	r, _ = w.editor.RunProcessWithResponse(ctx, "web", "sign-in", serverclient.RunProcessJSONRequestBody{Environment: ptr("nowhere")})
	if r.StatusCode() < 400 || r.StatusCode() >= 500 {
		t.Fatalf("run in a missing environment: %d %s", r.StatusCode(), r.Body)
	}
	if dl, _ := w.editor.DeleteFeatureWithResponse(ctx, "web", "checkout.feature", nil); dl.StatusCode() != 204 {
		t.Fatalf("delete feature: %s", dl.Body)
	}
	d, _ = w.editor.DeleteProcessWithResponse(ctx, "web", "sign-in")
	expect(t, "delete", d.StatusCode(), d.Body, 204, "")
	d, _ = w.editor.DeleteProcessWithResponse(ctx, "web", "sign-in")
	expect(t, "delete again", d.StatusCode(), d.Body, 404, "not_found")
}

// gitRepo makes a local repository with files on branch main and returns its path and a commit function.
func gitRepo(t *testing.T, files map[string]string) (string, func(map[string]string, ...string)) {
	t.Helper()
	dir := t.TempDir()
	repo, err := git.PlainInitWithOptions(dir, &git.PlainInitOptions{InitOptions: git.InitOptions{DefaultBranch: "refs/heads/main"}})
	if err != nil {
		t.Fatal(err)
	}
	wt, _ := repo.Worktree()
	commit := func(files map[string]string, remove ...string) {
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
		for _, name := range remove {
			if _, err := wt.Remove(name); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := wt.Commit("change", &git.CommitOptions{Author: &object.Signature{Name: "t", Email: "t@example.com", When: time.Now()}}); err != nil {
			t.Fatal(err)
		}
	}
	commit(files)
	return dir, commit
}

func TestGitIntegrationSync(t *testing.T) {
	w := newProjectWorld(t)
	ctx := w.ctx
	login := "Feature: Login\n\n  Scenario: Sign in\n    Given I open \"/login\"\n"
	dir, commit := gitRepo(t, map[string]string{"tests/auth/login.feature": login, "tests/cart.feature": "Feature: Cart\n", "README.md": "x", "other/x.feature": "Feature: X\n"})
	put := serverclient.PutIntegrationJSONRequestBody{Git: &serverclient.GitConfigInput{Url: dir, Directory: ptr("tests"),
		Auth: &struct {
			Method   serverclient.GitConfigInputAuthMethod `json:"method"`
			Secret   *string                               `json:"secret,omitempty"`
			Username *string                               `json:"username,omitempty"`
		}{Method: "token", Secret: ptr("tok-123-secret")}}}
	r, _ := w.editor.PutIntegrationWithResponse(ctx, "web", "git", put)
	expect(t, "editor configures", r.StatusCode(), r.Body, 403, "forbidden")
	r, _ = w.admin.PutIntegrationWithResponse(ctx, "web", "git", put)
	if r.JSON201 == nil || r.JSON201.Git == nil || !r.JSON201.Git.Auth.HasSecret || r.JSON201.Git.Branch != "main" || bytes.Contains(r.Body, []byte("tok-123-secret")) {
		t.Fatalf("put: %d %s", r.StatusCode(), r.Body)
	}
	// An absent secret keeps the stored one; method none drops it.
	put.Git.Auth.Secret = nil
	r, _ = w.admin.PutIntegrationWithResponse(ctx, "web", "git", put)
	if r.JSON200 == nil || !r.JSON200.Git.Auth.HasSecret {
		t.Fatalf("replace: %d %s", r.StatusCode(), r.Body)
	}
	put.Git.Auth.Method = "none"
	r, _ = w.admin.PutIntegrationWithResponse(ctx, "web", "git", put)
	if r.JSON200 == nil || r.JSON200.Git.Auth.HasSecret {
		t.Fatalf("method none: %s", r.Body)
	}
	for _, tc := range []struct {
		name string
		kind serverclient.IntegrationKindParam
		body serverclient.PutIntegrationJSONRequestBody
	}{
		{"wrong member", "git", serverclient.PutIntegrationJSONRequestBody{Webhook: &serverclient.WebhookConfigInput{Url: "https://x.example.com", Events: []serverclient.WebhookEvent{"run.failed"}}}},
		{"bad url", "git", serverclient.PutIntegrationJSONRequestBody{Git: &serverclient.GitConfigInput{Url: "ftp://x"}}},
		{"webhook not http", "webhook", serverclient.PutIntegrationJSONRequestBody{Webhook: &serverclient.WebhookConfigInput{Url: "file:///etc/passwd", Events: []serverclient.WebhookEvent{"run.failed"}}}},
	} {
		r, _ := w.admin.PutIntegrationWithResponse(ctx, "web", tc.kind, tc.body)
		expect(t, tc.name, r.StatusCode(), r.Body, 400, "validation_failed")
	}
	// Test reports what it met.
	tr, _ := w.editor.TestIntegrationWithResponse(ctx, "web", "git")
	if tr.JSON200 == nil || !tr.JSON200.Ok {
		t.Fatalf("test: %s", tr.Body)
	}
	bad := serverclient.PutIntegrationJSONRequestBody{Git: &serverclient.GitConfigInput{Url: dir, Branch: ptr("nope"), Directory: ptr("tests")}}
	_, _ = w.admin.PutIntegrationWithResponse(ctx, "web", "git", bad)
	tr, _ = w.editor.TestIntegrationWithResponse(ctx, "web", "git")
	if tr.JSON200 == nil || tr.JSON200.Ok || tr.JSON200.Error == nil || !strings.Contains(*tr.JSON200.Error, "nope") {
		t.Fatalf("failing test: %s", tr.Body)
	}
	_, _ = w.admin.PutIntegrationWithResponse(ctx, "web", "git", serverclient.PutIntegrationJSONRequestBody{Git: &serverclient.GitConfigInput{Url: dir, Directory: ptr("tests")}})

	// A local feature is left alone; a dry run changes nothing.
	_, _ = w.editor.PutFeatureWithResponse(ctx, "web", "local.feature", nil, serverclient.PutFeatureJSONRequestBody{Content: "Feature: Local\n\n  Scenario: s\n    Given I open \"/\"\n"})
	sr, _ := w.editor.SyncIntegrationWithResponse(ctx, "web", "git", &serverclient.SyncIntegrationParams{DryRun: ptr(true)})
	if sr.JSON200 == nil || !sr.JSON200.DryRun || len(sr.JSON200.Changes) != 2 {
		t.Fatalf("dry run: %s", sr.Body)
	}
	if l, _ := w.viewer.ListFeaturesWithResponse(ctx, "web", nil); len(l.JSON200.Items) != 1 {
		t.Fatalf("dry run wrote: %s", l.Body)
	}
	sr, _ = w.viewer.SyncIntegrationWithResponse(ctx, "web", "git", nil)
	expect(t, "viewer syncs", sr.StatusCode(), sr.Body, 403, "forbidden")
	sr, _ = w.editor.SyncIntegrationWithResponse(ctx, "web", "git", nil)
	if sr.JSON200 == nil || sr.JSON200.Commit == nil || changes(sr.JSON200.Changes) != "added auth/login.feature, added cart.feature" {
		t.Fatalf("sync: %s", sr.Body)
	}
	if g, _ := w.viewer.GetFeatureWithResponse(ctx, "web", "auth/login.feature", nil); g.JSON200 == nil || g.JSON200.Content != login || g.JSON200.Module != "auth" {
		t.Fatalf("synced feature: %s", g.Body)
	}
	// The repository changes: modified, deleted; a local edit is overwritten.
	_, _ = w.editor.PutFeatureWithResponse(ctx, "web", "auth/login.feature", &serverclient.PutFeatureParams{IfMatch: ptr(etagOf(t, w, "auth/login.feature"))},
		serverclient.PutFeatureJSONRequestBody{Content: login + "    Then I should see \"local\"\n"})
	commit(map[string]string{"tests/auth/login.feature": login + "    Then I should see \"Hi\"\n"}, "tests/cart.feature")
	sr, _ = w.editor.SyncIntegrationWithResponse(ctx, "web", "git", nil)
	if sr.JSON200 == nil || changes(sr.JSON200.Changes) != "modified auth/login.feature, deleted cart.feature" {
		t.Fatalf("second sync: %s", sr.Body)
	}
	sr, _ = w.editor.SyncIntegrationWithResponse(ctx, "web", "git", nil)
	if sr.JSON200 == nil || len(sr.JSON200.Changes) != 0 {
		t.Fatalf("idempotent sync: %s", sr.Body)
	}
	if l, _ := w.viewer.ListFeaturesWithResponse(ctx, "web", nil); len(l.JSON200.Items) != 2 {
		t.Fatalf("after sync: %s", l.Body)
	}
	g, _ := w.viewer.GetIntegrationWithResponse(ctx, "web", "git")
	if g.JSON200 == nil || g.JSON200.LastSync == nil || g.JSON200.LastTest == nil {
		t.Fatalf("get: %s", g.Body)
	}
	// Webhook cannot sync; missing integrations are 404; delete.
	sr, _ = w.editor.SyncIntegrationWithResponse(ctx, "web", "webhook", nil)
	expect(t, "sync webhook", sr.StatusCode(), sr.Body, 409, "conflict")
	tr, _ = w.editor.TestIntegrationWithResponse(ctx, "web", "webhook")
	expect(t, "test missing", tr.StatusCode(), tr.Body, 404, "not_found")
	if gi, _ := w.viewer.GetIntegrationWithResponse(ctx, "web", "webhook"); gi.StatusCode() != 404 {
		t.Fatalf("get missing: %d", gi.StatusCode())
	}
	d, _ := w.editor.DeleteIntegrationWithResponse(ctx, "web", "git")
	expect(t, "editor deletes", d.StatusCode(), d.Body, 403, "forbidden")
	d, _ = w.admin.DeleteIntegrationWithResponse(ctx, "web", "git")
	expect(t, "delete", d.StatusCode(), d.Body, 204, "")
	d, _ = w.admin.DeleteIntegrationWithResponse(ctx, "web", "git")
	expect(t, "delete again", d.StatusCode(), d.Body, 404, "not_found")
	if strings.Contains(w.s.Logs(), "tok-123-secret") {
		t.Fatal("the git token reached the log")
	}
}

func changes(cs []serverclient.FileChange) string {
	var out []string
	for _, c := range cs {
		out = append(out, string(c.Change)+" "+c.Path)
	}
	return strings.Join(out, ", ")
}

func etagOf(t *testing.T, w *projectWorld, path string) string {
	t.Helper()
	g, _ := w.viewer.GetFeatureWithResponse(w.ctx, "web", path, nil)
	if g.JSON200 == nil {
		t.Fatalf("get %s: %s", path, g.Body)
	}
	return g.HTTPResponse.Header.Get("ETag")
}

func TestWebhookIntegration(t *testing.T) {
	w := newProjectWorld(t)
	ctx := w.ctx
	type delivery struct {
		event, signature string
		body             []byte
	}
	var mu sync.Mutex
	var got []delivery
	fail := false
	hook := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		defer mu.Unlock()
		got = append(got, delivery{r.Header.Get(integrations.HeaderEvent), r.Header.Get(integrations.HeaderSignature), b})
		if fail {
			rw.WriteHeader(http.StatusInternalServerError)
		}
	}))
	defer hook.Close()
	const secret = "hmac-secret-456"
	r, _ := w.admin.PutIntegrationWithResponse(ctx, "web", "webhook", serverclient.PutIntegrationJSONRequestBody{Webhook: &serverclient.WebhookConfigInput{
		Url: hook.URL, Events: []serverclient.WebhookEvent{"run.failed", "run.finished"}, Secret: ptr(secret)}})
	if r.JSON201 == nil || !r.JSON201.Webhook.HasSecret || bytes.Contains(r.Body, []byte(secret)) {
		t.Fatalf("put: %s", r.Body)
	}
	tr, _ := w.editor.TestIntegrationWithResponse(ctx, "web", "webhook")
	if tr.JSON200 == nil || !tr.JSON200.Ok || len(got) != 1 || got[0].event != "ping" || got[0].signature != integrations.Sign(secret, got[0].body) {
		t.Fatalf("test: %s %+v", tr.Body, got)
	}
	fail = true
	tr, _ = w.editor.TestIntegrationWithResponse(ctx, "web", "webhook")
	if tr.JSON200 == nil || tr.JSON200.Ok || tr.JSON200.Error == nil || !strings.Contains(*tr.JSON200.Error, "500") {
		t.Fatalf("failing test: %s", tr.Body)
	}
	fail = false
	// Run outcomes go to the subscribed events (what the runner calls when a run ends).
	key, _ := secrets.LoadOrCreate("", w.s.DataDir)
	box, _ := secrets.New(key)
	var projectID uuid.UUID
	_ = w.s.App.Store.Pool.QueryRow(ctx, `SELECT id FROM projects WHERE slug = 'web'`).Scan(&projectID)
	got = nil
	err := deliverOutcome(ctx, w.s.App.Store.Queries, box, projectID, integrations.RunOutcome{RunID: uuid.New(), Project: "web", Status: "failed", FinishedAt: time.Now()})
	if err != nil || len(got) != 2 || got[0].event != "run.finished" || got[1].event != "run.failed" {
		t.Fatalf("notify failed run: %v %+v", err, got)
	}
	got = nil
	_ = deliverOutcome(ctx, w.s.App.Store.Queries, box, projectID, integrations.RunOutcome{RunID: uuid.New(), Project: "web", Status: "passed"})
	if len(got) != 1 || got[0].event != "run.finished" {
		t.Fatalf("notify passed run: %+v", got)
	}
	if l, _ := w.viewer.ListIntegrationsWithResponse(ctx, "web", nil); l.JSON200 == nil || len(l.JSON200.Items) != 1 || l.JSON200.Items[0].LastTest == nil {
		t.Fatalf("list: %s", l.Body)
	}
}

// deliverOutcome does what the webhook_delivery jobs of a finished run do (impl/server/runs,
// deliveries.go), at once and without retries: each enabled webhook gets the events of the
// run's status it subscribes to.
func deliverOutcome(ctx context.Context, q *db.Queries, box *secrets.Box, projectID uuid.UUID, o integrations.RunOutcome) error {
	rows, err := q.EnabledWebhooks(ctx, projectID)
	if err != nil {
		return err
	}
	hook := integrations.Webhook{AllowPrivate: true}
	for _, row := range rows {
		c, err := integrations.LoadWebhook(box, row)
		if err != nil {
			return err
		}
		for _, event := range c.Wants(o.Status) {
			if err := hook.Deliver(ctx, c, event, o); err != nil {
				return err
			}
		}
	}
	return nil
}

// The blob store is shared and content-addressed: deleting a dataset keeps content that an
// artifact also references, and removes content nothing references.
func TestDatasetDeleteKeepsSharedContent(t *testing.T) {
	w := newProjectWorld(t)
	ctx := w.ctx
	blobExists := func(key string) bool {
		found := false
		_ = filepath.WalkDir(w.s.DataDir, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && d.Name() == key {
				found = true
			}
			return nil
		})
		return found
	}
	upload := func(name, content string) string {
		ct, body := multipartBody(t, name+".csv", []byte(content))
		up, _ := w.editor.UploadDatasetWithBodyWithResponse(ctx, "web", ct, body)
		if up.JSON201 == nil {
			t.Fatalf("upload %s: %d %s", name, up.StatusCode(), up.Body)
		}
		sum := sha256.Sum256([]byte(content))
		return hex.EncodeToString(sum[:])
	}
	del := func(name string) {
		r, err := w.editor.DeleteDatasetWithResponse(ctx, "web", name)
		if err != nil || r.StatusCode() != http.StatusNoContent {
			t.Fatalf("delete %s: %v %d", name, err, r.StatusCode())
		}
	}
	shared := upload("shared", "k\nshared by an artifact\n")
	var projectID uuid.UUID
	if err := w.s.App.Store.Pool.QueryRow(ctx, `SELECT id FROM projects WHERE slug = 'web'`).Scan(&projectID); err != nil {
		t.Fatal(err)
	}
	// an artifact holding the same content, as an ingest or a run stores it
	if _, err := w.s.App.Store.Queries.CreateArtifact(ctx, db.CreateArtifactParams{ProjectID: projectID, Name: "copy.csv", Kind: "attachment",
		MediaType: "text/csv", SizeBytes: 10, Sha256: shared, BlobKey: shared}); err != nil {
		t.Fatal(err)
	}
	del("shared")
	if !blobExists(shared) {
		t.Fatal("deleting the dataset removed content an artifact references")
	}
	alone := upload("alone", "k\nreferenced once\n")
	if !blobExists(alone) {
		t.Fatal("the upload's content is not in the blob store")
	}
	del("alone")
	if blobExists(alone) {
		t.Fatal("content nothing references was kept")
	}
	// two datasets with the same content: the first delete keeps it, the second removes it
	twice := upload("one", "k\ntwice\n")
	upload("two", "k\ntwice\n")
	del("one")
	if !blobExists(twice) {
		t.Fatal("deleting one of two datasets removed their content")
	}
	del("two")
	if blobExists(twice) {
		t.Fatal("content nothing references was kept")
	}
}
