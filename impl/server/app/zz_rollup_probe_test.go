package app_test

import (
	"context"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/sdods/sdods/gen/serverclient"
	"github.com/sdods/sdods/impl/server/app"
	"github.com/sdods/sdods/impl/server/app/apptest"
	"github.com/sdods/sdods/impl/server/store/storetest"
)

func TestZZRollupProbe(t *testing.T) {
	ctx := context.Background()
	dbURL := storetest.NewDatabase(t)
	s := apptest.StartOn(t, dbURL, func(c *app.Config) { c.Role = app.RoleAPI; c.Workers = 0; c.MaxBody = 1 << 30; c.MaxIngest = 1 << 30 })
	admin := s.Setup(t)
	if r, err := admin.CreateProjectWithResponse(ctx, serverclient.CreateProjectJSONRequestBody{Slug: "shop", Name: "Shop", WorkspaceSlug: "default"}); err != nil || r.StatusCode() != http.StatusCreated {
		t.Fatalf("create project: %v", err)
	}
	token := apptest.Token(t, admin, "runs:ingest", "runs:write")
	bearer := s.Bearer(t, token)
	conn, _ := pgx.Connect(ctx, dbURL)
	defer conn.Close(ctx)
	if os.Getenv("PROBE_CUSTOM") != "" {
		conn.Exec(ctx, "SET plan_cache_mode = force_custom_plan")
	}
	var pid int
	conn.QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&pid)
	cpu := func() time.Duration {
		raw, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/schedstat")
		ns, _ := strconv.ParseInt(strings.Fields(string(raw))[0], 10, 64)
		return time.Duration(ns)
	}
	at := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)
	var total time.Duration
	for i := 0; i < 8; i++ {
		at = at.Add(time.Hour)
		id := ingestRun(t, bearer)
		status, body, _ := s.Do(t, "POST", "/api/runs/"+id.String()+"/ingest", "application/xml", benchJUnitDoc(10000, at), "Authorization", "Bearer "+token)
		if status != 200 {
			t.Fatal(string(body))
		}
		c0 := cpu()
		var n int
		if err := conn.QueryRow(ctx, `SELECT stats_rollup_drain(id, NULL) FROM projects`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		d := cpu() - c0
		if i > 0 {
			total += d
		}
		t.Logf("doc %d: drain %d in %v", i, n, d)
	}
	t.Logf("mean after the first: %v", total/7)
}
