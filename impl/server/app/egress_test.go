package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/sdods/sdods/gen/serverclient"
	"github.com/sdods/sdods/impl/server/app"
	"github.com/sdods/sdods/impl/server/app/apptest"
	"github.com/sdods/sdods/impl/server/store/storetest"
)

// stepOutcome is what a run's API tells about one step.
type stepOutcome struct {
	status, error string
}

// runScenarios runs the project "shop" and returns, per scenario name, its steps' outcomes by
// step text, and the run's whole report and event stream (logs included) as text.
func runScenarios(t *testing.T, s *apptest.Server, admin *apptest.Browser) (map[string]map[string]stepOutcome, string) {
	t.Helper()
	ctx := context.Background()
	id := createRun(t, admin.ClientWithResponses, serverclient.CreateRunJSONRequestBody{Project: "shop", Environment: ptr("local")})
	run := waitRun(t, admin.ClientWithResponses, id, terminal)
	out := map[string]map[string]stepOutcome{}
	for _, m := range run.Modules {
		for _, f := range m.Features {
			for _, sc := range f.Scenarios {
				d, err := admin.GetRunScenarioWithResponse(ctx, id, sc.Id)
				if err != nil || d.JSON200 == nil {
					t.Fatalf("scenario %s: %v %s", sc.Name, err, d.Body)
				}
				steps := map[string]stepOutcome{}
				for _, st := range d.JSON200.Steps {
					o := stepOutcome{status: string(st.Status)}
					if st.Error != nil {
						o.error = st.Error.Message
					}
					steps[st.Text] = o
				}
				out[sc.Name] = steps
			}
		}
	}
	rep, err := admin.GetRunReportWithResponse(ctx, id)
	if err != nil || rep.StatusCode() != http.StatusOK {
		t.Fatalf("report: %v %d", err, rep.StatusCode())
	}
	var events strings.Builder
	for _, e := range follow(t, s, admin, id, "", nil) {
		b, _ := json.Marshal(e.Data)
		events.Write(b)
	}
	return out, string(rep.Body) + events.String()
}

// wantRefused checks that a step failed with an error containing every part of want.
func wantRefused(t *testing.T, scenarios map[string]map[string]stepOutcome, scenario, step string, want ...string) {
	t.Helper()
	o, ok := scenarios[scenario][step]
	if !ok {
		t.Fatalf("scenario %q has no step %q: %v", scenario, step, scenarios[scenario])
	}
	if o.status != "failed" {
		t.Errorf("%s / %s: %s, want failed", scenario, step, o.status)
		return
	}
	for _, w := range want {
		if !strings.Contains(o.error, w) {
			t.Errorf("%s / %s: error %q does not contain %q", scenario, step, o.error, w)
		}
	}
}

func requireChromium(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("chromium"); err != nil {
		t.Fatal("chromium is required for browser steps: make deps installs it")
	}
}

// counter is a test HTTP server that counts the requests it receives and answers with CORS
// headers, so that a page's fetch of it would succeed were it let through.
func counter(t *testing.T, hits *atomic.Int64) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Access-Control-Allow-Origin", "*")
		fmt.Fprint(w, "CANARY-SECRET")
	}))
	t.Cleanup(srv.Close)
	return srv
}

// attackApp is the application a malicious feature drives: pages that send the browser to the
// server's disk, to other schemes, and to addresses the egress policy denies.
func attackApp(t *testing.T, canary, ctrl string) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	page := func(body string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprintf(w, "<!doctype html><html><head><title>attack</title></head><body>%s</body></html>", body)
		}
	}
	mux.HandleFunc("/file-link", page(`<a id="go" href="file://localhost/etc/passwd">disk</a><p id="out">start</p>`))
	mux.HandleFunc("/to-data", page(`<p>page</p><script>document.body.append("navigating to data"); location.href = "data:text/html,<p>DATA-URL-LOADED</p>";</script>`))
	// A frame of another origin makes a blob URL and hands it to the top page, which navigates to it.
	mux.HandleFunc("/blob-maker", page(`<script>
const u = URL.createObjectURL(new Blob(["<p>BLOB-OF-ANOTHER-ORIGIN</p>"], {type: "text/html"}));
parent.postMessage(u, "*");
</script>`))
	mux.HandleFunc("/to-blob", func(w http.ResponseWriter, r *http.Request) {
		other := "http://localhost:" + r.Host[strings.LastIndex(r.Host, ":")+1:] + "/blob-maker"
		page(`<p id="out">waiting</p><iframe src="`+other+`"></iframe>
<script>addEventListener("message", e => { document.getElementById("out").textContent = "got " + e.data; location.href = e.data; });</script>`)(w, r)
	})
	mux.HandleFunc("/to-file", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "file://localhost/etc/passwd", http.StatusFound)
	})
	mux.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, r.URL.Query().Get("to"), http.StatusFound)
	})
	// Subresources and fetches to the canary (denied) and the control (allowed) servers.
	mux.HandleFunc("/subresources", page(`<p id="out">waiting</p>
<img src="`+canary+`/img.png"><iframe src="`+canary+`/frame"></iframe>
<script>
try { new WebSocket("`+strings.Replace(canary, "http:", "ws:", 1)+`/ws"); } catch (e) {}
try { new EventSource("`+canary+`/events"); } catch (e) {}
try { navigator.sendBeacon("`+canary+`/beacon", "x"); } catch (e) {}
</script>
<script>
fetch("`+ctrl+`/ok").then(r => r.text()).then(t => {
  fetch("`+canary+`/api").then(r => r.text()).then(t => { document.getElementById("out").textContent = "LEAKED " + t; })
    .catch(() => { document.getElementById("out").textContent = "BLOCKED"; });
}).catch(() => { document.getElementById("out").textContent = "CONTROL FAILED"; });
</script>`))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// Issue 17, item 1: a feature must not read the server's disk through a browser or HTTP step,
// whatever the form of the file URL, nor open another scheme.
func TestStepsFetchOnlyHTTP(t *testing.T) {
	requireChromium(t)
	s := apptest.Start(t)
	admin := s.Setup(t)
	web := attackApp(t, "http://127.0.0.1:1", "http://127.0.0.1:1")
	const attack = `Feature: Read the disk

  Scenario: file URL with a host in the browser
    When I open "file://localhost/etc/passwd"
    And I store the text of "body" as "passwd"
    And I log "${passwd}"

  Scenario: file URL without a host in the browser
    When I open "file:///etc/passwd"

  Scenario: working directory listing
    When I open "file://localhost/proc/self/cwd/"

  Scenario: view-source and chrome URLs
    When I open "view-source:file:///etc/passwd"

  Scenario: chrome URL
    When I open "chrome://version"

  Scenario: data URL
    When I open "data:text/html,<p>hi</p>"

  Scenario: file URL in an HTTP step
    When I send a GET request to "file://localhost/etc/passwd"

  Scenario: base URL on the disk
    Given the base URL is "file://localhost/etc"
    When I send a GET request to "/passwd"

  Scenario: a redirect to the disk
    When I open "/to-file"
    Then I should not see "root:"

  Scenario: a link to the disk
    When I open "/file-link"
    And I click "#go"
    And I wait 1 second
    Then I should not see "root:"
    And the page URL contains "/file-link"

  Scenario: a page navigating to a blob URL of another origin
    When I open "/to-blob"
    And I wait 2 seconds
    Then I should not see "BLOB-OF-ANOTHER-ORIGIN"
    And I should see "got blob:http://localhost"

  Scenario: a page navigating to a data URL
    When I open "/to-data"
    And I wait 1 second
    Then I should not see "DATA-URL-LOADED"
    And I should see "navigating to data"
`
	project(t, admin, web.URL, map[string]string{"attack.feature": attack})
	got, report := runScenarios(t, s, admin)
	const scheme = "not an absolute http or https URL"
	wantRefused(t, got, "file URL with a host in the browser", `I open "file://localhost/etc/passwd"`, scheme)
	wantRefused(t, got, "file URL without a host in the browser", `I open "file:///etc/passwd"`, scheme)
	wantRefused(t, got, "working directory listing", `I open "file://localhost/proc/self/cwd/"`, scheme)
	wantRefused(t, got, "view-source and chrome URLs", `I open "view-source:file:///etc/passwd"`, scheme)
	wantRefused(t, got, "chrome URL", `I open "chrome://version"`, scheme)
	wantRefused(t, got, "data URL", `I open "data:text/html,<p>hi</p>"`, scheme)
	wantRefused(t, got, "file URL in an HTTP step", `I send a GET request to "file://localhost/etc/passwd"`, scheme)
	wantRefused(t, got, "base URL on the disk", `the base URL is "file://localhost/etc"`, scheme)
	// A redirect to the disk fails the navigation (Chromium refuses it before the guard would).
	if o := got["a redirect to the disk"][`I open "/to-file"`]; o.status != "failed" {
		t.Errorf("redirect to file: %+v", o)
	}
	for _, sc := range []string{"a link to the disk", "a page navigating to a data URL", "a page navigating to a blob URL of another origin"} {
		for step, o := range got[sc] {
			if o.status != "passed" {
				t.Errorf("%s / %s: %+v (the page must stay where it was)", sc, step, o)
			}
		}
	}
	if strings.Contains(report, "root:x:0:0") || strings.Contains(s.Logs(), "root:x:0:0") {
		t.Fatal("the content of /etc/passwd reached the run's report, its events or the server's log")
	}
}

// Issue 17, items 5 and 13: steps reach nothing the egress policy denies — by default loopback,
// link-local (cloud metadata), the server's own listener and its database — however the
// address is written, through a name, a redirect, or a page's subresources.
func TestEgressPolicyOfSteps(t *testing.T) {
	requireChromium(t)
	ctx := context.Background()
	var canaryHits, ctrlHits atomic.Int64
	canary := counter(t, &canaryHits)
	ctrl := counter(t, &ctrlHits)
	// The harness allows loopback (the tests' applications live there); the operator denies the
	// canary's endpoint on top.
	s := apptest.StartOn(t, storetest.NewDatabase(t), func(c *app.Config) { c.EgressDeny = []string{canary.Listener.Addr().String()} })
	admin := s.Setup(t)
	web := attackApp(t, canary.URL, ctrl.URL)
	own, _ := url.Parse(s.URL)
	_, ownPort, _ := net.SplitHostPort(own.Host)
	_, canaryPort, _ := net.SplitHostPort(canary.Listener.Addr().String())
	dbPort := databasePort(t, s.DatabaseURL)

	features := `Feature: Reach what only the server can reach

  Scenario: the server's own API
    When I send a GET request to "` + s.URL + `/api/auth/setup-status"

  Scenario: the server's own API by name
    When I send a GET request to "http://localhost:` + ownPort + `/api/health"

  Scenario: the database
    When I send a GET request to "http://127.0.0.1:` + dbPort + `/"

  Scenario: cloud metadata
    When I send a GET request to "http://169.254.169.254/latest/meta-data/"

  Scenario: IPv4-mapped IPv6
    When I send a GET request to "http://[::ffff:127.0.0.1]:` + ownPort + `/api/health"

  Scenario: IPv4-compatible IPv6
    When I send a GET request to "http://[::7f00:1]:` + ownPort + `/api/health"

  Scenario: NAT64
    When I send a GET request to "http://[64:ff9b::7f00:1]:` + ownPort + `/api/health"

  Scenario: a redirect to the server's own API
    When I send a GET request to "/redirect?to=` + url.QueryEscape(s.URL+"/api/health") + `"

  Scenario: the operator's deny
    When I send a GET request to "http://localhost:` + canaryPort + `/"

  Scenario: the browser opens the server's own API
    When I open "` + s.URL + `/api/health"

  Scenario: the browser follows a redirect to the database
    When I open "/redirect?to=` + url.QueryEscape("http://127.0.0.1:"+dbPort+"/") + `"

  Scenario: the browser's subresources
    When I open "/subresources"
    Then I should see "BLOCKED"
    And I should not see "CANARY-SECRET"

  Scenario: the allowed application
    When I send a GET request to "` + ctrl.URL + `/"
    Then the response status is 200
`
	project(t, admin, web.URL, map[string]string{"egress.feature": features})
	got, report := runScenarios(t, s, admin)
	const refused = "egress policy refuses"
	wantRefused(t, got, "the server's own API", `I send a GET request to "`+s.URL+`/api/auth/setup-status"`, refused, "own listener")
	wantRefused(t, got, "the server's own API by name", `I send a GET request to "http://localhost:`+ownPort+`/api/health"`, refused, "own listener")
	wantRefused(t, got, "the database", `I send a GET request to "http://127.0.0.1:`+dbPort+`/"`, refused, "database")
	wantRefused(t, got, "cloud metadata", `I send a GET request to "http://169.254.169.254/latest/meta-data/"`, refused, "link-local")
	wantRefused(t, got, "IPv4-mapped IPv6", `I send a GET request to "http://[::ffff:127.0.0.1]:`+ownPort+`/api/health"`, refused)
	wantRefused(t, got, "IPv4-compatible IPv6", `I send a GET request to "http://[::7f00:1]:`+ownPort+`/api/health"`, refused)
	wantRefused(t, got, "NAT64", `I send a GET request to "http://[64:ff9b::7f00:1]:`+ownPort+`/api/health"`, refused)
	wantRefused(t, got, "a redirect to the server's own API", `I send a GET request to "/redirect?to=`+url.QueryEscape(s.URL+"/api/health")+`"`, refused, "own listener")
	wantRefused(t, got, "the operator's deny", `I send a GET request to "http://localhost:`+canaryPort+`/"`, refused)
	wantRefused(t, got, "the browser opens the server's own API", `I open "`+s.URL+`/api/health"`, refused, "own listener")
	wantRefused(t, got, "the browser follows a redirect to the database", `I open "/redirect?to=`+url.QueryEscape("http://127.0.0.1:"+dbPort+"/")+`"`, refused, "database")
	for _, sc := range []string{"the browser's subresources", "the allowed application"} {
		for step, o := range got[sc] {
			if o.status != "passed" {
				t.Errorf("%s / %s: %+v", sc, step, o)
			}
		}
	}
	if n := canaryHits.Load(); n != 0 {
		t.Errorf("the denied canary server received %d request(s)", n)
	}
	if ctrlHits.Load() < 2 {
		t.Errorf("the allowed server received %d request(s): the page did not run", ctrlHits.Load())
	}
	if strings.Contains(report, `"status":"ok"`) || strings.Contains(report, "needsSetup") || strings.Contains(report, "CANARY-SECRET") {
		t.Fatal("a denied response reached the run's report")
	}

	// An instance admin sees the policy in the health check; nobody else does.
	h, err := admin.GetHealthWithResponse(ctx)
	if err != nil || h.JSON200 == nil || h.JSON200.Egress == nil {
		t.Fatalf("health as admin: %v %s", err, h.Body)
	}
	rules := map[string]string{}
	for _, r := range h.JSON200.Egress.Rules {
		rules[r.Rule] = fmt.Sprintf("%s builtIn=%v", r.Effect, r.BuiltIn)
	}
	for rule, want := range map[string]string{
		"127.0.0.0/8": "allow builtIn=false", "169.254.0.0/16": "deny builtIn=true",
		canary.Listener.Addr().String(): "deny builtIn=false", own.Host: "deny builtIn=true", "127.0.0.1:" + dbPort: "deny builtIn=true",
	} {
		if rules[rule] != want {
			t.Errorf("health egress rule %s: %q, want %q (all: %v)", rule, rules[rule], want, rules)
		}
	}
	editor, _ := s.SignIn(t, admin, "editor@example.com")
	for name, c := range map[string]*serverclient.ClientWithResponses{"anonymous": s.Client, "non-admin": editor.ClientWithResponses} {
		if h, _ := c.GetHealthWithResponse(ctx); h.JSON200 == nil || h.JSON200.Egress != nil || strings.Contains(string(h.Body), "egress") {
			t.Errorf("health as %s shows the egress policy: %s", name, h.Body)
		}
	}
}

// Without the harness's explicit allowance, loopback is denied: the default is not open.
func TestEgressDefaultDeniesLoopback(t *testing.T) {
	requireChromium(t)
	s := apptest.StartOn(t, storetest.NewDatabase(t), func(c *app.Config) { c.EgressAllow = nil })
	admin := s.Setup(t)
	var hits atomic.Int64
	web := counter(t, &hits)
	project(t, admin, web.URL, map[string]string{"local.feature": `Feature: Local

  Scenario: HTTP
    When I send a GET request to "/"

  Scenario: Browser
    When I open "/"
`})
	got, _ := runScenarios(t, s, admin)
	wantRefused(t, got, "HTTP", `I send a GET request to "/"`, "egress policy refuses", "loopback", "-egress-allow")
	wantRefused(t, got, "Browser", `I open "/"`, "egress policy refuses", "loopback")
	if hits.Load() != 0 {
		t.Fatalf("the loopback application received %d request(s)", hits.Load())
	}
}

// Issue 17, item 9: a Git URL is parsed as go-git dials it (git@/repo is not a local path), and
// every address that is refused or unreachable gives one identical answer, whatever is (or is
// not) listening there.
func TestGitIntegrationReachesOnlyWhatThePolicyAllows(t *testing.T) {
	ctx := context.Background()
	closed := closedPort(t)
	notGit := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "nothing here", http.StatusNotFound)
	}))
	defer notGit.Close()
	tcpOnly, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer tcpOnly.Close()
	go func() {
		for {
			c, err := tcpOnly.Accept()
			if err != nil {
				return
			}
			fmt.Fprint(c, "SSH-2.0-not-really\r\n")
			c.Close()
		}
	}()

	for _, tc := range []struct {
		name string
		tune func(*app.Config)
		urls func(s *apptest.Server) []string
	}{
		{"default policy", func(c *app.Config) { c.EgressAllow, c.GitAllowLocal = nil, false }, func(s *apptest.Server) []string {
			return []string{
				"http://127.0.0.1:" + closed + "/r.git", notGit.URL + "/r.git", "http://localhost:" + port(t, notGit.URL) + "/r.git",
				"http://169.254.169.254/r.git", "http://[::ffff:127.0.0.1]:" + port(t, notGit.URL) + "/r.git",
				"ssh://git@" + tcpOnly.Addr().String() + "/r.git", "git@127.0.0.1:r.git", "git://127.0.0.1:" + closed + "/r.git",
			}
		}},
		{"loopback allowed", nil, func(s *apptest.Server) []string {
			return []string{
				"http://127.0.0.1:" + closed + "/r.git", notGit.URL + "/r.git", s.URL + "/r.git",
				"http://127.0.0.1:" + databasePort(t, s.DatabaseURL) + "/r.git", "git://" + tcpOnly.Addr().String() + "/r.git",
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := apptest.StartOn(t, storetest.NewDatabase(t), tc.tune)
			admin := s.Setup(t)
			if r, err := admin.CreateProjectWithResponse(ctx, serverclient.CreateProjectJSONRequestBody{Slug: "web", Name: "Web", WorkspaceSlug: "default"}); err != nil || r.StatusCode() != http.StatusCreated {
				t.Fatalf("create project: %v", err)
			}
			// URLs that are no remote repository are refused when configured.
			if tc.tune != nil {
				for _, bad := range []string{"git@/repo", "git@/../../etc", "git@", "file://localhost/etc", "/srv/repo", "ftp://x/r.git", "ssh:///r.git", "https://user:hunter2@example.com/r.git"} {
					r, _ := admin.PutIntegrationWithResponse(ctx, "web", "git", serverclient.PutIntegrationJSONRequestBody{Git: &serverclient.GitConfigInput{Url: bad}})
					expect(t, "git URL "+bad, r.StatusCode(), r.Body, 400, "validation_failed")
				}
			}
			answers := map[string][]string{}
			for _, u := range tc.urls(s) {
				r, _ := admin.PutIntegrationWithResponse(ctx, "web", "git", serverclient.PutIntegrationJSONRequestBody{Git: &serverclient.GitConfigInput{Url: u}})
				if r.StatusCode() >= 300 {
					t.Fatalf("put %s: %d %s", u, r.StatusCode(), r.Body)
				}
				tr, _ := admin.TestIntegrationWithResponse(ctx, "web", "git")
				if tr.JSON200 == nil || tr.JSON200.Ok || tr.JSON200.Error == nil {
					t.Fatalf("test %s: %s", u, tr.Body)
				}
				answers[*tr.JSON200.Error] = append(answers[*tr.JSON200.Error], u)
				sr, _ := admin.SyncIntegrationWithResponse(ctx, "web", "git", nil)
				e := mustErrorBody(t, sr.Body)
				answers[e.Error.Hint] = append(answers[e.Error.Hint], "sync "+u)
			}
			if len(answers) != 2 {
				t.Fatalf("the answers tell addresses apart (%d different ones): %v", len(answers), answers)
			}
			for answer := range answers {
				if !strings.Contains(answer, "cannot be reached from this server") {
					t.Errorf("answer %q", answer)
				}
			}
		})
	}
}

func port(t *testing.T, raw string) string {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u.Port()
}

// closedPort returns a loopback port nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, p, _ := net.SplitHostPort(ln.Addr().String())
	ln.Close()
	return p
}

func databasePort(t *testing.T, dbURL string) string {
	t.Helper()
	u, err := url.Parse(dbURL)
	if err != nil || u.Port() == "" {
		return "5432"
	}
	return u.Port()
}
