package app_test

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/sdods/sdods/gen/serverclient"
	"github.com/sdods/sdods/impl/server/app/apptest"
)

const goodFeature = `@checkout
Feature: Checkout

  Scenario: Pay by card
    Given I open "/cart"
    When I click "Pay"
    Then I should see "Thank you"

  Scenario Outline: Pay with <method>
    Given I open "/cart"
    When I click "<method>"
    Then I should see "Thank you"

    Examples:
      | method |
      | card   |
      | iban   |
`

// syntaxError has a table row with a cell too few (line 6) and a second Feature (line 7).
const syntaxError = "Feature: Broken\n\n  Scenario: s\n    Given I open \"/\"\n      | a | b |\n      | c |\n  Feature: Again\n"

// lintErrors has a duplicate scenario name (line 7), an outline without examples (line 10), an
// unknown step (line 5) and trailing whitespace (line 4, a warning).
const lintErrors = "Feature: Lint\n\n  Scenario: Same\n    Given I open \"/\"  \n    When I dance the tango\n\n  Scenario: Same\n    Given I open \"/\"\n\n  Scenario Outline: No examples\n    Given I open \"/<page>\"\n"

func TestFeaturesWriteValidateAndLint(t *testing.T) {
	w := newProjectWorld(t)
	ctx := w.ctx
	// Create (no If-Match), read with ETag, conditional get.
	p, _ := w.editor.PutFeatureWithResponse(ctx, "web", "checkout/pay.feature", nil, serverclient.PutFeatureJSONRequestBody{Content: goodFeature})
	if p.StatusCode() != http.StatusCreated || p.JSON201 == nil {
		t.Fatalf("create: %d %s", p.StatusCode(), p.Body)
	}
	etag := p.HTTPResponse.Header.Get("ETag")
	f := p.JSON201
	if etag == "" || f.Etag != etag || f.Module != "checkout" || *f.Name != "Checkout" || len(f.Scenarios) != 2 || !f.Scenarios[1].Outline ||
		f.Scenarios[1].Line != 9 || strings.Join(f.Tags, ",") != "@checkout" {
		t.Fatalf("created: %s", p.Body)
	}
	g, _ := w.viewer.GetFeatureWithResponse(ctx, "web", "checkout/pay.feature", nil)
	if g.JSON200 == nil || g.JSON200.Content != goodFeature || g.HTTPResponse.Header.Get("ETag") != etag {
		t.Fatalf("get: %s", g.Body)
	}
	g, _ = w.viewer.GetFeatureWithResponse(ctx, "web", "checkout/pay.feature", &serverclient.GetFeatureParams{IfNoneMatch: ptr(etag)})
	if g.StatusCode() != http.StatusNotModified {
		t.Fatalf("conditional get: %d", g.StatusCode())
	}
	// The raw wildcard path works as well as the encoded one.
	if status, body, _ := w.s.Do(t, "GET", "/api/projects/web/features/checkout/pay.feature", "", nil, "Authorization", "Bearer "+w.token(t)); status != 200 {
		t.Fatalf("raw path: %d %s", status, body)
	}

	// Lost updates: replacing needs the current ETag.
	changed := goodFeature + "\n  Scenario: Pay later\n    Given I open \"/later\"\n"
	for _, tc := range []struct {
		name    string
		ifMatch *string
		want    int
		code    string
	}{
		{"without If-Match", nil, 412, "precondition_failed"},
		{"star on an existing feature", ptr("*"), 412, "precondition_failed"},
		{"stale ETag", ptr(`"0000"`), 412, "precondition_failed"},
		{"current ETag", ptr(etag), 200, ""},
		{"the ETag it replaced", ptr(etag), 412, "precondition_failed"},
	} {
		r, _ := w.editor.PutFeatureWithResponse(ctx, "web", "checkout/pay.feature", &serverclient.PutFeatureParams{IfMatch: tc.ifMatch}, serverclient.PutFeatureJSONRequestBody{Content: changed})
		expect(t, "replace "+tc.name, r.StatusCode(), r.Body, tc.want, tc.code)
	}
	r, _ := w.editor.PutFeatureWithResponse(ctx, "web", "new.feature", &serverclient.PutFeatureParams{IfMatch: ptr(`"abc"`)}, serverclient.PutFeatureJSONRequestBody{Content: goodFeature})
	expect(t, "If-Match on a new path", r.StatusCode(), r.Body, 412, "precondition_failed")

	// 422 with exact positions; nothing saved.
	for _, tc := range []struct{ name, path, content string }{
		{"syntax-error", "broken.feature", syntaxError},
		{"lint-errors", "lint.feature", lintErrors},
	} {
		t.Run("422/"+tc.name, func(t *testing.T) {
			r, _ := w.editor.PutFeatureWithResponse(ctx, "web", tc.path, nil, serverclient.PutFeatureJSONRequestBody{Content: tc.content})
			if r.StatusCode() != http.StatusUnprocessableEntity {
				t.Fatalf("status %d: %s", r.StatusCode(), r.Body)
			}
			var body struct {
				Error       struct{ Code, Message, Hint string } `json:"error"`
				Diagnostics []serverclient.Diagnostic            `json:"diagnostics"`
			}
			if err := json.Unmarshal(r.Body, &body); err != nil || body.Error.Code != "unprocessable" || len(body.Diagnostics) == 0 {
				t.Fatalf("body: %s", r.Body)
			}
			var got strings.Builder
			for _, d := range body.Diagnostics {
				got.WriteString(strings.Join([]string{*d.Path, itoa(d.Line), itoa(d.Column), string(d.Severity), d.Rule, d.Message}, ":") + "\n")
			}
			golden(t, filepath.Join("testdata", "features", tc.name+".golden"), got.String())
			if g, _ := w.viewer.GetFeatureWithResponse(ctx, "web", tc.path, nil); g.StatusCode() != 404 {
				t.Fatalf("a refused feature was saved: %d", g.StatusCode())
			}
			// validate reports the same diagnostics without saving.
			v, _ := w.viewer.ValidateFeatureWithResponse(ctx, "web", serverclient.ValidateFeatureJSONRequestBody{Content: tc.content, Path: ptr(tc.path)})
			if v.JSON200 == nil || v.JSON200.Valid || len(v.JSON200.Diagnostics) != len(body.Diagnostics) {
				t.Fatalf("validate: %s", v.Body)
			}
		})
	}
	// A rule turned off in the project no longer refuses.
	dupOnly := "Feature: Dup\n\n  Scenario: Same\n    Given I open \"/\"\n\n  Scenario: Same\n    Given I open \"/\"\n"
	r, _ = w.editor.PutFeatureWithResponse(ctx, "web", "dup.feature", nil, serverclient.PutFeatureJSONRequestBody{Content: dupOnly})
	expect(t, "duplicate names", r.StatusCode(), r.Body, 422, "")
	_, _ = w.admin.UpdateProjectWithResponse(ctx, "web", serverclient.UpdateProjectJSONRequestBody{Name: "Web",
		Settings: &serverclient.ProjectSettingsInput{DisabledLintRules: &[]string{"duplicate-scenario-name"}, TagPattern: ptr("^(smoke|wip)$")}})
	r, _ = w.editor.PutFeatureWithResponse(ctx, "web", "dup.feature", nil, serverclient.PutFeatureJSONRequestBody{Content: dupOnly})
	expect(t, "duplicate names allowed", r.StatusCode(), r.Body, 201, "")

	// validate: without lint only syntax counts; a bad path is 400.
	v, _ := w.viewer.ValidateFeatureWithResponse(ctx, "web", serverclient.ValidateFeatureJSONRequestBody{Content: lintErrors, Lint: ptr(false)})
	if v.JSON200 == nil || !v.JSON200.Valid || len(v.JSON200.Diagnostics) != 0 {
		t.Fatalf("validate without lint: %s", v.Body)
	}
	v, _ = w.viewer.ValidateFeatureWithResponse(ctx, "web", serverclient.ValidateFeatureJSONRequestBody{Content: goodFeature, Path: ptr("../x.feature")})
	expect(t, "validate bad path", v.StatusCode(), v.Body, 400, "validation_failed")

	// Lint the project: tag convention (a warning), every rule listed with its state.
	l, _ := w.viewer.LintFeaturesWithResponse(ctx, "web", serverclient.LintFeaturesJSONRequestBody{})
	if l.JSON200 == nil || l.JSON200.Summary.Files != 2 || l.JSON200.Summary.Errors != 0 || l.JSON200.Summary.Warnings != 1 || len(l.JSON200.Rules) != 9 {
		t.Fatalf("lint: %s", l.Body)
	}
	if d := l.JSON200.Diagnostics[0]; d.Rule != "tag-convention" || *d.Path != "checkout/pay.feature" || d.Line != 1 || d.Column != 1 {
		t.Fatalf("lint diagnostic: %+v", d)
	}
	for _, rule := range l.JSON200.Rules {
		if rule.Id == "duplicate-scenario-name" && rule.Enabled || rule.Id == "unknown-step" && !rule.Enabled {
			t.Fatalf("rule states: %s", l.Body)
		}
	}
	l, _ = w.viewer.LintFeaturesWithResponse(ctx, "web", serverclient.LintFeaturesJSONRequestBody{Paths: &[]string{"checkout"}, Rules: &[]string{"empty-scenario"}})
	if l.JSON200 == nil || l.JSON200.Summary.Files != 1 || len(l.JSON200.Diagnostics) != 0 {
		t.Fatalf("lint paths and rules: %s", l.Body)
	}
	l, _ = w.viewer.LintFeaturesWithResponse(ctx, "web", serverclient.LintFeaturesJSONRequestBody{Rules: &[]string{"nope"}})
	expect(t, "lint unknown rule", l.StatusCode(), l.Body, 400, "validation_failed")

	// List: the tree by path, filtered by folder and tag; paging.
	ls, _ := w.viewer.ListFeaturesWithResponse(ctx, "web", nil)
	if ls.JSON200 == nil || len(ls.JSON200.Items) != 2 || ls.JSON200.Items[0].Path != "checkout/pay.feature" || ls.JSON200.Items[0].ScenarioCount != 3 {
		t.Fatalf("list: %s", ls.Body)
	}
	if ls, _ = w.viewer.ListFeaturesWithResponse(ctx, "web", &serverclient.ListFeaturesParams{Prefix: ptr("checkout")}); len(ls.JSON200.Items) != 1 {
		t.Fatalf("prefix: %s", ls.Body)
	}
	if ls, _ = w.viewer.ListFeaturesWithResponse(ctx, "web", &serverclient.ListFeaturesParams{Tag: ptr("checkout")}); len(ls.JSON200.Items) != 1 {
		t.Fatalf("tag: %s", ls.Body)
	}
	if ls, _ = w.viewer.ListFeaturesWithResponse(ctx, "web", &serverclient.ListFeaturesParams{Limit: ptr(1)}); ls.JSON200.NextCursor == nil {
		t.Fatalf("paging: %s", ls.Body)
	}

	// Bad paths, roles, missing features, delete with If-Match.
	for _, tc := range []struct {
		name, method, path string
		want               int
		code               string
	}{
		{"not .feature", "GET", "/api/projects/web/features/readme.md", 400, "validation_failed"},
		{"dot segment", "GET", "/api/projects/web/features/a/%2E%2E/b.feature", 400, "validation_failed"},
		{"missing", "GET", "/api/projects/web/features/nope.feature", 404, "not_found"},
		{"delete missing", "DELETE", "/api/projects/web/features/nope.feature", 404, "not_found"},
	} {
		status, body, _ := w.s.Do(t, tc.method, tc.path, "", nil, "Authorization", "Bearer "+w.token(t))
		expect(t, tc.name, status, body, tc.want, tc.code)
	}
	r, _ = w.viewer.PutFeatureWithResponse(ctx, "web", "v.feature", nil, serverclient.PutFeatureJSONRequestBody{Content: goodFeature})
	expect(t, "viewer writes", r.StatusCode(), r.Body, 403, "forbidden")
	if g, _ := w.outsider.GetFeatureWithResponse(ctx, "web", "checkout/pay.feature", nil); g.StatusCode() != 404 {
		t.Fatalf("outsider reads: %d", g.StatusCode())
	}
	d, _ := w.editor.DeleteFeatureWithResponse(ctx, "web", "dup.feature", &serverclient.DeleteFeatureParams{IfMatch: ptr(`"stale"`)})
	expect(t, "delete stale", d.StatusCode(), d.Body, 412, "precondition_failed")
	d, _ = w.editor.DeleteFeatureWithResponse(ctx, "web", "dup.feature", nil)
	expect(t, "delete", d.StatusCode(), d.Body, 204, "")
}

func (w *projectWorld) token(t *testing.T) string {
	t.Helper()
	return apptest.Token(t, w.editor, "features:read", "features:write")
}

func TestStepsCatalogAndRecord(t *testing.T) {
	w := newProjectWorld(t)
	ctx := w.ctx
	_, _ = w.editor.CreateProcessWithResponse(ctx, "web", serverclient.CreateProcessJSONRequestBody{Name: "sign-in", Content: "Given I open \"/login\"\n"})
	_, _ = w.editor.PutFeatureWithResponse(ctx, "web", "a.feature", nil, serverclient.PutFeatureJSONRequestBody{Content: goodFeature})
	all, _ := w.viewer.ListStepsWithResponse(ctx, "web", &serverclient.ListStepsParams{Limit: ptr(200)})
	if all.JSON200 == nil || len(all.JSON200.Items) < 20 {
		t.Fatalf("steps: %s", all.Body)
	}
	byID := map[string]serverclient.StepDefinition{}
	for _, d := range all.JSON200.Items {
		byID[d.Id] = d
	}
	if d := byID["browser.open"]; d.Source != "builtin" || d.UsageCount != 2 || d.Pattern == "" {
		t.Fatalf("browser.open: %+v", d)
	}
	if d := byID["process:sign-in"]; d.Source != "process" || d.Category != "process" || d.Pattern != `I run the process "sign-in"` {
		t.Fatalf("process step: %+v", d)
	}
	if c, _ := w.viewer.ListStepsWithResponse(ctx, "web", &serverclient.ListStepsParams{Category: ptr(serverclient.ListStepsParamsCategory("http")), Q: ptr("status")}); c.JSON200 == nil || len(c.JSON200.Items) == 0 {
		t.Fatalf("filter: %s", c.Body)
	} else {
		for _, d := range c.JSON200.Items {
			if d.Category != "http" {
				t.Fatalf("category filter: %+v", d)
			}
		}
	}
	p1, _ := w.viewer.ListStepsWithResponse(ctx, "web", &serverclient.ListStepsParams{Limit: ptr(5)})
	p2, _ := w.viewer.ListStepsWithResponse(ctx, "web", &serverclient.ListStepsParams{Limit: ptr(5), Cursor: p1.JSON200.NextCursor})
	if p2.JSON200 == nil || len(p2.JSON200.Items) != 5 || p2.JSON200.Items[0].Id <= p1.JSON200.Items[4].Id {
		t.Fatalf("paging: %s", p2.Body)
	}
	if o, _ := w.outsider.ListStepsWithResponse(ctx, "web", nil); o.StatusCode() != 404 {
		t.Fatalf("outsider: %d", o.StatusCode())
	}

	// Record browser actions: the draft uses the step library and validates.
	actions := []serverclient.RecordedAction{
		{Type: "navigate", Url: ptr("/login")},
		{Type: "fill", Selector: ptr("#user"), Value: ptr(`ada "the first"`)},
		{Type: "click", Selector: ptr("button[type=submit]")},
		{Type: "check", Selector: ptr("#remember")},
		{Type: "waitFor", Selector: ptr(".dashboard")},
		{Type: "assertText", Text: ptr("Welcome")},
		{Type: "screenshot", Name: ptr("dashboard")},
	}
	rec, _ := w.editor.RecordFeatureWithResponse(ctx, "web", serverclient.RecordFeatureJSONRequestBody{Format: "actions", Name: "Sign in", Actions: &actions})
	if rec.JSON200 == nil || rec.JSON200.Saved || len(rec.JSON200.Diagnostics) != 0 {
		t.Fatalf("record: %s", rec.Body)
	}
	golden(t, filepath.Join("testdata", "features", "recorded-actions.feature"), rec.JSON200.Content)
	// Saved on request at a new path; the same path again is 409.
	save := serverclient.RecordFeatureJSONRequestBody{Format: "actions", Name: "Sign in", Actions: &actions, Path: ptr("recorded/sign-in.feature"), Save: ptr(true)}
	rec, _ = w.editor.RecordFeatureWithResponse(ctx, "web", save)
	if rec.JSON200 == nil || !rec.JSON200.Saved || rec.JSON200.Etag == nil {
		t.Fatalf("record and save: %s", rec.Body)
	}
	rec, _ = w.editor.RecordFeatureWithResponse(ctx, "web", save)
	expect(t, "record onto an existing path", rec.StatusCode(), rec.Body, 409, "conflict")

	// A HAR of API calls; pages and assets are left out.
	har := map[string]any{"log": map[string]any{"version": "1.2", "entries": []any{
		harEntry("GET", "https://shop.example.com/", "", "text/html", 200),
		harEntry("POST", "https://shop.example.com/api/cart", `{"sku":"A1"}`, "application/json", 201),
		harEntry("GET", "https://shop.example.com/app.js", "", "application/javascript", 200),
		harEntry("GET", "https://shop.example.com/api/cart", "", "application/json", 200),
	}}}
	rec, _ = w.editor.RecordFeatureWithResponse(ctx, "web", serverclient.RecordFeatureJSONRequestBody{Format: "har", Name: "Cart API", Har: &har})
	if rec.JSON200 == nil || len(rec.JSON200.Diagnostics) != 0 {
		t.Fatalf("record har: %s", rec.Body)
	}
	golden(t, filepath.Join("testdata", "features", "recorded-har.feature"), rec.JSON200.Content)

	for _, tc := range []struct {
		name string
		body serverclient.RecordFeatureJSONRequestBody
		want int
		code string
	}{
		{"no actions", serverclient.RecordFeatureJSONRequestBody{Format: "actions", Name: "x"}, 400, "validation_failed"},
		{"action without selector", serverclient.RecordFeatureJSONRequestBody{Format: "actions", Name: "x", Actions: &[]serverclient.RecordedAction{{Type: "click"}}}, 422, "unprocessable"},
		{"empty HAR", serverclient.RecordFeatureJSONRequestBody{Format: "har", Name: "x", Har: &map[string]any{"log": map[string]any{"entries": []any{}}}}, 422, "unprocessable"},
		{"save without path", serverclient.RecordFeatureJSONRequestBody{Format: "actions", Name: "x", Actions: &actions, Save: ptr(true)}, 400, "validation_failed"},
	} {
		r, _ := w.editor.RecordFeatureWithResponse(ctx, "web", tc.body)
		expect(t, "record "+tc.name, r.StatusCode(), r.Body, tc.want, tc.code)
	}
	r, _ := w.viewer.RecordFeatureWithResponse(ctx, "web", serverclient.RecordFeatureJSONRequestBody{Format: "actions", Name: "x", Actions: &actions})
	expect(t, "viewer records", r.StatusCode(), r.Body, 403, "forbidden")
}

// TestUnknownStepRule checks the unknown-step rule against the real step library and the processes.
func TestUnknownStepRule(t *testing.T) {
	w := newProjectWorld(t)
	content := "Feature: F\n\n  Scenario: S\n    Given I open \"/\"\n    When I run the process \"missing\"\n    Then I juggle\n"
	v, _ := w.viewer.ValidateFeatureWithResponse(w.ctx, "web", serverclient.ValidateFeatureJSONRequestBody{Content: content})
	if v.JSON200 == nil || v.JSON200.Valid || len(v.JSON200.Diagnostics) != 2 {
		t.Fatalf("validate: %s", v.Body)
	}
	for i, want := range []struct{ line, col int }{{5, 5}, {6, 5}} {
		d := v.JSON200.Diagnostics[i]
		if d.Rule != "unknown-step" || d.Line != want.line || d.Column != want.col || d.Severity != "error" {
			t.Fatalf("diagnostic %d: %+v", i, d)
		}
	}
}

func harEntry(method, url, body, mime string, status int) map[string]any {
	req := map[string]any{"method": method, "url": url, "headers": []any{map[string]any{"name": "Accept", "value": "application/json"}}}
	if body != "" {
		req["postData"] = map[string]any{"mimeType": "application/json", "text": body}
	}
	return map[string]any{"request": req, "response": map[string]any{"status": status, "content": map[string]any{"mimeType": mime}}}
}

func golden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden %s: %v (run with -update)", path, err)
	}
	if string(want) != got {
		t.Fatalf("%s differs (run with -update after review):\n%s", path, lineDiff(string(want), got))
	}
}

func itoa(i int) string { return strconv.Itoa(i) }
