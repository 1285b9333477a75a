package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/sdods/sdods/gen/serverclient"
	"github.com/sdods/sdods/impl/server/app"
	"github.com/sdods/sdods/impl/server/app/apptest"
	"github.com/sdods/sdods/impl/server/store/storetest"
)

// sdodsProcess is a real `sdods serve` process of a deployment test.
type sdodsProcess struct {
	name, url string
	cmd       *exec.Cmd
	log       string
	once      sync.Once
}

// kill ends the process with SIGKILL (no chance to finish anything) and waits for it.
func (p *sdodsProcess) kill() {
	p.once.Do(func() { _ = p.cmd.Process.Kill(); _, _ = p.cmd.Process.Wait() })
}

func (p *sdodsProcess) logs() string {
	b, _ := os.ReadFile(p.log)
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return p.name + ":\n" + string(b)
}

// TestThreeProcessDeployment is the deployment of issue 31 item 5 on one machine: three real
// `sdods serve` processes on one fresh database — two with -role api, one with -role all (worker
// and API). It checks that every run is executed exactly once (by the only process that works
// jobs); that the event stream of one run read from each of the three processes carries every
// stored event, with the same ids in the same order, ending with the stored end event; that an
// every-second schedule fires each second once, each firing with one run; and that SIGKILLing the
// worker in the middle of a run leaves nothing stuck: a worker started again executes the runs
// queued meanwhile, and the killed run ends errored, its scenarios kept, once its heartbeat is
// stale (docs/jobs.md) — its stream ends too.
func TestThreeProcessDeployment(t *testing.T) {
	// Mostly waits (for a heartbeat to go stale, for seconds to pass): runs alongside the other waiting tests.
	t.Parallel()
	if testing.Short() {
		t.Skip("starts three server processes")
	}
	bin := apptest.SdodsBinary(t)
	// The in-process server only prepares the database (administrator, token, project) and is
	// stopped before the three start: it serves its API, works no job and listens to nothing.
	setup := apptest.StartOn(t, storetest.NewDatabase(t), func(c *app.Config) { c.Role, c.Workers = app.RoleAPI, 0 })
	admin := setup.Setup(t)
	web := webApp(t)
	project(t, admin, web.URL, map[string]string{"api/many.feature": manyScenarios(5), "slow.feature": interruptedFeature})
	token := apptest.Token(t, admin, "runs:read", "runs:write", "schedules:read", "schedules:write")
	setup.Stop()

	logDir := t.TempDir()
	var procs []*sdodsProcess
	t.Cleanup(func() {
		for _, p := range procs {
			p.kill()
		}
		if t.Failed() {
			for _, p := range procs {
				t.Log(p.logs())
			}
		}
	})
	start := func(name, role string) *sdodsProcess {
		addr := freeAddr(t)
		p := &sdodsProcess{name: name, url: "http://" + addr, log: filepath.Join(logDir, name+".log")}
		p.cmd = exec.Command(bin, "serve", "-addr", addr, "-database-url", setup.DatabaseURL, "-data-dir", setup.DataDir, "-role", role, "-workers", "2")
		p.cmd.Env = append(os.Environ(), "SDODS_EGRESS_ALLOW="+strings.Join(apptest.LoopbackEgress, ","), "SDODS_LOG_LEVEL=info")
		f, err := os.Create(p.log)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		p.cmd.Stdout, p.cmd.Stderr = f, f
		if err := p.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		procs = append(procs, p)
		deadline := time.Now().Add(time.Minute)
		for {
			resp, err := http.Get(p.url + "/api/health")
			if err == nil {
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					return p
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s did not become healthy: %v", name, err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	clientOf := func(p *sdodsProcess) *serverclient.ClientWithResponses {
		c, err := serverclient.NewClientWithResponses(p.url, serverclient.WithRequestEditorFn(func(_ context.Context, req *http.Request) error {
			req.Header.Set("Authorization", "Bearer "+token)
			return nil
		}))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	api1, api2, worker := start("api-1", "api"), start("api-2", "api"), start("all-1", "all")
	c1, c2 := clientOf(api1), clientOf(api2)

	// A run the worker is in the middle of when it is killed.
	slow := createRun(t, c1, serverclient.CreateRunJSONRequestBody{Project: "shop", Environment: ptr("local"), Paths: &[]string{"slow.feature"}})
	deadline := time.Now().Add(time.Minute)
	for {
		sc := scenariosOf(t, admin, slow)
		if len(sc) == 2 && len(sc[1].Steps) == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the slow run's second scenario never reached its long step: %+v", sc)
		}
		time.Sleep(100 * time.Millisecond)
	}
	worker.kill()
	killed := time.Now()
	// Queued while no process works jobs: the worker started again executes it.
	whileDead := createRun(t, c2, serverclient.CreateRunJSONRequestBody{Project: "shop", Environment: ptr("local"), Paths: &[]string{"api/many.feature"}})
	time.Sleep(500 * time.Millisecond)
	if r, _ := c1.GetRunWithResponse(context.Background(), whileDead); r.JSON200 == nil || r.JSON200.Status != "queued" {
		t.Fatalf("a run was executed while only API processes ran: %s", r.Body)
	}
	worker = start("all-2", "all")
	c3 := clientOf(worker)

	// Runs created through either API process, each followed on all three processes from before
	// it starts.
	var ids []uuid.UUID
	for i := range 4 {
		ids = append(ids, createRun(t, []*serverclient.ClientWithResponses{c1, c2}[i%2], serverclient.CreateRunJSONRequestBody{Project: "shop", Environment: ptr("local"), Paths: &[]string{"api/many.feature"}}))
	}
	watched := ids[0]
	streams := make([][]rawEvent, 3)
	errs := make([]error, 3)
	var wg sync.WaitGroup
	for i, p := range []*sdodsProcess{api1, api2, worker} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			var ended bool
			ended, errs[i] = readStream(ctx, http.DefaultClient, p.url+"/api/runs/"+watched.String()+"/events", "", http.Header{"Authorization": {"Bearer " + token}},
				func(e rawEvent) { streams[i] = append(streams[i], e) })
			if errs[i] == nil && !ended {
				errs[i] = fmt.Errorf("the stream of %s closed before the end event", p.name)
			}
		}()
	}
	for _, id := range append(ids, whileDead) {
		if run := waitRun(t, c3, id, terminal); run.Status != "passed" {
			t.Fatalf("run %s ended %s", id, run.Status)
		}
		deadline := time.Now().Add(20 * time.Second)
		for {
			running, ends := executions(t, setup, id)
			jobs := runJobsOf(t, setup, id)
			if running == 1 && ends == 1 && len(jobs) == 1 && jobs[0].State == "completed" && jobs[0].Attempt == 1 {
				break
			}
			if running > 1 || ends > 1 || len(jobs) > 1 || time.Now().After(deadline) {
				t.Fatalf("run %s: %d executions, %d end events, River jobs %+v", id, running, ends, jobs)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	wg.Wait()
	stored := storedEvents(t, setup, watched)
	var storedEnd struct {
		At     *time.Time `json:"at"`
		Status string     `json:"status"`
	}
	if last := stored[len(stored)-1]; last.Event != "end" || json.Unmarshal([]byte(last.Data), &storedEnd) != nil || storedEnd.At == nil || storedEnd.Status != "passed" {
		t.Fatalf("the watched run's last stored event: %+v", last)
	}
	for i, p := range []*sdodsProcess{api1, api2, worker} {
		if errs[i] != nil {
			t.Fatalf("stream from %s: %v", p.name, errs[i])
		}
		if len(streams[i]) != len(stored) {
			t.Fatalf("the stream from %s had %d events, %d stored", p.name, len(streams[i]), len(stored))
		}
		for k := range stored {
			if streams[i][k] != stored[k] {
				t.Fatalf("event %d from %s is %+v, stored %+v", k, p.name, streams[i][k], stored[k])
			}
		}
	}

	// An every-second schedule, created through one API process and paused through the other.
	ctx := context.Background()
	sc, err := c1.CreateScheduleWithResponse(ctx, serverclient.CreateScheduleJSONRequestBody{Project: "shop", Name: "every second", Cron: "* * * * * *",
		Overlap: ptr(serverclient.ScheduleOverlapAllowAll), Run: &serverclient.RunTemplate{Environment: ptr("local"), Paths: &[]string{"api/many.feature"}}})
	if err != nil || sc.JSON201 == nil {
		t.Fatalf("create schedule: %v %s", err, sc.Body)
	}
	sched := sc.JSON201.Id
	pool := setup.App.Store.Pool
	deadline = time.Now().Add(30 * time.Second)
	for {
		var n int
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM schedule_firings WHERE schedule_id = $1`, sched).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n >= 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the schedule fired %d times in 30 s", n)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if r, err := c2.PauseScheduleWithResponse(ctx, sched, serverclient.PauseScheduleJSONRequestBody{}); err != nil || r.StatusCode() >= 300 {
		t.Fatalf("pause schedule: %v %s", err, r.Body)
	}
	// One statement, one snapshot: a firing in flight when the schedule was paused commits with its
	// run, so both are counted or neither.
	rows, err := pool.Query(ctx, `SELECT f.scheduled_time, f.status, f.run_id, (SELECT count(*) FROM runs r WHERE r.id = f.run_id AND r.schedule_id = $1),
		(SELECT count(*) FROM runs WHERE schedule_id = $1)
		FROM schedule_firings f WHERE f.schedule_id = $1 AND NOT f.manual ORDER BY f.scheduled_time`, sched)
	if err != nil {
		t.Fatal(err)
	}
	var firings []time.Time
	var scheduled int
	for rows.Next() {
		var at time.Time
		var status string
		var run *uuid.UUID
		var runs int
		if err := rows.Scan(&at, &status, &run, &runs, &scheduled); err != nil {
			t.Fatal(err)
		}
		if status != "started" || run == nil || runs != 1 {
			t.Fatalf("firing at %s: %s, run %v (%d runs)", at, status, run, runs)
		}
		if n := len(firings); n > 0 && at.Sub(firings[n-1]) != time.Second {
			t.Fatalf("firings at %s then %s: a scheduled second is missing or doubled", firings[n-1], at)
		}
		firings = append(firings, at)
	}
	if rows.Err() != nil {
		t.Fatal(rows.Err())
	}
	if scheduled != len(firings) || len(firings) < 3 {
		t.Fatalf("%d scheduled runs for %d firings", scheduled, len(firings))
	}

	// The killed run: ended by the processes still running once its heartbeat is stale.
	run := waitRun(t, c1, slow, terminal)
	if run.Status != "errored" || run.Error == nil || !strings.Contains(*run.Error, "worker") || run.Counts.Total != 2 || run.Counts.Passed != 1 {
		t.Fatalf("the killed worker's run: %s %v %+v", run.Status, run.Error, run.Counts)
	}
	if running, ends := executions(t, setup, slow); running != 1 || ends != 1 {
		t.Fatalf("the killed worker's run executed %d times, %d end events", running, ends)
	}
	var got []rawEvent
	sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	ended, err := readStream(sctx, http.DefaultClient, api2.url+"/api/runs/"+slow.String()+"/events", "", http.Header{"Authorization": {"Bearer " + token}},
		func(e rawEvent) { got = append(got, e) })
	if err != nil || !ended || !strings.Contains(got[len(got)-1].Data, `"errored"`) {
		t.Fatalf("the killed run's stream: ended %v, %v, last %+v", ended, err, got[len(got)-1])
	}
	t.Logf("runs executed once each; %d events streamed alike by three processes; %d schedule firings, one run each; the killed run ended errored %s after the kill",
		len(stored), len(firings), time.Since(killed).Round(time.Second))
}
