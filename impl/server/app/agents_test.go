package app_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/sdods/sdods/gen/serverclient"
	"github.com/sdods/sdods/impl/server/app"
	"github.com/sdods/sdods/impl/server/app/apptest"
	"github.com/sdods/sdods/impl/server/store/storetest"
)

// followJob reads an agent job's event stream to its end event.
func followJob(t *testing.T, s *apptest.Server, b *apptest.Browser, id uuid.UUID, lastEventID string) []sseEvent {
	t.Helper()
	req, _ := http.NewRequest("GET", s.URL+"/api/agents/jobs/"+id.String()+"/events", nil)
	req.Header.Set("Accept", "text/event-stream")
	if lastEventID != "" {
		req.Header.Set("Last-Event-ID", lastEventID)
	}
	resp, err := (&http.Client{Jar: b.Jar, Timeout: time.Minute}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("events: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	var out []sseEvent
	cur := sseEvent{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if cur.Event != "" {
				out = append(out, cur)
				if cur.Event == "end" {
					return out
				}
			}
			cur = sseEvent{}
		case strings.HasPrefix(line, "id: "):
			cur.ID = strings.TrimPrefix(line, "id: ")
		case strings.HasPrefix(line, "event: "):
			cur.Event = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			_ = json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &cur.Data)
		}
	}
	t.Fatalf("the stream closed without an end event after %d events: %v", len(out), sc.Err())
	return nil
}

func createJob(t *testing.T, c *serverclient.ClientWithResponses, body serverclient.CreateAgentJobJSONRequestBody) serverclient.AgentJob {
	t.Helper()
	r, err := c.CreateAgentJobWithResponse(context.Background(), body)
	if err != nil || r.StatusCode() != http.StatusAccepted || r.JSON202 == nil {
		t.Fatalf("create job: %v %s", err, r.Body)
	}
	if r.HTTPResponse.Header.Get("Location") != "/api/agents/jobs/"+r.JSON202.Id.String() || r.JSON202.Status != "queued" {
		t.Fatalf("job accepted: %s %q", r.Body, r.HTTPResponse.Header.Get("Location"))
	}
	return *r.JSON202
}

// TestTriageFailingBrowserRun: a flaky browser scenario and a failing API check of a failed run
// are triaged through the real server: the job goes queued → running → succeeded with its
// events (history first, Last-Event-ID resumes), each failure gets a classification with its
// evidence and similar past failures, the flaky one a quarantine that only an admin's force
// accepts before verification, and the decisions are audited.
func TestTriageFailingBrowserRun(t *testing.T) {
	if _, err := exec.LookPath("chromium"); err != nil {
		t.Fatal("chromium is required for browser steps: make deps installs it")
	}
	s := apptest.Start(t)
	ctx := context.Background()
	admin := s.Setup(t)
	var mu sync.Mutex
	greeting := "Hello"
	mux := http.NewServeMux()
	mux.HandleFunc("/api/health", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"status":"ok"}`)
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		g := greeting
		mu.Unlock()
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><html><body><input id="name"><button id="go" onclick="document.getElementById('out').textContent='%s, '+document.getElementById('name').value">Greet</button><p id="out"></p></body></html>`, g)
	})
	web := httptest.NewServer(mux)
	t.Cleanup(web.Close)
	project(t, admin, web.URL, map[string]string{
		"greet.feature": `Feature: Greeting
  Scenario: Greets by name
    When I open "/"
    And I fill "#name" with "Ada"
    And I click "#go"
    Then I should see "Hello, Ada"
`,
		"health.feature": healthFeature,
	})
	run := func(g string) uuid.UUID {
		mu.Lock()
		greeting = g
		mu.Unlock()
		id := createRun(t, admin.ClientWithResponses, serverclient.CreateRunJSONRequestBody{Project: "shop", Environment: ptr("local")})
		waitRun(t, admin.ClientWithResponses, id, terminal)
		return id
	}
	run("Hello")
	run("Hi")
	run("Hello")
	failed := run("Hi") // the greeting scenario flips: passed, failed, passed, failed

	kinds, err := admin.ListAgentKindsWithResponse(ctx)
	if err != nil || kinds.JSON200 == nil {
		t.Fatalf("kinds: %v %s", err, kinds.Body)
	}
	found := false
	for _, k := range kinds.JSON200.Items {
		if k.Name == "triage" && k.Enabled && len(k.Scopes) > 0 && k.InputSchema["required"] != nil {
			found = true
		}
	}
	if !found {
		t.Fatalf("triage not listed: %s", kinds.Body)
	}
	// Bad input is refused before anything is queued.
	for _, in := range []map[string]any{{}, {"runId": "nope"}, {"runId": failed.String(), "other": 1}} {
		r, _ := admin.CreateAgentJobWithResponse(ctx, serverclient.CreateAgentJobJSONRequestBody{Project: "shop", Kind: "triage", Input: &in})
		if r.StatusCode() != http.StatusBadRequest || !strings.Contains(string(r.Body), `"code"`) {
			t.Fatalf("input %v: %d %s", in, r.StatusCode(), r.Body)
		}
	}

	job := createJob(t, admin.ClientWithResponses, serverclient.CreateAgentJobJSONRequestBody{Project: "shop", Kind: "triage", Input: &map[string]any{"runId": failed.String()}})
	events := followJob(t, s, admin, job.Id, "")
	var types []string
	var proposals []string
	for _, e := range events {
		types = append(types, e.Event+":"+fmt.Sprint(e.Data["status"]))
		if e.Event == "proposal" {
			proposals = append(proposals, e.Data["proposalId"].(string))
		}
	}
	got := strings.Join(types, " ")
	if !strings.HasPrefix(got, "job.status:queued job.status:running") || !strings.HasSuffix(got, "job.status:succeeded end:succeeded") ||
		!strings.Contains(got, "progress:") || !strings.Contains(got, "log:") {
		t.Fatalf("events %s", got)
	}
	// Resuming after the third event replays only what followed it.
	again := followJob(t, s, admin, job.Id, events[2].ID)
	if len(again) != len(events)-3 || again[0].ID != events[3].ID {
		t.Fatalf("resumed %d events of %d", len(again), len(events))
	}
	g, _ := admin.GetAgentJobWithResponse(ctx, job.Id)
	if g.JSON200 == nil || g.JSON200.Status != "succeeded" || g.JSON200.Progress != 100 || g.JSON200.CreatedBy == nil || len(g.JSON200.ProposalIds) != len(proposals) ||
		g.JSON200.Summary == nil || !strings.Contains(*g.JSON200.Summary, "2 failure(s) triaged") || !strings.Contains(*g.JSON200.Summary, "1 flaky") {
		t.Fatalf("job %s", g.Body)
	}
	if r, _ := admin.CancelAgentJobWithResponse(ctx, job.Id); r.StatusCode() != http.StatusConflict {
		t.Fatalf("cancel a finished job: %d %s", r.StatusCode(), r.Body)
	}
	list, _ := admin.ListAgentJobsWithResponse(ctx, &serverclient.ListAgentJobsParams{Project: ptr("shop"), Kind: ptr(serverclient.AgentJobKind("triage"))})
	if list.JSON200 == nil || len(list.JSON200.Items) != 1 || list.JSON200.Items[0].Id != job.Id {
		t.Fatalf("list %s", list.Body)
	}
	// The list reads each job's creator and proposals in its one statement: the same as the job's own.
	if it := list.JSON200.Items[0]; it.CreatedBy == nil || *it.CreatedBy != *g.JSON200.CreatedBy || fmt.Sprint(it.ProposalIds) != fmt.Sprint(g.JSON200.ProposalIds) {
		t.Fatalf("listed job %+v, job %s", it, g.Body)
	}

	cls, _ := admin.ListProposalsWithResponse(ctx, &serverclient.ListProposalsParams{Project: ptr("shop"), Kind: ptr(serverclient.ProposalKind("classification"))})
	if cls.JSON200 == nil || len(cls.JSON200.Items) != 2 {
		t.Fatalf("classifications %s", cls.Body)
	}
	var flaky serverclient.Proposal
	for _, p := range cls.JSON200.Items {
		if p.JobId == nil || *p.JobId != job.Id || p.Status != "pending" || p.Evidence["signature"] == "" || p.Target.RunId == nil || *p.Target.RunId != failed {
			t.Fatalf("classification %+v", p)
		}
		if *p.Target.FeaturePath == "greet.feature" {
			if p.Evidence["class"] != "flaky" {
				t.Fatalf("greet classified %v: %v", p.Evidence["class"], p.Evidence["reasons"])
			}
			sims, _ := p.Evidence["similar"].([]any)
			if len(sims) == 0 || len(sims) > 5 || sims[0].(map[string]any)["score"].(float64) != 1 {
				t.Fatalf("similar failures %v", p.Evidence["similar"])
			}
			flaky = p
		}
	}
	if flaky.Id == uuid.Nil {
		t.Fatal("no classification of the greeting scenario")
	}
	if r, _ := admin.AcceptProposalWithResponse(ctx, flaky.Id, serverclient.AcceptProposalJSONRequestBody{}); r.JSON200 == nil || r.JSON200.Status != "accepted" || r.JSON200.DecidedBy == nil {
		t.Fatalf("accept classification: %d %s", r.StatusCode(), r.Body)
	}
	if r, _ := admin.RejectProposalWithResponse(ctx, flaky.Id, serverclient.RejectProposalJSONRequestBody{Reason: ptr("late")}); r.StatusCode() != http.StatusConflict {
		t.Fatalf("reject a decided proposal: %d %s", r.StatusCode(), r.Body)
	}

	qs, _ := admin.ListProposalsWithResponse(ctx, &serverclient.ListProposalsParams{Kind: ptr(serverclient.ProposalKind("quarantine")), MinConfidence: ptr(float32(0.5))})
	if qs.JSON200 == nil || len(qs.JSON200.Items) != 1 || *qs.JSON200.Items[0].Target.FeaturePath != "greet.feature" {
		t.Fatalf("quarantine proposals %s", qs.Body)
	}
	q := qs.JSON200.Items[0]
	if r, _ := admin.AcceptProposalWithResponse(ctx, q.Id, serverclient.AcceptProposalJSONRequestBody{}); r.StatusCode() != http.StatusConflict || !strings.Contains(string(r.Body), "not verified") {
		t.Fatalf("accept unverified: %d %s", r.StatusCode(), r.Body)
	}
	if r, _ := admin.RejectProposalWithResponse(ctx, q.Id, serverclient.RejectProposalJSONRequestBody{}); r.StatusCode() != http.StatusBadRequest {
		t.Fatalf("reject without reason: %d %s", r.StatusCode(), r.Body)
	}
	if r, _ := admin.AcceptProposalWithResponse(ctx, q.Id, serverclient.AcceptProposalJSONRequestBody{Force: ptr(true)}); r.JSON200 == nil || r.JSON200.Status != "accepted" {
		t.Fatalf("force accept: %d %s", r.StatusCode(), r.Body)
	}
	ql, _ := admin.ListQuarantinesWithResponse(ctx, "shop", nil)
	if ql.JSON200 == nil || len(ql.JSON200.Items) != 1 || ql.JSON200.Items[0].FeaturePath != "greet.feature" {
		t.Fatalf("quarantines %s", ql.Body)
	}
	audit, _ := admin.ListAuditWithResponse(ctx, &serverclient.ListAuditParams{Limit: ptr(200)})
	ops := map[string]int{}
	agentActor := false
	for _, e := range audit.JSON200.Items {
		if e.Outcome == "success" {
			ops[e.Operation]++
		}
		if e.Actor.Kind == "agent" && e.Actor.Id != nil && *e.Actor.Id == job.Id {
			agentActor = true
		}
	}
	if ops["createAgentJob"] != 1 || ops["acceptProposal"] != 2 || ops["agentJob"] != len(proposals) || !agentActor {
		t.Fatalf("audit %v agent actor %v", ops, agentActor)
	}
}

// TestHealPatchVerifiedAndAccepted: heals that recur in two runs become feature patches, each
// verified by a real verification run of the patched scenario; an accepted patch changes the
// feature (If-Match against the ETag it was made from), a rejected one is never proposed again.
func TestHealPatchVerifiedAndAccepted(t *testing.T) {
	if _, err := exec.LookPath("chromium"); err != nil {
		t.Fatal("chromium is required for browser steps: make deps installs it")
	}
	// The heal jobs here start on request only (TestAutoHealJob covers the automatic ones).
	s := apptest.StartOn(t, storetest.NewDatabase(t), func(c *app.Config) { c.NoAutoHeal = true })
	ctx := context.Background()
	admin := s.Setup(t)
	var mu sync.Mutex
	send, cancel := "submit", "cancel"
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		a, b := send, cancel
		mu.Unlock()
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><html><body>
<button id=%q data-testid="submit-btn" onclick="document.getElementById('out').textContent='Sent'">Send</button>
<button id=%q data-testid="cancel-btn" onclick="document.getElementById('out').textContent='Dropped'">Drop</button>
<p id="out"></p></body></html>`, a, b)
	})
	web := httptest.NewServer(mux)
	t.Cleanup(web.Close)
	const sendFeature = "Feature: Send\n  Scenario: Send\n    When I open \"/\"\n    And I click \"#submit\"\n    Then I should see \"Sent\"\n"
	project(t, admin, web.URL, map[string]string{
		"send.feature": sendFeature,
		"drop.feature": "Feature: Drop\n  Scenario: Drop\n    When I open \"/\"\n    And I click \"#cancel\"\n    Then I should see \"Dropped\"\n",
	})
	run := func() {
		id := createRun(t, admin.ClientWithResponses, serverclient.CreateRunJSONRequestBody{Project: "shop", Environment: ptr("local")})
		if r := waitRun(t, admin.ClientWithResponses, id, terminal); r.Status != "passed" {
			t.Fatalf("run %s", r.Status)
		}
	}
	run() // records the elements' alternatives
	mu.Lock()
	send, cancel = "send-button", "drop-button"
	mu.Unlock()
	run()
	heal := func() serverclient.AgentJob {
		job := createJob(t, admin.ClientWithResponses, serverclient.CreateAgentJobJSONRequestBody{Project: "shop", Kind: "heal"})
		if ev := followJob(t, s, admin, job.Id, ""); ev[len(ev)-1].Data["status"] != "succeeded" {
			t.Fatalf("heal job ended %v", ev[len(ev)-1].Data)
		}
		g, _ := admin.GetAgentJobWithResponse(ctx, job.Id)
		return *g.JSON200
	}
	if j := heal(); len(j.ProposalIds) != 0 {
		t.Fatalf("a heal seen in one run was proposed: %+v", j)
	}
	run()
	j := heal()
	if len(j.ProposalIds) != 2 || *j.Summary != "2 patch(es) proposed, 2 verified" {
		for _, id := range j.ProposalIds {
			p, _ := admin.GetProposalWithResponse(ctx, id)
			t.Logf("%s", p.Body)
			if v, ok := p.JSON200.Evidence["verification"].(map[string]any); ok {
				vr, _ := admin.GetRunWithResponse(ctx, uuid.MustParse(v["runId"].(string)))
				t.Logf("%s", vr.Body)
			}
		}
		t.Fatalf("heal job %+v %s", j, *j.Summary)
	}
	var sendP, dropP serverclient.Proposal
	for _, id := range j.ProposalIds {
		p, _ := admin.GetProposalWithResponse(ctx, id)
		if p.JSON200 == nil || p.JSON200.Kind != "feature_patch" || p.JSON200.Status != "verified" || p.JSON200.Diff == nil || p.JSON200.Target.Etag == nil {
			t.Fatalf("proposal %s", p.Body)
		}
		v, _ := p.JSON200.Evidence["verification"].(map[string]any)
		if v["status"] != "passed" {
			t.Fatalf("verification %v", p.JSON200.Evidence)
		}
		// The verification run executed the patch; the saved feature did not change.
		vr, _ := admin.GetRunWithResponse(ctx, uuid.MustParse(v["runId"].(string)))
		if vr.JSON200 == nil || vr.JSON200.Status != "passed" || vr.JSON200.Trigger != "agent" {
			t.Fatalf("verification run %s", vr.Body)
		}
		if *p.JSON200.Target.FeaturePath == "send.feature" {
			sendP = *p.JSON200
		} else {
			dropP = *p.JSON200
		}
	}
	if !strings.Contains(*sendP.Diff, "-    And I click \"#submit\"\n+    And I click \"[data-testid='submit-btn']\"\n") || !strings.HasPrefix(*sendP.Diff, "--- a/send.feature\n+++ b/send.feature\n@@ -1,6 +1,6 @@") {
		t.Fatalf("diff:\n%s", *sendP.Diff)
	}
	f, _ := admin.GetFeatureWithResponse(ctx, "shop", "send.feature", nil)
	if f.JSON200.Content != sendFeature {
		t.Fatalf("the feature changed before acceptance: %s", f.JSON200.Content)
	}
	if r, _ := admin.AcceptProposalWithResponse(ctx, sendP.Id, serverclient.AcceptProposalJSONRequestBody{}); r.JSON200 == nil || r.JSON200.Status != "accepted" {
		t.Fatalf("accept: %d %s", r.StatusCode(), r.Body)
	}
	f, _ = admin.GetFeatureWithResponse(ctx, "shop", "send.feature", nil)
	if f.JSON200.Content != strings.Replace(sendFeature, "#submit", "[data-testid='submit-btn']", 1) {
		t.Fatalf("the feature after acceptance: %s", f.JSON200.Content)
	}
	// The feature changes after the patch was made: accepting it is 409 and the proposal stale.
	df, _ := admin.GetFeatureWithResponse(ctx, "shop", "drop.feature", nil)
	if r, _ := admin.PutFeatureWithResponse(ctx, "shop", "drop.feature", &serverclient.PutFeatureParams{IfMatch: ptr(df.JSON200.Etag)},
		serverclient.PutFeatureJSONRequestBody{Content: df.JSON200.Content + "\n  # edited by hand\n"}); r.StatusCode() != http.StatusOK {
		t.Fatalf("edit: %d %s", r.StatusCode(), r.Body)
	}
	if r, _ := admin.AcceptProposalWithResponse(ctx, dropP.Id, serverclient.AcceptProposalJSONRequestBody{}); r.StatusCode() != http.StatusConflict || !strings.Contains(string(r.Body), "re-run") {
		t.Fatalf("accept a stale patch: %d %s", r.StatusCode(), r.Body)
	}
	if p, _ := admin.GetProposalWithResponse(ctx, dropP.Id); p.JSON200.Status != "stale" {
		t.Fatalf("after a failed If-Match: %s", p.Body)
	}
	// Re-run, the job proposes it again against the current feature.
	j = heal()
	if len(j.ProposalIds) != 1 {
		t.Fatalf("re-run after stale: %+v", j)
	}
	if p, _ := admin.GetProposalWithResponse(ctx, j.ProposalIds[0]); *p.JSON200.Target.FeaturePath != "drop.feature" || *p.JSON200.Target.Etag == *dropP.Target.Etag {
		t.Fatalf("re-proposed %s", p.Body)
	} else {
		dropP = *p.JSON200
	}
	if r, _ := admin.RejectProposalWithResponse(ctx, dropP.Id, serverclient.RejectProposalJSONRequestBody{Reason: ptr("the drop button is going away")}); r.JSON200 == nil || r.JSON200.Status != "rejected" || *r.JSON200.Reason == "" {
		t.Fatalf("reject: %d %s", r.StatusCode(), r.Body)
	}
	// The rejection teaches the runner: #cancel is no longer healed to the rejected button, so the
	// drop scenario fails saying why; nothing is proposed again.
	id := createRun(t, admin.ClientWithResponses, serverclient.CreateRunJSONRequestBody{Project: "shop", Environment: ptr("local")})
	if r := waitRun(t, admin.ClientWithResponses, id, terminal); r.Status != "failed" {
		t.Fatalf("the run after the rejection %s", r.Status)
	}
	for _, sc := range scenariosOf(t, admin, id) {
		if sc.FeaturePath != "drop.feature" {
			continue
		}
		if sc.Status != "failed" || len(sc.Steps) < 2 || sc.Steps[1].Error == nil ||
			!strings.Contains(sc.Steps[1].Error.Message, "(proposal "+dropP.Id.String()+"): the drop button is going away") {
			t.Fatalf("the drop scenario after the rejection: %+v", sc)
		}
	}
	if j := heal(); len(j.ProposalIds) != 0 {
		t.Fatalf("proposed again: %+v", j)
	}
}

// TestBaselinesInTheInbox: visual checks awaiting review are baseline_update items of the one
// inbox; the baselines accept route and the proposal routes change the same records.
func TestBaselinesInTheInbox(t *testing.T) {
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
		fmt.Fprintf(w, `<!doctype html><html><body style="margin:20px"><h1>Checkout</h1><button style="background:%s;color:#fff;border:0;padding:10px 18px">Pay</button></body></html>`, c)
	})
	web := httptest.NewServer(mux)
	t.Cleanup(web.Close)
	project(t, admin, web.URL, map[string]string{"look.feature": "Feature: Look\n  Scenario: Checkout looks right\n    Given the viewport is 640x400\n    When I open \"/\"\n    Then the page matches the baseline \"checkout\"\n"})
	c := admin.ClientWithResponses
	run := func(col string) *serverclient.Run {
		mu.Lock()
		colour = col
		mu.Unlock()
		id := createRun(t, c, serverclient.CreateRunJSONRequestBody{Project: "shop", Environment: ptr("local")})
		return waitRun(t, c, id, terminal)
	}
	inbox := func(status string) []serverclient.Proposal {
		p := &serverclient.ListProposalsParams{Project: ptr("shop"), Kind: ptr(serverclient.ProposalKind("baseline_update"))}
		if status != "" {
			p.Status = ptr(serverclient.ProposalStatus(status))
		}
		r, _ := c.ListProposalsWithResponse(ctx, p)
		if r.JSON200 == nil {
			t.Fatalf("inbox %s", r.Body)
		}
		return r.JSON200.Items
	}
	first := run("#2563eb")
	var all serverclient.AcceptBaselines
	_ = all.FromAcceptAllBaselines(serverclient.AcceptAllBaselines{All: true})
	if r, _ := c.AcceptBaselinesWithResponse(ctx, first.Id, all); r.StatusCode() != http.StatusOK {
		t.Fatalf("accept route: %d %s", r.StatusCode(), r.Body)
	}
	if items := inbox(""); len(items) != 1 || items[0].Status != "accepted" || *items[0].Target.Baseline != "checkout" || items[0].DecidedBy == nil {
		t.Fatalf("after the accept route: %+v", items)
	}

	second := run("#dc2626")
	if second.Status != "failed" {
		t.Fatalf("second run %s", second.Status)
	}
	pending := inbox("pending")
	if len(pending) != 1 || *pending[0].Target.RunId != second.Id || pending[0].Evidence["diffArtifactId"] == nil || pending[0].Evidence["mismatchPixels"].(float64) < 100 {
		t.Fatalf("pending %+v", pending)
	}
	if r, _ := c.AcceptProposalWithResponse(ctx, pending[0].Id, serverclient.AcceptProposalJSONRequestBody{}); r.JSON200 == nil || r.JSON200.Status != "accepted" {
		t.Fatalf("accept in the inbox: %d %s", r.StatusCode(), r.Body)
	}
	if l, _ := c.ListRunBaselinesWithResponse(ctx, second.Id, nil); l.JSON200 == nil || l.JSON200.Items[0].Status != "accepted" {
		t.Fatalf("the run's baselines after the inbox accept: %s", l.Body)
	}
	if third := run("#dc2626"); third.Status != "passed" {
		t.Fatalf("the accepted capture is not the baseline: third run %s", third.Status)
	}

	fourth := run("#16a34a")
	pending = inbox("pending")
	if len(pending) != 1 || *pending[0].Target.RunId != fourth.Id {
		t.Fatalf("pending %+v", pending)
	}
	if r, _ := c.RejectProposalWithResponse(ctx, pending[0].Id, serverclient.RejectProposalJSONRequestBody{Reason: ptr("green is a regression")}); r.JSON200 == nil || r.JSON200.Status != "rejected" || *r.JSON200.Reason != "green is a regression" {
		t.Fatalf("reject: %d %s", r.StatusCode(), r.Body)
	}
	if r, _ := c.AcceptProposalWithResponse(ctx, pending[0].Id, serverclient.AcceptProposalJSONRequestBody{}); r.StatusCode() != http.StatusConflict {
		t.Fatalf("accept a rejected one: %d %s", r.StatusCode(), r.Body)
	}
	if fifth := run("#dc2626"); fifth.Status != "passed" {
		t.Fatalf("the rejected capture became the baseline: %s", fifth.Status)
	}
}

// fakeLLM is a local OpenAI-compatible endpoint: it records each prompt and answers a chat
// completion, or hangs until the caller gives up when hang is set.
type fakeLLM struct {
	mu      sync.Mutex
	prompts []string
	auth    []string
	hang    bool
	tokens  int
	// answer is the completion's content (default: a one-sentence summary).
	answer string
}

func (f *fakeLLM) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Model    string `json:"model"`
		Messages []struct{ Role, Content string }
	}
	raw, _ := io.ReadAll(r.Body)
	_ = json.Unmarshal(raw, &body)
	f.mu.Lock()
	f.prompts = append(f.prompts, string(raw))
	f.auth = append(f.auth, r.Header.Get("Authorization"))
	hang, tokens, answer := f.hang, f.tokens, f.answer
	f.mu.Unlock()
	if answer == "" {
		answer = "The health check expects 503 but the service answers 200."
	}
	if r.URL.Path != "/v1/chat/completions" || body.Model != "fake-model" {
		http.Error(w, "wrong path or model", http.StatusNotFound)
		return
	}
	if hang {
		<-r.Context().Done()
		return
	}
	w.Header().Set("Content-Type", "application/json")
	content, _ := json.Marshal(answer)
	fmt.Fprintf(w, `{"choices":[{"message":{"role":"assistant","content":%s}}],"usage":{"total_tokens":%d}}`, content, tokens)
}

// TestLLMAgentAgainstFakeEndpoint: the llm kind is off until an instance admin configures it;
// its key is sealed at rest and never shown; the prompt holds the failure but no secret; the
// token and time budgets end a job with a clear reason; a cancel stops a running job at once.
func TestLLMAgentAgainstFakeEndpoint(t *testing.T) {
	s := apptest.Start(t)
	ctx := context.Background()
	admin := s.Setup(t)
	const secret, key = "s3cr3t-Token-4711", "sk-local-key-0042"
	mux := http.NewServeMux()
	mux.HandleFunc("/api/health", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"status":"ok","echo":%q}`, r.URL.Query().Get("token"))
	})
	web := httptest.NewServer(mux)
	t.Cleanup(web.Close)
	project(t, admin, web.URL, map[string]string{"health.feature": `Feature: Health API
  Scenario: Token is echoed as degraded
    When I send a GET request to "/api/health?token=${TOKEN}"
    Then the response JSON at "$.echo" is "degraded"
`})
	if r, _ := admin.UpdateEnvironmentWithResponse(ctx, "shop", "local", serverclient.UpdateEnvironmentJSONRequestBody{BaseUrl: &web.URL,
		Variables: &[]serverclient.EnvVariableInput{{Name: "TOKEN", Value: ptr(secret), Secret: ptr(true)}}}); r.StatusCode() != http.StatusOK {
		t.Fatalf("secret: %d %s", r.StatusCode(), r.Body)
	}
	runID := createRun(t, admin.ClientWithResponses, serverclient.CreateRunJSONRequestBody{Project: "shop", Environment: ptr("local")})
	if r := waitRun(t, admin.ClientWithResponses, runID, terminal); r.Status != "failed" {
		t.Fatalf("run %s", r.Status)
	}
	input := &map[string]any{"runId": runID.String()}

	// Off until configured.
	if r, _ := admin.CreateAgentJobWithResponse(ctx, serverclient.CreateAgentJobJSONRequestBody{Project: "shop", Kind: "llm", Input: input}); r.StatusCode() != http.StatusUnprocessableEntity {
		t.Fatalf("llm before configuration: %d %s", r.StatusCode(), r.Body)
	}
	fake := &fakeLLM{tokens: 120}
	llm := httptest.NewServer(fake)
	t.Cleanup(llm.Close)
	editor, _ := s.SignIn(t, admin, "editor@example.com")
	cfg := serverclient.PutAgentLlmConfigJSONRequestBody{Enabled: true, Endpoint: llm.URL + "/v1", Model: "fake-model", Key: ptr(key)}
	if r, _ := editor.PutAgentLlmConfigWithResponse(ctx, cfg); r.StatusCode() != http.StatusForbidden {
		t.Fatalf("a non-admin configures the llm: %d", r.StatusCode())
	}
	if r, _ := admin.PutAgentLlmConfigWithResponse(ctx, cfg); r.JSON200 == nil || !r.JSON200.HasKey || strings.Contains(string(r.Body), key) {
		t.Fatalf("configure: %d %s", r.StatusCode(), r.Body)
	}
	if r, _ := admin.GetAgentLlmConfigWithResponse(ctx); r.JSON200 == nil || !r.JSON200.Enabled || strings.Contains(string(r.Body), key) {
		t.Fatalf("config: %s", r.Body)
	}
	conn, err := pgx.Connect(ctx, s.DatabaseURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var sealed string
	if err := conn.QueryRow(ctx, "SELECT key_sealed FROM agent_llm_config").Scan(&sealed); err != nil || strings.Contains(sealed, key) || sealed == "" {
		t.Fatalf("the key at rest: %v %q", err, sealed)
	}

	// A token needs every scope the kind lists.
	narrow := s.Bearer(t, apptest.Token(t, admin, "agents:write"))
	if r, _ := narrow.CreateAgentJobWithResponse(ctx, serverclient.CreateAgentJobJSONRequestBody{Project: "shop", Kind: "llm", Input: input}); r.StatusCode() != http.StatusForbidden || !strings.Contains(string(r.Body), "runs:read") {
		t.Fatalf("a token without runs:read: %d %s", r.StatusCode(), r.Body)
	}
	job := createJob(t, admin.ClientWithResponses, serverclient.CreateAgentJobJSONRequestBody{Project: "shop", Kind: "llm", Input: input})
	followJob(t, s, admin, job.Id, "")
	g, _ := admin.GetAgentJobWithResponse(ctx, job.Id)
	if g.JSON200.Status != "succeeded" || *g.JSON200.Summary != "The health check expects 503 but the service answers 200." || g.JSON200.TokensUsed != 120 || len(g.JSON200.ProposalIds) != 1 {
		t.Fatalf("llm job %s", g.Body)
	}
	p, _ := admin.GetProposalWithResponse(ctx, g.JSON200.ProposalIds[0])
	if p.JSON200.Evidence["model"] != "fake-model" || len(p.JSON200.Evidence["promptSha256"].(string)) != 64 {
		t.Fatalf("llm proposal %s", p.Body)
	}
	fake.mu.Lock()
	if len(fake.prompts) != 1 || fake.auth[0] != "Bearer "+key || !strings.Contains(fake.prompts[0], `the response JSON at \"$.echo\" is \"degraded\"`) {
		t.Fatalf("prompt %v auth %v", fake.prompts, fake.auth)
	}
	for _, pr := range fake.prompts {
		if strings.Contains(pr, secret) || strings.Contains(pr, key) {
			t.Fatalf("a secret was sent to the model: %s", pr)
		}
	}
	fake.mu.Unlock()

	// The token budget: the answer used more than allowed.
	job = createJob(t, admin.ClientWithResponses, serverclient.CreateAgentJobJSONRequestBody{Project: "shop", Kind: "llm", Input: input, MaxTokens: ptr(50)})
	followJob(t, s, admin, job.Id, "")
	if g, _ := admin.GetAgentJobWithResponse(ctx, job.Id); g.JSON200.Status != "failed" || !strings.Contains(*g.JSON200.Error, "token budget of 50 is spent") {
		t.Fatalf("over the token budget: %s", g.Body)
	}
	// The time budget: the model never answers.
	fake.mu.Lock()
	fake.hang = true
	fake.mu.Unlock()
	job = createJob(t, admin.ClientWithResponses, serverclient.CreateAgentJobJSONRequestBody{Project: "shop", Kind: "llm", Input: input, MaxSeconds: ptr(1)})
	followJob(t, s, admin, job.Id, "")
	if g, _ := admin.GetAgentJobWithResponse(ctx, job.Id); g.JSON200.Status != "failed" || *g.JSON200.Error != "the time budget of 1s is spent" {
		t.Fatalf("over the time budget: %s", g.Body)
	}
	// A cancel stops a running job.
	job = createJob(t, admin.ClientWithResponses, serverclient.CreateAgentJobJSONRequestBody{Project: "shop", Kind: "llm", Input: input})
	for i := 0; ; i++ {
		g, _ := admin.GetAgentJobWithResponse(ctx, job.Id)
		if g.JSON200.Status == "running" {
			break
		}
		if i > 200 {
			t.Fatalf("never running: %s", g.Body)
		}
		time.Sleep(50 * time.Millisecond)
	}
	asked := time.Now()
	if r, _ := admin.CancelAgentJobWithResponse(ctx, job.Id); r.StatusCode() != http.StatusAccepted {
		t.Fatalf("cancel: %d %s", r.StatusCode(), r.Body)
	}
	ev := followJob(t, s, admin, job.Id, "")
	took := time.Since(asked)
	if ev[len(ev)-1].Data["status"] != "cancelled" || took > 5*time.Second {
		t.Fatalf("cancel ended %v after %s", ev[len(ev)-1].Data, took)
	}
	t.Logf("a running job stopped %s after its cancel", took)
}

// TestStabiliseFlakyBrowserScenario: a browser scenario that flips gets an explicit wait for the
// element of its failing step, as a feature patch verified by a verification run.
func TestStabiliseFlakyBrowserScenario(t *testing.T) {
	if _, err := exec.LookPath("chromium"); err != nil {
		t.Fatal("chromium is required for browser steps: make deps installs it")
	}
	s := apptest.Start(t)
	ctx := context.Background()
	admin := s.Setup(t)
	var mu sync.Mutex
	present := true
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		p := present
		mu.Unlock()
		button := ""
		if p {
			button = `<button id="go" onclick="document.getElementById('out').textContent='Done'">Go</button>`
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><html><body>%s<p id="out"></p></body></html>`, button)
	})
	web := httptest.NewServer(mux)
	t.Cleanup(web.Close)
	const feature = "Feature: Go\n  Scenario: Go\n    When I open \"/\"\n    And I click \"#go\"\n    Then I should see \"Done\"\n"
	project(t, admin, web.URL, map[string]string{"go.feature": feature})
	run := func(p bool) {
		mu.Lock()
		present = p
		mu.Unlock()
		id := createRun(t, admin.ClientWithResponses, serverclient.CreateRunJSONRequestBody{Project: "shop", Environment: ptr("local")})
		waitRun(t, admin.ClientWithResponses, id, terminal)
	}
	run(true)
	run(false)
	mu.Lock()
	present = true
	mu.Unlock()
	job := createJob(t, admin.ClientWithResponses, serverclient.CreateAgentJobJSONRequestBody{Project: "shop", Kind: "stabilise", Input: &map[string]any{"owner": "qa"}})
	followJob(t, s, admin, job.Id, "")
	g, _ := admin.GetAgentJobWithResponse(ctx, job.Id)
	if g.JSON200.Status != "succeeded" || len(g.JSON200.ProposalIds) != 1 {
		t.Fatalf("stabilise job %s", g.Body)
	}
	p, _ := admin.GetProposalWithResponse(ctx, g.JSON200.ProposalIds[0])
	if p.JSON200.Kind != "feature_patch" || p.JSON200.Status != "verified" || !strings.Contains(*p.JSON200.Diff, "+    And I wait for \"#go\"\n     And I click \"#go\"\n") {
		t.Fatalf("proposal %s", p.Body)
	}
	if r, _ := admin.AcceptProposalWithResponse(ctx, p.JSON200.Id, serverclient.AcceptProposalJSONRequestBody{}); r.JSON200 == nil || r.JSON200.Status != "accepted" {
		t.Fatalf("accept: %d %s", r.StatusCode(), r.Body)
	}
	f, _ := admin.GetFeatureWithResponse(ctx, "shop", "go.feature", nil)
	if f.JSON200.Content != strings.Replace(feature, "    And I click", "    And I wait for \"#go\"\n    And I click", 1) {
		t.Fatalf("feature %q", f.JSON200.Content)
	}
}

// TestAgentsDoneWhen is the scenario end to end through the real server: a failing
// browser run is triaged; a recurring heal becomes a patch verified by a real verification run
// and accepted, and the feature changed; a rejected heal is not proposed again; a baseline
// appears in the inbox and is accepted there; the llm kind works against a local fake endpoint
// and never sends a secret; no agent or proposal operation answers 501.
func TestAgentsDoneWhen(t *testing.T) {
	if _, err := exec.LookPath("chromium"); err != nil {
		t.Fatal("chromium is required for browser steps: make deps installs it")
	}
	// Heal jobs start on request here, so the one started proposes both patches
	// (TestAutoHealJob covers the automatic ones).
	s := apptest.StartOn(t, storetest.NewDatabase(t), func(c *app.Config) { c.NoAutoHeal = true })
	ctx := context.Background()
	admin := s.Setup(t)
	c := admin.ClientWithResponses
	const secret = "p4ss-Done-When-93"
	var mu sync.Mutex
	send, drop, colour := "submit", "cancel", "#2563eb"
	mux := http.NewServeMux()
	mux.HandleFunc("/look", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		col := colour
		mu.Unlock()
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><html><body style="margin:20px"><button style="background:%s;color:#fff;border:0;padding:10px 18px">Pay</button></body></html>`, col)
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		a, b := send, drop
		mu.Unlock()
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><html><body>
<button id=%q data-testid="submit-btn" onclick="document.getElementById('out').textContent='Sent'">Send</button>
<button id=%q data-testid="cancel-btn" onclick="document.getElementById('out').textContent='Dropped'">Drop</button>
<p id="out"></p></body></html>`, a, b)
	})
	web := httptest.NewServer(mux)
	t.Cleanup(web.Close)
	const sendFeature = "Feature: Send\n  Scenario: Send\n    When I open \"/?t=${TOKEN}\"\n    And I click \"#submit\"\n    Then I should see \"Sent\"\n"
	project(t, admin, web.URL, map[string]string{
		"send.feature": sendFeature,
		"drop.feature": "Feature: Drop\n  Scenario: Drop\n    When I open \"/\"\n    And I click \"#cancel\"\n    Then I should see \"Dropped\"\n",
		"look.feature": "Feature: Look\n  Scenario: Pay looks right\n    Given the viewport is 640x400\n    When I open \"/look\"\n    Then the page matches the baseline \"pay\"\n",
	})
	if r, _ := c.UpdateEnvironmentWithResponse(ctx, "shop", "local", serverclient.UpdateEnvironmentJSONRequestBody{BaseUrl: &web.URL,
		Variables: &[]serverclient.EnvVariableInput{{Name: "TOKEN", Value: ptr(secret), Secret: ptr(true)}}}); r.StatusCode() != http.StatusOK {
		t.Fatalf("secret: %d %s", r.StatusCode(), r.Body)
	}
	run := func() *serverclient.Run {
		id := createRun(t, c, serverclient.CreateRunJSONRequestBody{Project: "shop", Environment: ptr("local")})
		return waitRun(t, c, id, terminal)
	}
	job := func(kind string, input map[string]any) serverclient.AgentJob {
		body := serverclient.CreateAgentJobJSONRequestBody{Project: "shop", Kind: serverclient.AgentJobKind(kind)}
		if input != nil {
			body.Input = &input
		}
		j := createJob(t, c, body)
		followJob(t, s, admin, j.Id, "")
		g, _ := c.GetAgentJobWithResponse(ctx, j.Id)
		if g.JSON200.Status != "succeeded" {
			t.Fatalf("%s job %s", kind, g.Body)
		}
		return *g.JSON200
	}
	if r := run(); r.Status != "passed" { // records the elements and the first baseline
		t.Fatalf("first run %s", r.Status)
	}
	mu.Lock()
	send, drop, colour = "send-button", "drop-button", "#dc2626"
	mu.Unlock()
	failed := run()
	if failed.Status != "failed" {
		t.Fatalf("second run %s", failed.Status)
	}
	run()

	// The failing browser run is triaged.
	tj := job("triage", map[string]any{"runId": failed.Id.String()})
	if len(tj.ProposalIds) != 1 {
		t.Fatalf("triage %+v", tj)
	}
	if p, _ := c.GetProposalWithResponse(ctx, tj.ProposalIds[0]); p.JSON200.Kind != "classification" || *p.JSON200.Target.FeaturePath != "look.feature" || p.JSON200.Evidence["class"] == nil {
		t.Fatalf("triage proposal %s", p.Body)
	}

	// The recurring heals become verified patches; one is accepted, the other rejected.
	hj := job("heal", nil)
	if len(hj.ProposalIds) != 2 {
		t.Fatalf("heal %+v", hj)
	}
	for _, id := range hj.ProposalIds {
		p, _ := c.GetProposalWithResponse(ctx, id)
		if p.JSON200.Status != "verified" {
			t.Fatalf("not verified %s", p.Body)
		}
		if *p.JSON200.Target.FeaturePath == "send.feature" {
			if r, _ := c.AcceptProposalWithResponse(ctx, id, serverclient.AcceptProposalJSONRequestBody{}); r.JSON200 == nil || r.JSON200.Status != "accepted" {
				t.Fatalf("accept %d %s", r.StatusCode(), r.Body)
			}
		} else if r, _ := c.RejectProposalWithResponse(ctx, id, serverclient.RejectProposalJSONRequestBody{Reason: ptr("drop goes away")}); r.JSON200 == nil || r.JSON200.Status != "rejected" {
			t.Fatalf("reject %d %s", r.StatusCode(), r.Body)
		}
	}
	if f, _ := c.GetFeatureWithResponse(ctx, "shop", "send.feature", nil); f.JSON200.Content != strings.Replace(sendFeature, "#submit", "[data-testid='submit-btn']", 1) {
		t.Fatalf("the feature did not change: %s", f.JSON200.Content)
	}

	// A baseline appears in the inbox and is accepted there.
	l, _ := c.ListProposalsWithResponse(ctx, &serverclient.ListProposalsParams{Project: ptr("shop"), Kind: ptr(serverclient.ProposalKind("baseline_update")), Status: ptr(serverclient.ProposalStatus("pending"))})
	if l.JSON200 == nil || len(l.JSON200.Items) != 3 { // the first capture, pending, and two failed checks
		t.Fatalf("inbox %s", l.Body)
	}
	if r, _ := c.AcceptProposalWithResponse(ctx, l.JSON200.Items[0].Id, serverclient.AcceptProposalJSONRequestBody{}); r.JSON200 == nil || r.JSON200.Status != "accepted" {
		t.Fatalf("accept baseline %d %s", r.StatusCode(), r.Body)
	}
	// After the decisions only the drop scenario fails: the runner no longer heals #cancel to the
	// rejected button and says so; the rejected heal is not proposed again.
	after := run()
	for _, sc := range scenariosOf(t, admin, after.Id) {
		if (sc.FeaturePath == "drop.feature") != (sc.Status == "failed") ||
			sc.FeaturePath == "drop.feature" && (sc.Steps[1].Error == nil || !strings.Contains(sc.Steps[1].Error.Message, "rejected in review")) {
			t.Fatalf("after the decisions %s: %+v", sc.FeaturePath, sc)
		}
	}
	if hj := job("heal", nil); len(hj.ProposalIds) != 0 {
		t.Fatalf("proposed again %+v", hj)
	}

	// The llm kind against a local fake endpoint never sends a secret.
	fake := &fakeLLM{tokens: 42}
	llm := httptest.NewServer(fake)
	t.Cleanup(llm.Close)
	if r, _ := c.PutAgentLlmConfigWithResponse(ctx, serverclient.PutAgentLlmConfigJSONRequestBody{Enabled: true, Endpoint: llm.URL + "/v1", Model: "fake-model",
		Key: ptr("sk-done-when"), Include: &[]serverclient.AgentLlmInclude{"failingStep", "message", "steps"}}); r.StatusCode() != http.StatusOK {
		t.Fatalf("llm config %d %s", r.StatusCode(), r.Body)
	}
	job("llm", map[string]any{"runId": failed.Id.String()})
	fake.mu.Lock()
	if len(fake.prompts) != 1 || !strings.Contains(fake.prompts[0], "pay") || strings.Contains(fake.prompts[0], secret) || strings.Contains(fake.prompts[0], "sk-done-when") {
		t.Fatalf("prompts %v", fake.prompts)
	}
	fake.mu.Unlock()

	// No agent or proposal operation answers 501 (the policy matrix drives each against the server).
	golden, err := os.ReadFile(filepath.Join("..", "..", "..", "policy", "matrix.golden"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, line := range strings.Split(string(golden), "\n") {
		if strings.Contains(line, "/api/agents") || strings.Contains(line, "/api/proposals") {
			n++
			if strings.Contains(line, "=501") {
				t.Fatalf("answers 501: %s", line)
			}
		}
	}
	if n != 12 {
		t.Fatalf("%d agent and proposal operations in the matrix", n)
	}
}
