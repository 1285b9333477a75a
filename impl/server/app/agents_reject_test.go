package app_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"

	"github.com/sdods/sdods/gen/serverclient"
	"github.com/sdods/sdods/impl/server/app"
	"github.com/sdods/sdods/impl/server/app/apptest"
	"github.com/sdods/sdods/impl/server/store/storetest"
)

// TestRejectedHealTeachesTheRunner: through the real server and Chromium, a run heals #pay to
// the element that kept its test id (the wrong one: the run fails) and records the runner-up
// with its score; the patch is rejected; the next run heals to the runner-up instead and passes;
// once that replacement is rejected too, the run fails with a message naming both rejections.
// Beside it, a heal whose runner-up came within the margin is ambiguous in the heal record and
// in the proposal, and never verified automatically.
func TestRejectedHealTeachesTheRunner(t *testing.T) {
	if _, err := exec.LookPath("chromium"); err != nil {
		t.Fatal("chromium is required for browser steps: make deps installs it")
	}
	s := apptest.StartOn(t, storetest.NewDatabase(t), func(c *app.Config) { c.NoAutoHeal = true })
	ctx := context.Background()
	admin := s.Setup(t)
	var mu sync.Mutex
	changed := false
	mux := http.NewServeMux()
	page := func(w http.ResponseWriter, body string) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><html><body>%s<p id="out"></p></body></html>`, body)
	}
	const out = `document.getElementById('out').textContent=`
	mux.HandleFunc("/pay", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if !changed {
			page(w, `<button id="pay" name="pay" data-testid="pay-btn" onclick="`+out+`'Paid'">Pay</button>`)
			return
		}
		// The test id stayed on a button that now saves; the paying one lost it.
		page(w, `<button data-testid="pay-btn" onclick="`+out+`'Saved'">Pay</button>`+
			`<button id="checkout-pay" name="pay" onclick="`+out+`'Paid'">Pay</button>`)
	})
	mux.HandleFunc("/go", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if !changed {
			page(w, `<button id="go" name="go" type="submit" onclick="`+out+`'Went'">Go</button>`)
			return
		}
		// Two buttons that differ only by their type: the heal is ambiguous.
		page(w, `<button name="go" type="submit" onclick="`+out+`'Went'">Go</button><button name="go" onclick="`+out+`'Went'">Go</button>`)
	})
	web := httptest.NewServer(mux)
	t.Cleanup(web.Close)
	project(t, admin, web.URL, map[string]string{
		"pay.feature": "Feature: Pay\n  Scenario: Pay\n    When I open \"/pay\"\n    And I click \"#pay\"\n    Then I should see \"Paid\"\n",
		"go.feature":  "Feature: Go\n  Scenario: Go\n    When I open \"/go\"\n    And I click \"#go\"\n    Then I should see \"Went\"\n",
	})
	type result struct {
		status string
		byPath map[string]serverclient.RunScenario
	}
	run := func() result {
		id := createRun(t, admin.ClientWithResponses, serverclient.CreateRunJSONRequestBody{Project: "shop", Environment: ptr("local")})
		r := waitRun(t, admin.ClientWithResponses, id, terminal)
		res := result{status: string(r.Status), byPath: map[string]serverclient.RunScenario{}}
		for _, sc := range scenariosOf(t, admin, id) {
			res.byPath[sc.FeaturePath] = sc
		}
		return res
	}
	heal := func() []serverclient.Proposal {
		job := createJob(t, admin.ClientWithResponses, serverclient.CreateAgentJobJSONRequestBody{Project: "shop", Kind: "heal",
			Input: &map[string]any{"minOccurrences": 1}})
		if ev := followJob(t, s, admin, job.Id, ""); ev[len(ev)-1].Data["status"] != "succeeded" {
			t.Fatalf("heal job ended %v", ev[len(ev)-1].Data)
		}
		g, _ := admin.GetAgentJobWithResponse(ctx, job.Id)
		var out []serverclient.Proposal
		for _, id := range g.JSON200.ProposalIds {
			p, _ := admin.GetProposalWithResponse(ctx, id)
			out = append(out, *p.JSON200)
		}
		return out
	}
	reject := func(id uuid.UUID, reason string) {
		if r, _ := admin.RejectProposalWithResponse(ctx, id, serverclient.RejectProposalJSONRequestBody{Reason: ptr(reason)}); r.JSON200 == nil || r.JSON200.Status != "rejected" {
			t.Fatalf("reject: %d %s", r.StatusCode(), r.Body)
		}
	}
	healOf := func(sc serverclient.RunScenario) serverclient.Heal {
		t.Helper()
		if len(sc.Steps) < 2 || len(sc.Steps[1].Heals) != 1 {
			t.Fatalf("%s: no heal recorded: %+v", sc.FeaturePath, sc.Steps)
		}
		return sc.Steps[1].Heals[0]
	}

	if r := run(); r.status != "passed" { // records the elements' alternatives
		t.Fatalf("first run %s", r.status)
	}
	mu.Lock()
	changed = true
	mu.Unlock()

	// The heal picks the test id (score 12/18) over the paying button (10/18): the run fails.
	second := run()
	if second.status != "failed" {
		t.Fatalf("second run %s", second.status)
	}
	h := healOf(second.byPath["pay.feature"])
	if h.NewSelector != `[data-testid="pay-btn"]` || h.Score != 0.67 || h.RunnerUp == nil || h.RunnerUp.Selector != "#checkout-pay" ||
		h.RunnerUp.Score != 0.56 || (h.Ambiguous != nil && *h.Ambiguous) {
		t.Fatalf("pay heal %+v runner-up %+v", h, h.RunnerUp)
	}
	// The go button: 11/14 against 10/14, within the margin.
	g := healOf(second.byPath["go.feature"])
	if g.RunnerUp == nil || g.Score != 0.79 || g.RunnerUp.Score != 0.71 || g.Ambiguous == nil || !*g.Ambiguous {
		t.Fatalf("go heal %+v runner-up %+v", g, g.RunnerUp)
	}
	if second.byPath["go.feature"].Status != "passed" {
		t.Fatalf("go scenario %s", second.byPath["go.feature"].Status)
	}

	props := heal()
	if len(props) != 2 {
		t.Fatalf("proposals %+v", props)
	}
	var payP, goP serverclient.Proposal
	for _, p := range props {
		if *p.Target.FeaturePath == "pay.feature" {
			payP = p
		} else {
			goP = p
		}
	}
	ru, _ := payP.Evidence["runnerUp"].(map[string]any)
	if payP.Evidence["score"] != 0.67 || ru["selector"] != "#checkout-pay" || ru["score"] != 0.56 || payP.Evidence["ambiguous"] != false {
		t.Fatalf("pay evidence %v", payP.Evidence)
	}
	// The clicked test id does not pay: its verification failed, and it stays pending.
	if v, _ := payP.Evidence["verification"].(map[string]any); payP.Status != "pending" || v["status"] != "failed" {
		t.Fatalf("pay proposal %s %v", payP.Status, payP.Evidence)
	}
	// The ambiguous one is never verified automatically (its run would pass): no verification run,
	// a lower confidence, and only an admin's force accepts it.
	ru, _ = goP.Evidence["runnerUp"].(map[string]any)
	if goP.Status != "pending" || goP.Evidence["ambiguous"] != true || goP.Evidence["verification"] != nil || ru["score"] != 0.71 || goP.Confidence >= 0.79 {
		t.Fatalf("go proposal %s %v %v", goP.Status, goP.Confidence, goP.Evidence)
	}
	if r, _ := admin.AcceptProposalWithResponse(ctx, goP.Id, serverclient.AcceptProposalJSONRequestBody{}); r.StatusCode() != http.StatusConflict {
		t.Fatalf("accept an unverified ambiguous heal: %d %s", r.StatusCode(), r.Body)
	}
	reject(goP.Id, "either button may be meant")
	reject(payP.Id, "the test id moved to the save button")

	// The runner learned: #pay heals to the paying button now, and the run passes.
	third := run()
	if third.status != "passed" {
		t.Fatalf("third run %s: %+v", third.status, third.byPath["pay.feature"])
	}
	if h := healOf(third.byPath["pay.feature"]); h.NewSelector != "#checkout-pay" {
		t.Fatalf("third run healed to %+v", h)
	}

	// That replacement rejected too, no candidate is left: the run fails and says why.
	var second2 serverclient.Proposal
	for _, p := range heal() { // and #go, healed past its rejected replacement to the other button
		if *p.Target.FeaturePath == "pay.feature" {
			second2 = p
		}
	}
	if second2.Evidence["newSelector"] != "#checkout-pay" {
		t.Fatalf("the pay proposal after the rejection: %+v", second2)
	}
	reject(second2.Id, "paying moves to the cart page")
	fourth := run()
	pay := fourth.byPath["pay.feature"]
	if fourth.status != "failed" || pay.Status != "failed" || len(pay.Steps) < 2 || pay.Steps[1].Error == nil {
		t.Fatalf("fourth run %s %+v", fourth.status, pay)
	}
	msg := pay.Steps[1].Error.Message
	for _, want := range []string{`no element matches "#pay"`, `skipped "[data-testid=\"pay-btn\"]"`, "(proposal " + payP.Id.String() + "): the test id moved to the save button",
		`skipped "#checkout-pay"`, "(proposal " + second2.Id.String() + "): paying moves to the cart page"} {
		if !strings.Contains(msg, want) {
			t.Fatalf("the failure does not say %q: %s", want, msg)
		}
	}
	t.Logf("fourth run: %s", msg)
}
