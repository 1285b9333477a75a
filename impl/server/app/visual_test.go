package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image/png"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"

	"github.com/sdods/sdods/gen/serverclient"
	"github.com/sdods/sdods/impl/server/app/apptest"
)

// scenarioSteps returns the steps of the run's only scenario.
func scenarioSteps(t *testing.T, c *serverclient.ClientWithResponses, run *serverclient.Run) []serverclient.RunStep {
	t.Helper()
	sc, err := c.GetRunScenarioWithResponse(context.Background(), run.Id, run.Modules[0].Features[0].Scenarios[0].Id)
	if err != nil || sc.JSON200 == nil {
		t.Fatalf("scenario: %v %s", err, sc.Body)
	}
	return sc.JSON200.Steps
}

func artifact(t *testing.T, s *apptest.Server, b *apptest.Browser, id uuid.UUID, header map[string]string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest("GET", s.URL+"/api/artifacts/"+id.String(), nil)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := (&http.Client{Jar: b.Jar}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// TestVisualCheckBaselineAcceptance runs a page (its capture becomes the baseline), changes it
// (the visual check fails with a diff), accepts the new capture through the API and runs green.
func TestVisualCheckBaselineAcceptance(t *testing.T) {
	if _, err := exec.LookPath("chromium"); err != nil {
		t.Fatal("chromium is required for browser steps: make deps installs it")
	}
	s := apptest.Start(t)
	ctx := context.Background()
	admin := s.Setup(t)
	var mu sync.Mutex
	colour := "#2563eb"
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		c := colour
		mu.Unlock()
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><html><body style="margin:20px;font-family:sans-serif">
<h1>Checkout</h1><button style="background:%s;color:#fff;border:0;border-radius:6px;padding:10px 18px">Pay</button></body></html>`, c)
	})
	web := httptest.NewServer(mux)
	t.Cleanup(web.Close)
	project(t, admin, web.URL, map[string]string{"ui/look.feature": `Feature: Look
  Scenario: Checkout looks right
    Given the viewport is 640x400
    When I open "/"
    Then the page matches the baseline "checkout"
`})
	c := admin.ClientWithResponses
	run := func() *serverclient.Run {
		id := createRun(t, c, serverclient.CreateRunJSONRequestBody{Project: "shop", Environment: ptr("local")})
		return waitRun(t, c, id, terminal)
	}

	// First run: no baseline yet; the capture becomes it, pending review.
	first := run()
	if first.Status != "passed" {
		t.Fatalf("first run %s", first.Status)
	}
	vc := scenarioSteps(t, c, first)[2].VisualCheck
	if vc == nil || vc.Status != "pending" || vc.ActualArtifactId == nil {
		t.Fatalf("first visual check %+v", vc)
	}
	firstActual := *vc.ActualArtifactId
	if l, _ := c.ListRunBaselinesWithResponse(ctx, first.Id, nil); l.JSON200 == nil || len(l.JSON200.Items) != 1 || l.JSON200.Items[0].Status != "pending" ||
		l.JSON200.Items[0].Viewport.Width != 640 || l.JSON200.Items[0].Browser != "chromium" {
		t.Fatalf("first run baselines %s", l.Body)
	}

	// The page changes: the check fails with the three images and the figures.
	mu.Lock()
	colour = "#dc2626"
	mu.Unlock()
	second := run()
	if second.Status != "failed" {
		t.Fatalf("second run %s", second.Status)
	}
	step := scenarioSteps(t, c, second)[2]
	vc = step.VisualCheck
	if step.Status != "failed" || step.Error == nil || !strings.Contains(step.Error.Message, `baseline "checkout"`) ||
		vc == nil || vc.Status != "failed" || vc.MismatchPixels == nil || *vc.MismatchPixels < 100 || vc.MismatchRatio == nil ||
		vc.Threshold == nil || *vc.Threshold != 0.1 || vc.ExpectedArtifactId == nil || vc.DiffArtifactId == nil || vc.ActualArtifactId == nil {
		t.Fatalf("failed step %+v, visual check %+v", step, vc)
	}
	if len(step.Attachments) != 3 {
		t.Fatalf("attachments %+v", step.Attachments)
	}
	l, _ := c.ListRunBaselinesWithResponse(ctx, second.Id, nil)
	if l.JSON200 == nil || len(l.JSON200.Items) != 1 {
		t.Fatalf("baselines %s", l.Body)
	}
	bc := l.JSON200.Items[0]
	if bc.Name != "checkout" || bc.Status != "failed" || bc.ActualArtifactId != *vc.ActualArtifactId || *bc.ExpectedArtifactId != *vc.ExpectedArtifactId ||
		*bc.DiffArtifactId != *vc.DiffArtifactId || *bc.MismatchPixels != *vc.MismatchPixels || bc.Viewport.Height != 400 {
		t.Fatalf("baseline check %+v", bc)
	}

	// The diff image: content type, ETag, If-None-Match, Range.
	resp := artifact(t, s, admin, *vc.DiffArtifactId, nil)
	diffPNG, _ := io.ReadAll(resp.Body)
	etag := resp.Header.Get("ETag")
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "image/png" || etag == "" || resp.Header.Get("Accept-Ranges") != "bytes" {
		t.Fatalf("diff artifact %d %v", resp.StatusCode, resp.Header)
	}
	img, err := png.Decode(bytes.NewReader(diffPNG))
	if err != nil || img.Bounds().Dx() != 640 || img.Bounds().Dy() != 400 {
		t.Fatalf("diff image: %v", err)
	}
	if r := artifact(t, s, admin, *vc.DiffArtifactId, map[string]string{"If-None-Match": etag}); r.StatusCode != http.StatusNotModified {
		t.Fatalf("If-None-Match: %d", r.StatusCode)
	}
	r := artifact(t, s, admin, *vc.DiffArtifactId, map[string]string{"Range": "bytes=1-4"})
	part, _ := io.ReadAll(r.Body)
	if r.StatusCode != http.StatusPartialContent || string(part) != "PNG\r" || r.Header.Get("Content-Range") != fmt.Sprintf("bytes 1-4/%d", len(diffPNG)) {
		t.Fatalf("Range: %d %q %v", r.StatusCode, part, r.Header)
	}
	if r := artifact(t, s, admin, *vc.DiffArtifactId, map[string]string{"Range": fmt.Sprintf("bytes=%d-", len(diffPNG))}); r.StatusCode != http.StatusRequestedRangeNotSatisfiable ||
		r.Header.Get("Content-Range") != fmt.Sprintf("bytes */%d", len(diffPNG)) {
		t.Fatalf("unsatisfiable range: %d %v", r.StatusCode, r.Header)
	}
	if r, _ := c.GetArtifactWithResponse(ctx, uuid.New(), nil); r.StatusCode() != http.StatusNotFound {
		t.Fatalf("unknown artifact: %d", r.StatusCode())
	}

	// The server-side diff of the two captures agrees with the check.
	cmp, err := c.CompareArtifactsWithResponse(ctx, &serverclient.CompareArtifactsParams{Before: firstActual, After: *vc.ActualArtifactId})
	if err != nil || cmp.JSON200 == nil || cmp.JSON200.MismatchPixels != int64(*vc.MismatchPixels) || cmp.JSON200.Threshold != 0.1 || cmp.JSON200.Width != 640 {
		t.Fatalf("compare: %v %s", err, cmp.Body)
	}

	// Accepting: unknown names are refused, listing them; a token without features:write too.
	var unknown serverclient.AcceptBaselines
	_ = unknown.FromAcceptBaselinesByName(serverclient.AcceptBaselinesByName{Names: []string{"checkout", "nope", "gone"}})
	if r, _ := c.AcceptBaselinesWithResponse(ctx, second.Id, unknown); r.StatusCode() != http.StatusBadRequest || !strings.Contains(string(r.Body), "nope, gone") {
		t.Fatalf("unknown names: %d %s", r.StatusCode(), r.Body)
	}
	var body serverclient.AcceptBaselines
	_ = body.FromAcceptBaselinesByName(serverclient.AcceptBaselinesByName{Names: []string{"checkout"}})
	reader := s.Bearer(t, apptest.Token(t, admin, "runs:read"))
	if r, _ := reader.AcceptBaselinesWithResponse(ctx, second.Id, body); r.StatusCode() != http.StatusForbidden {
		t.Fatalf("without features:write: %d %s", r.StatusCode(), r.Body)
	}
	acc, err := c.AcceptBaselinesWithResponse(ctx, second.Id, body)
	if err != nil || acc.JSON200 == nil || len(acc.JSON200.Accepted) != 1 || acc.JSON200.Accepted[0] != "checkout" {
		t.Fatalf("accept: %v %s", err, acc.Body)
	}
	if l, _ := c.ListRunBaselinesWithResponse(ctx, second.Id, nil); l.JSON200.Items[0].Status != "accepted" {
		t.Fatalf("after accepting %s", l.Body)
	}
	audit, _ := c.ListAuditWithResponse(ctx, &serverclient.ListAuditParams{Action: ptr("acceptBaselines")})
	if audit.JSON200 == nil || len(audit.JSON200.Items) < 1 {
		t.Fatalf("audit %s", audit.Body)
	}

	// The next run compares with the accepted capture and passes.
	third := run()
	if third.Status != "passed" {
		t.Fatalf("third run %s", third.Status)
	}
	if vc := scenarioSteps(t, c, third)[2].VisualCheck; vc == nil || vc.Status != "passed" || *vc.MismatchPixels != 0 {
		t.Fatalf("third visual check %+v", vc)
	}
}

// TestCompareMatchesPixelmatch captures pages with anti-aliased shapes and text moved by fractions
// of a pixel, and a recolouring, compares the captures with the compare endpoint and checks every
// count against pixelmatch (run with node on the same artifacts).
func TestCompareMatchesPixelmatch(t *testing.T) {
	if _, err := exec.LookPath("chromium"); err != nil {
		t.Fatal("chromium is required for browser steps: make deps installs it")
	}
	s := apptest.Start(t)
	ctx := context.Background()
	admin := s.Setup(t)
	mux := http.NewServeMux()
	mux.HandleFunc("/shape", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><html><body style="margin:0;background:#fff">
<svg width="320" height="200"><circle cx="%s" cy="90" r="50" fill="%s"/><line x1="10" y1="190" x2="310" y2="%s" stroke="#000" stroke-width="1.5"/></svg>
<p style="font:16px sans-serif;margin:0 0 0 %spx">Anti-aliased text</p></body></html>`, q.Get("cx"), q.Get("fill"), q.Get("y2"), q.Get("dx"))
	})
	web := httptest.NewServer(mux)
	t.Cleanup(web.Close)
	variants := []string{"cx=160&fill=%232563eb&y2=150&dx=10", "cx=160.4&fill=%232563eb&y2=150.5&dx=10.5", "cx=160&fill=%23dc2626&y2=150&dx=10", "cx=163&fill=%232563eb&y2=140&dx=12"}
	var steps strings.Builder
	for i, v := range variants {
		fmt.Fprintf(&steps, "    When I open \"/shape?%s\"\n    And I take a screenshot named \"v%d\"\n", v, i)
	}
	project(t, admin, web.URL, map[string]string{"shapes.feature": "Feature: Shapes\n  Scenario: Variants\n    Given the viewport is 360x260\n" + steps.String()})
	c := admin.ClientWithResponses
	id := createRun(t, c, serverclient.CreateRunJSONRequestBody{Project: "shop", Environment: ptr("local")})
	run := waitRun(t, c, id, terminal)
	if run.Status != "passed" {
		t.Fatalf("run %s", run.Status)
	}
	var shots []uuid.UUID
	for _, st := range scenarioSteps(t, c, run) {
		for _, a := range st.Attachments {
			shots = append(shots, a.ArtifactId)
		}
	}
	if len(shots) != len(variants) {
		t.Fatalf("%d screenshots", len(shots))
	}
	dir := t.TempDir()
	type pairIn struct {
		Name   string `json:"name"`
		Before string `json:"before"`
		After  string `json:"after"`
	}
	var pairs []pairIn
	for i, a := range shots {
		resp := artifact(t, s, admin, a, nil)
		data, _ := io.ReadAll(resp.Body)
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("v%d.png", i)), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for i := 1; i < len(shots); i++ {
		pairs = append(pairs, pairIn{fmt.Sprintf("v0-v%d", i), filepath.Join(dir, "v0.png"), filepath.Join(dir, fmt.Sprintf("v%d.png", i))})
	}
	for _, includeAA := range []bool{false, true} {
		got := map[string]int64{}
		for i := 1; i < len(shots); i++ {
			r, err := c.CompareArtifactsWithResponse(ctx, &serverclient.CompareArtifactsParams{Before: shots[0], After: shots[i], IncludeAA: &includeAA})
			if err != nil || r.JSON200 == nil {
				t.Fatalf("compare: %v %s", err, r.Body)
			}
			if r.JSON200.Width != 360 || r.JSON200.SizeMismatch {
				t.Fatalf("comparison %+v", r.JSON200)
			}
			if d := artifact(t, s, admin, r.JSON200.DiffArtifactId, nil); d.StatusCode != 200 || d.Header.Get("Content-Type") != "image/png" {
				t.Fatalf("diff artifact %d", d.StatusCode)
			}
			got[fmt.Sprintf("v0-v%d", i)] = r.JSON200.MismatchPixels
		}
		if includeAA && got["v0-v1"] == 0 {
			t.Fatalf("the sub-pixel move shows no difference with includeAA: %v", got)
		}
		js := pixelmatchCounts(t, pairs, map[string]any{"includeAA": includeAA})
		for name, n := range got {
			if js[name] != n {
				t.Errorf("includeAA=%v %s: compare %d, pixelmatch %d", includeAA, name, n, js[name])
			}
		}
		t.Logf("includeAA=%v: %v", includeAA, got)
	}
	if r, _ := c.CompareArtifactsWithResponse(ctx, &serverclient.CompareArtifactsParams{Before: shots[0], After: uuid.New()}); r.StatusCode() != http.StatusNotFound {
		t.Fatalf("unknown artifact: %d", r.StatusCode())
	}
}

// pixelmatchCounts runs bench/pixelmatch/compare.mjs (pixelmatch, pinned) on PNG file pairs.
func pixelmatchCounts(t *testing.T, pairs any, options map[string]any) map[string]int64 {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed")
	}
	dir, _ := filepath.Abs(filepath.Join("..", "..", "..", "bench", "pixelmatch"))
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "pixelmatch")); err != nil {
		cmd := exec.Command("npm", "ci", "--no-audit", "--no-fund", "--loglevel=error")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Skipf("npm ci in bench/pixelmatch: %v\n%s", err, out)
		}
	}
	in, _ := json.Marshal(map[string]any{"pairs": pairs, "options": options})
	cmd := exec.Command("node", "compare.mjs")
	cmd.Dir = dir
	cmd.Stdin = bytes.NewReader(in)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node compare.mjs: %v", err)
	}
	var res []struct {
		Name     string `json:"name"`
		Mismatch int64  `json:"mismatch"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatal(err)
	}
	m := map[string]int64{}
	for _, r := range res {
		m[r.Name] = r.Mismatch
	}
	return m
}
