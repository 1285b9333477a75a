package app_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/sdods/sdods/gen/serverclient"
	"github.com/sdods/sdods/impl/server/app"
	"github.com/sdods/sdods/impl/server/app/apptest"
	"github.com/sdods/sdods/impl/server/store/storetest"
)

// TestScheduleFiresExactlyOnceAcrossKilledProcesses runs three sdods processes on one database
// with an every-second schedule for about forty seconds, SIGKILLing one of them every few seconds
// (whichever it is: the River leader that inserts the ticks, or a process in the middle of a
// firing) and starting it again. Every scheduled second of the period has exactly one firing
// record and exactly one run, and every scheduled run has its firing.
func TestScheduleFiresExactlyOnceAcrossKilledProcesses(t *testing.T) {
	// Mostly waits (for a heartbeat to go stale, for seconds to pass): runs alongside the other waiting tests.
	t.Parallel()
	if testing.Short() {
		t.Skip("runs three server processes for a minute")
	}
	bin := apptest.SdodsBinary(t)
	api := apptest.StartOn(t, storetest.NewDatabase(t), func(c *app.Config) { c.Workers = 0 })
	admin := api.Setup(t)
	ctx := context.Background()
	if r, err := admin.CreateProjectWithResponse(ctx, serverclient.CreateProjectJSONRequestBody{Slug: "shop", Name: "Shop", WorkspaceSlug: "default"}); err != nil || r.StatusCode() != 201 {
		t.Fatalf("create project: %v %s", err, r.Body)
	}
	// The in-process server only serves the API from now on: the firing is left to the three.
	api.Stop()
	sc, err := admin.CreateScheduleWithResponse(ctx, serverclient.CreateScheduleJSONRequestBody{Project: "shop", Name: "every second", Cron: "* * * * * *",
		Overlap: ptr(serverclient.ScheduleOverlapAllowAll), CatchUpWindowSeconds: ptr(3600), CatchUpMax: ptr(1000)})
	if err != nil || sc.JSON201 == nil {
		t.Fatalf("create schedule: %v %s", err, sc.Body)
	}
	id := sc.JSON201.Id

	logDir := t.TempDir()
	var mu sync.Mutex
	procs := make([]*exec.Cmd, 3)
	started := 0
	start := func(i int) {
		mu.Lock()
		defer mu.Unlock()
		started++
		cmd := exec.Command(bin, "serve", "-addr", freeAddr(t), "-database-url", api.DatabaseURL, "-data-dir", api.DataDir, "-workers", "0")
		f, _ := os.Create(filepath.Join(logDir, fmt.Sprintf("sdods-%d.log", started)))
		cmd.Stdout, cmd.Stderr = f, f
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		procs[i] = cmd
	}
	kill := func(i int) {
		mu.Lock()
		defer mu.Unlock()
		if p := procs[i]; p != nil {
			_ = p.Process.Kill()
			_, _ = p.Process.Wait()
			procs[i] = nil
		}
	}
	t.Cleanup(func() {
		for i := range procs {
			kill(i)
		}
	})
	for i := range procs {
		start(i)
	}
	begin := time.Now()
	// Kill one process every 4 seconds, in turn, and start it again 1.5 seconds later.
	for k := 0; k < 10; k++ {
		time.Sleep(2500 * time.Millisecond)
		kill(k % 3)
		time.Sleep(1500 * time.Millisecond)
		start(k % 3)
	}
	end := time.Now()
	// Every second up to the end is fired by the processes left running, late ones as catch-up.
	conn, err := pgx.Connect(ctx, api.DatabaseURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	deadline := time.Now().Add(90 * time.Second)
	for {
		var n int
		if err := conn.QueryRow(ctx, `SELECT count(*) FROM schedule_firings WHERE schedule_id = $1 AND scheduled_time <= $2`, id, end).Scan(&n); err != nil {
			t.Fatal(err)
		}
		var first time.Time
		_ = conn.QueryRow(ctx, `SELECT min(scheduled_time) FROM schedule_firings WHERE schedule_id = $1`, id).Scan(&first)
		if !first.IsZero() && n >= int(end.Truncate(time.Second).Sub(first)/time.Second)+1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("only %d firings up to %s since %s", n, end, first)
		}
		time.Sleep(500 * time.Millisecond)
	}
	for i := range procs {
		kill(i)
	}

	rows, err := conn.Query(ctx, `SELECT f.scheduled_time, f.status, f.reason, f.run_id, f.fired_by, r.trigger, r.schedule_id
		FROM schedule_firings f LEFT JOIN runs r ON r.id = f.run_id
		WHERE f.schedule_id = $1 AND NOT f.manual ORDER BY f.scheduled_time`, id)
	if err != nil {
		t.Fatal(err)
	}
	type firing struct {
		at                    time.Time
		status, reason, firer string
		run                   *string
		trigger               *string
	}
	var fs []firing
	for rows.Next() {
		var f firing
		var sched *[16]byte
		if err := rows.Scan(&f.at, &f.status, &f.reason, &f.run, &f.firer, &f.trigger, &sched); err != nil {
			t.Fatal(err)
		}
		fs = append(fs, f)
	}
	if rows.Err() != nil {
		t.Fatal(rows.Err())
	}
	firers := map[string]bool{}
	reasons := map[string]int{}
	runs := map[string]bool{}
	for i, f := range fs {
		if i > 0 && f.at.Sub(fs[i-1].at) != time.Second {
			t.Fatalf("firings at %s then %s: a scheduled second is missing or doubled", fs[i-1].at, f.at)
		}
		if f.status != "started" || f.run == nil || f.trigger == nil || *f.trigger != "schedule" {
			t.Fatalf("firing at %s: %s %s run %v", f.at, f.status, f.reason, f.run)
		}
		if runs[*f.run] {
			t.Fatalf("run %s started by two firings", *f.run)
		}
		runs[*f.run] = true
		firers[f.firer] = true
		reasons[f.reason]++
	}
	if got := fs[len(fs)-1].at.Sub(fs[0].at); got < 35*time.Second || fs[0].at.After(begin.Add(15*time.Second)) {
		t.Fatalf("firings cover %s to %s only", fs[0].at, fs[len(fs)-1].at)
	}
	var scheduledRuns int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM runs WHERE schedule_id = $1 AND trigger = 'schedule'`, id).Scan(&scheduledRuns); err != nil {
		t.Fatal(err)
	}
	if scheduledRuns != len(runs) {
		t.Fatalf("%d scheduled runs for %d firings: a run without its firing", scheduledRuns, len(runs))
	}
	if len(firers) < 2 {
		t.Fatalf("one process fired everything: %v", firers)
	}
	t.Logf("%d seconds fired exactly once by %d processes (%d started in all), reasons %v", len(fs), len(firers), started, reasons)
}
