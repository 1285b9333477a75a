package runner_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sdods/sdods/impl/server/runner"
)

// BenchmarkScenarios200x3 is the scenarios of the server's runner benchmark (impl/server/app,
// BenchmarkRunner200x3) in the runner alone: 200 scenarios of three HTTP steps against a local
// server, traced on failure as a project is by default, the events taken by a sink that keeps
// nothing. What it measures is the runner's and the step library's own cost, without the
// database, the batches or the API (docs/benchmarks.md, "Runner: round 6").
func BenchmarkScenarios200x3(b *testing.B) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /items/{n}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":%q,"status":"ok"}`, r.PathValue("n"))
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	var feature strings.Builder
	feature.WriteString("Feature: Items\n")
	for i := range 200 {
		fmt.Fprintf(&feature, "\n  Scenario: Item %d\n    When I send a GET request to \"/items/%d\"\n    Then the response status is 200\n    And the response JSON at \"$.status\" is \"ok\"\n", i, i)
	}
	r := runner.New(runner.Config{HTTPClient: srv.Client()})
	run := runner.Run{ID: "bench", Project: "shop", Features: map[string]string{"items.feature": feature.String()},
		Environment: runner.Environment{Name: "local", BaseURL: srv.URL}, Concurrency: 1, Tracing: runner.TracingOnFailure}
	events := 0
	b.ReportAllocs()
	cpu := processCPU()
	for b.Loop() {
		res, err := r.Run(context.Background(), run, runner.EventsFunc(func(runner.Event) { events++ }))
		if err != nil || res.Status != runner.RunPassed || res.Counts.Passed != 200 {
			b.Fatalf("%v %+v", err, res)
		}
	}
	b.ReportMetric(float64((processCPU()-cpu).Microseconds())/1000/float64(b.N), "cpu-ms/op")
	b.ReportMetric(float64(events)/float64(b.N), "events/op")
}

// processCPU returns the CPU time (user and system) this process has used: the runner's and the
// local server's.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
