package app_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/sdods/sdods/gen/serverclient"
	"github.com/sdods/sdods/impl/server/app"
	"github.com/sdods/sdods/impl/server/app/apptest"
	"github.com/sdods/sdods/impl/server/store/storetest"
)

// failedHealthRun sets up project shop against a local application whose health check fails and
// returns a failed run of it.
func failedHealthRun(t *testing.T, admin *apptest.Browser, echo string) string {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/api/health", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"status":"ok","echo":%q}`, r.URL.Query().Get("v"))
	})
	web := httptest.NewServer(mux)
	t.Cleanup(web.Close)
	project(t, admin, web.URL, map[string]string{"health.feature": `Feature: Health API
  Scenario: Echo is degraded
    When I send a GET request to "/api/health?v=` + echo + `"
    Then the response JSON at "$.echo" is "degraded"
`})
	runID := createRun(t, admin.ClientWithResponses, serverclient.CreateRunJSONRequestBody{Project: "shop", Environment: ptr("local")})
	if r := waitRun(t, admin.ClientWithResponses, runID, terminal); r.Status != "failed" {
		t.Fatalf("run %s", r.Status)
	}
	return runID.String()
}

// TestLLMEndpointUnderEgressPolicy: the llm kind dials its endpoint through the instance's egress
// policy, like steps and Git integrations: an endpoint on an address the operator denies, or on
// the server's own listener (a built-in deny), fails the job with the refusing rule as its
// reason, and the endpoint never sees a request (nor the key).
func TestLLMEndpointUnderEgressPolicy(t *testing.T) {
	ctx := context.Background()
	fake := &fakeLLM{tokens: 10}
	llm := httptest.NewServer(fake)
	t.Cleanup(llm.Close)
	// The harness allows loopback (apptest.LoopbackEgress); the operator denies the endpoint.
	s := apptest.StartOn(t, storetest.NewDatabase(t), func(c *app.Config) { c.EgressDeny = []string{llm.Listener.Addr().String()} })
	admin := s.Setup(t)
	input := &map[string]any{"runId": failedHealthRun(t, admin, "ok")}

	for _, tc := range []struct{ name, endpoint, want string }{
		{"operator's deny", llm.URL + "/v1", "rule " + llm.Listener.Addr().String()},
		{"the server itself", s.URL + "/v1", "this server's own listener"},
	} {
		cfg := serverclient.PutAgentLlmConfigJSONRequestBody{Enabled: true, Endpoint: tc.endpoint, Model: "fake-model", Key: ptr("sk-egress-0001")}
		if r, _ := admin.PutAgentLlmConfigWithResponse(ctx, cfg); r.StatusCode() != http.StatusOK {
			t.Fatalf("%s: configure %d %s", tc.name, r.StatusCode(), r.Body)
		}
		job := createJob(t, admin.ClientWithResponses, serverclient.CreateAgentJobJSONRequestBody{Project: "shop", Kind: "llm", Input: input})
		followJob(t, s, admin, job.Id, "")
		g, _ := admin.GetAgentJobWithResponse(ctx, job.Id)
		if g.JSON200.Status != "failed" || g.JSON200.Error == nil || !strings.Contains(*g.JSON200.Error, "the llm endpoint is refused: the server's egress policy refuses") ||
			!strings.Contains(*g.JSON200.Error, tc.want) {
			t.Fatalf("%s: %s", tc.name, g.Body)
		}
		t.Logf("%s: %s", tc.name, *g.JSON200.Error)
	}
	fake.mu.Lock()
	defer fake.mu.Unlock()
	if len(fake.prompts) != 0 {
		t.Fatalf("a denied endpoint was reached: %v", fake.prompts)
	}
}

// TestLLMPromptRedactsPoolPasswords: a users-pool password that a failing step's text and output
// carry (the application echoes it) is masked in the prompt the endpoint receives, like
// environment secrets and the key.
func TestLLMPromptRedactsPoolPasswords(t *testing.T) {
	ctx := context.Background()
	s := apptest.Start(t)
	admin := s.Setup(t)
	const password = "Pool-Pass-9931xq"
	runID := failedHealthRun(t, admin, password)
	if r, _ := admin.CreatePoolAccountWithResponse(ctx, "shop", serverclient.CreatePoolAccountJSONRequestBody{Username: "alice@example.com", Password: password}); r.StatusCode() != http.StatusCreated {
		t.Fatalf("pool account: %d %s", r.StatusCode(), r.Body)
	}
	// The model proposes to rewrite the line that holds the password (shown masked) and to write
	// the password into another: neither becomes a patch.
	fake := &fakeLLM{tokens: 10, answer: "The echo is not degraded.\n```sdods-rewrites\n[" +
		`{"feature": "health.feature", "line": 3, "step": "When I send a GET request to \"/api/health?v=***\"", "replacement": "When I send a GET request to \"/api/health?v=1\""},` +
		`{"feature": "health.feature", "line": 4, "step": "Then the response JSON at \"$.echo\" is \"degraded\"", "replacement": "Then the response JSON at \"$.echo\" is \"` + password + `\""}` +
		"]\n```"}
	llm := httptest.NewServer(fake)
	t.Cleanup(llm.Close)
	cfg := serverclient.PutAgentLlmConfigJSONRequestBody{Enabled: true, Endpoint: llm.URL + "/v1", Model: "fake-model", Key: ptr("sk-pool-0002"),
		Include: &[]serverclient.AgentLlmInclude{"failingStep", "message", "steps"}}
	if r, _ := admin.PutAgentLlmConfigWithResponse(ctx, cfg); r.StatusCode() != http.StatusOK {
		t.Fatalf("configure %d %s", r.StatusCode(), r.Body)
	}
	job := createJob(t, admin.ClientWithResponses, serverclient.CreateAgentJobJSONRequestBody{Project: "shop", Kind: "llm", Input: &map[string]any{"runId": runID}})
	events := followJob(t, s, admin, job.Id, "")
	if g, _ := admin.GetAgentJobWithResponse(ctx, job.Id); g.JSON200.Status != "succeeded" || len(g.JSON200.ProposalIds) != 1 || strings.Contains(string(g.Body), password) {
		t.Fatalf("llm job %s", g.Body)
	}
	var logs []string
	for _, e := range events {
		logs = append(logs, fmt.Sprint(e.Data["message"]))
	}
	if joined := strings.Join(logs, "\n"); !strings.Contains(joined, "line 3 skipped: the step holds a secret") ||
		!strings.Contains(joined, "line 4 skipped: the replacement holds a secret or a mask") || strings.Contains(joined, password) {
		t.Fatalf("job log:\n%s", joined)
	}
	fake.mu.Lock()
	defer fake.mu.Unlock()
	if len(fake.prompts) != 1 || !strings.Contains(fake.prompts[0], `/api/health?v=***`) {
		t.Fatalf("the prompt does not hold the masked failing step: %v", fake.prompts)
	}
	if strings.Contains(fake.prompts[0], password) {
		t.Fatalf("a pool password was sent to the model: %s", fake.prompts[0])
	}
	t.Logf("prompt: %s", fake.prompts[0])
}
