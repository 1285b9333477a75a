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
	"sync"
	"testing"
	"time"

	"github.com/sdods/sdods/gen/serverclient"
	"github.com/sdods/sdods/impl/server/app"
	"github.com/sdods/sdods/impl/server/app/apptest"
	"github.com/sdods/sdods/impl/server/store/storetest"
)

// TestWebUIInboxEndToEnd is issue 26 items 2, 4 and 6 (review inbox and agent jobs):
// web/e2e/inbox.mjs drives the system Chromium with playwright-core against this real server.
// The test seeds what a project lives through — a browser feature whose button's id changed, run
// until the heal recurred, and a page whose look changed under two visual baselines — then the
// script starts the heal agent from the UI with the form generated from the kind's schema, follows
// its events live, opens the proposal in the inbox, sees it verified, accepts it (the feature file
// changes), sees the second patch go stale when its feature was edited meanwhile, accepts one
// visual baseline and rejects the other with a reason; axe-core checks every new page. Automatic heal jobs are off, so the proposal can only come from the job the UI starts.
func TestWebUIInboxEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("drives a browser")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node is needed for the web UI's end-to-end test (Node.js 20 or later)")
	}
	chromium := findChromium(t)
	ensureWebModules(t)
	s := apptest.StartOn(t, storetest.NewDatabase(t), func(c *app.Config) { c.NoAutoHeal = true })
	ctx := context.Background()
	admin := s.Setup(t)

	// The application under test: / has the button the feature clicks (its id changes when
	// /rename is posted), /look the page two visual baselines capture (its colours change when
	// /restyle is posted, the background too, so that both differences are large and certain).
	var mu sync.Mutex
	buttonID, colour, background := "submit", "#2563eb", "#ffffff"
	mux := http.NewServeMux()
	mux.HandleFunc("POST /rename", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		buttonID = "send-button"
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("POST /restyle", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		colour, background = "#b91c1c", "#fef3c7"
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("GET /look", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		c, bg := colour, background
		mu.Unlock()
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><html><body style="margin:20px;font-family:sans-serif;background:%s">
<h1 style="color:%s">Checkout</h1><button style="background:%s;color:#fff;border:0;border-radius:6px;padding:10px 18px">Pay</button></body></html>`, bg, c, c)
	})
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		id := buttonID
		mu.Unlock()
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><html><body>
<button id=%q data-testid="submit-btn" onclick="document.getElementById('out').textContent='Sent'">Send</button>
<p id="out"></p></body></html>`, id)
	})
	web := httptest.NewServer(mux)
	t.Cleanup(web.Close)
	post := func(path string) {
		resp, err := http.Post(web.URL+path, "text/plain", nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}

	send := "Feature: Send\n  Scenario: Send\n    When I open \"/\"\n    And I click \"#submit\"\n    Then I should see \"Sent\"\n    And I take a screenshot\n"
	project(t, admin, web.URL, map[string]string{
		"send.feature": send,
		// The same heal in a second feature: a second patch, whose feature someone edits before it is accepted (stale).
		"other.feature": "Feature: Other\n  Scenario: Send again\n    When I open \"/\"\n    And I click \"#submit\"\n    Then I should see \"Sent\"\n",
		// One scenario per baseline: a failed check fails its step, and the steps after it are skipped.
		"ui/look.feature": "Feature: Look\n  Scenario: Checkout looks right\n    Given the viewport is 640x400\n    When I open \"/look\"\n" +
			"    Then the page matches the baseline \"checkout\"\n\n  Scenario: Header looks right\n    Given the viewport is 640x400\n" +
			"    When I open \"/look\"\n    Then the element \"h1\" matches the baseline \"header\"\n"})
	run := func(paths ...string) string {
		id := createRun(t, admin.ClientWithResponses, serverclient.CreateRunJSONRequestBody{Project: "shop", Environment: ptr("local"), Paths: &paths})
		r := waitRun(t, admin.ClientWithResponses, id, terminal)
		return string(r.Status)
	}
	// A heal that recurs: the first run records the button's alternatives, the next two heal
	// #submit to the renamed button.
	if st := run("send.feature", "other.feature"); st != "passed" {
		t.Fatalf("first run: %s", st)
	}
	post("/rename")
	for i := 0; i < 2; i++ {
		if st := run("send.feature", "other.feature"); st != "passed" {
			t.Fatalf("healed run %d: %s", i+1, st)
		}
	}
	// Two visual baselines: the first run makes them, the restyled page fails both.
	if st := run("ui/look.feature"); st != "passed" {
		t.Fatalf("first visual run: %s", st)
	}
	post("/restyle")
	if st := run("ui/look.feature"); st != "failed" {
		t.Fatalf("second visual run: %s (want failed checks)", st)
	}

	ectx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ectx, node, filepath.Join("e2e", "inbox.mjs"))
	cmd.Dir = webDir
	cmd.Env = append(os.Environ(), "SDODS_URL="+s.URL, "SDODS_E2E_EMAIL=admin@example.com", "SDODS_E2E_PASSWORD="+apptest.AdminPassword,
		"SDODS_CHROMIUM="+chromium, "SDODS_E2E_ARTIFACTS="+t.TempDir())
	out, err := cmd.CombinedOutput()
	t.Logf("%s", out)
	if err != nil {
		t.Logf("server log:\n%s", s.Logs())
		t.Fatalf("web/e2e/inbox.mjs: %v", err)
	}

	// What the browser did, read back from outside it: the patched feature is saved, one proposal
	// accepted by the admin, a baseline rejected with its reason.
	f, err := admin.GetFeatureWithResponse(ctx, "shop", "send.feature", nil)
	if err != nil || f.JSON200 == nil {
		t.Fatalf("get feature: %v %s", err, f.Body)
	}
	// The heal found the renamed button by its test id (the strongest alternative recorded).
	if want := strings.Replace(send, `"#submit"`, `"[data-testid='submit-btn']"`, 1); f.JSON200.Content != want {
		t.Fatalf("the accepted patch is not the feature's content:\n%s\nwant\n%s", f.JSON200.Content, want)
	}
	// The stale patch was not applied: other.feature is what the person saved by hand.
	o, err := admin.GetFeatureWithResponse(ctx, "shop", "other.feature", nil)
	if err != nil || o.JSON200 == nil || !strings.Contains(o.JSON200.Content, "# edited by hand") || !strings.Contains(o.JSON200.Content, `"#submit"`) {
		t.Fatalf("other.feature after its stale patch: %v %s", err, o.Body)
	}
	stale, err := admin.ListProposalsWithResponse(ctx, &serverclient.ListProposalsParams{Project: ptr("shop"), Status: ptr(serverclient.ProposalStatus("stale"))})
	if err != nil || stale.JSON200 == nil || len(stale.JSON200.Items) != 1 || stale.JSON200.Items[0].Target.FeaturePath == nil || *stale.JSON200.Items[0].Target.FeaturePath != "other.feature" {
		t.Fatalf("stale proposals: %v %s", err, stale.Body)
	}
	rejected, err := admin.ListProposalsWithResponse(ctx, &serverclient.ListProposalsParams{Project: ptr("shop"), Status: ptr(serverclient.ProposalStatus("rejected"))})
	if err != nil || rejected.JSON200 == nil || len(rejected.JSON200.Items) != 1 {
		t.Fatalf("rejected proposals: %v %s", err, rejected.Body)
	}
	if r := rejected.JSON200.Items[0]; r.Kind != "baseline_update" || r.Reason == nil || !strings.Contains(*r.Reason, "header") {
		t.Fatalf("the rejection: %+v", r)
	}
}
