package app_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
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

// BenchmarkStatsEndpoints seeds one project with scripts/stats-bench-seed.sql —
// SDODS_STATS_BENCH_RUNS runs (default 2,000) of SDODS_STATS_BENCH_SCENARIOS scenario results each
// (default 50) over the last 30 days, with generate_series, and the rollup rebuilt by one query —
// then drives each statistics endpoint through the real server with a small load generator
// (SDODS_STATS_BENCH_CLIENTS concurrent clients, default 1) and reports the latency percentiles.
// SDODS_STATS_BENCH_ONLY (comma-separated paths with their query) measures only those requests.
// SDODS_STATS_BENCH_DATABASE names a database to keep between runs (created, migrated and seeded
// the first time; the seed of 5 million results takes many minutes). docs/benchmarks.md has the
// figures and the commands.
func BenchmarkStatsEndpoints(b *testing.B) {
	runs, per, clients := envInt("SDODS_STATS_BENCH_RUNS", 2000), envInt("SDODS_STATS_BENCH_SCENARIOS", 50), envInt("SDODS_STATS_BENCH_CLIENTS", 1)
	s, _, browser := statsBenchServer(b, os.Getenv("SDODS_STATS_BENCH_DATABASE"), runs, per, nil)
	token := apptest.Token(b, browser, "stats:read")

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

// statsBenchServer starts a server (no workers; tune adjusts its configuration) on the database
// kept (created the first time; a new database when kept is empty) and returns it with a
// connection to that database and the administrator's browser. A database without the project
// "shop" is seeded with scripts/stats-bench-seed.sql: runs × per scenario results.
func statsBenchServer(b *testing.B, kept string, runs, per int, tune func(*app.Config)) (*apptest.Server, *pgx.Conn, *apptest.Browser) {
	ctx := context.Background()
	var dbURL string
	if kept == "" {
		dbURL = storetest.NewDatabase(b)
	} else {
		admin, err := pgx.Connect(ctx, storetest.AdminURL())
		if err != nil {
			b.Fatal(err)
		}
		_, err = admin.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{kept}.Sanitize())
		if err != nil && !strings.Contains(err.Error(), "already exists") {
			b.Fatal(err)
		}
		admin.Close(ctx)
		u, _ := url.Parse(storetest.AdminURL())
		u.Path = "/" + kept
		dbURL = u.String()
	}
	s := apptest.StartOn(b, dbURL, func(c *app.Config) {
		c.Workers = 0
		if tune != nil {
			tune(c)
		}
	})
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { conn.Close(ctx) })
	var seeded bool
	if err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM projects WHERE slug = 'shop')`).Scan(&seeded); err != nil {
		b.Fatal(err)
	}
	var browser *apptest.Browser
	if !seeded {
		browser = s.Setup(b)
		if r, err := browser.CreateProjectWithResponse(ctx, serverclient.CreateProjectJSONRequestBody{Slug: "shop", Name: "Shop", WorkspaceSlug: "default"}); err != nil || r.StatusCode() != http.StatusCreated {
			b.Fatalf("create project: %v", err)
		}
		script, err := os.ReadFile("../../../scripts/stats-bench-seed.sql")
		if err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		if _, err := conn.Exec(ctx, fmt.Sprintf("SET sdods.bench_runs = '%d'; SET sdods.bench_scenarios = '%d';\n%s", runs, per, script)); err != nil {
			b.Fatal(err)
		}
		b.Logf("seeded %d runs × %d results in %s", runs, per, time.Since(start).Round(time.Millisecond))
	} else {
		browser = s.NewBrowser(b)
		r, err := browser.LoginWithResponse(ctx, serverclient.LoginJSONRequestBody{Email: "admin@example.com", Password: apptest.AdminPassword})
		if err != nil || r.JSON200 == nil || r.JSON200.CsrfToken == nil {
			b.Fatalf("login: %v %s", err, r.Body)
		}
		browser.CSRF = *r.JSON200.CsrfToken
		var n, m int64
		if err := conn.QueryRow(ctx, `SELECT (SELECT count(*) FROM runs), (SELECT count(*) FROM run_scenarios)`).Scan(&n, &m); err != nil {
			b.Fatal(err)
		}
		b.Logf("reusing %s: %d runs, %d results", kept, n, m)
	}
	return s, conn, browser
}
