package mcp_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/sdods/sdods/gen/serverclient"
	"github.com/sdods/sdods/impl/server/app/apptest"
)

func putFeature(t *testing.T, w *world, path, content string) {
	t.Helper()
	star := "*"
	r, err := w.admin.PutFeatureWithResponse(context.Background(), "shop-web", path, &serverclient.PutFeatureParams{IfMatch: &star},
		serverclient.PutFeatureJSONRequestBody{Content: content})
	if err != nil || r.StatusCode() >= 300 {
		t.Fatalf("put feature %s: %v %s", path, err, r.Body)
	}
}

// TestMCPCompositeTools: runAndWait starts a run and reports progress until it ends;
// failedRunSummary explains a failed run with its clusters, screenshot and trace link;
// lintFeature gives fixes; feature files and run reports read as resources. Real runs, with a
// real Chromium for the browser scenario.
func TestMCPCompositeTools(t *testing.T) {
	w := newWorld(t)
	page := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, _ *http.Request) {
		rw.Header().Set("Content-Type", "text/html")
		fmt.Fprint(rw, "<html><body><h1>Shop</h1></body></html>")
	}))
	defer page.Close()
	putFeature(t, w, "broken/checks.feature", "Feature: Checks\n\n"+
		"  Scenario: Variable one\n    Given I set the variable \"a\" to \"1\"\n    Then the variable \"a\" is \"2\"\n\n"+
		"  Scenario: Variable two\n    Given I set the variable \"b\" to \"7\"\n    Then the variable \"b\" is \"9\"\n\n"+
		"  Scenario: Page\n    Given I open \""+page.URL+"\"\n    And I take a screenshot\n    Then I should see \"Checkout\"\n")
	token := apptest.Token(t, w.editor, "mcp", "runs:read", "runs:write", "features:read", "projects:read", "artifacts:read")
	var c *client.Client
	for _, legacy := range []bool{false, true} {
		c = connect(t, w.s.URL, token, legacy)
		var mu sync.Mutex
		var progress []mcp.JSONRPCNotification
		c.OnNotification(func(n mcp.JSONRPCNotification) {
			if n.Method == "notifications/progress" {
				mu.Lock()
				progress = append(progress, n)
				mu.Unlock()
			}
		})
		req := mcp.CallToolRequest{}
		req.Params.Name = "runAndWait"
		req.Params.Arguments = map[string]any{"body": map[string]any{"project": "shop-web", "paths": []string{"smoke"}}, "timeoutSeconds": 120}
		req.Params.Meta = &mcp.Meta{ProgressToken: "p1"}
		ctx, cancel := context.WithTimeout(context.Background(), 150*time.Second)
		res, err := c.CallTool(ctx, req)
		cancel()
		if err != nil || res.IsError {
			t.Fatalf("runAndWait (legacy=%v): %v %s", legacy, err, text(res))
		}
		out, _ := res.StructuredContent.(map[string]any)
		run, _ := out["run"].(map[string]any)
		if run["status"] != "passed" || out["timedOut"] != false {
			t.Fatalf("runAndWait (legacy=%v): %s", legacy, text(res))
		}
		mu.Lock()
		if len(progress) == 0 {
			t.Errorf("runAndWait (legacy=%v) sent no progress notification", legacy)
		} else if p := progress[0].Params.AdditionalFields; p["progressToken"] != "p1" || !strings.Contains(fmt.Sprint(p["message"]), "run ") {
			t.Errorf("runAndWait (legacy=%v) progress %v", legacy, p)
		}
		mu.Unlock()
	}

	// A failing run: two variable failures of one cluster, one browser failure with a screenshot.
	res := callTool(t, c, "runAndWait", map[string]any{"body": map[string]any{"project": "shop-web", "paths": []string{"broken"}}, "timeoutSeconds": 120})
	out, _ := res.StructuredContent.(map[string]any)
	run, _ := out["run"].(map[string]any)
	if run["status"] != "failed" || !strings.Contains(text(res), "failedRunSummary") {
		t.Fatalf("failing run: %s", text(res))
	}
	runID := run["id"].(string)
	res = callTool(t, c, "failedRunSummary", map[string]any{"runId": runID})
	if res.IsError {
		t.Fatalf("failedRunSummary: %s", text(res))
	}
	summary := text(res)
	for _, want := range []string{"3 failed scenario(s) in 2 cluster(s)", "2× ", "Variable one", "Page", "/trace/?run=" + runID} {
		if !strings.Contains(summary, want) {
			t.Errorf("summary lacks %q:\n%s", want, summary)
		}
	}
	images := 0
	for _, ct := range res.Content {
		if img, ok := ct.(mcp.ImageContent); ok {
			b, err := base64.StdEncoding.DecodeString(img.Data)
			if err != nil || !strings.HasPrefix(img.MIMEType, "image/") || len(b) < 100 {
				t.Errorf("screenshot: %v %s %d bytes", err, img.MIMEType, len(b))
			}
			images++
		}
	}
	if images != 1 {
		t.Errorf("%d screenshots, want 1: %s", images, summary)
	}

	// lintFeature: fixes for trailing whitespace and an unknown step.
	putFeature(t, w, "lint/messy.feature", "Feature: Messy\n\n  Scenario: Messy  \n    Given I log \"x\"\n")
	res = callTool(t, c, "lintFeature", map[string]any{"slug": "shop-web", "path": "lint/messy.feature"})
	if lint := text(res); res.IsError || !strings.Contains(lint, `"replacement":"  Scenario: Messy"`) {
		t.Errorf("lintFeature of a saved file: %s", lint)
	}
	res = callTool(t, c, "lintFeature", map[string]any{"slug": "shop-web", "path": "lint/draft.feature",
		"content": "Feature: Draft\n\n  Scenario: Draft\n    When I send a \"GET\" request to \"/\"\n    Then the respons status is 200\n"})
	if lint := text(res); res.IsError || !strings.Contains(lint, `"rule":"unknown-step"`) || !strings.Contains(lint, `the response status (code )is {int}`) {
		t.Errorf("lintFeature of a draft: %s", lint)
	}

	// webLink: the web UI's page of an object the caller can read; none for one that does not exist.
	res = callTool(t, c, "webLink", map[string]any{"kind": "feature", "slug": "shop-web", "path": "lint/messy.feature"})
	if link := text(res); res.IsError || !strings.HasSuffix(link, "/projects/shop-web/features/lint/messy.feature") {
		t.Errorf("webLink of a feature: %s", link)
	}
	res = callTool(t, c, "webLink", map[string]any{"kind": "run", "runId": runID})
	link := text(res)
	if res.IsError || !strings.HasSuffix(link, "/runs/"+runID) {
		t.Errorf("webLink of a run: %s", link)
	} else if strings.HasPrefix(link, w.s.URL) {
		resp, err := http.Get(link)
		if err != nil || resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
			t.Errorf("the run's web UI page: %v %+v", err, resp)
		}
		if resp != nil {
			resp.Body.Close()
		}
	}
	if res = callTool(t, c, "webLink", map[string]any{"kind": "run", "runId": "00000000-0000-4000-8000-000000000000"}); !res.IsError {
		t.Errorf("webLink of a run that does not exist: %s", text(res))
	}
	if res = callTool(t, c, "webLink", map[string]any{"kind": "scenario", "runId": runID}); !res.IsError {
		t.Errorf("webLink of a scenario without its id: %s", text(res))
	}

	// Resources, read with the caller's token.
	rr := mcp.ReadResourceRequest{}
	rr.Params.URI = "sdods://projects/shop-web/features/smoke/log.feature"
	rres, err := c.ReadResource(context.Background(), rr)
	if err != nil || len(rres.Contents) != 1 || !strings.Contains(rres.Contents[0].(mcp.TextResourceContents).Text, "Scenario: Logs") {
		t.Fatalf("feature resource: %v %+v", err, rres)
	}
	rr.Params.URI = "sdods://runs/" + runID + "/report"
	rres, err = c.ReadResource(context.Background(), rr)
	if err != nil || !strings.Contains(rres.Contents[0].(mcp.TextResourceContents).Text, `"failures"`) {
		t.Fatalf("report resource: %v %+v", err, rres)
	}
	// A token without features:read reads no feature.
	other := connect(t, w.s.URL, apptest.Token(t, w.editor, "mcp", "runs:read"), false)
	rr.Params.URI = "sdods://projects/shop-web/features/smoke/log.feature"
	if _, err := other.ReadResource(context.Background(), rr); err == nil || !strings.Contains(err.Error(), "scope_missing") {
		t.Fatalf("feature resource without features:read: %v", err)
	}
}
