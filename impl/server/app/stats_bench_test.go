package app_test

import (
	"context"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/sdods/sdods/gen/serverclient"
	"github.com/sdods/sdods/impl/server/app"
	"github.com/sdods/sdods/impl/server/app/apptest"
	"github.com/sdods/sdods/impl/server/store/storetest"
)

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// BenchmarkStatsEndpoints seeds one project with SDODS_STATS_BENCH_RUNS runs (default 2,000) of
// SDODS_STATS_BENCH_SCENARIOS scenario results each (default 50) over the last 30 days with
// generate_series, then drives each statistics endpoint through the real server with a small load
// generator (SDODS_STATS_BENCH_CLIENTS concurrent clients, default 1) and reports the latency percentiles.
// SDODS_STATS_BENCH_ONLY (comma-separated paths with their query) measures only those requests. docs/benchmarks.md has the
// figures and the command.
func BenchmarkStatsEndpoints(b *testing.B) {
	runs, per, clients := envInt("SDODS_STATS_BENCH_RUNS", 2000), envInt("SDODS_STATS_BENCH_SCENARIOS", 50), envInt("SDODS_STATS_BENCH_CLIENTS", 1)
	dbURL := storetest.NewDatabase(b)
	s := apptest.StartOn(b, dbURL, func(c *app.Config) { c.Workers = 0 })
	admin := s.Setup(b)
	ctx := context.Background()
	if r, err := admin.CreateProjectWithResponse(ctx, serverclient.CreateProjectJSONRequestBody{Slug: "shop", Name: "Shop", WorkspaceSlug: "default"}); err != nil || r.StatusCode() != http.StatusCreated {
		b.Fatalf("create project: %v", err)
	}
	token := apptest.Token(b, admin, "stats:read")
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(ctx)
	start := time.Now()
	seed := []string{
		`INSERT INTO runs (project_id, status, trigger, source, created_at, started_at, finished_at, counts)
		 SELECT p.id, CASE WHEN i % 5 = 0 THEN 'failed' ELSE 'passed' END, 'api', 'ingest',
		        now() - i * (interval '30 days' / $1), now() - i * (interval '30 days' / $1),
		        now() - i * (interval '30 days' / $1) + interval '90 seconds', '{"total": 50, "failed": 1}'
		 FROM projects p, generate_series(1, $1::int) i WHERE p.slug = 'shop'`,
		`INSERT INTO run_scenarios (run_id, scenario_key, position, module, feature_path, name, line, status, error, attempts, duration_ms, steps)
		 SELECT r.id, 'k' || s, s, 'm', 'features/f' || (s % 10) || '.feature', 'scenario ' || s, s,
		        CASE WHEN f THEN 'failed' ELSE 'passed' END,
		        CASE WHEN f THEN jsonb_build_object('message', 'order ' || gen_random_uuid() || ' not found') END,
		        CASE WHEN NOT f AND h % 50 = 1 THEN 2 ELSE 1 END, 100 + h % 900,
		        jsonb_build_array(jsonb_build_object('index', 0, 'keyword', 'When ', 'text', 'I send a GET request to "/s' || s || '"', 'status', 'passed', 'durationMs', 50 + h % 400, 'heals', '[]'::jsonb),
		                          jsonb_build_object('index', 1, 'keyword', 'Then ', 'text', 'the response status is 200', 'status', CASE WHEN f THEN 'failed' ELSE 'passed' END, 'durationMs', 1, 'heals', '[]'::jsonb))
		 FROM runs r, generate_series(1, $1::int) s,
		      LATERAL (SELECT abs(hashtext(r.id::text || s)) AS h) hh,
		      LATERAL (SELECT (s % 10 = 0 AND hh.h % 4 = 0) OR hh.h % 100 = 0 AS f) ff`,
		// A bulk load bypasses the run-finishing trigger: the rollup is rebuilt by one query over the new rows.
		`SELECT stats_rollup_rebuild(id) FROM projects`,
		`ANALYZE runs`, `ANALYZE run_scenarios`, `ANALYZE stats_scenario_days`, `ANALYZE stats_failure_days`,
	}
	if _, err := conn.Exec(ctx, seed[0], runs); err != nil {
		b.Fatal(err)
	}
	if _, err := conn.Exec(ctx, seed[1], per); err != nil {
		b.Fatal(err)
	}
	for _, q := range seed[2:] {
		if _, err := conn.Exec(ctx, q); err != nil {
			b.Fatal(err)
		}
	}
	b.Logf("seeded %d runs × %d results in %s", runs, per, time.Since(start).Round(time.Millisecond))

	endpoints := []string{"/api/stats/trends?bucket=day", "/api/stats/flaky?minResults=10", "/api/stats/heal", "/api/stats/insights"}
	if only := os.Getenv("SDODS_STATS_BENCH_ONLY"); only != "" {
		endpoints = strings.Split(only, ",")
	}
	for _, ep := range endpoints {
		b.Run(ep, func(b *testing.B) {
			lat := make([]time.Duration, b.N)
			var wg sync.WaitGroup
			next := make(chan int)
			for w := 0; w < clients; w++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					client := &http.Client{Timeout: time.Minute}
					for i := range next {
						req, _ := http.NewRequest("GET", s.URL+ep, nil)
						req.Header.Set("Authorization", "Bearer "+token)
						t0 := time.Now()
						resp, err := client.Do(req)
						lat[i] = time.Since(t0)
						if err != nil || resp.StatusCode != http.StatusOK {
							b.Errorf("%s: %v %v", ep, err, resp)
							return
						}
						resp.Body.Close()
					}
				}()
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				next <- i
			}
			close(next)
			wg.Wait()
			b.StopTimer()
			sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
			pct := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) / 1000 }
			b.ReportMetric(pct(0.5), "p50-ms")
			b.ReportMetric(pct(0.95), "p95-ms")
		})
	}
}
