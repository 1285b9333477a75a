package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/sdods/sdods/gen/serverclient"
	"github.com/sdods/sdods/impl/server/app"
	"github.com/sdods/sdods/impl/server/app/apptest"
)

// TestFlakyCacheFollowsTheRollup: the flaky answer over the rollup is cached per scope and
// statistics version (schema 000027). A second server process on the same database answers the
// reads; the first ingests. After every change of what the answer is computed from — a run that
// finishes, a finished run's results replaced by a second document, a project renamed, a project
// deleted — the reader answers what the results answer (a window one second wider, never cached),
// and an unchanged answer is served without the flaky statement.
func TestFlakyCacheFollowsTheRollup(t *testing.T) {
	ctx := context.Background()
	s := apptest.Start(t)
	admin := s.Setup(t)
	project(t, admin, "http://127.0.0.1:9", nil)
	token := apptest.Token(t, admin, "runs:ingest", "runs:read", "runs:write", "stats:read")
	bearer := s.Bearer(t, token)
	rec := &recorder{}
	reader := apptest.StartOn(t, s.DatabaseURL, func(c *app.Config) { c.QueryTracer = rec })
	conn, err := pgx.Connect(ctx, s.DatabaseURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)

	// A case is "name:pass" or "name:fail".
	doc := func(at string, cases ...string) []byte {
		var b strings.Builder
		fmt.Fprintf(&b, "<testsuite name=\"shop\" timestamp=%q>\n", at)
		for _, c := range cases {
			name, status, _ := strings.Cut(c, ":")
			if status == "pass" {
				fmt.Fprintf(&b, "  <testcase classname=\"k\" name=%q time=\"1\"/>\n", name)
			} else {
				fmt.Fprintf(&b, "  <testcase classname=\"k\" name=%q time=\"1\"><failure message=\"id gone\"/></testcase>\n", name)
			}
		}
		b.WriteString("</testsuite>\n")
		return []byte(b.String())
	}
	ingest := func(run uuid.UUID, d []byte) uuid.UUID {
		t.Helper()
		if run == uuid.Nil {
			run = ingestRun(t, bearer)
		}
		if status, _, body := ingestDoc(t, s, token, run, "application/xml", d); status != http.StatusOK {
			t.Fatalf("ingest: %d %s", status, body)
		}
		return run
	}
	// read answers the reader's flaky page over the rollup (whole days) and over the results, and
	// whether the rollup's answer ran the flaky statement.
	read := func(project bool) (rolled, raw []serverclient.FlakyScenario, computed bool) {
		t.Helper()
		q := url.Values{"since": {"2026-03-02T00:00:00Z"}, "until": {"2026-03-05T00:00:00Z"}, "minResults": {"2"}, "flakyOnly": {"false"}}
		if project {
			q.Set("project", "shop")
		}
		get := func(q url.Values) []serverclient.FlakyScenario {
			status, body, _ := reader.Do(t, "GET", "/api/stats/flaky?"+q.Encode(), "", nil, "Authorization", "Bearer "+token)
			if status != http.StatusOK {
				t.Fatalf("flaky %s: %d %s", q.Encode(), status, body)
			}
			var page serverclient.FlakyScenarioList
			if err := json.Unmarshal(body, &page); err != nil {
				t.Fatal(err)
			}
			return page.Items
		}
		rec.start()
		rolled = get(q)
		for _, st := range rec.stop() {
			computed = computed || strings.Contains(st.sql, "FROM stats_scenario_days")
		}
		q.Set("since", "2026-03-01T23:59:59Z")
		return rolled, get(q), computed
	}
	check := func(what string, project bool, want []string) {
		t.Helper()
		rolled, raw, _ := read(project)
		if !reflect.DeepEqual(rolled, raw) {
			a, _ := json.MarshalIndent(rolled, "", " ")
			b, _ := json.MarshalIndent(raw, "", " ")
			t.Fatalf("%s: the cached rollup answers\n%s\nthe results answer\n%s", what, a, b)
		}
		var got []string
		for _, f := range rolled {
			got = append(got, fmt.Sprintf("%s/%s:%d/%d", f.Project, f.Scenario, f.Passed, f.Results))
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: %v, want %v", what, got, want)
		}
		// Asked again with nothing changed: served from the cache.
		if again, _, computed := read(project); computed || !reflect.DeepEqual(again, rolled) {
			t.Fatalf("%s: asked again, the flaky statement ran (%t) or the answer changed", what, computed)
		}
	}

	ingest(uuid.Nil, doc("2026-03-02T10:00:00", "a:pass", "b:fail"))
	ingest(uuid.Nil, doc("2026-03-02T11:00:00", "a:fail", "b:fail"))
	check("two runs", true, []string{"shop/a:1/2", "shop/b:0/2"})
	check("two runs, every project", false, []string{"shop/a:1/2", "shop/b:0/2"})

	third := ingest(uuid.Nil, doc("2026-03-03T09:00:00", "a:pass", "b:pass"))
	check("a third run finished", true, []string{"shop/a:2/3", "shop/b:1/3"})

	// A second document into the finished run replaces its results.
	ingest(third, doc("2026-03-03T09:00:00", "a:fail", "b:pass"))
	check("the third run's results replaced", true, []string{"shop/a:1/3", "shop/b:1/3"})

	// Neither a rename nor a deletion goes through the rollup: the project's own triggers.
	check("before the rename, every project", false, []string{"shop/a:1/3", "shop/b:1/3"})
	if _, err := conn.Exec(ctx, `UPDATE projects SET slug = 'store' WHERE slug = 'shop'`); err != nil {
		t.Fatal(err)
	}
	check("renamed", false, []string{"store/a:1/3", "store/b:1/3"})
	if _, err := conn.Exec(ctx, `DELETE FROM projects WHERE slug = 'store'`); err != nil {
		t.Fatal(err)
	}
	check("deleted", false, nil)
}
