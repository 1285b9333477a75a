package app_test

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/sdods/sdods/gen/serverclient"
	"github.com/sdods/sdods/impl/server/app"
	"github.com/sdods/sdods/impl/server/app/apptest"
	"github.com/sdods/sdods/impl/server/store/storetest"
)

// TestListRunsFilters is issue 25's runs filters over HTTP: branch, tag and trigger each take
// several values (any of) and a not form (none of), combined with AND, and the filter holds across
// pages (it is applied by the query, not over a page).
func TestListRunsFilters(t *testing.T) {
	dbURL := storetest.NewDatabase(t)
	s := apptest.StartOn(t, dbURL, func(c *app.Config) { c.Workers = 0 })
	admin := s.Setup(t)
	ctx := context.Background()
	if r, err := admin.CreateProjectWithResponse(ctx, serverclient.CreateProjectJSONRequestBody{Slug: "shop", Name: "Shop", WorkspaceSlug: "default"}); err != nil || r.StatusCode() != http.StatusCreated {
		t.Fatalf("create project: %v", err)
	}
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	// label names each run; branch NULL for "none", tags NULL for "".
	seed := []struct{ label, branch, trigger, tags, status string }{
		{"a", "main", "api", "@smoke", "passed"},
		{"b", "main", "schedule", "@smoke and not @wip", "failed"},
		{"c", "release", "ui", "@slow", "failed"},
		{"d", "feature/x", "api", "", "errored"},
		{"e", "none", "schedule", "@a_b", "passed"},
		{"f", "release", "api", "@axb", "failed"},
	}
	for i, r := range seed {
		if _, err := conn.Exec(ctx, `INSERT INTO runs (project_id, status, trigger, source, label, branch, tags, created_at)
			SELECT id, $6, $1, 'ingest', $2, NULLIF($3, 'none'), NULLIF($4, ''), now() - $5 * interval '1 minute'
			FROM projects WHERE slug = 'shop'`, r.trigger, r.label, r.branch, r.tags, i, r.status); err != nil {
			t.Fatal(err)
		}
	}
	list := func(q string) []string {
		t.Helper()
		var got []string
		cursor := ""
		for page := 0; page < 10; page++ {
			path := "/api/runs?limit=2&" + q
			if cursor != "" {
				path += "&cursor=" + url.QueryEscape(cursor)
			}
			r, err := admin.ListRunsWithResponse(ctx, nil, func(ctx context.Context, req *http.Request) error {
				req.URL, _ = url.Parse(s.URL + path)
				return nil
			})
			if err != nil || r.JSON200 == nil {
				t.Fatalf("GET %s: %v %s", path, err, r.Body)
			}
			for _, it := range r.JSON200.Items {
				got = append(got, *it.Label)
			}
			if r.JSON200.NextCursor == nil {
				break
			}
			cursor = *r.JSON200.NextCursor
		}
		slices.Sort(got)
		return got
	}
	for q, want := range map[string][]string{
		"":                                      {"a", "b", "c", "d", "e", "f"},
		"branch=main&branch=release":            {"a", "b", "c", "f"},
		"notBranch=main":                        {"c", "d", "e", "f"},
		"notBranch=main&notBranch=release":      {"d", "e"},
		"branch=release&notTrigger=ui":          {"f"},
		"trigger=schedule&trigger=ui":           {"b", "c", "e"},
		"notTrigger=api":                        {"b", "c", "e"},
		"tag=@smoke&tag=@slow":                  {"a", "b", "c"},
		"notTag=@wip":                           {"a", "c", "d", "e", "f"},
		"tag=a_b":                               {"e"}, // _ is no wildcard
		"tag=@smoke&notTag=@wip&trigger=api":    {"a"},
		"notBranch=main&notTag=@slow&notTag=@a": {"d"}, // @axb mentions @a
		// One status or branch is compared with "=", several with "= ANY" (queries/runs.sql).
		"status=failed":                              {"b", "c", "f"},
		"status=failed&status=errored":               {"b", "c", "d", "f"},
		"status=cancelled":                           nil,
		"project=shop&status=errored":                {"d"},
		"branch=release":                             {"c", "f"},
		"branch=feature%2Fx":                         {"d"},
		"branch=nope":                                nil,
		"branch=main&status=failed":                  {"b"},
		"branch=main&branch=release&status=failed":   {"b", "c", "f"},
		"branch=release&status=failed&status=passed": {"c", "f"},
		"status=failed&branch=release&notTrigger=ui": {"f"},
		"project=shop&status=failed&tag=@smoke":      {"b"},
		"status=passed&notBranch=main":               {"e"},
		"project=shop&branch=main&status=failed&status=errored&status=passed": {"a", "b"},
	} {
		if got := list(q); !slices.Equal(got, want) {
			t.Errorf("?%s: %v, want %v", q, got, want)
		}
	}
	for _, q := range []string{"trigger=nope", "notTrigger=nope"} {
		if status, body, _ := s.Do(t, http.MethodGet, "/api/runs?"+q, "", nil); status != http.StatusBadRequest {
			t.Errorf("?%s: %d %s", q, status, body)
		}
	}
}
