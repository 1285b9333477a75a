package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sdods/sdods/gen/serverclient"
	"github.com/sdods/sdods/impl/server/app/apptest"
	"github.com/sdods/sdods/impl/server/ingest"
)

// TestTextThePostgreSQLCannotStoreIsRefused is issue 18 items 1 and 2: a NUL character, a lone
// surrogate or invalid UTF-8 in a member, a query or a path parameter is a 400 naming it — for
// every operation, from one place in the pipeline — never a 500 from PostgreSQL and never stored
// as U+FFFD.
func TestTextThePostgreSQLCannotStoreIsRefused(t *testing.T) {
	s := apptest.Start(t)
	admin := s.Setup(t)
	project(t, admin, "http://127.0.0.1:9", nil)
	_, user := s.SignIn(t, admin, "tester@example.com")
	token := apptest.Token(t, admin, "projects:read", "projects:write", "features:read", "features:write", "runs:write", "runs:read", "admin:read", "admin:write")
	auth := []string{"Authorization", "Bearer " + token}
	for _, c := range []struct {
		name, method, path, body, hint string
	}{
		{"updateProject", "PUT", "/api/projects/shop", `{"name":"Shop\u0000"}`, "body member /name: contains a NUL character"},
		{"putFeature", "PUT", "/api/projects/shop/features/a.feature", `{"content":"Feature: A\n  Scenario: B\u0000\n    Given x\n"}`, "body member /content: contains a NUL character"},
		{"validateFeature", "POST", "/api/projects/shop/features/validate", `{"path":"a.feature","content":"Feature: A\u0000\n"}`, "body member /content: contains a NUL"},
		{"createEnvironment", "POST", "/api/projects/shop/envs", `{"name":"staging","variables":[{"name":"A","value":"x\u0000y"}]}`, "body member /variables/0/value: contains a NUL"},
		{"createPoolAccount", "POST", "/api/projects/shop/users-pool", `{"username":"u\u0000","password":"p"}`, "body member /username: contains a NUL"},
		{"createRun label", "POST", "/api/runs", `{"project":"shop","label":"nightly\u0000"}`, "body member /label: contains a NUL"},
		{"updateUser", "PATCH", "/api/users/" + user.Id.String(), `{"displayName":"T\u0000"}`, "body member /displayName: contains a NUL"},
		{"member name", "POST", "/api/projects/shop/users-pool", `{"username":"u","password":"p","attributes":{"k\u0000":"v"}}`, `body member /attributes/k\u0000: the member name contains a NUL`},
		{"lone surrogate", "PUT", "/api/projects/shop", `{"name":"Shop \ud800"}`, "body member /name: contains a lone UTF-16 surrogate (\\uD800"},
		{"invalid UTF-8", "PUT", "/api/projects/shop", "{\"name\":\"Sh\xffop\"}", "body member /name: is not valid UTF-8 (byte 0xFF, character 3)"},
		{"invalid UTF-8 in a member name", "POST", "/api/projects/shop/users-pool", "{\"username\":\"u\",\"password\":\"p\",\"attributes\":{\"k\xc3\":\"v\"}}", "the member name is not valid UTF-8"},
		{"query q NUL", "GET", "/api/projects?q=a%00b", "", `query parameter "q": contains a NUL character (U+0000, character 2)`},
		{"query q invalid UTF-8", "GET", "/api/projects?q=a%FFb", "", `query parameter "q": is not valid UTF-8 (byte 0xFF, character 2)`},
		{"path NUL", "GET", "/api/projects/shop/features/a%00.feature", "", `path parameter "path": contains a NUL character`},
		{"path invalid UTF-8", "GET", "/api/projects/shop/features/a%FF.feature", "", `path parameter "path": is not valid UTF-8`},
	} {
		t.Run(c.name, func(t *testing.T) {
			var body []byte
			ct := ""
			if c.body != "" {
				body, ct = []byte(c.body), "application/json"
			}
			h := append([]string{}, auth...)
			if c.method == "PUT" && strings.Contains(c.path, "/features/") {
				h = append(h, "If-Match", "*")
			}
			status, got, _ := s.Do(t, c.method, c.path, ct, body, h...)
			if status != http.StatusBadRequest {
				t.Fatalf("status %d, want 400: %s", status, got)
			}
			e := mustErrorBody(t, got)
			if e.Error.Code != "validation_failed" || !strings.Contains(e.Error.Hint, c.hint) {
				t.Fatalf("error %+v, want validation_failed with hint containing %q", e.Error, c.hint)
			}
		})
	}
	// Escaped backslashes are not NUL escapes, and valid text passes.
	status, got, _ := s.Do(t, "PUT", "/api/projects/shop", "application/json", []byte(`{"name":"Shop \\u0000 é 😀"}`), auth...)
	if status != http.StatusOK || !bytes.Contains(got, []byte(`Shop \\u0000 é 😀`)) {
		t.Fatalf("valid text: %d %s", status, got)
	}
	if strings.Contains(s.Logs(), "level=ERROR") {
		t.Fatalf("errors logged:\n%s", s.Logs())
	}
}

// TestTestOutputKeepsNULEscaped is issue 18 item 1 for ingest: what a test printed is kept — a
// NUL in a Cucumber JSON scenario name or error message, or in a Messages pickle name, is stored
// as the six characters \u0000.
func TestTestOutputKeepsNULEscaped(t *testing.T) {
	s := apptest.Start(t)
	admin := s.Setup(t)
	project(t, admin, "http://127.0.0.1:9", nil)
	token := apptest.Token(t, admin, "runs:ingest", "runs:read", "runs:write")
	cucumber := `[{"uri":"features/n.feature","id":"n","keyword":"Feature","name":"N","line":1,"elements":[{"id":"n;s","keyword":"Scenario","type":"scenario","name":"S\u0000T","line":2,
		"steps":[{"keyword":"Given ","name":"x","line":3,"result":{"status":"failed","duration":1000,"error_message":"boom\u0000bang"}}]}]}]`
	id := ingestRun(t, s.Bearer(t, token))
	if status, _, body := ingestDoc(t, s, token, id, "application/json", []byte(cucumber)); status != http.StatusOK {
		t.Fatalf("ingest cucumber json: %d %s", status, body)
	}
	sc := scenariosOf(t, admin, id)
	if len(sc) != 1 || sc[0].Name != `S\u0000T` || sc[0].Steps[0].Error == nil || !strings.Contains(sc[0].Steps[0].Error.Message, `boom\u0000bang`) {
		t.Fatalf("scenarios %+v", sc)
	}
	messages := strings.Join([]string{
		`{"source":{"uri":"features/m.feature","data":"Feature: M\n  Scenario: P\n    Given x\n","mediaType":"text/x.cucumber.gherkin+plain"}}`,
		`{"pickle":{"id":"p1","uri":"features/m.feature","name":"P\u0000Q","language":"en","astNodeIds":["a"],"tags":[],"steps":[{"id":"s1","text":"x","astNodeIds":["b"]}]}}`,
		`{"testCase":{"id":"tc1","pickleId":"p1","testSteps":[{"id":"ts1","pickleStepId":"s1"}]}}`,
		`{"testCaseStarted":{"id":"tcs1","testCaseId":"tc1","attempt":0,"timestamp":{"seconds":1,"nanos":0}}}`,
		`{"testStepFinished":{"testCaseStartedId":"tcs1","testStepId":"ts1","testStepResult":{"status":"PASSED","duration":{"seconds":0,"nanos":1000}},"timestamp":{"seconds":1,"nanos":0}}}`,
		`{"testCaseFinished":{"testCaseStartedId":"tcs1","timestamp":{"seconds":1,"nanos":0}}}`,
	}, "\n")
	id = ingestRun(t, s.Bearer(t, token))
	if status, _, body := ingestDoc(t, s, token, id, "application/x-ndjson", []byte(messages)); status != http.StatusOK {
		t.Fatalf("ingest messages: %d %s", status, body)
	}
	if sc := scenariosOf(t, admin, id); len(sc) != 1 || sc[0].Name != `P\u0000Q` {
		t.Fatalf("scenarios %+v", sc)
	}
}

// ingestScenarios creates a run, ingests doc and returns the run's scenarios by name.
func ingestScenarios(t *testing.T, s *apptest.Server, admin *apptest.Browser, token, contentType, doc string) (map[string]serverclient.RunScenario, serverclient.IngestResult) {
	t.Helper()
	id := ingestRun(t, s.Bearer(t, token))
	status, res, body := ingestDoc(t, s, token, id, contentType, []byte(doc))
	if status != http.StatusOK {
		t.Fatalf("ingest: %d %s", status, body)
	}
	out := map[string]serverclient.RunScenario{}
	for _, sc := range scenariosOf(t, admin, id) {
		out[sc.Name] = sc
	}
	return out, res
}

// TestIngestBoundsLongTexts is issue 18 item 3: a 200 kB JUnit test name and failure message are
// cut with a marker (docs/reports.md), the two tests that differ only past the cut stay two
// scenarios, and nothing is a 500.
func TestIngestBoundsLongTexts(t *testing.T) {
	s := apptest.Start(t)
	admin := s.Setup(t)
	project(t, admin, "http://127.0.0.1:9", nil)
	token := apptest.Token(t, admin, "runs:ingest", "runs:read", "runs:write")
	long := strings.Repeat("é", 25_000) + strings.Repeat("x", 150_000) // under the tests' 1 MiB body cap
	doc := `<testsuite name="big"><testcase classname="c" name="` + long + `a"><failure message="` + long + `">` + long + `</failure></testcase>` +
		`<testcase classname="c" name="` + long + `b"/></testsuite>`
	id := ingestRun(t, s.Bearer(t, token))
	status, res, body := ingestDoc(t, s, token, id, "application/xml", []byte(doc))
	if status != http.StatusOK {
		t.Fatalf("ingest: %d %s", status, body)
	}
	if res.Counts.Total != 2 || res.Counts.Failed != 1 || res.Counts.Passed != 1 {
		t.Fatalf("counts %+v", res.Counts)
	}
	for _, sc := range scenariosOf(t, admin, id) {
		if len(sc.Name) > ingest.MaxNameBytes || !strings.HasPrefix(sc.Name, "éé") || !strings.Contains(sc.Name, "… [truncated ") {
			t.Fatalf("name of %d bytes: ...%s", len(sc.Name), sc.Name[len(sc.Name)-40:])
		}
		if sc.Status == "failed" {
			if sc.Error == nil || len(sc.Error.Message) > ingest.MaxMessageBytes || !strings.Contains(sc.Error.Message, "… [truncated ") {
				t.Fatalf("error %v", sc.Error != nil)
			}
		}
	}
}

// TestIngestDurations is issue 18 item 4: a JUnit time that is not a number (NaN, Infinity, hex)
// makes the document malformed (400 naming the test case); a duration is never negative and at
// most ingest.MaxDuration; "0,5" is half a second and "1,234.5" 1234.5 seconds.
func TestIngestDurations(t *testing.T) {
	s := apptest.Start(t)
	admin := s.Setup(t)
	project(t, admin, "http://127.0.0.1:9", nil)
	token := apptest.Token(t, admin, "runs:ingest", "runs:read", "runs:write")
	for _, bad := range []string{"NaN", "Infinity", "-Inf", "0x10", "1,2,3"} {
		id := ingestRun(t, s.Bearer(t, token))
		status, _, body := ingestDoc(t, s, token, id, "application/xml", []byte(`<testsuite name="s"><testcase name="t" time="`+bad+`"/></testsuite>`))
		if status != http.StatusBadRequest || !strings.Contains(mustErrorBody(t, body).Error.Hint, `<testcase name="t">: the time attribute`) {
			t.Fatalf("time %q: %d %s", bad, status, body)
		}
	}
	max := ingest.MaxDuration.Milliseconds()
	got, _ := ingestScenarios(t, s, admin, token, "application/xml", `<testsuite name="s">
  <testcase name="huge" time="1e300"/><testcase name="comma" time="0,5"/><testcase name="grouped" time="1,234.5"/>
  <testcase name="negative" time="-3"/><testcase name="plain" time="2.25"/></testsuite>`)
	for name, want := range map[string]int64{"huge": max, "comma": 500, "grouped": 1_234_500, "negative": 0, "plain": 2250} {
		if d := got[name].DurationMs; d == nil || *d != want {
			t.Errorf("JUnit %s: duration %v, want %d", name, d, want)
		}
	}
	cj := `[{"uri":"f.feature","id":"f","keyword":"Feature","name":"F","line":1,"elements":[
	 {"id":"f;a","keyword":"Scenario","type":"scenario","name":"huge","line":2,"steps":[{"keyword":"Given ","name":"x","line":3,"result":{"status":"passed","duration":1e300}},{"keyword":"Given ","name":"y","line":4,"result":{"status":"passed","duration":1e300}}]},
	 {"id":"f;b","keyword":"Scenario","type":"scenario","name":"negative","line":5,"steps":[{"keyword":"Given ","name":"x","line":6,"result":{"status":"passed","duration":-5e9}}]}]}]`
	got, _ = ingestScenarios(t, s, admin, token, "application/json", cj)
	for name, want := range map[string]int64{"huge": max, "negative": 0} {
		if d := got[name].DurationMs; d == nil || *d != want {
			t.Errorf("Cucumber JSON %s: duration %v, want %d", name, d, want)
		}
	}
}

// TestIngestUnknownStepStatus is issue 18 item 5: a Cucumber step with status null (or a status
// Cucumber does not have) is unknown, and its otherwise passed scenario is unknown, not passed.
func TestIngestUnknownStepStatus(t *testing.T) {
	s := apptest.Start(t)
	admin := s.Setup(t)
	project(t, admin, "http://127.0.0.1:9", nil)
	token := apptest.Token(t, admin, "runs:ingest", "runs:read", "runs:write")
	cj := `[{"uri":"f.feature","id":"f","keyword":"Feature","name":"F","line":1,"elements":[
	 {"id":"f;a","keyword":"Scenario","type":"scenario","name":"null","line":2,"steps":[{"keyword":"Given ","name":"x","line":3,"result":{"status":"passed"}},{"keyword":"Given ","name":"y","line":4,"result":{"status":null}}]},
	 {"id":"f;b","keyword":"Scenario","type":"scenario","name":"odd","line":5,"steps":[{"keyword":"Given ","name":"x","line":6,"result":{"status":"weird"}}]},
	 {"id":"f;c","keyword":"Scenario","type":"scenario","name":"failed","line":7,"steps":[{"keyword":"Given ","name":"x","line":8,"result":{"status":"failed"}},{"keyword":"Given ","name":"y","line":9,"result":{"status":null}}]}]}]`
	got, _ := ingestScenarios(t, s, admin, token, "application/json", cj)
	for name, want := range map[string]string{"null": "unknown", "odd": "unknown", "failed": "failed"} {
		if st := got[name].Status; string(st) != want {
			t.Errorf("%s: status %s, want %s", name, st, want)
		}
	}
	if st := got["null"].Steps[1].Status; st != "unknown" {
		t.Errorf("step status %s", st)
	}
}

// TestBadTagExpressionIsRefusedUpFront is issue 18 item 6: a tag expression that does not
// compile is a 400 naming its column when the run is created, not a queued run that then errors.
func TestBadTagExpressionIsRefusedUpFront(t *testing.T) {
	s := apptest.Start(t)
	admin := s.Setup(t)
	project(t, admin, "http://127.0.0.1:9", map[string]string{"a.feature": "Feature: A\n  @api\n  Scenario: B\n    Given I wait 1 second\n"})
	token := apptest.Token(t, admin, "runs:write", "runs:read")
	for _, c := range []struct{ tags, hint string }{
		{"@api and (", "body member /tags, column 11: unexpected end, expected a tag"},
		{"@api )", `body member /tags, column 6: unexpected ")"`},
		{"@api and api", `body member /tags, column 10: expected a tag starting with @, 'not' or '(', found "api"`},
		{"(@api", "column 6: missing ')'"},
	} {
		body, _ := json.Marshal(map[string]any{"project": "shop", "tags": c.tags})
		status, got, _ := s.Do(t, "POST", "/api/runs", "application/json", body, "Authorization", "Bearer "+token)
		if status != http.StatusBadRequest {
			t.Fatalf("%q: %d %s", c.tags, status, got)
		}
		if e := mustErrorBody(t, got); e.Error.Code != "validation_failed" || !strings.Contains(e.Error.Hint, c.hint) {
			t.Fatalf("%q: %+v, want hint %q", c.tags, e.Error, c.hint)
		}
	}
	body, _ := json.Marshal(map[string]any{"project": "shop", "tags": "@api and not @slow"})
	if status, got, _ := s.Do(t, "POST", "/api/runs", "application/json", body, "Authorization", "Bearer "+token); status != http.StatusAccepted {
		t.Fatalf("good expression: %d %s", status, got)
	}
	runs, err := admin.ListRunsWithResponse(context.Background(), &serverclient.ListRunsParams{})
	if err != nil || runs.JSON200 == nil || len(runs.JSON200.Items) != 1 {
		t.Fatalf("runs: %v %s", err, runs.Body)
	}
}

// messagesDoc is a Cucumber Messages document of one feature with one scenario per step status,
// plus the extra envelopes given.
func messagesDoc(statuses []string, extra ...string) string {
	lines := []string{`{"source":{"uri":"features/m.feature","data":"...","mediaType":"text/x.cucumber.gherkin+plain"}}`}
	for i, st := range statuses {
		n := strconv.Itoa(i)
		lines = append(lines,
			`{"pickle":{"id":"p`+n+`","uri":"features/m.feature","name":"S`+n+`","language":"en","astNodeIds":["a`+n+`"],"tags":[],"steps":[{"id":"s`+n+`","text":"x","astNodeIds":["b`+n+`"]}]}}`,
			`{"testCase":{"id":"tc`+n+`","pickleId":"p`+n+`","testSteps":[{"id":"ts`+n+`","pickleStepId":"s`+n+`"}]}}`,
			`{"testCaseStarted":{"id":"tcs`+n+`","testCaseId":"tc`+n+`","attempt":0,"timestamp":{"seconds":1,"nanos":0}}}`,
			`{"testStepFinished":{"testCaseStartedId":"tcs`+n+`","testStepId":"ts`+n+`","testStepResult":`+st+`,"timestamp":{"seconds":1,"nanos":0}}}`,
			`{"testCaseFinished":{"testCaseStartedId":"tcs`+n+`","timestamp":{"seconds":1,"nanos":0}}}`)
	}
	return strings.Join(append(lines, extra...), "\n")
}

// TestIngestRunStatus is issue 18 item 7: a run is passed only when every scenario passed or was
// skipped and nothing outside a scenario failed (docs/runs.md); pending steps (with or without
// an exception), a failed BeforeAll or AfterAll hook and an exception of the test run fail it, and
// the run-level errors are in the run and its report.
func TestIngestRunStatus(t *testing.T) {
	s := apptest.Start(t)
	admin := s.Setup(t)
	project(t, admin, "http://127.0.0.1:9", nil)
	token := apptest.Token(t, admin, "runs:ingest", "runs:read", "runs:write")
	passed := `{"status":"PASSED","duration":{"seconds":0,"nanos":1000}}`
	hook := `{"hook":{"id":"h1","name":"start the app","type":"BEFORE_TEST_RUN","sourceReference":{"uri":"support/hooks.ts","location":{"line":7}}}}`
	for _, c := range []struct {
		name, doc, status, runError string
	}{
		{"all passed", messagesDoc([]string{passed, `{"status":"SKIPPED","duration":{"seconds":0,"nanos":0}}`}), "passed", ""},
		{"pending", messagesDoc([]string{passed, `{"status":"PENDING","duration":{"seconds":0,"nanos":0}}`}), "failed", ""},
		{"pending with exception", messagesDoc([]string{`{"status":"PENDING","message":"TODO","exception":{"type":"PendingException","message":"TODO"},"duration":{"seconds":0,"nanos":0}}`}), "failed", ""},
		{"BeforeAll failed", messagesDoc([]string{passed}, hook,
			`{"testRunHookStarted":{"id":"rh1","testRunStartedId":"r","hookId":"h1","timestamp":{"seconds":1,"nanos":0}}}`,
			`{"testRunHookFinished":{"testRunHookStartedId":"rh1","result":{"status":"FAILED","message":"connection refused\nstack","exception":{"type":"Error","message":"connection refused"},"duration":{"seconds":0,"nanos":0}},"timestamp":{"seconds":1,"nanos":0}}}`),
			"failed", `BeforeAll hook "start the app" (support/hooks.ts:7) failed: Error: connection refused`},
		{"test run exception", messagesDoc([]string{passed},
			`{"testRunFinished":{"success":false,"message":"out of memory","exception":{"type":"RangeError","message":"out of memory"},"timestamp":{"seconds":2,"nanos":0}}}`),
			"failed", "the test run failed: RangeError: out of memory"},
	} {
		t.Run(c.name, func(t *testing.T) {
			id := ingestRun(t, s.Bearer(t, token))
			status, res, body := ingestDoc(t, s, token, id, "application/x-ndjson", []byte(c.doc))
			if status != http.StatusOK || string(res.Status) != c.status {
				t.Fatalf("ingest: %d %s, want status %s", status, body, c.status)
			}
			rep, err := admin.GetRunReportWithResponse(context.Background(), id)
			if err != nil || rep.JSON200 == nil {
				t.Fatalf("report: %v", err)
			}
			got := ""
			if rep.JSON200.Error != nil {
				got = *rep.JSON200.Error
			}
			if got != c.runError || string(rep.JSON200.Status) != c.status {
				t.Fatalf("report status %s error %q, want %s %q", rep.JSON200.Status, got, c.status, c.runError)
			}
			run, err := admin.GetRunWithResponse(context.Background(), id)
			if err != nil || run.JSON200 == nil || (c.runError != "" && (run.JSON200.Error == nil || *run.JSON200.Error != c.runError)) {
				t.Fatalf("run: %v %s", err, run.Body)
			}
		})
	}
	// A Cucumber JSON step that is pending fails the run too.
	cj := `[{"uri":"f.feature","id":"f","keyword":"Feature","name":"F","line":1,"elements":[
	 {"id":"f;a","keyword":"Scenario","type":"scenario","name":"a","line":2,"steps":[{"keyword":"Given ","name":"x","line":3,"result":{"status":"pending"}}]}]}]`
	if _, res := ingestScenarios(t, s, admin, token, "application/json", cj); res.Status != "failed" || res.Counts.Pending != 1 {
		t.Fatalf("cucumber json pending: %+v", res)
	}
}

// rerunTests is a Go package of three tests for gotestsum --rerun-fails: one passes, one fails on
// its first run only (it leaves a marker), one fails every time; and one skipped with a reason.
const rerunTests = `package calc

import (
	"os"
	"testing"
)

func TestStable(t *testing.T) {}

func TestFlaky(t *testing.T) {
	if _, err := os.Stat("ran-once"); err != nil {
		_ = os.WriteFile("ran-once", nil, 0o644)
		t.Fatal("first attempt fails")
	}
}

func TestBroken(t *testing.T) { t.Fatal("always fails") }

func TestLater(t *testing.T) { t.Skip("needs a database") }
`

// TestIngestFlakyIsPassedAfterAFailure is issue 18 item 8 (and item 9's skip reason): one test is
// one scenario with attempts, and flaky means passed after a failure — from the real gotestsum
// --rerun-fails output and from Surefire's flakyFailure/rerunFailure.
func TestIngestFlakyIsPassedAfterAFailure(t *testing.T) {
	s := apptest.Start(t)
	admin := s.Setup(t)
	project(t, admin, "http://127.0.0.1:9", nil)
	token := apptest.Token(t, admin, "runs:ingest", "runs:read", "runs:write")
	check := func(t *testing.T, contentType, doc string, total, flaky, failed int, wantFlaky string) map[string]serverclient.RunScenario {
		t.Helper()
		id := ingestRun(t, s.Bearer(t, token))
		status, res, body := ingestDoc(t, s, token, id, contentType, []byte(doc))
		if status != http.StatusOK {
			t.Fatalf("ingest: %d %s", status, body)
		}
		if res.Counts.Total != total || res.Counts.Flaky != flaky || res.Counts.Failed != failed {
			t.Fatalf("counts %+v, want %d total, %d flaky, %d failed", res.Counts, total, flaky, failed)
		}
		rep, err := admin.GetRunReportWithResponse(context.Background(), id)
		if err != nil || rep.JSON200 == nil || len(rep.JSON200.Flaky) != 1 || rep.JSON200.Flaky[0].Scenario != wantFlaky {
			t.Fatalf("report flaky: %v %s", err, rep.Body)
		}
		out := map[string]serverclient.RunScenario{}
		for _, sc := range scenariosOf(t, admin, id) {
			out[sc.Name] = sc
		}
		return out
	}
	t.Run("gotestsum rerun-fails", func(t *testing.T) {
		dir := t.TempDir()
		mustWrite(t, filepath.Join(dir, "go.mod"), "module example.com/calc\n\ngo 1.22\n")
		mustWrite(t, filepath.Join(dir, "calc_test.go"), rerunTests)
		junit := filepath.Join(dir, "junit.xml")
		out, err := goTool(t, dir, "run", "gotest.tools/gotestsum@"+gotestsumVersion, "--junitfile", junit, "--format", "standard-quiet",
			"--rerun-fails=2", "--packages", "./...", "--", "-count=1")
		doc, rerr := os.ReadFile(junit)
		if rerr != nil {
			t.Fatalf("gotestsum wrote no JUnit file: %v %v\n%s", err, rerr, out)
		}
		if n := strings.Count(string(doc), "<testcase "); n != 7 { // 4 tests, TestFlaky twice, TestBroken three times
			t.Fatalf("gotestsum wrote %d test cases:\n%s", n, doc)
		}
		got := check(t, "application/xml", string(doc), 4, 1, 1, "TestFlaky")
		if f, b := got["TestFlaky"], got["TestBroken"]; f.Status != "passed" || f.Attempts != 2 || b.Status != "failed" || b.Attempts != 3 {
			t.Fatalf("flaky %s/%d, broken %s/%d", f.Status, f.Attempts, b.Status, b.Attempts)
		}
		if sk := got["TestLater"]; sk.Status != "skipped" || sk.Steps[0].Error == nil || sk.Steps[0].Error.Message != "needs a database" {
			t.Fatalf("skip reason: %+v", sk.Steps)
		}
	})
	t.Run("surefire", func(t *testing.T) {
		doc := `<testsuite name="com.example.CalcTest" tests="3">
  <testcase name="stable" classname="com.example.CalcTest" time="0.1"/>
  <testcase name="flaky" classname="com.example.CalcTest" time="0.2"><flakyFailure message="first" type="java.lang.AssertionError"/></testcase>
  <testcase name="broken" classname="com.example.CalcTest" time="0.3"><failure message="third" type="java.lang.AssertionError"/>
    <rerunFailure message="first"/><rerunFailure message="second"/></testcase>
</testsuite>`
		got := check(t, "application/xml", doc, 3, 1, 1, "flaky")
		if got["broken"].Attempts != 3 || got["flaky"].Attempts != 2 {
			t.Fatalf("attempts %d %d", got["broken"].Attempts, got["flaky"].Attempts)
		}
	})
}

const shelfFeature = `Feature: Shelf

  Scenario: Stocks from a table
    Given the shelf holds
      | item  | count |
      | apple | 2     |
    When I note
      """
      restock on Monday
      """
    Then the shelf has 2 items

  Scenario Outline: Adds <n> pears
    Given an empty shelf
    When I add <n> pears
    Then the shelf has <n> items

    Examples: small
      | n |
      | 1 |
      | 2 |

    Examples: large
      | n  |
      | 10 |
`

const shelfSteps = `const { Given, When, Then } = require('@cucumber/cucumber');
const assert = require('assert');
Given('the shelf holds', function (table) { this.n = table.hashes().reduce((a, r) => a + Number(r.count), 0); });
When('I note', function (doc) { this.note = doc; });
Given('an empty shelf', function () { this.n = 0; });
When('I add {int} pears', function (k) { this.n += k; });
Then('the shelf has {int} items', function (k) { assert.strictEqual(this.n, k); });
`

// TestIngestCucumberJSONMatchesMessages is issue 18 item 9: one cucumber-js run written both as
// Cucumber JSON and as Cucumber Messages gives the same scenarios — names, lines, example rows
// (numbered within their Examples table, also when the outline's name holds a placeholder), data
// tables and doc strings (cucumber-js writes them as steps[].arguments).
func TestIngestCucumberJSONMatchesMessages(t *testing.T) {
	if _, err := exec.LookPath("npm"); err != nil {
		t.Fatal("npm is required to run cucumber-js")
	}
	dir := t.TempDir()
	mustWrite(t, filepath.Join(dir, "package.json"), `{"name": "shelf", "version": "1.0.0", "private": true}`)
	mustWrite(t, filepath.Join(dir, "features", "shelf.feature"), shelfFeature)
	mustWrite(t, filepath.Join(dir, "features", "step_definitions", "steps.js"), shelfSteps)
	run := func(args ...string) []byte {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, args[0], args[1:]...)
		cmd.Dir = dir
		out, _ := cmd.CombinedOutput()
		return out
	}
	if out := run("npm", "install", "--no-audit", "--no-fund", "--loglevel=error", "@cucumber/cucumber@"+cucumberJSVersion); !fileExists(filepath.Join(dir, "node_modules", ".bin", "cucumber-js")) {
		t.Fatalf("npm install @cucumber/cucumber: %s", out)
	}
	out := run(filepath.Join(dir, "node_modules", ".bin", "cucumber-js"), "--format", "message:out.ndjson", "--format", "json:out.json")
	messages, err1 := os.ReadFile(filepath.Join(dir, "out.ndjson"))
	cjson, err2 := os.ReadFile(filepath.Join(dir, "out.json"))
	if err1 != nil || err2 != nil {
		t.Fatalf("cucumber-js wrote no results: %v %v\n%s", err1, err2, out)
	}

	s := apptest.Start(t)
	admin := s.Setup(t)
	project(t, admin, "http://127.0.0.1:9", nil)
	token := apptest.Token(t, admin, "runs:ingest", "runs:read", "runs:write")
	type row struct {
		Name, Status string
		Line, Row    int
		Steps        []string
	}
	scenarios := func(contentType string, doc []byte) []row {
		id := ingestRun(t, s.Bearer(t, token))
		status, res, body := ingestDoc(t, s, token, id, contentType, doc)
		if status != http.StatusOK || res.Status != "passed" || res.Counts.Total != 4 {
			t.Fatalf("ingest %s: %d %s", contentType, status, body)
		}
		var out []row
		for _, sc := range scenariosOf(t, admin, id) {
			r := row{Name: sc.Name, Status: string(sc.Status), Line: sc.Line}
			if sc.ExampleRow != nil {
				r.Row = *sc.ExampleRow
			}
			for _, st := range sc.Steps {
				desc := st.Keyword + st.Text
				if st.DocString != nil {
					desc += " doc=" + strconv.Quote(*st.DocString)
				}
				if st.DataTable != nil {
					desc += fmt.Sprintf(" table=%v", *st.DataTable)
				}
				r.Steps = append(r.Steps, desc)
			}
			out = append(out, r)
		}
		return out
	}
	fromMessages := scenarios("application/x-ndjson", messages)
	fromJSON := scenarios("application/json", cjson)
	want := []row{
		{"Stocks from a table", "passed", 3, 0, []string{"Given the shelf holds table=[[item count] [apple 2]]", `When I note doc="restock on Monday"`, "Then the shelf has 2 items"}},
		{"Adds 1 pears", "passed", 20, 1, []string{"Given an empty shelf", "When I add 1 pears", "Then the shelf has 1 items"}},
		{"Adds 2 pears", "passed", 21, 2, []string{"Given an empty shelf", "When I add 2 pears", "Then the shelf has 2 items"}},
		{"Adds 10 pears", "passed", 25, 1, []string{"Given an empty shelf", "When I add 10 pears", "Then the shelf has 10 items"}},
	}
	for name, got := range map[string][]row{"messages": fromMessages, "json": fromJSON} {
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("from %s:\n got %v\nwant %v", name, got, want)
		}
	}
}

// TestRunEventsAreNotCached is issue 18 item 16's stream: the run-events stream says
// Cache-Control: no-cache.
func TestRunEventsAreNotCached(t *testing.T) {
	s := apptest.Start(t)
	admin := s.Setup(t)
	project(t, admin, "http://127.0.0.1:9", nil)
	token := apptest.Token(t, admin, "runs:read", "runs:write")
	id := ingestRun(t, s.Bearer(t, token))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", s.URL+"/api/runs/"+id.String()+"/events", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Cache-Control") != "no-cache" || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("events: %d %v", resp.StatusCode, resp.Header)
	}
}

// TestOneOfHintSaysWhatIsAccepted is issue 18 item 16's oneOf: a body that is neither
// {"names": [...]} nor {"all": true} is told which forms are accepted, not that each member is
// unsupported by the other form.
func TestOneOfHintSaysWhatIsAccepted(t *testing.T) {
	s := apptest.Start(t)
	admin := s.Setup(t)
	project(t, admin, "http://127.0.0.1:9", nil)
	token := apptest.Token(t, admin, "runs:read", "runs:write", "features:write")
	id := ingestRun(t, s.Bearer(t, token))
	for _, body := range []string{`{"names":["a"],"all":true}`, `{}`, `{"all":false}`} {
		status, got, _ := s.Do(t, "POST", "/api/runs/"+id.String()+"/baselines/accept", "application/json", []byte(body), "Authorization", "Bearer "+token)
		if status != http.StatusBadRequest {
			t.Fatalf("%s: %d %s", body, status, got)
		}
		hint := mustErrorBody(t, got).Error.Hint
		if !strings.Contains(hint, "matches none of the accepted forms: Either `{ names: [...] }` or `{ all: true }`") || strings.Contains(hint, "unsupported") {
			t.Fatalf("%s: hint %q", body, hint)
		}
	}
}

// TestFeatureSaveReturnsWarnings is issue 18 item 16's warnings: a feature saved with warnings
// (here an empty scenario) answers 201 with them, and a clean one with an empty list.
func TestFeatureSaveReturnsWarnings(t *testing.T) {
	s := apptest.Start(t)
	admin := s.Setup(t)
	project(t, admin, "http://127.0.0.1:9", nil)
	ctx := context.Background()
	r, err := admin.PutFeatureWithResponse(ctx, "shop", "warn.feature", &serverclient.PutFeatureParams{IfMatch: ptr("*")},
		serverclient.PutFeatureJSONRequestBody{Content: "Feature: W\n  Scenario: Empty\n\n  Scenario: Full\n    Given I wait 1 second\n"})
	if err != nil || r.StatusCode() != http.StatusCreated || r.JSON201 == nil || r.JSON201.Diagnostics == nil {
		t.Fatalf("put: %v %s", err, r.Body)
	}
	d := *r.JSON201.Diagnostics
	if len(d) != 1 || d[0].Rule != "empty-scenario" || d[0].Severity != "warning" || d[0].Line != 2 {
		t.Fatalf("diagnostics %+v", d)
	}
	r, err = admin.PutFeatureWithResponse(ctx, "shop", "clean.feature", &serverclient.PutFeatureParams{IfMatch: ptr("*")},
		serverclient.PutFeatureJSONRequestBody{Content: "Feature: C\n  Scenario: Full\n    Given I wait 1 second\n"})
	if err != nil || r.JSON201 == nil || r.JSON201.Diagnostics == nil || len(*r.JSON201.Diagnostics) != 0 {
		t.Fatalf("clean put: %v %s", err, r.Body)
	}
}

// TestRootModuleIsDot is issue 18 item 16's module: a feature at the root is in module "." in the
// feature list, as in a run's tree; one in a folder is in that folder.
func TestRootModuleIsDot(t *testing.T) {
	s := apptest.Start(t)
	admin := s.Setup(t)
	project(t, admin, "http://127.0.0.1:9", map[string]string{
		"root.feature":    "Feature: Root\n  Scenario: R\n    Given I wait 1 second\n",
		"auth/in.feature": "Feature: In\n  Scenario: I\n    Given I wait 1 second\n",
	})
	ctx := context.Background()
	list, err := admin.ListFeaturesWithResponse(ctx, "shop", &serverclient.ListFeaturesParams{})
	if err != nil || list.JSON200 == nil {
		t.Fatalf("list: %v", err)
	}
	got := map[string]string{}
	for _, f := range list.JSON200.Items {
		got[f.Path] = f.Module
	}
	if got["root.feature"] != "." || got["auth/in.feature"] != "auth" {
		t.Fatalf("modules %v", got)
	}
	f, err := admin.GetFeatureWithResponse(ctx, "shop", "root.feature", nil)
	if err != nil || f.JSON200 == nil || f.JSON200.Module != "." {
		t.Fatalf("get: %v %s", err, f.Body)
	}
}

// TestDatasetRowsNameTheirDataset is issue 18 item 16's dataset rows: a scenario fed by a dataset
// row carries dataset and row (from 1), as docs/steps.md says; one from the table itself does not.
func TestDatasetRowsNameTheirDataset(t *testing.T) {
	s := apptest.Start(t)
	admin := s.Setup(t)
	ctx := context.Background()
	project(t, admin, "http://127.0.0.1:9", map[string]string{"signup.feature": `Feature: Signup
  Scenario Outline: Signs up <email>
    Given I set the variable "email" to "<email>"

    Examples:
      | email           |
      | lin@example.com |

    @dataset:signups
    Examples:
      | email |
`})
	ct, body := multipartBody(t, "signups.csv", []byte("email\nada@example.com\ngrace@example.com\n"), "name", "signups")
	if r, err := admin.UploadDatasetWithBodyWithResponse(ctx, "shop", ct, body); err != nil || r.StatusCode() != http.StatusCreated {
		t.Fatalf("upload: %v %s", err, r.Body)
	}
	id := createRun(t, admin.ClientWithResponses, serverclient.CreateRunJSONRequestBody{Project: "shop", Environment: ptr("local"), Datasets: &map[string]string{"signups": "signups"}})
	run := waitRun(t, admin.ClientWithResponses, id, terminal)
	if run.Status != "passed" {
		t.Fatalf("run %s %v", run.Status, run.Error)
	}
	type got struct {
		Dataset string
		Row     int
	}
	byName := map[string]got{}
	for _, sc := range run.Modules[0].Features[0].Scenarios {
		var g got
		if sc.Dataset != nil {
			g.Dataset = *sc.Dataset
		}
		if sc.Row != nil {
			g.Row = *sc.Row
		}
		byName[sc.Name] = g
	}
	want := map[string]got{"Signs up lin@example.com": {}, "Signs up ada@example.com": {"signups", 1}, "Signs up grace@example.com": {"signups", 2}}
	if fmt.Sprint(byName) != fmt.Sprint(want) {
		t.Fatalf("scenarios %v, want %v", byName, want)
	}
	for _, sc := range scenariosOf(t, admin, id) {
		if sc.Name == "Signs up grace@example.com" && (sc.Dataset == nil || *sc.Dataset != "signups" || sc.Row == nil || *sc.Row != 2) {
			t.Fatalf("scenario %+v", sc)
		}
	}
	// And in its events: each scenario's start and end name its dataset and row (scenarios of one
	// run may execute at once, so the order is per scenario).
	perScenario := map[any][]string{}
	for _, ev := range follow(t, s, admin, id, "", nil) {
		if ev.Data["type"] == "scenario.started" || ev.Data["type"] == "scenario.finished" {
			sc := ev.Data["scenarioId"]
			perScenario[sc] = append(perScenario[sc], fmt.Sprintf("%v %v %v", ev.Data["type"], ev.Data["dataset"], ev.Data["row"]))
		}
	}
	var rows []string
	for _, evs := range perScenario {
		rows = append(rows, strings.Join(evs, ", "))
	}
	sort.Strings(rows)
	if want := "scenario.started <nil> <nil>, scenario.finished <nil> <nil>|scenario.started signups 1, scenario.finished signups 1|scenario.started signups 2, scenario.finished signups 2"; strings.Join(rows, "|") != want {
		t.Fatalf("events %q, want %q", rows, want)
	}
}
