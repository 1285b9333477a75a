package app_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sdods/sdods/gen/serverclient"
	"github.com/sdods/sdods/impl/server/app"
	"github.com/sdods/sdods/impl/server/app/apptest"
)

// benchScenarios and the three steps of each are the runner benchmark of issue 19.
const benchScenarios = 200

// benchTarget is the local server the benchmark's steps call: GET /items/{n} answers {"id":n,"status":"ok"},
// after SDODS_BENCH_TARGET_DELAY (a Go duration, default none: a service that answers at once).
func benchTarget(tb testing.TB) *httptest.Server {
	delay, _ := time.ParseDuration(os.Getenv("SDODS_BENCH_TARGET_DELAY"))
	mux := http.NewServeMux()
	mux.HandleFunc("GET /items/{n}", func(w http.ResponseWriter, r *http.Request) {
		if delay > 0 {
			time.Sleep(delay)
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":%q,"status":"ok"}`, r.PathValue("n"))
	})
	srv := httptest.NewServer(mux)
	tb.Cleanup(srv.Close)
	return srv
}

// benchFeature has benchScenarios scenarios of three HTTP steps: a request, its status, a JSON value.
func benchFeature() string {
	var b strings.Builder
	b.WriteString("Feature: Items\n")
	for i := range benchScenarios {
		fmt.Fprintf(&b, "\n  Scenario: Item %d\n    When I send a GET request to \"/items/%d\"\n    Then the response status is 200\n    And the response JSON at \"$.status\" is \"ok\"\n", i, i)
	}
	return b.String()
}

// plainLoop makes the same requests and assertions as benchFeature's scenarios with net/http and
// encoding/json, one after the other: the floor the runner is compared with.
func plainLoop(base string) error { return plainLoopPart(base, 0, 1) }

// plainLoop2 is plainLoop on two goroutines, each making every other scenario's requests: what the
// floor itself gains from a second worker on this machine, the bound for any runner's speedup.
func plainLoop2(base string) error {
	errs := make(chan error, 2)
	for part := range 2 {
		go func() { errs <- plainLoopPart(base, part, 2) }()
	}
	return errors.Join(<-errs, <-errs)
}

// plainLoopPart makes the requests of the scenarios i with i % parts == part.
func plainLoopPart(base string, part, parts int) error {
	c := &http.Client{}
	for i := part; i < benchScenarios; i += parts {
		resp, err := c.Get(fmt.Sprintf("%s/items/%d", base, i))
		if err != nil {
			return err
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return err
		}
		if resp.StatusCode != 200 {
			return fmt.Errorf("item %d: status %d", i, resp.StatusCode)
		}
		var v struct {
			Status string `json:"status"`
		}
		if err := json.Unmarshal(body, &v); err != nil || v.Status != "ok" {
			return fmt.Errorf("item %d: %s", i, body)
		}
	}
	return nil
}

// BenchmarkRunner200x3 is the runner benchmark of issue 19: 200 scenarios of 3 HTTP steps against
// a local server. Each iteration times, alternately, sdods with the project's scenarioConcurrency
// at 1 (from the run's creation in POST /api/runs to its final status, as the database timed them), the plain Go loop making the same
// requests and assertions (the floor), and sdods again at concurrency 2. It reports the times
// (sdods-ms/op at 1, sdods2-ms/op at 2, loop-ms/op) and the ratios sdods/loop (goal ≤ 5) and
// speedup (concurrency 1 over 2, goal ≥ 1.8), and the plain loop's own speedup on two goroutines
// (loop2-ms/op, loop-speedup). docs/benchmarks.md has the figures and the command.
func BenchmarkRunner200x3(b *testing.B) {
	servedGC(b)
	s := apptest.Start(b)
	admin := s.Setup(b)
	target := benchTarget(b)
	ctx := context.Background()
	if r, err := admin.CreateProjectWithResponse(ctx, serverclient.CreateProjectJSONRequestBody{Slug: "shop", Name: "Shop", WorkspaceSlug: "default"}); err != nil || r.StatusCode() != http.StatusCreated {
		b.Fatalf("create project: %v", err)
	}
	if r, err := admin.CreateEnvironmentWithResponse(ctx, "shop", serverclient.CreateEnvironmentJSONRequestBody{Name: "local", BaseUrl: &target.URL}); err != nil || r.StatusCode() != http.StatusCreated {
		b.Fatalf("create environment: %v", err)
	}
	if r, err := admin.PutFeatureWithResponse(ctx, "shop", "items.feature", &serverclient.PutFeatureParams{IfMatch: ptr("*")}, serverclient.PutFeatureJSONRequestBody{Content: benchFeature()}); err != nil || r.StatusCode() >= 300 {
		b.Fatalf("put feature: %v %s", err, r.Body)
	}
	// Where a run's time goes, as the database timed it (summed over the runs at concurrency 1):
	// from its creation to its start (the job's pickup), from its start to its first scenario's
	// (loading what it runs), its scenarios' span, and from its last scenario's end to its end.
	var phases [4]time.Duration
	run := func(concurrency int) time.Duration {
		if r, err := admin.UpdateProjectWithResponse(ctx, "shop", serverclient.UpdateProjectJSONRequestBody{Name: "Shop",
			Settings: &serverclient.ProjectSettingsInput{ScenarioConcurrency: &concurrency}}); err != nil || r.StatusCode() != http.StatusOK {
			b.Fatalf("set concurrency: %v", err)
		}
		r, err := admin.CreateRunWithResponse(ctx, serverclient.CreateRunJSONRequestBody{Project: "shop", Environment: ptr("local")})
		if err != nil || r.JSON202 == nil {
			b.Fatalf("create run: %v", err)
		}
		// The run's time is the database's, from its row's creation (in POST /api/runs) to its
		// final status (committed with its end event), read every 20 ms: GET /api/runs/{id}, which
		// the benchmark polled every 5 ms before, builds the run's whole scenario tree and took a
		// quarter of the process's CPU from the run, and even a 2 ms poll of the status alone
		// cost the process as much CPU as a third of the run's.
		var took time.Duration
		for {
			var status string
			var secs float64
			if err := s.App.Store.Pool.QueryRow(ctx, "SELECT status, coalesce(extract(epoch FROM finished_at - created_at), 0)::float8 FROM runs WHERE id = $1",
				r.JSON202.Id).Scan(&status, &secs); err != nil {
				b.Fatalf("run status: %v", err)
			}
			if terminal(status) {
				took = time.Duration(secs * float64(time.Second))
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		if concurrency == 1 {
			var secs [4]float64
			if err := s.App.Store.Pool.QueryRow(ctx, `SELECT extract(epoch FROM r.started_at - r.created_at)::float8,
			  extract(epoch FROM min(s.started_at) - r.started_at)::float8, extract(epoch FROM max(s.finished_at) - min(s.started_at))::float8,
			  extract(epoch FROM r.finished_at - max(s.finished_at))::float8
			FROM runs r JOIN run_scenarios s ON s.run_id = r.id WHERE r.id = $1 GROUP BY r.id`, r.JSON202.Id).Scan(&secs[0], &secs[1], &secs[2], &secs[3]); err != nil {
				b.Fatalf("run phases: %v", err)
			}
			for i, v := range secs {
				phases[i] += time.Duration(v * float64(time.Second))
			}
		}
		g, err := admin.GetRunWithResponse(ctx, r.JSON202.Id)
		if err != nil || g.JSON200 == nil || g.JSON200.Status != "passed" || g.JSON200.Counts.Passed != benchScenarios {
			b.Fatalf("run ended: %v %s", err, g.Body)
		}
		return took
	}
	// CPU time of this process (the server, the target and the client; PostgreSQL's is not in it)
	// beside the wall time: on a machine shared with other work, the wall time also counts the
	// waits for a core.
	var oneGC time.Duration
	var one, two, loop, loop2, oneCPU, twoCPU, loopCPU, onePG, rollup, rollupCPU, rollupPG time.Duration
	rollupConn, err := pgx.Connect(ctx, s.DatabaseURL)
	if err != nil {
		b.Fatal(err)
	}
	defer rollupConn.Close(ctx)
	b.ResetTimer()
	for b.Loop() {
		c, pg, gc := processCPU(), backendCPU(b, s.App.Store.Pool), gcCPU()
		one += run(1)
		oneCPU += processCPU() - c
		oneGC += gcCPU() - gc
		onePG += backendCPUSince(b, s.App.Store.Pool, pg)
		// The run's statistics rollup, applied by its job once the run has ended: waited for and
		// measured apart, so that it runs neither during the loop nor during the next run.
		c, pg = processCPU(), backendCPU(b, s.App.Store.Pool)
		start := time.Now()
		waitRollup(b, rollupConn)
		rollup += time.Since(start)
		rollupCPU += processCPU() - c
		rollupPG += backendCPUSince(b, s.App.Store.Pool, pg)
		c = processCPU()
		start = time.Now()
		if err := plainLoop(target.URL); err != nil {
			b.Fatal(err)
		}
		loop += time.Since(start)
		loopCPU += processCPU() - c
		start = time.Now()
		if err := plainLoop2(target.URL); err != nil {
			b.Fatal(err)
		}
		loop2 += time.Since(start)
		c = processCPU()
		two += run(2)
		twoCPU += processCPU() - c
		waitRollup(b, rollupConn)
	}
	n := float64(b.N)
	b.ReportMetric(float64(one.Microseconds())/1000/n, "sdods-ms/op")
	b.ReportMetric(float64(two.Microseconds())/1000/n, "sdods2-ms/op")
	b.ReportMetric(float64(loop.Microseconds())/1000/n, "loop-ms/op")
	b.ReportMetric(float64(loop2.Microseconds())/1000/n, "loop2-ms/op")
	// The floor's own speedup with two workers: on a machine where the plain loop (its client and the
	// target together) already keeps more than one core busy, no runner can reach more than this.
	b.ReportMetric(float64(loop)/float64(loop2), "loop-speedup")
	b.ReportMetric(float64(oneCPU.Microseconds())/1000/n, "sdods-cpu-ms/op")
	b.ReportMetric(float64(twoCPU.Microseconds())/1000/n, "sdods2-cpu-ms/op")
	b.ReportMetric(float64(loopCPU.Microseconds())/1000/n, "loop-cpu-ms/op")
	b.ReportMetric(float64(onePG.Microseconds())/1000/n, "sdods-pg-cpu-ms/op")
	b.ReportMetric(float64(oneGC.Microseconds())/1000/n, "sdods-gc-cpu-ms/op")
	b.ReportMetric(float64(rollup.Microseconds())/1000/n, "rollup-ms/op")
	b.ReportMetric(float64(rollupCPU.Microseconds())/1000/n, "rollup-cpu-ms/op")
	b.ReportMetric(float64(rollupPG.Microseconds())/1000/n, "rollup-pg-cpu-ms/op")
	// What concurrency could gain at most on this machine if the run is CPU work: its wall time over
	// its CPU (this process's and PostgreSQL's backends') spread on every core.
	if cpus := float64(runtime.NumCPU()); one > 0 {
		b.ReportMetric(float64(one)/(float64(oneCPU+onePG)/cpus), "cpu-bound-speedup")
	}
	for i, name := range []string{"pickup", "prepare", "scenarios", "end"} {
		b.ReportMetric(float64(phases[i].Microseconds())/1000/n, name+"-ms/op")
	}
	b.ReportMetric(float64(one)/float64(loop), "sdods/loop")
	b.ReportMetric(float64(one)/float64(two), "speedup")
}

// servedGC sets the collector's target sdods serve runs with (app.DefaultGCPercent, unless GOGC is
// set): the benchmarks measure the server as it is served, not at a test process's default.
func servedGC(tb testing.TB) {
	if os.Getenv("GOGC") != "" {
		return
	}
	old := debug.SetGCPercent(app.DefaultGCPercent)
	tb.Cleanup(func() { debug.SetGCPercent(old) })
}

// gcCPU returns the CPU time this process's collector has used so far (the runtime's estimate:
// its mark workers and assists, and the pauses).
func gcCPU() time.Duration {
	s := []metrics.Sample{{Name: "/cpu/classes/gc/total:cpu-seconds"}}
	metrics.Read(s)
	return time.Duration(s[0].Value.Float64() * float64(time.Second))
}

// processCPU returns the CPU time (user and system) this process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// backendCPU returns the CPU time each PostgreSQL backend connected to the benchmark's database has
// used so far, by pid, from /proc/<pid>/schedstat (nanoseconds on a CPU; the server is local).
// Shared processes (the WAL writer, the checkpointer) are not in it.
func backendCPU(tb testing.TB, pool *pgxpool.Pool) map[int]time.Duration {
	rows, err := pool.Query(context.Background(), "SELECT pid FROM pg_stat_activity WHERE datname = current_database()")
	if err != nil {
		tb.Fatalf("backends: %v", err)
	}
	pids, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	if err != nil {
		tb.Fatalf("backends: %v", err)
	}
	out := make(map[int]time.Duration, len(pids))
	for _, pid := range pids {
		raw, err := os.ReadFile("/proc/" + strconv.Itoa(int(pid)) + "/schedstat")
		if err != nil {
			continue // gone, or not on this machine
		}
		fields := strings.Fields(string(raw))
		if len(fields) == 0 {
			continue
		}
		ns, _ := strconv.ParseInt(fields[0], 10, 64)
		out[int(pid)] = time.Duration(ns)
	}
	return out
}

// backendCPUSince returns the CPU time the database's backends used since before (a backend that
// started since counts from zero; one that ended since is lost).
func backendCPUSince(tb testing.TB, pool *pgxpool.Pool, before map[int]time.Duration) time.Duration {
	var sum time.Duration
	for pid, d := range backendCPU(tb, pool) {
		sum += d - before[pid]
	}
	return sum
}
