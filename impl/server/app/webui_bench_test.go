package app_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/sdods/sdods/gen/serverclient"
	"github.com/sdods/sdods/impl/server/app"
	"github.com/sdods/sdods/impl/server/app/apptest"
	"github.com/sdods/sdods/impl/server/store/storetest"
)

// BenchmarkWebUIRunsPage is issue 25 item 7's speed goal: one project with SDODS_UI_BENCH_RUNS runs
// (default 100,000, seeded with generate_series), and the web UI's runs page of that project
// loaded in the system Chromium; it reports the median and 95th percentile of the time from the
// navigation's start until the first page (50 runs) is on screen. docs/benchmarks.md has the
// figures and the command.
func BenchmarkWebUIRunsPage(b *testing.B) {
	runs := envInt("SDODS_UI_BENCH_RUNS", 100000)
	node, err := exec.LookPath("node")
	if err != nil {
		b.Fatal("node is needed")
	}
	chromium := findChromium(b)
	ensureWebModules(b)
	dbURL := storetest.NewDatabase(b)
	s := apptest.StartOn(b, dbURL, func(c *app.Config) { c.Workers = 0 })
	admin := s.Setup(b)
	ctx := context.Background()
	if r, err := admin.CreateProjectWithResponse(ctx, serverclient.CreateProjectJSONRequestBody{Slug: "shop", Name: "Shop", WorkspaceSlug: "default"}); err != nil || r.StatusCode() != http.StatusCreated {
		b.Fatalf("create project: %v", err)
	}
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `INSERT INTO runs (project_id, status, trigger, source, created_at, started_at, finished_at, counts)
		 SELECT p.id, CASE WHEN i % 5 = 0 THEN 'failed' ELSE 'passed' END, 'api', 'ingest',
		        now() - i * (interval '30 days' / $1), now() - i * (interval '30 days' / $1),
		        now() - i * (interval '30 days' / $1) + interval '90 seconds', '{"total": 50, "failed": 1}'
		 FROM projects p, generate_series(1, $1::int) i WHERE p.slug = 'shop'`, runs); err != nil {
		b.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `ANALYZE runs`); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		cmd := exec.Command(node, filepath.Join("e2e", "bench.mjs"))
		cmd.Dir = webDir
		cmd.Env = append(os.Environ(), "SDODS_URL="+s.URL, "SDODS_CHROMIUM="+chromium, "SDODS_EMAIL=admin@example.com", "SDODS_PASSWORD="+apptest.AdminPassword)
		out, err := cmd.CombinedOutput()
		if err != nil {
			b.Fatalf("bench.mjs: %v\n%s", err, out)
		}
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		var r struct{ Loads, MedianMs, P95Ms, MaxMs float64 }
		if err := json.Unmarshal([]byte(lines[len(lines)-1]), &r); err != nil {
			b.Fatalf("bench.mjs said %s", out)
		}
		b.ReportMetric(r.MedianMs, "median-ms")
		b.ReportMetric(r.P95Ms, "p95-ms")
		b.Logf("%s runs: %s", strconv.Itoa(runs), lines[len(lines)-1])
	}
}
