package app_test

import (
	"context"
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

// TestKilledProcessFailsItsAgentJob kills a real sdods process while it works an llm agent job
// (its model never answers); another process started afterwards fails the job as lost with its
// process, with the reason, within the time docs/agents.md gives (no heartbeat for 30 s, looked
// for every 15 s by the leader), and its event stream ends.
func TestKilledProcessFailsItsAgentJob(t *testing.T) {
	// Mostly waits (for a heartbeat to go stale, for seconds to pass): runs alongside the other waiting tests.
	t.Parallel()
	bin := apptest.SdodsBinary(t)
	// The test's server serves the API and works no job: every job is the sdods processes'.
	api := apptest.StartOn(t, storetest.NewDatabase(t), func(c *app.Config) { c.Role = app.RoleAPI })
	admin := api.Setup(t)
	ctx := context.Background()
	start := func(name string) func() {
		p := exec.Command(bin, "serve", "-addr", freeAddr(t), "-database-url", api.DatabaseURL, "-data-dir", api.DataDir, "-workers", "1",
			"-egress-allow", "127.0.0.0/8", "-auto-heal=false")
		logFile, _ := os.Create(filepath.Join(t.TempDir(), name+".log"))
		p.Stdout, p.Stderr = logFile, logFile
		if err := p.Start(); err != nil {
			t.Fatal(err)
		}
		var once sync.Once
		kill := func() { once.Do(func() { _ = p.Process.Kill(); _, _ = p.Process.Wait() }) }
		t.Cleanup(kill)
		return kill
	}
	killFirst := start("first")
	input := &map[string]any{"runId": failedHealthRun(t, admin, "ok")} // executed by the first process

	fake := &fakeLLM{tokens: 10, hang: true} // a model that never answers: the job blocks
	llm := httptest.NewServer(fake)
	t.Cleanup(llm.Close)
	if r, _ := admin.PutAgentLlmConfigWithResponse(ctx, serverclient.PutAgentLlmConfigJSONRequestBody{Enabled: true, Endpoint: llm.URL + "/v1",
		Model: "fake-model", Key: ptr("sk-lost-0003")}); r.StatusCode() != 200 {
		t.Fatalf("configure %d %s", r.StatusCode(), r.Body)
	}
	job := createJob(t, admin.ClientWithResponses, serverclient.CreateAgentJobJSONRequestBody{Project: "shop", Kind: "llm", Input: input})
	// Running, and its request reached the model.
	deadline := time.Now().Add(time.Minute)
	for {
		g, _ := admin.GetAgentJobWithResponse(ctx, job.Id)
		fake.mu.Lock()
		asked := len(fake.prompts)
		fake.mu.Unlock()
		if g.JSON200.Status == "running" && asked == 1 {
			break
		}
		if time.Now().After(deadline) || g.JSON200.Status != "queued" && g.JSON200.Status != "running" {
			t.Fatalf("the job never blocked on the model: %s (%d prompts)", g.Body, asked)
		}
		time.Sleep(100 * time.Millisecond)
	}
	killFirst() // SIGKILL: no chance to record how the job ended
	killed := time.Now()
	start("second")

	// docs/agents.md: failed once its heartbeat is 30 s old, by the reconciler that runs every
	// 15 s on the leader; the second process becomes the leader when the first one's lease
	// lapses. The bound allows for that election and a busy machine.
	const bound = 30*time.Second + 15*time.Second + 30*time.Second
	var got serverclient.AgentJob
	for {
		g, _ := admin.GetAgentJobWithResponse(ctx, job.Id)
		got = *g.JSON200
		if got.Status != "running" {
			break
		}
		if time.Since(killed) > bound {
			t.Fatalf("the job is still %s %s after its process died", got.Status, time.Since(killed).Round(time.Second))
		}
		time.Sleep(250 * time.Millisecond)
	}
	took := time.Since(killed)
	if got.Status != "failed" || got.Error == nil || !strings.Contains(*got.Error, "the process working the job stopped (no heartbeat since") {
		t.Fatalf("the job after its process died: %s %v", got.Status, got.Error)
	}
	if took < 25*time.Second {
		t.Fatalf("failed %s after the kill: sooner than a heartbeat can be stale", took)
	}
	ev := followJob(t, api, admin, job.Id, "")
	if last := ev[len(ev)-1]; last.Data["status"] != "failed" || !strings.Contains(last.Data["message"].(string), "the process working the job stopped") {
		t.Fatalf("end event %+v", last)
	}
	t.Logf("failed %s after its process was killed: %s", took.Round(100*time.Millisecond), *got.Error)
}
