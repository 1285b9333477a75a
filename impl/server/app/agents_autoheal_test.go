package app_test

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"sync"
	"testing"

	"github.com/google/uuid"

	"github.com/sdods/sdods/gen/db"
	"github.com/sdods/sdods/gen/serverclient"
	"github.com/sdods/sdods/impl/server/app"
	"github.com/sdods/sdods/impl/server/app/apptest"
)

// TestAutoHealJob: a finished run whose steps recorded selector heals starts a heal job by itself
// (the system's, queued in the transaction that finishes the run), so heals that recur reach the
// inbox without anyone starting the job; a run without heals starts none, and a project never
// has more than one heal job waiting.
func TestAutoHealJob(t *testing.T) {
	if _, err := exec.LookPath("chromium"); err != nil {
		t.Fatal("chromium is required for browser steps: make deps installs it")
	}
	s := apptest.Start(t)
	ctx := context.Background()
	admin := s.Setup(t)
	var mu sync.Mutex
	send := "submit"
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		a := send
		mu.Unlock()
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><html><body>
<button id=%q data-testid="submit-btn" onclick="document.getElementById('out').textContent='Sent'">Send</button>
<p id="out"></p></body></html>`, a)
	})
	web := httptest.NewServer(mux)
	t.Cleanup(web.Close)
	project(t, admin, web.URL, map[string]string{
		"send.feature": "Feature: Send\n  Scenario: Send\n    When I open \"/\"\n    And I click \"#submit\"\n    Then I should see \"Sent\"\n"})
	run := func() string {
		id := createRun(t, admin.ClientWithResponses, serverclient.CreateRunJSONRequestBody{Project: "shop", Environment: ptr("local")})
		if r := waitRun(t, admin.ClientWithResponses, id, terminal); r.Status != "passed" {
			t.Fatalf("run %s", r.Status)
		}
		return id.String()
	}
	healJobs := func() []serverclient.AgentJob {
		l, _ := admin.ListAgentJobsWithResponse(ctx, &serverclient.ListAgentJobsParams{Project: ptr("shop"), Kind: ptr(serverclient.AgentJobKind("heal"))})
		if l.JSON200 == nil {
			t.Fatalf("list: %s", l.Body)
		}
		return l.JSON200.Items
	}
	settle := func(jobs []serverclient.AgentJob) serverclient.AgentJob {
		newest := jobs[0]
		for _, j := range jobs {
			if j.CreatedAt.After(newest.CreatedAt) {
				newest = j
			}
		}
		followJob(t, s, admin, newest.Id, "")
		g, _ := admin.GetAgentJobWithResponse(ctx, newest.Id)
		return *g.JSON200
	}

	run() // no heal: records the element's alternatives
	if jobs := healJobs(); len(jobs) != 0 {
		t.Fatalf("a run without heals started a heal job: %+v", jobs)
	}
	mu.Lock()
	send = "send-button"
	mu.Unlock()
	healedRun := run() // heals #submit once: a job starts, nothing recurred yet
	jobs := healJobs()
	if len(jobs) != 1 || jobs[0].CreatedBy != nil {
		t.Fatalf("after the first heal: %+v", jobs)
	}
	if j := settle(jobs); j.Status != "succeeded" || len(j.ProposalIds) != 0 {
		t.Fatalf("first automatic heal job: %+v", j)
	}
	run() // the heal recurs: the next automatic job proposes the patch
	jobs = healJobs()
	if len(jobs) != 2 {
		t.Fatalf("after the second heal: %d heal jobs", len(jobs))
	}
	j := settle(jobs)
	if j.Status != "succeeded" || len(j.ProposalIds) != 1 {
		t.Fatalf("second automatic heal job: %+v %v", j, j.Summary)
	}
	inbox, _ := admin.ListProposalsWithResponse(ctx, &serverclient.ListProposalsParams{Project: ptr("shop"), Kind: ptr(serverclient.ProposalKind("feature_patch"))})
	if inbox.JSON200 == nil || len(inbox.JSON200.Items) != 1 || inbox.JSON200.Items[0].Status != "verified" {
		t.Fatalf("inbox: %s", inbox.Body)
	}

	// At most one heal job waits per project: finishing heals twice in one transaction (nothing
	// can work the first job before it commits) queues one job.
	before := len(healJobs())
	healed, err := s.App.Store.GetRun(ctx, uuid.MustParse(healedRun))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.App.Store.WithTx(ctx, func(q *db.Queries) error {
		for i := 0; i < 2; i++ {
			if err := s.App.Agents.QueueHealTx(ctx, q, healed.Run); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if after := healJobs(); len(after) != before+1 {
		t.Fatalf("%d heal jobs after two queues in one transaction, want %d", len(after), before+1)
	}
	settle(healJobs())
}

// TestAutoHealConfiguration: automatic heal jobs are on unless -auto-heal=false or
// SDODS_AUTO_HEAL=false turns them off; the flag wins over the environment.
func TestAutoHealConfiguration(t *testing.T) {
	for _, tc := range []struct {
		env  string
		args []string
		off  bool
	}{
		{"", nil, false},
		{"false", nil, true},
		{"true", []string{"-auto-heal=false"}, true},
		{"false", []string{"-auto-heal=true"}, false},
	} {
		t.Setenv("SDODS_AUTO_HEAL", tc.env)
		var c app.Config
		fs := flag.NewFlagSet("serve", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		c.Flags(fs)
		if err := fs.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		if c.NoAutoHeal != tc.off {
			t.Fatalf("env %q args %q: NoAutoHeal %v", tc.env, tc.args, c.NoAutoHeal)
		}
	}
}
