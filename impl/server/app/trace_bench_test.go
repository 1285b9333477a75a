package app_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/sdods/sdods/gen/serverclient"
	"github.com/sdods/sdods/impl/server/app/apptest"
)

// traceBenchScenarios is the size of the browser scenario set of BenchmarkRunnerTracing.
const traceBenchScenarios = 12

// BenchmarkRunnerTracing measures what recording traces costs (docs/benchmarks.md, "Tracing"): a
// real server runs traceBenchScenarios browser scenarios (open a page that logs and fetches,
// fill a field, click, see the answer, four steps each) against a local page, with the project's
// tracing off, on_failure and always in turn within every iteration (alternated, so the
// machine's load falls on all three alike). It reports each mode's run time and the ratios to
// off, the floor.
func BenchmarkRunnerTracing(b *testing.B) {
	s := apptest.Start(b)
	admin := s.Setup(b)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/items", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"items":[1,2,3]}`)
	})
	mux.HandleFunc("GET /page/{n}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><html><head><title>Page %s</title><style>body{font-family:sans-serif} .row{padding:4px;border-bottom:1px solid #ddd}</style></head>
<body><h1>Order %s</h1>%s<input id="name"><button id="go" onclick="document.getElementById('out').textContent='Hello '+document.getElementById('name').value">Go</button><p id="out"></p>
<script>console.log('page %s'); fetch('/api/items').then(r => r.json()).then(j => console.info('items', j.items.length));</script></body></html>`,
			r.PathValue("n"), r.PathValue("n"), strings.Repeat(`<div class="row">a line of the order</div>`, 40), r.PathValue("n"))
	})
	target := httptest.NewServer(mux)
	b.Cleanup(target.Close)
	ctx := context.Background()
	if r, err := admin.CreateProjectWithResponse(ctx, serverclient.CreateProjectJSONRequestBody{Slug: "shop", Name: "Shop", WorkspaceSlug: "default"}); err != nil || r.StatusCode() != http.StatusCreated {
		b.Fatalf("create project: %v", err)
	}
	if r, err := admin.CreateEnvironmentWithResponse(ctx, "shop", serverclient.CreateEnvironmentJSONRequestBody{Name: "local", BaseUrl: &target.URL}); err != nil || r.StatusCode() != http.StatusCreated {
		b.Fatalf("create environment: %v", err)
	}
	var f strings.Builder
	f.WriteString("Feature: Pages\n")
	for i := range traceBenchScenarios {
		fmt.Fprintf(&f, "\n  Scenario: Page %d\n    Given I open \"/page/%d\"\n    When I fill \"#name\" with \"Ada %d\"\n    And I click \"#go\"\n    Then I should see \"Hello Ada %d\"\n", i, i, i, i)
	}
	if r, err := admin.PutFeatureWithResponse(ctx, "shop", "pages.feature", &serverclient.PutFeatureParams{IfMatch: ptr("*")}, serverclient.PutFeatureJSONRequestBody{Content: f.String()}); err != nil || r.StatusCode() >= 300 {
		b.Fatalf("put feature: %v %s", err, r.Body)
	}
	modes := []serverclient.TracingMode{serverclient.TracingModeOff, serverclient.TracingModeOnFailure, serverclient.TracingModeAlways}
	took := map[serverclient.TracingMode]time.Duration{}
	runOnce := func(mode serverclient.TracingMode) time.Duration {
		u, err := admin.UpdateProjectWithResponse(ctx, "shop", serverclient.UpdateProjectJSONRequestBody{Name: "Shop", Settings: &serverclient.ProjectSettingsInput{Tracing: &mode}})
		if err != nil || u.JSON200 == nil || u.JSON200.Settings.Tracing != mode {
			b.Fatalf("set tracing %s: %v %s", mode, err, u.Body)
		}
		start := time.Now()
		r, err := admin.CreateRunWithResponse(ctx, serverclient.CreateRunJSONRequestBody{Project: "shop", Environment: ptr("local")})
		if err != nil || r.JSON202 == nil {
			b.Fatalf("create run: %v", err)
		}
		for {
			g, err := admin.GetRunWithResponse(ctx, r.JSON202.Id)
			if err != nil || g.JSON200 == nil {
				b.Fatalf("get run: %v", err)
			}
			if terminal(string(g.JSON200.Status)) {
				if g.JSON200.Status != "passed" || g.JSON200.Counts.Passed != traceBenchScenarios {
					b.Fatalf("run (%s) ended %s with %+v", mode, g.JSON200.Status, g.JSON200.Counts)
				}
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
		return time.Since(start)
	}
	runOnce(serverclient.TracingModeOff) // Chromium's first start and the page cache: not measured
	b.ResetTimer()
	i := 0
	for b.Loop() {
		// Rotate the order so that no mode always runs first or last in an iteration.
		for j := range modes {
			m := modes[(i+j)%len(modes)]
			took[m] += runOnce(m)
		}
		i++
	}
	n := float64(b.N)
	for _, m := range modes {
		b.ReportMetric(float64(took[m].Milliseconds())/n, string(m)+"-ms/op")
	}
	b.ReportMetric(float64(took[serverclient.TracingModeOnFailure])/float64(took[serverclient.TracingModeOff]), "on_failure/off")
	b.ReportMetric(float64(took[serverclient.TracingModeAlways])/float64(took[serverclient.TracingModeOff]), "always/off")
}
