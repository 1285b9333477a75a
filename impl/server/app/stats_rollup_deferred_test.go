package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/sdods/sdods/gen/serverclient"
	"github.com/sdods/sdods/impl/server/app"
	"github.com/sdods/sdods/impl/server/app/apptest"
	"github.com/sdods/sdods/impl/server/store/storetest"
)

// TestStatsRollupDeferred checks the rollup applied after a run's finish (schema 000035,
// docs/stats.md "How it is kept current"): a finish records the run as pending and inserts its
// job, without writing the rollup; a second document into the still-pending run changes nothing
// there; a statistics read applies what is pending first and answers as the results do; a process
// that works jobs applies a finished run with no read at all; and the rollup then holds exactly
// what a rebuild from the results holds.
func TestStatsRollupDeferred(t *testing.T) {
	ctx := context.Background()
	// An API-only process works no job: what it finishes stays pending until a read.
	api := apptest.StartOn(t, storetest.NewDatabase(t), func(c *app.Config) { c.Role = app.RoleAPI })
	admin := api.Setup(t)
	project(t, admin, "http://127.0.0.1:9", nil)
	token := apptest.Token(t, admin, "runs:ingest", "runs:read", "runs:write", "stats:read")
	bearer := api.Bearer(t, token)
	conn, err := pgx.Connect(ctx, api.DatabaseURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	count := func(q string, args ...any) int {
		t.Helper()
		var n int
		if err := conn.QueryRow(ctx, q, args...).Scan(&n); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return n
	}
	doc := func(day, salt int) []byte {
		var b strings.Builder
		fmt.Fprintf(&b, "<testsuite name=\"shop\" timestamp=\"2026-05-0%dT10:00:0%d\">\n", day, salt)
		for i := range 40 {
			if (i+salt)%5 == 0 {
				fmt.Fprintf(&b, "  <testcase classname=\"k\" name=\"case %d\" time=\"0.%d\"><failure message=\"id %d gone\"/></testcase>\n", i, i%10, i)
			} else {
				fmt.Fprintf(&b, "  <testcase classname=\"k\" name=\"case %d\" time=\"0.%d\"/>\n", i, i%10)
			}
		}
		b.WriteString("</testsuite>\n")
		return []byte(b.String())
	}
	ingest := func(s *apptest.Server, id uuid.UUID, body []byte) {
		t.Helper()
		if status, _, raw := ingestDoc(t, s, token, id, "application/xml", body); status != http.StatusOK {
			t.Fatalf("ingest: %d %s", status, raw)
		}
	}

	first := ingestRun(t, bearer)
	ingest(api, first, doc(1, 1))
	if n := count(`SELECT count(*) FROM stats_rollup_pending WHERE run_id = $1`, first); n != 1 {
		t.Fatalf("after the finish, %d pending rows for the run, want 1", n)
	}
	if n := count(`SELECT count(*) FROM stats_scenario_days`) + count(`SELECT count(*) FROM stats_run_days`); n != 0 {
		t.Fatalf("the finish wrote %d rollup rows; the rollup is applied after it", n)
	}
	if n := count(`SELECT count(*) FROM river_job WHERE kind = 'stats_rollup' AND state = 'available'`); n != 1 {
		t.Fatalf("%d rollup jobs inserted with the finish, want 1", n)
	}
	// Another document into the pending run: its results are read when it is applied, by the job
	// its first finish inserted.
	ingest(api, first, doc(1, 2))
	if n := count(`SELECT count(*) FROM river_job WHERE kind = 'stats_rollup'`); n != 1 {
		t.Fatalf("%d rollup jobs after a second document into the pending run, want still 1", n)
	}
	second := ingestRun(t, bearer)
	ingest(api, second, doc(2, 3))
	if n := count(`SELECT count(*) FROM stats_rollup_pending`); n != 2 {
		t.Fatalf("%d pending runs, want 2", n)
	}
	if n := count(`SELECT count(*) FROM river_job WHERE kind = 'stats_rollup'`); n != 2 {
		t.Fatalf("%d rollup jobs after a second run's finish, want 2", n)
	}
	if n := count(`SELECT count(*) FROM stats_scenario_days`); n != 0 {
		t.Fatalf("%d scenario days before any read, want 0", n)
	}

	// A read of the rollup applies them first, and answers as the results do.
	compareFlaky(t, api, token, "2026-05-01", "2026-05-04")
	if n := count(`SELECT count(*) FROM stats_rollup_pending`); n != 0 {
		t.Fatalf("%d pending runs after a read of the rollup, want 0", n)
	}
	if n := count(`SELECT count(*) FROM stats_scenario_days`); n == 0 {
		t.Fatal("no scenario days after a read of the rollup")
	}

	// A second document into an applied run recomputes its day in the finish, as before.
	ingest(api, second, doc(2, 4))
	if n := count(`SELECT count(*) FROM stats_rollup_pending`); n != 0 {
		t.Fatalf("%d pending runs after a document into an applied run, want 0", n)
	}
	if n := count(`SELECT count(*) FROM river_job WHERE kind = 'stats_rollup'`); n != 2 {
		t.Fatalf("%d rollup jobs after a document into an applied run, want still 2: nothing is pending", n)
	}

	// A process that works jobs applies a finish with no read.
	worker := apptest.StartOn(t, api.DatabaseURL, nil)
	third := ingestRun(t, bearer)
	ingest(worker, third, doc(3, 5))
	deadline := time.Now().Add(30 * time.Second)
	for count(`SELECT count(*) FROM stats_rollup_pending`) != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the worker did not apply the pending run in 30 s")
		}
		time.Sleep(20 * time.Millisecond)
	}

	// The rollup is what a rebuild from the results makes of them.
	tables := []string{"stats_scenario_days", "stats_failure_days", "stats_run_days", "stats_step_days", "stats_heal_days"}
	snapshot := func() map[string]string {
		out := map[string]string{}
		for _, tb := range tables {
			var s string
			if err := conn.QueryRow(ctx, `SELECT coalesce(string_agg(x::text, E'\n' ORDER BY x::text), '') FROM `+tb+` x`).Scan(&s); err != nil {
				t.Fatal(err)
			}
			out[tb] = s
		}
		return out
	}
	applied := snapshot()
	if _, err := conn.Exec(ctx, `SELECT stats_rollup_rebuild(id) FROM projects`); err != nil {
		t.Fatal(err)
	}
	rebuilt := snapshot()
	for _, tb := range tables {
		if applied[tb] != rebuilt[tb] {
			t.Errorf("%s as applied:\n%s\nas rebuilt:\n%s", tb, applied[tb], rebuilt[tb])
		}
	}
	compareFlaky(t, worker, token, "2026-05-01", "2026-05-04")
}

// compareFlaky asks for the flaky list over whole days [since, until) — the rollup — and over a
// window one second wider — the results — and fails unless both list the same items.
func compareFlaky(t *testing.T, s *apptest.Server, token, since, until string) {
	t.Helper()
	rolled := url.Values{"since": {since + "T00:00:00Z"}, "until": {until + "T00:00:00Z"}, "minResults": {"2"}, "flakyOnly": {"false"}, "limit": {"200"}}
	raw := url.Values{}
	for k, v := range rolled {
		raw[k] = v
	}
	from, _ := time.Parse("2006-01-02", since)
	raw.Set("since", from.Add(-time.Second).Format(time.RFC3339))
	var a, b serverclient.FlakyScenarioList
	for _, x := range []struct {
		q    url.Values
		into *serverclient.FlakyScenarioList
	}{{rolled, &a}, {raw, &b}} {
		status, body, _ := s.Do(t, "GET", "/api/stats/flaky?"+x.q.Encode(), "", nil, "Authorization", "Bearer "+token)
		if status != http.StatusOK {
			t.Fatalf("flaky: %d %s", status, body)
		}
		if err := json.Unmarshal(body, x.into); err != nil {
			t.Fatal(err)
		}
	}
	if len(a.Items) == 0 || len(a.Items) != len(b.Items) {
		t.Fatalf("the rollup lists %d identities, the results %d", len(a.Items), len(b.Items))
	}
	for i := range a.Items {
		x, _ := json.Marshal(a.Items[i])
		y, _ := json.Marshal(b.Items[i])
		if !bytes.Equal(x, y) {
			t.Errorf("item %d: the rollup answers\n%s\nthe results\n%s", i, x, y)
		}
	}
}
