package app_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sdods/sdods/gen/serverclient"
	"github.com/sdods/sdods/impl/server/app/apptest"
)

// traceFeature opens the test page, clicks its button and expects the answer. On the changed page
// the button is gone: the click fails.
const traceFeature = `Feature: Checkout

  Scenario: Pays for the basket
    Given I open "/shop"
    When I click "#pay"
    Then I should see "Paid"
`

// traceShop serves the page the trace tests drive: it logs to the console, fetches /api/items
// (500 once broken) and, in its first version, has the button #pay; broken, it has none. A
// <script> of the page marks where it ran (data-ran on <body>).
func traceShop(t testing.TB, broken *atomic.Bool) *httptest.Server {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/items", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if broken.Load() {
			w.WriteHeader(http.StatusInternalServerError)
			fmt.Fprint(w, `{"error":"items exploded"}`)
			return
		}
		fmt.Fprint(w, `{"items":[1,2]}`)
	})
	mux.HandleFunc("GET /shop", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		button := `<button id="pay" style="background:#2563eb;color:#fff" onclick="document.getElementById('out').textContent='Paid'">Pay</button>`
		if broken.Load() {
			button = `<p class="soldout">Sold out</p>`
		}
		fmt.Fprintf(w, `<!doctype html><html><head><title>Shop</title><style>h1{color:rgb(10,120,40)}</style></head><body>
<h1>Basket</h1>%s<p id="out"></p>
<script>
document.body.setAttribute('data-ran', location.protocol);
console.log('shop loaded');
fetch('/api/items').then(function (r) { if (!r.ok) console.error('items failed: ' + r.status); else console.info('items ok'); });
</script></body></html>`, button)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// TestTraceViewerEndToEnd is issue 26 item 5 and its part of item 6: browser runs against a real
// page record their traces (tracing on_failure, the default); web/e2e/trace.mjs opens /trace/ in
// Chromium through playwright-core and checks the failing run's snapshots, console and network
// for each step, that a <script> in a snapshot does not run in the viewer, that the trace diff
// against the earlier passing run points at the changed step, and axe-core on the viewer.
func TestTraceViewerEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("drives a browser")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node is needed for the trace viewer's end-to-end test (Node.js 20 or later)")
	}
	chromium := findChromium(t)
	ensureWebModules(t)
	s := apptest.Start(t)
	admin := s.Setup(t)
	var broken atomic.Bool
	shop := traceShop(t, &broken)
	project(t, admin, shop.URL, map[string]string{"ui/checkout.feature": traceFeature})
	ctx := context.Background()

	pr, err := admin.GetProjectWithResponse(ctx, "shop")
	if err != nil || pr.JSON200 == nil || pr.JSON200.Settings.Tracing != serverclient.TracingModeOnFailure {
		t.Fatalf("the default tracing: %v %s", err, pr.Body)
	}

	// The setting is validated by the document (an unknown mode is 400) and kept as given.
	if r, err := admin.UpdateProjectWithBodyWithResponse(ctx, "shop", "application/json", strings.NewReader(`{"name":"Shop","settings":{"tracing":"sometimes"}}`)); err != nil ||
		r.StatusCode() != http.StatusBadRequest || !strings.Contains(string(r.Body), "tracing") {
		t.Fatalf("an unknown tracing mode: %v %d %s", err, r.StatusCode(), r.Body)
	}

	passing := createRun(t, admin.ClientWithResponses, serverclient.CreateRunJSONRequestBody{Project: "shop", Environment: ptr("local")})
	if r := waitRun(t, admin.ClientWithResponses, passing, terminal); r.Status != "passed" {
		t.Fatalf("the first run: %s\n%s", r.Status, s.Logs())
	}
	broken.Store(true)
	failing := createRun(t, admin.ClientWithResponses, serverclient.CreateRunJSONRequestBody{Project: "shop", Environment: ptr("local")})
	if r := waitRun(t, admin.ClientWithResponses, failing, terminal); r.Status != "failed" {
		t.Fatalf("the second run: %s", r.Status)
	}

	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join("e2e", "trace.mjs"))
	cmd.Dir = webDir
	cmd.Env = append(os.Environ(), "SDODS_URL="+s.URL, "SDODS_CHROMIUM="+chromium, "SDODS_E2E_PASSWORD="+apptest.AdminPassword,
		"SDODS_E2E_FAILING_RUN="+failing.String(), "SDODS_E2E_PASSING_RUN="+passing.String(), "SDODS_E2E_SHOP="+shop.URL)
	out, err := cmd.CombinedOutput()
	t.Logf("%s", out)
	if err != nil {
		t.Logf("server log:\n%s", s.Logs())
		t.Fatalf("web/e2e/trace.mjs: %v", err)
	}
	if !strings.Contains(string(out), "trace viewer: ok") {
		t.Fatal("web/e2e/trace.mjs did not finish")
	}
}
