package app_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/sdods/sdods/gen/serverclient"
	"github.com/sdods/sdods/impl/server/app/apptest"
)

// TestLLMProposesStepRewrites: the llm kind's answer ends with a block of step rewrites; the one
// that fits becomes a feature_patch (a unified diff against the feature at its ETag), verified by
// a real verification run and accepted; a rewrite of a line that holds a secret and one of a line
// the prompt did not show are left out, with the reason in the job's log; the prompt holds
// neither the secret (written literally in the feature, and an environment secret) nor the key.
func TestLLMProposesStepRewrites(t *testing.T) {
	s := apptest.Start(t)
	ctx := context.Background()
	admin := s.Setup(t)
	const secret, key = "s3cr3t-Rewrite-7781", "sk-rewrite-key-0044"
	mux := http.NewServeMux()
	mux.HandleFunc("/api/health", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"status":"ok"}`)
	})
	web := httptest.NewServer(mux)
	t.Cleanup(web.Close)
	const feature = "Feature: Health API\n  Scenario: Status is reported\n    When I send a GET request to \"/api/health?token=" + secret + "\"\n" +
		"    Then the response JSON at \"$.status\" is \"degraded\"\n"
	project(t, admin, web.URL, map[string]string{"health.feature": feature})
	if r, _ := admin.UpdateEnvironmentWithResponse(ctx, "shop", "local", serverclient.UpdateEnvironmentJSONRequestBody{BaseUrl: &web.URL,
		Variables: &[]serverclient.EnvVariableInput{{Name: "TOKEN", Value: ptr(secret), Secret: ptr(true)}}}); r.StatusCode() != http.StatusOK {
		t.Fatalf("secret: %d %s", r.StatusCode(), r.Body)
	}
	runID := createRun(t, admin.ClientWithResponses, serverclient.CreateRunJSONRequestBody{Project: "shop", Environment: ptr("local")})
	if r := waitRun(t, admin.ClientWithResponses, runID, terminal); r.Status != "failed" {
		t.Fatalf("run %s", r.Status)
	}
	const summary = "The service reports ok; the test expects degraded."
	fake := &fakeLLM{tokens: 90, answer: summary + "\n```sdods-rewrites\n[" +
		`{"feature": "health.feature", "line": 4, "step": "Then the response JSON at \"$.status\" is \"degraded\"", "replacement": "Then the response JSON at \"$.status\" is \"ok\""},` +
		`{"feature": "health.feature", "line": 3, "step": "When I send a GET request to \"/api/health?token=***\"", "replacement": "When I send a GET request to \"/api/health\""},` +
		`{"feature": "health.feature", "line": 2, "step": "Scenario: Status is reported", "replacement": "Scenario: Renamed"}` +
		"]\n```\n"}
	llm := httptest.NewServer(fake)
	t.Cleanup(llm.Close)
	if r, _ := admin.PutAgentLlmConfigWithResponse(ctx, serverclient.PutAgentLlmConfigJSONRequestBody{Enabled: true, Endpoint: llm.URL + "/v1", Model: "fake-model",
		Key: ptr(key), Include: &[]serverclient.AgentLlmInclude{"failingStep", "message", "steps"}}); r.StatusCode() != http.StatusOK {
		t.Fatalf("configure %d %s", r.StatusCode(), r.Body)
	}
	before, _ := admin.GetFeatureWithResponse(ctx, "shop", "health.feature", nil)
	job := createJob(t, admin.ClientWithResponses, serverclient.CreateAgentJobJSONRequestBody{Project: "shop", Kind: "llm", Input: &map[string]any{"runId": runID.String()}})
	events := followJob(t, s, admin, job.Id, "")
	g, _ := admin.GetAgentJobWithResponse(ctx, job.Id)
	if g.JSON200.Status != "succeeded" || len(g.JSON200.ProposalIds) != 2 || !strings.HasPrefix(*g.JSON200.Summary, summary) ||
		!strings.Contains(*g.JSON200.Summary, "1 step rewrite patch(es) proposed, 1 verified") {
		t.Fatalf("llm job %s", g.Body)
	}
	var logs []string
	for _, e := range events {
		if e.Event == "log" {
			logs = append(logs, fmt.Sprint(e.Data["message"]))
		}
	}
	joined := strings.Join(logs, "\n")
	for _, want := range []string{"rewrite of health.feature line 3 skipped: the step holds a secret", "rewrite of health.feature line 2 skipped: the prompt showed no step there"} {
		if !strings.Contains(joined, want) {
			t.Fatalf("the job's log does not say %q:\n%s", want, joined)
		}
	}
	cls, _ := admin.GetProposalWithResponse(ctx, g.JSON200.ProposalIds[0])
	patch, _ := admin.GetProposalWithResponse(ctx, g.JSON200.ProposalIds[1])
	if cls.JSON200.Kind != "classification" || cls.JSON200.Evidence["summary"] != summary {
		t.Fatalf("classification %s", cls.Body)
	}
	p := patch.JSON200
	if p.Kind != "feature_patch" || p.Status != "verified" || *p.Target.FeaturePath != "health.feature" || *p.Target.Etag != before.JSON200.Etag ||
		p.Evidence["source"] != "llm" || p.Evidence["model"] != "fake-model" || p.Evidence["promptSha256"] != cls.JSON200.Evidence["promptSha256"] {
		t.Fatalf("patch %s", patch.Body)
	}
	if rw, _ := p.Evidence["rewrites"].([]any); len(rw) != 1 {
		t.Fatalf("rewrites %v", p.Evidence["rewrites"])
	}
	want := "-    Then the response JSON at \"$.status\" is \"degraded\"\n+    Then the response JSON at \"$.status\" is \"ok\"\n"
	if p.Diff == nil || !strings.HasPrefix(*p.Diff, "--- a/health.feature\n+++ b/health.feature\n") || !strings.Contains(*p.Diff, want) || strings.Count(*p.Diff, "\n-") != 1 {
		t.Fatalf("diff:\n%v", *p.Diff)
	}
	// Verified by a real run of the patched scenario; the saved feature unchanged until accepted.
	v, _ := p.Evidence["verification"].(map[string]any)
	vr, _ := admin.GetRunWithResponse(ctx, uuid.MustParse(v["runId"].(string)))
	if vr.JSON200 == nil || vr.JSON200.Status != "passed" || vr.JSON200.Trigger != "agent" {
		t.Fatalf("verification run %s", vr.Body)
	}
	if f, _ := admin.GetFeatureWithResponse(ctx, "shop", "health.feature", nil); f.JSON200.Content != feature {
		t.Fatalf("the feature changed before acceptance: %s", f.JSON200.Content)
	}
	if r, _ := admin.AcceptProposalWithResponse(ctx, p.Id, serverclient.AcceptProposalJSONRequestBody{}); r.JSON200 == nil || r.JSON200.Status != "accepted" {
		t.Fatalf("accept: %d %s", r.StatusCode(), r.Body)
	}
	if f, _ := admin.GetFeatureWithResponse(ctx, "shop", "health.feature", nil); f.JSON200.Content != strings.Replace(feature, `is "degraded"`, `is "ok"`, 1) {
		t.Fatalf("the feature after acceptance: %s", f.JSON200.Content)
	}
	// The prompt showed the lines, asked for the format, and held no secret.
	fake.mu.Lock()
	defer fake.mu.Unlock()
	if len(fake.prompts) != 1 || !strings.Contains(fake.prompts[0], `[failed] line 4: Then the response JSON at \"$.status\" is \"degraded\"`) ||
		!strings.Contains(fake.prompts[0], "sdods-rewrites") || !strings.Contains(fake.prompts[0], `token=***`) {
		t.Fatalf("prompt %v", fake.prompts)
	}
	if strings.Contains(fake.prompts[0], secret) || strings.Contains(fake.prompts[0], key) {
		t.Fatalf("a secret was sent to the model: %s", fake.prompts[0])
	}
}
