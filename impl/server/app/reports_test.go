package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/google/uuid"

	"github.com/sdods/sdods/gen/serverclient"
	"github.com/sdods/sdods/impl/server/app/apptest"
)

// The versions of the tools whose output the ingest test feeds to the server.
const (
	gotestsumVersion = "v1.13.0"
	godogVersion     = "v0.16.0"
)

// goTool runs the go command in dir with an environment that ignores this repository's module.
func goTool(t *testing.T, dir string, args ...string) ([]byte, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-buildvcs=false", "GOTOOLCHAIN=local")
	return cmd.CombinedOutput()
}

func ingestRun(t *testing.T, c *serverclient.ClientWithResponses) uuid.UUID {
	t.Helper()
	src := serverclient.RunSourceIngest
	r, err := c.CreateRunWithResponse(context.Background(), serverclient.CreateRunJSONRequestBody{Project: "shop", Source: &src, Label: ptr("imported")})
	if err != nil || r.StatusCode() != http.StatusAccepted || r.JSON202 == nil {
		t.Fatalf("create ingest run: %v %s", err, r.Body)
	}
	return r.JSON202.Id
}

func ingestDoc(t *testing.T, s *apptest.Server, token string, id uuid.UUID, contentType string, doc []byte, header ...string) (int, serverclient.IngestResult, []byte) {
	t.Helper()
	status, body, _ := s.Do(t, "POST", "/api/runs/"+id.String()+"/ingest", contentType, doc, append([]string{"Authorization", "Bearer " + token}, header...)...)
	var res serverclient.IngestResult
	if status == http.StatusOK {
		if err := json.Unmarshal(body, &res); err != nil {
			t.Fatal(err)
		}
	}
	return status, res, body
}

// scenarioNames lists a run's scenarios in tree order, "feature › scenario".
func scenarioNames(run *serverclient.Run) []string {
	var out []string
	for _, m := range run.Modules {
		for _, f := range m.Features {
			for _, sc := range f.Scenarios {
				out = append(out, f.Path+" › "+sc.Name)
			}
		}
	}
	return out
}

const calcTests = `package calc

import "testing"

func TestAdd(t *testing.T) {
	if 1+1 != 2 {
		t.Fatal("arithmetic")
	}
}

func TestSub(t *testing.T) {
	t.Errorf("2-1 = %d, want 3", 2-1)
}

func TestLater(t *testing.T) { t.Skip("not yet") }

func TestTable(t *testing.T) {
	for _, name := range []string{"one", "two"} {
		t.Run(name, func(t *testing.T) {})
	}
}
`

type junitDoc struct {
	Suites []struct {
		Name     string `xml:"name,attr"`
		Tests    int    `xml:"tests,attr"`
		Failures int    `xml:"failures,attr"`
		Errors   int    `xml:"errors,attr"`
		Skipped  int    `xml:"skipped,attr"`
		Cases    []struct {
			Name      string `xml:"name,attr"`
			Classname string `xml:"classname,attr"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

// TestIngestRealToolOutput feeds the server JUnit XML made by gotestsum from go test -json, and
// Cucumber JSON made by a godog run, both produced here, and checks that the run reproduces the
// tools' counts and names exactly; then idempotency, the size limit and malformed documents.
func TestIngestRealToolOutput(t *testing.T) {
	s := apptest.Start(t)
	ctx := context.Background()
	admin := s.Setup(t)
	project(t, admin, "http://127.0.0.1:9", nil)
	token := apptest.Token(t, admin, "runs:ingest", "runs:read", "runs:write")
	bearer := s.Bearer(t, token)

	t.Run("junit from gotestsum", func(t *testing.T) {
		dir := t.TempDir()
		mustWrite(t, filepath.Join(dir, "go.mod"), "module example.com/calc\n\ngo 1.22\n")
		mustWrite(t, filepath.Join(dir, "calc_test.go"), calcTests)
		junit := filepath.Join(dir, "junit.xml")
		out, err := goTool(t, dir, "run", "gotest.tools/gotestsum@"+gotestsumVersion, "--junitfile", junit, "--format", "standard-quiet",
			"--raw-command", "--", "go", "test", "-json", "./...")
		doc, rerr := os.ReadFile(junit)
		if rerr != nil {
			t.Fatalf("gotestsum wrote no JUnit file: %v %v\n%s", err, rerr, out)
		}
		var want junitDoc
		if err := xml.Unmarshal(doc, &want); err != nil || len(want.Suites) != 1 {
			t.Fatalf("gotestsum's JUnit: %v %s", err, doc)
		}
		suite := want.Suites[0]
		if suite.Tests != 6 || suite.Failures != 1 || suite.Skipped != 1 {
			t.Fatalf("the generated package should give 6 tests, 1 failure, 1 skip: %s", doc)
		}
		var wantNames []string
		for _, c := range suite.Cases {
			wantNames = append(wantNames, c.Classname+" › "+c.Name)
		}

		id := ingestRun(t, bearer)
		status, res, body := ingestDoc(t, s, token, id, "application/xml", doc)
		if status != http.StatusOK || res.Format != "junit" || res.Duplicate || res.Status != "failed" {
			t.Fatalf("ingest: %d %s", status, body)
		}
		c := res.Counts
		if c.Total != suite.Tests || c.Failed != suite.Failures+suite.Errors || c.Skipped != suite.Skipped || c.Passed != suite.Tests-suite.Failures-suite.Errors-suite.Skipped {
			t.Fatalf("counts %+v, gotestsum says %d tests, %d failures, %d errors, %d skipped", c, suite.Tests, suite.Failures, suite.Errors, suite.Skipped)
		}
		run := waitRun(t, admin.ClientWithResponses, id, terminal)
		if got := scenarioNames(run); strings.Join(got, "\n") != strings.Join(wantNames, "\n") {
			t.Fatalf("names\n got %q\nwant %q", got, wantNames)
		}
		if run.Source != "ingest" || run.Counts != res.Counts || run.Modules[0].Name != "example.com/calc" {
			t.Fatalf("run %+v", run)
		}
		// The failing test's scenario carries the failure output of go test.
		rep, err := bearer.GetRunReportWithResponse(ctx, id)
		if err != nil || rep.JSON200 == nil || len(rep.JSON200.Failures) != 1 || rep.JSON200.Failures[0].Scenario != "TestSub" ||
			rep.JSON200.Failures[0].Error == nil || !strings.Contains(rep.JSON200.Failures[0].Error.Message+*rep.JSON200.Failures[0].Error.Stack, "want 3") {
			t.Fatalf("report: %v %s", err, rep.Body)
		}

		// The same document again: the first result, marked duplicate, nothing changed.
		status, again, body := ingestDoc(t, s, token, id, "application/xml", doc)
		if status != http.StatusOK || !again.Duplicate || again.Counts != res.Counts {
			t.Fatalf("second ingest: %d %s", status, body)
		}
		if run2 := waitRun(t, admin.ClientWithResponses, id, terminal); len(scenarioNames(run2)) != suite.Tests || run2.Counts != run.Counts {
			t.Fatalf("after the duplicate: %+v", run2.Counts)
		}
		// The ingested document is one of the run's files.
		files := getFile(t, s, admin, id, "trace.json", nil)
		if files.status != 200 {
			t.Fatalf("trace.json %d", files.status)
		}
	})

	t.Run("cucumber json from godog", func(t *testing.T) {
		dir := t.TempDir()
		mustWrite(t, filepath.Join(dir, "go.mod"), "module example.com/godogs\n\ngo 1.22\n")
		mustWrite(t, filepath.Join(dir, "features", "godogs.feature"), godogFeature)
		mustWrite(t, filepath.Join(dir, "godogs_test.go"), godogSuite)
		if out, err := goTool(t, dir, "get", "github.com/cucumber/godog@"+godogVersion); err != nil {
			t.Fatalf("go get godog: %v\n%s", err, out)
		}
		if out, err := goTool(t, dir, "mod", "tidy"); err != nil {
			t.Fatalf("go mod tidy: %v\n%s", err, out)
		}
		out, _ := goTool(t, dir, "test", "-count=1", "-v", ".")
		doc, err := os.ReadFile(filepath.Join(dir, "cucumber.json"))
		if err != nil {
			t.Fatalf("godog wrote no Cucumber JSON: %v\n%s", err, out)
		}
		// godog's own summary, e.g. "5 scenarios (3 passed, 1 failed, 1 undefined)".
		m := regexp.MustCompile(`(\d+) scenarios \(([^)]*)\)`).FindSubmatch(out)
		if m == nil {
			t.Fatalf("no godog summary in\n%s", out)
		}
		want := map[string]int{"total": atoi(t, string(m[1]))}
		for _, part := range strings.Split(string(m[2]), ", ") {
			n, kind, _ := strings.Cut(part, " ")
			want[kind] = atoi(t, n)
		}
		var features []struct {
			URI      string `json:"uri"`
			Elements []struct {
				Type string `json:"type"`
				Name string `json:"name"`
			} `json:"elements"`
		}
		if err := json.Unmarshal(doc, &features); err != nil {
			t.Fatal(err)
		}
		var wantNames []string
		for _, f := range features {
			for _, e := range f.Elements {
				if e.Type != "background" {
					wantNames = append(wantNames, f.URI+" › "+e.Name)
				}
			}
		}

		id := ingestRun(t, bearer)
		status, res, body := ingestDoc(t, s, token, id, "application/json", doc)
		if status != http.StatusOK || res.Format != "cucumber-json" || res.Status != "failed" {
			t.Fatalf("ingest: %d %s", status, body)
		}
		c := res.Counts
		if c.Total != want["total"] || c.Passed != want["passed"] || c.Failed != want["failed"] || c.Undefined != want["undefined"] ||
			c.Pending != want["pending"] || c.Skipped != want["skipped"] {
			t.Fatalf("counts %+v, godog says %v", c, want)
		}
		if want["passed"] != 3 || want["failed"] != 1 || want["undefined"] != 1 {
			t.Fatalf("the generated suite should give 3 passed, 1 failed, 1 undefined; godog says %v", want)
		}
		run := waitRun(t, admin.ClientWithResponses, id, terminal)
		if got := scenarioNames(run); strings.Join(got, "\n") != strings.Join(wantNames, "\n") {
			t.Fatalf("names\n got %q\nwant %q", got, wantNames)
		}
		// The failing scenario's step and error.
		rep, _ := bearer.GetRunReportWithResponse(ctx, id)
		if rep.JSON200 == nil || len(rep.JSON200.Failures) != 2 {
			t.Fatalf("report %s", rep.Body)
		}
		f := rep.JSON200.Failures[0]
		if f.Scenario != "Eat too many" || f.Step == nil || *f.Step != "Then there should be 0 remaining" || !strings.Contains(f.Error.Message, "expected 0 godogs") {
			t.Fatalf("failure %+v %+v", f, f.Error)
		}
	})

	t.Run("limits and malformed documents", func(t *testing.T) {
		id := ingestRun(t, bearer)
		big := append([]byte("<testsuite name=\"big\">"), bytes.Repeat([]byte("<testcase name=\"x\"/>"), 80000)...)
		if status, _, body := ingestDoc(t, s, token, id, "application/xml", big); status != http.StatusRequestEntityTooLarge {
			t.Fatalf("a large document: %d %s", status, body)
		}
		status, _, body := ingestDoc(t, s, token, id, "application/xml", []byte("<testsuite name=\"a\">\n  <testcase name=\"ok\"/>\n  <testcase classname=\"c\"/>\n</testsuite>\n"))
		if status != http.StatusBadRequest || !strings.Contains(string(body), "line 3") || !strings.Contains(string(body), `\u003ctestcase\u003e`) {
			t.Fatalf("malformed XML: %d %s", status, body)
		}
		status, _, body = ingestDoc(t, s, token, id, "application/x-ndjson", []byte("{\"meta\":{}}\n{\"pickle\": \n"))
		if status != http.StatusBadRequest || !strings.Contains(string(body), "line 2") {
			t.Fatalf("malformed NDJSON: %d %s", status, body)
		}
		// Nothing of the refused documents was stored: the run still waits for results.
		if r, _ := bearer.GetRunWithResponse(ctx, id); r.JSON200.Status != "running" || r.JSON200.Counts.Total != 0 {
			t.Fatalf("after refused documents: %s", r.Body)
		}
		// An Idempotency-Key makes a repeat a duplicate even for different bytes.
		doc := []byte("<testsuite name=\"k\"><testcase name=\"a\"/></testsuite>")
		if status, res, body := ingestDoc(t, s, token, id, "text/xml", doc, "Idempotency-Key", "build-42"); status != 200 || res.Duplicate || res.Status != "passed" {
			t.Fatalf("keyed ingest: %d %s", status, body)
		}
		if status, res, _ := ingestDoc(t, s, token, id, "text/xml", append(doc, '\n'), "Idempotency-Key", "build-42"); status != 200 || !res.Duplicate {
			t.Fatalf("keyed repeat: %d %+v", status, res)
		}
		// A token without runs:ingest is refused.
		other := apptest.Token(t, admin, "runs:read", "runs:write")
		if status, _, body := ingestDoc(t, s, other, id, "text/xml", doc); status != http.StatusForbidden || !strings.Contains(string(body), "scope_missing") {
			t.Fatalf("without the scope: %d %s", status, body)
		}
		// Cancelling an ingest run ends it at once.
		id2 := ingestRun(t, bearer)
		if r, _ := bearer.CancelRunWithResponse(ctx, id2); r.StatusCode() != http.StatusAccepted || r.JSON202.Status != "cancelled" {
			t.Fatalf("cancel: %s", r.Body)
		}
		if status, _, body := ingestDoc(t, s, token, id2, "text/xml", doc); status != http.StatusConflict {
			t.Fatalf("ingest into a cancelled run: %d %s", status, body)
		}
	})
}

const godogFeature = `Feature: Eating godogs
  In order to be happy
  As a hungry gopher
  I need to be able to eat godogs

  Background:
    Given the kitchen is open

  Scenario: Eat 5 out of 12
    Given there are 12 godogs
    When I eat 5
    Then there should be 7 remaining

  Scenario: Eat too many
    Given there are 3 godogs
    When I eat 2
    Then there should be 0 remaining

  Scenario: Dance
    Given there are 3 godogs
    When they dance the tango

  Scenario Outline: Eat some
    Given there are <start> godogs
    When I eat <eat>
    Then there should be <left> remaining

    Examples:
      | start | eat | left |
      | 10    | 1   | 9    |
      | 4     | 4   | 0    |
`

const godogSuite = `package godogs

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/cucumber/godog"
)

type godogsKey struct{}

func TestFeatures(t *testing.T) {
	suite := godog.TestSuite{
		ScenarioInitializer: func(sc *godog.ScenarioContext) {
			sc.Step(` + "`" + `^the kitchen is open$` + "`" + `, func() error { return nil })
			sc.Step(` + "`" + `^there are (\d+) godogs$` + "`" + `, func(ctx context.Context, n int) context.Context {
				return context.WithValue(ctx, godogsKey{}, n)
			})
			sc.Step(` + "`" + `^I eat (\d+)$` + "`" + `, func(ctx context.Context, n int) context.Context {
				return context.WithValue(ctx, godogsKey{}, ctx.Value(godogsKey{}).(int)-n)
			})
			sc.Step(` + "`" + `^there should be (\d+) remaining$` + "`" + `, func(ctx context.Context, n int) error {
				if left := ctx.Value(godogsKey{}).(int); left != n {
					return fmt.Errorf("expected %d godogs to be remaining, but there are %d", n, left)
				}
				return nil
			})
		},
		Options: &godog.Options{Format: "pretty,cucumber:cucumber.json", Paths: []string{"features"}, Output: os.Stdout, NoColors: true},
	}
	suite.Run()
}
`

func mustWrite(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		t.Fatalf("not a number: %q", s)
	}
	return n
}

type fileResp struct {
	status int
	body   []byte
	header http.Header
}

func getFile(t *testing.T, s *apptest.Server, b *apptest.Browser, id uuid.UUID, path string, header map[string]string) fileResp {
	t.Helper()
	req, _ := http.NewRequest("GET", s.URL+"/api/runs/"+id.String()+"/files/"+path, nil)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := (&http.Client{Jar: b.Jar}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var buf bytes.Buffer
	_, _ = buf.ReadFrom(resp.Body)
	return fileResp{status: resp.StatusCode, body: buf.Bytes(), header: resp.Header}
}

const failingBrowserFeature = `Feature: Farewell

  Scenario: Says goodbye
    When I open "/"
    And I take a screenshot
    Then I should see "Goodbye, Ada"
`

// TestReportFilesAndTraceInChromium runs a feature whose browser step fails, then checks the
// report, the run's files (content types, ETag, Range, traversal) and, in headless Chromium, that
// the HTML report shows the failure with its screenshot and that the trace viewer shows the steps.
func TestReportFilesAndTraceInChromium(t *testing.T) {
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatal("chromium is required: make deps installs it")
	}
	s := apptest.Start(t)
	ctx := context.Background()
	admin := s.Setup(t)
	web := webApp(t)
	project(t, admin, web.URL, map[string]string{"ui/farewell.feature": failingBrowserFeature, "api/health.feature": strings.Split(healthFeature, "  Scenario: A check that fails")[0]})
	id := createRun(t, admin.ClientWithResponses, serverclient.CreateRunJSONRequestBody{Project: "shop", Environment: ptr("local")})
	run := waitRun(t, admin.ClientWithResponses, id, terminal)
	if run.Status != "failed" || run.Counts.Failed != 1 || run.Counts.Passed != 1 {
		t.Fatalf("run %s %+v", run.Status, run.Counts)
	}

	rep, err := admin.GetRunReportWithResponse(ctx, id)
	if err != nil || rep.JSON200 == nil {
		t.Fatalf("report: %v %s", err, rep.Body)
	}
	r := rep.JSON200
	if r.Counts.Total != 2 || len(r.Failures) != 1 || r.HtmlUrl != "/reports/"+id.String()+"/index.html" || len(r.Slowest) != 2 || r.DurationMs == nil {
		t.Fatalf("report %s", rep.Body)
	}
	f := r.Failures[0]
	if f.Scenario != "Says goodbye" || f.FeaturePath != "ui/farewell.feature" || f.Step == nil || *f.Step != `Then I should see "Goodbye, Ada"` ||
		f.Error == nil || f.ScreenshotArtifactId == nil {
		t.Fatalf("failure %+v", f)
	}

	// Files: the screenshot by path, with its type, ETag, ranges; traversal refused.
	shot := "scenarios/" + f.ScenarioId.String() + "/screenshot.png"
	full := getFile(t, s, admin, id, shot, nil)
	if full.status != 200 || full.header.Get("Content-Type") != "image/png" || !bytes.HasPrefix(full.body, []byte("\x89PNG")) ||
		full.header.Get("Accept-Ranges") != "bytes" || full.header.Get("ETag") == "" {
		t.Fatalf("screenshot: %d %v", full.status, full.header)
	}
	etag := full.header.Get("ETag")
	if got := getFile(t, s, admin, id, shot, map[string]string{"If-None-Match": `"other", ` + etag}); got.status != http.StatusNotModified {
		t.Fatalf("If-None-Match: %d", got.status)
	}
	part := getFile(t, s, admin, id, shot, map[string]string{"Range": "bytes=1-3"})
	if part.status != http.StatusPartialContent || string(part.body) != "PNG" || part.header.Get("Content-Range") != fmt.Sprintf("bytes 1-3/%d", len(full.body)) {
		t.Fatalf("range: %d %q %v", part.status, part.body, part.header)
	}
	if tail := getFile(t, s, admin, id, shot, map[string]string{"Range": "bytes=-4"}); tail.status != 206 || !bytes.Equal(tail.body, full.body[len(full.body)-4:]) {
		t.Fatalf("suffix range: %d", tail.status)
	}
	if got := getFile(t, s, admin, id, shot, map[string]string{"Range": fmt.Sprintf("bytes=%d-", len(full.body)+10)}); got.status != http.StatusRequestedRangeNotSatisfiable {
		t.Fatalf("unsatisfiable range: %d %s", got.status, got.body)
	}
	if got := getFile(t, s, admin, id, "artifacts/"+f.ScreenshotArtifactId.String(), nil); got.status != 200 || !bytes.Equal(got.body, full.body) {
		t.Fatalf("by artifact id: %d", got.status)
	}
	for _, bad := range []string{"scenarios/../../../etc/passwd", "scenarios/%2E%2E/x", "..%2F..%2Fsecret", "a%5Cb", "scenarios//x", "./report.json"} {
		if got := getFile(t, s, admin, id, bad, nil); got.status != http.StatusBadRequest {
			t.Errorf("path %s: %d %s", bad, got.status, got.body)
		}
	}
	if got := getFile(t, s, admin, id, "scenarios/"+f.ScenarioId.String()+"/nope.png", nil); got.status != http.StatusNotFound {
		t.Fatalf("missing file: %d", got.status)
	}
	if got := getFile(t, s, admin, id, "report.json", nil); got.status != 200 || got.header.Get("Content-Type") != "application/json" {
		t.Fatalf("report.json: %d", got.status)
	}
	tr := getFile(t, s, admin, id, "trace.json", nil)
	var trace struct {
		Scenarios []struct {
			Name    string            `json:"name"`
			Steps   []json.RawMessage `json:"steps"`
			Network []struct {
				URL    string `json:"url"`
				Status string `json:"status"`
			} `json:"network"`
		} `json:"scenarios"`
	}
	if err := json.Unmarshal(tr.body, &trace); err != nil || len(trace.Scenarios) != 2 {
		t.Fatalf("trace: %v %s", err, tr.body)
	}
	for _, sc := range trace.Scenarios {
		if len(sc.Network) == 0 || !strings.HasPrefix(sc.Network[0].URL, web.URL) || !strings.HasPrefix(sc.Network[0].Status, "200") {
			t.Fatalf("network entries of %s: %+v", sc.Name, sc.Network)
		}
	}

	// The folders of the static routes, without their slash, redirect to it.
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for path, want := range map[string]string{"/reports/" + id.String(): "/reports/" + id.String() + "/", "/trace?run=x": "/trace/?run=x"} {
		resp, err := noFollow.Get(s.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusMovedPermanently || resp.Header.Get("Location") != want {
			t.Fatalf("GET %s: %d %q", path, resp.StatusCode, resp.Header.Get("Location"))
		}
	}

	// The HTML report and the trace viewer in headless Chromium, signed in with the session cookie.
	u, _ := http.NewRequest("GET", s.URL, nil)
	var sid string
	for _, c := range admin.Jar.Cookies(u.URL) {
		if c.Name == "sdods_sid" {
			sid = c.Value
		}
	}
	alloc, cancelAlloc := chromedp.NewExecAllocator(ctx, chromedp.ExecPath(chromium), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.UserDataDir(t.TempDir()), chromedp.Flag("disable-dev-shm-usage", true), chromedp.Flag("no-first-run", true))
	defer cancelAlloc()
	bctx, cancelBrowser := chromedp.NewContext(alloc)
	defer cancelBrowser()
	// The first call starts the browser for the lifetime of bctx; later calls have a deadline.
	if _, err := chromedp.Call(bctx, network.SetCookie, network.SetCookieParams{Name: "sdods_sid", Value: sid, URL: s.URL + "/"}); err != nil {
		t.Fatalf("chromium: %v", err)
	}
	tctx, cancelTimeout := context.WithTimeout(bctx, 60*time.Second)
	defer cancelTimeout()
	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("chromium: %s: %v", what, err)
		}
	}
	must("open the report", chromedp.Do(tctx, chromedp.Navigate(s.URL+"/reports/"+id.String()+"/")))
	if text, err := chromedp.Run(tctx, chromedp.Evaluate[string](`document.title + ' ' + document.body.innerText.slice(0, 300)`)); err != nil || !strings.Contains(text, "Failures") {
		t.Fatalf("chromium: the report page: %v %q\n%s", err, text, errorLines(s.Logs()))
	}
	failureText, err := chromedp.Run(tctx, chromedp.Text(chromedp.CSS("#failures .failure .where")))
	must("failure", err)
	stepText, err := chromedp.Run(tctx, chromedp.Text(chromedp.CSS("#failures .failure code.step")))
	must("step", err)
	src, err := chromedp.Run(tctx, chromedp.Evaluate[string](`document.querySelector('#failures img.failure-shot').getAttribute('src')`))
	must("screenshot src", err)
	imgWidth, err := chromedp.Run(tctx, chromedp.Poll[int](`(function(){var i=document.querySelector('#failures img.failure-shot');return i.complete&&i.naturalWidth>0?i.naturalWidth:0})()`))
	must("screenshot loaded", err)
	visibleBefore, err := chromedp.Run(tctx, chromedp.Evaluate[int](`document.querySelectorAll('tr.scenario:not(.hidden)').length`))
	must("rows", err)
	must("filter", chromedp.Do(tctx, chromedp.Click(chromedp.CSS(`input.status-filter[value="passed"]`))))
	visibleAfter, err := chromedp.Run(tctx, chromedp.Evaluate[int](`document.querySelectorAll('tr.scenario:not(.hidden)').length`))
	must("rows after the filter", err)
	if !strings.Contains(failureText, "ui/farewell.feature") || !strings.Contains(failureText, "Says goodbye") || stepText != `Then I should see "Goodbye, Ada"` {
		t.Fatalf("the failure shown: %q / %q", failureText, stepText)
	}
	if !strings.HasPrefix(src, "data:image/png;base64,") || imgWidth < 100 {
		t.Fatalf("the screenshot shown: %.40q, %d px wide", src, imgWidth)
	}
	if visibleBefore != 2 || visibleAfter != 1 {
		t.Fatalf("filter by status: %d rows, %d after hiding passed", visibleBefore, visibleAfter)
	}

	must("open the trace viewer", chromedp.Do(tctx, chromedp.Navigate(s.URL+"/trace/?run="+id.String()), chromedp.WaitVisible(chromedp.CSS(".row.step")),
		chromedp.Click(chromedp.CSS(`#scenarios .sc[data-id="`+f.ScenarioId.String()+`"]`)), chromedp.Click(chromedp.CSS(`.row.step[data-index="1"]`))))
	shots, err := chromedp.Run(tctx, chromedp.Poll[int](`(function(){var i=document.querySelector('.detail img.shot');return i&&i.complete&&i.naturalWidth>0?1:0})()`))
	must("trace screenshot", err)
	rows, err := chromedp.Run(tctx, chromedp.Evaluate[int](`document.querySelectorAll('.row.step').length`))
	must("trace steps", err)
	must("first step", chromedp.Do(tctx, chromedp.Click(chromedp.CSS(`.row.step[data-index="0"]`))))
	logText, err := chromedp.Run(tctx, chromedp.Evaluate[string](`document.querySelector('.detail table.network').textContent`))
	must("network", err)
	if rows != 3 || shots != 1 || !strings.Contains(logText, web.URL) {
		t.Fatalf("trace viewer: %d steps, screenshot %d, network %q", rows, shots, logText)
	}
}

func errorLines(logs string) string {
	var out []string
	for _, l := range strings.Split(logs, "\n") {
		if strings.Contains(l, "level=ERROR") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// cucumberJSVersion is the cucumber-js whose Cucumber Messages the ingest test feeds the server.
const cucumberJSVersion = "12.2.0"

// TestIngestCucumberMessagesFromCucumberJS runs cucumber-js (installed from the npm registry into
// a temporary folder) with the message formatter and a retry, ingests its NDJSON and compares the
// run with cucumber-js's own summary and pickles.
func TestIngestCucumberMessagesFromCucumberJS(t *testing.T) {
	if _, err := exec.LookPath("npm"); err != nil {
		t.Fatal("npm is required to run cucumber-js")
	}
	dir := t.TempDir()
	mustWrite(t, filepath.Join(dir, "package.json"), `{"name": "basket", "version": "1.0.0", "private": true}`)
	mustWrite(t, filepath.Join(dir, "features", "basket.feature"), basketFeature)
	mustWrite(t, filepath.Join(dir, "features", "step_definitions", "steps.js"), basketSteps)
	npm := func(args ...string) []byte {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, args[0], args[1:]...)
		cmd.Dir = dir
		out, _ := cmd.CombinedOutput()
		return out
	}
	if out := npm("npm", "install", "--no-audit", "--no-fund", "--loglevel=error", "@cucumber/cucumber@"+cucumberJSVersion); !fileExists(filepath.Join(dir, "node_modules", ".bin", "cucumber-js")) {
		t.Fatalf("npm install @cucumber/cucumber: %s", out)
	}
	out := npm(filepath.Join(dir, "node_modules", ".bin", "cucumber-js"), "--format", "message:out.ndjson", "--format", "summary", "--retry", "1")
	doc, err := os.ReadFile(filepath.Join(dir, "out.ndjson"))
	if err != nil {
		t.Fatalf("cucumber-js wrote no messages: %v\n%s", err, out)
	}
	m := regexp.MustCompile(`(\d+) scenarios? \(([^)]*)\)`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("no summary in\n%s", out)
	}
	want := map[string]int{"total": atoi(t, string(m[1]))}
	for _, part := range strings.Split(string(m[2]), ", ") {
		n, kind, _ := strings.Cut(part, " ")
		want[kind] = atoi(t, n)
	}
	if want["passed"] != 4 || want["failed"] != 1 || want["undefined"] != 1 {
		t.Fatalf("the generated suite should give 4 passed, 1 failed, 1 undefined; cucumber-js says %v", want)
	}
	var wantNames []string
	for _, line := range bytes.Split(doc, []byte("\n")) {
		var env struct {
			Pickle *struct {
				URI  string `json:"uri"`
				Name string `json:"name"`
			} `json:"pickle"`
		}
		if json.Unmarshal(line, &env) == nil && env.Pickle != nil {
			wantNames = append(wantNames, env.Pickle.URI+" › "+env.Pickle.Name)
		}
	}

	s := apptest.Start(t)
	admin := s.Setup(t)
	project(t, admin, "http://127.0.0.1:9", nil)
	token := apptest.Token(t, admin, "runs:ingest", "runs:read", "runs:write")
	bearer := s.Bearer(t, token)
	id := ingestRun(t, bearer)
	status, res, body := ingestDoc(t, s, token, id, "application/x-ndjson", doc)
	if status != http.StatusOK || res.Format != "cucumber-messages" || res.Status != "failed" {
		t.Fatalf("ingest: %d %s", status, body)
	}
	c := res.Counts
	if c.Total != want["total"] || c.Passed != want["passed"] || c.Failed != want["failed"] || c.Undefined != want["undefined"] || c.Flaky != 1 {
		t.Fatalf("counts %+v, cucumber-js says %v (and one scenario passed on its retry)", c, want)
	}
	run := waitRun(t, admin.ClientWithResponses, id, terminal)
	if got := scenarioNames(run); strings.Join(got, "\n") != strings.Join(wantNames, "\n") {
		t.Fatalf("names\n got %q\nwant %q", got, wantNames)
	}
	rep, _ := bearer.GetRunReportWithResponse(context.Background(), id)
	// Flaky is passed after a failure: "Flaky" is; "Miscounts" failed on both attempts (issue 18 item 8).
	if rep.JSON200 == nil || len(rep.JSON200.Flaky) != 1 || rep.JSON200.Flaky[0].Scenario != "Flaky" || len(rep.JSON200.Failures) != 2 {
		t.Fatalf("report %s", rep.Body)
	}
	f := rep.JSON200.Failures[0]
	if f.Scenario != "Miscounts" || f.Step == nil || *f.Step != "Then the basket holds 3 apple" || !strings.Contains(f.Error.Message, "Expected values to be strictly equal") {
		t.Fatalf("failure %+v %+v", f, f.Error)
	}
	// Example rows and lines come from the gherkin document; an outline row's line is its row's.
	outline := run.Modules[0].Features[0].Scenarios[2]
	if outline.Name != "Adds fruit" || outline.ExampleRow == nil || *outline.ExampleRow != 1 || outline.Line != 20 {
		t.Fatalf("outline %+v", outline)
	}
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

const basketFeature = `Feature: Basket

  Scenario: Adds an apple
    Given an empty basket
    When I add 1 apple
    Then the basket holds 1 apple

  Scenario: Miscounts
    Given an empty basket
    When I add 2 apple
    Then the basket holds 3 apple

  Scenario Outline: Adds fruit
    Given an empty basket
    When I add <n> apple
    Then the basket holds <n> apple

    Examples:
      | n |
      | 4 |
      | 5 |

  Scenario: Flaky
    Given a flaky step

  Scenario: Not written yet
    Given a step nobody wrote
`

const basketSteps = `const { Given, When, Then } = require('@cucumber/cucumber');
const assert = require('assert');
let flaky = 0;
Given('an empty basket', function () { this.n = 0; });
When('I add {int} apple', function (k) { this.n += k; });
Then('the basket holds {int} apple', function (k) { assert.strictEqual(this.n, k); });
Given('a flaky step', function () { flaky++; if (flaky < 2) throw new Error('first attempt fails'); });
`
