package app_test

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sdods/sdods/gen/serverclient"
	"github.com/sdods/sdods/impl/server/app"
	"github.com/sdods/sdods/impl/server/app/apptest"
	"github.com/sdods/sdods/impl/server/runs"
	"github.com/sdods/sdods/impl/server/store/storetest"
)

// liveResult is what the subscriber process reports.
type liveResult struct {
	// Ended subscribers read an end event, StoredEnds the run's stored one; Complete ones read
	// every stored event, in order (1, 2, … to the stored end).
	Subscribers, Ended, StoredEnds, Complete int
	// Events is the events delivered, over Reads reads of the streams; Resumes the times a
	// subscriber was dropped by the server and resumed with Last-Event-ID.
	Events, Reads int64
	Resumes       int
	// P50, P99 and Max are the lag from an event's stored time (at, taken by the runner when it
	// records the event, before the event waits in its batch); CommitP50, CommitP99 and CommitMax
	// the lag from its batch's commit (the time the batch's NOTIFY reaches a LISTEN connection of
	// the subscriber process) — both to the moment the read that completed the event's data line
	// returned in the subscriber.
	P50, P99, Max                   time.Duration
	CommitP50, CommitP99, CommitMax time.Duration
	// Batches is the number of notifications of the run (one per committed batch).
	Batches int
	// ReadyCPU is the process's CPU time once every stream was open, CPU once every one had
	// ended: CPU-ReadyCPU is what reading the run's events cost, ReadingSystem the kernel's part
	// of it (the read system calls).
	ReadyCPU, CPU, ReadingSystem time.Duration
}

// BenchmarkLiveEvents measures live events at scale (issue 31 item 4): an API server (this
// process, no workers) serves SDODS_LIVE_SUBSCRIBERS event streams (default 1,000) of one run,
// opened by a separate subscriber process (this test binary again, TestLiveSubscriberProcess)
// before a worker process (sdods serve, built from ./cmd/sdods, one worker) is started on the same
// database and executes the run: SDODS_LIVE_SCENARIOS scenarios (default 40) of two HTTP steps,
// each scenario also waiting SDODS_LIVE_WAIT seconds (default 0.05; 0: none), the API and worker
// roles of a deployment. The default is paced, as a real application's tests are: a run that
// emits its ~800 events in ~40 ms (SDODS_LIVE_SCENARIOS=100 SDODS_LIVE_WAIT=0) asks 1,000
// subscribers for 20 million deliveries a second, more than two processors can carry whatever the
// server does (docs/benchmarks.md, "Live events", session 13). Each round runs the same run with no
// subscriber, then with all of them once for each feed coalescing window of SDODS_LIVE_COALESCE (a
// comma-separated list of durations, default "0": runs.FeedCoalesce of this process),
// alternating. Reported: live lag p50/p99/max from an event's stored time and from its batch's
// commit (liveResult) to its arrival at a subscriber; the run's own time (started → finished) with
// and without subscribers; the server's CPU per delivered event: the extra CPU time of the API and
// worker processes with subscribers divided by the events delivered; and the subscriber process's
// CPU per delivered event while the run streamed. SDODS_LIVE_WRITERS sets runs.FeedWriters;
// SDODS_LIVE_CLIENT_CPUS pins the subscriber process to those CPUs (taskset -c);
// SDODS_LIVE_CLIENT_PROFILE names a file for the subscriber process's CPU profile. Command and
// figures in docs/benchmarks.md.
func BenchmarkLiveEvents(b *testing.B) {
	servedGC(b)
	scenarios, rounds := envInt("SDODS_LIVE_SCENARIOS", 40), envInt("SDODS_LIVE_ROUNDS", 3)
	// setting is one configuration of the subscribed rounds: how many streams, which window.
	type setting struct {
		subs   int
		window time.Duration
	}
	var settings []setting
	for _, n := range strings.Split(cmp.Or(os.Getenv("SDODS_LIVE_SUBSCRIBERS"), "1000"), ",") {
		subs, err := strconv.Atoi(strings.TrimSpace(n))
		if err != nil || subs < 1 {
			b.Fatalf("SDODS_LIVE_SUBSCRIBERS: %q", n)
		}
		for _, w := range strings.Split(cmp.Or(os.Getenv("SDODS_LIVE_COALESCE"), "0"), ",") {
			d, err := time.ParseDuration(strings.TrimSpace(w))
			if err != nil {
				b.Fatalf("SDODS_LIVE_COALESCE: %v", err)
			}
			settings = append(settings, setting{subs, d})
		}
	}
	feature := manyScenarios(scenarios)
	wait := cmp.Or(os.Getenv("SDODS_LIVE_WAIT"), "0.05")
	if w, err := strconv.ParseFloat(wait, 64); err != nil || w < 0 {
		b.Fatalf("SDODS_LIVE_WAIT: %q, seconds", wait)
	} else if w > 0 {
		// Paced scenarios: each also waits, as the steps of a real application's tests do.
		feature = strings.ReplaceAll(feature, "    Then the response status is 200\n", "    Then the response status is 200\n    And I wait "+wait+" seconds\n")
	}
	defer func(d time.Duration) { runs.FeedCoalesce = d }(runs.FeedCoalesce)
	defer func(n int) { runs.FeedWriters = n }(runs.FeedWriters)
	if n := envInt("SDODS_LIVE_WRITERS", 0); n > 0 {
		runs.FeedWriters = n
	}
	dbURL := storetest.NewDatabase(b)
	// The worker process heartbeats at the default pace: the API process must not take its run
	// for lost sooner than the default either.
	api := apptest.StartOn(b, dbURL, func(c *app.Config) { c.Workers, c.RunHeartbeat, c.RunStaleAfter = 0, 5*time.Second, 30*time.Second })
	admin := api.Setup(b)
	// The application the run's HTTP steps call runs in a process of its own, as a tested
	// application does: inside this process its handlers would wait behind the streams' writes.
	webProc := exec.Command(os.Args[0], "-test.run=^TestLiveWebAppProcess$", "-test.count=1")
	webProc.Env = append(os.Environ(), "SDODS_LIVE_WEBAPP=1")
	webProc.Stderr = os.Stderr
	webIn, _ := webProc.StdinPipe()
	webOut, _ := webProc.StdoutPipe()
	if err := webProc.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { webIn.Close(); _ = webProc.Wait() })
	webLine := bufio.NewScanner(webOut)
	webURL := ""
	for !strings.HasPrefix(webURL, "http://") && webLine.Scan() {
		webURL = webLine.Text()
	}
	if !strings.HasPrefix(webURL, "http://") {
		b.Fatal("the web application process printed no URL")
	}
	project(b, admin, webURL, map[string]string{"api/many.feature": feature})
	token := apptest.Token(b, admin, "runs:read")
	bin := filepath.Join(b.TempDir(), "sdods")
	if out, err := exec.Command("go", "build", "-o", bin, "../../../cmd/sdods").CombinedOutput(); err != nil {
		b.Fatalf("build sdods: %v\n%s", err, out)
	}
	// startWorker starts a worker process on the database; stop ends it and returns its CPU time.
	startWorker := func() (stop func() time.Duration) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		addr := l.Addr().String()
		l.Close()
		w := exec.Command(bin, "serve")
		w.Env = append(os.Environ(), "DATABASE_URL="+dbURL, "SDODS_ADDR="+addr, "SDODS_DATA_DIR="+b.TempDir(), "SDODS_WORKERS=1",
			"SDODS_SECRET_KEY="+strings.Repeat("5a", 32), "SDODS_EGRESS_ALLOW="+strings.Join(apptest.LoopbackEgress, ","), "SDODS_LOG_LEVEL=warn")
		var logs bytes.Buffer
		w.Stdout, w.Stderr = &logs, &logs
		if err := w.Start(); err != nil {
			b.Fatal(err)
		}
		return func() time.Duration {
			_ = w.Process.Signal(syscall.SIGTERM)
			_ = w.Wait()
			if !w.ProcessState.Success() {
				b.Logf("worker: %s\n%s", w.ProcessState, logs.String())
			}
			ru, _ := w.ProcessState.SysUsage().(*syscall.Rusage)
			if ru == nil {
				return 0
			}
			return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		}
	}

	type round struct {
		run, cpu time.Duration
		res      *liveResult
		load     string
	}
	// one runs the run once; set nil: without subscribers.
	one := func(set *setting) round {
		withSubs := set != nil
		subs := 0
		if withSubs {
			runs.FeedCoalesce, subs = set.window, set.subs
		}
		id := createRun(b, admin.ClientWithResponses, serverclient.CreateRunJSONRequestBody{Project: "shop", Environment: ptr("local")})
		var sub *exec.Cmd
		var out *bufio.Scanner
		if withSubs {
			sub = exec.Command(os.Args[0], "-test.run=^TestLiveSubscriberProcess$", "-test.count=1")
			if cpus := os.Getenv("SDODS_LIVE_CLIENT_CPUS"); cpus != "" {
				// The subscribers on the given CPUs only (taskset), as on a machine of their own.
				sub = exec.Command("taskset", append([]string{"-c", cpus}, sub.Args...)...)
			}
			sub.Env = append(os.Environ(), "SDODS_LIVE_CLIENT_URL="+api.URL+"/api/runs/"+id.String()+"/events",
				fmt.Sprint("SDODS_LIVE_CLIENT_N=", subs), "SDODS_LIVE_CLIENT_TOKEN="+token, "SDODS_LIVE_CLIENT_DB="+dbURL)
			sub.Stderr = os.Stderr
			pipe, _ := sub.StdoutPipe()
			if err := sub.Start(); err != nil {
				b.Fatal(err)
			}
			out = bufio.NewScanner(pipe)
			for out.Scan() && out.Text() != "ready" {
			}
			deadline := time.Now().Add(30 * time.Second)
			for api.App.Runs.Subscribers() < int64(subs) && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
		}
		cpu0 := cpuNow()
		stopWorker := startWorker()
		r := waitRun(b, admin.ClientWithResponses, id, terminal)
		var res *liveResult
		if sub != nil {
			for out.Scan() {
				if line := out.Text(); strings.HasPrefix(line, "{") {
					res = &liveResult{}
					if err := json.Unmarshal([]byte(line), res); err != nil {
						b.Fatal(err)
					}
				}
			}
			if err := sub.Wait(); err != nil {
				b.Fatalf("subscriber process: %v", err)
			}
			if res == nil {
				b.Fatal("the subscriber process reported nothing")
			}
		}
		cpu := cpuNow() - cpu0
		cpu += stopWorker()
		if r.Status != "passed" || r.StartedAt == nil || r.FinishedAt == nil {
			b.Fatalf("run %s: %s", r.Status, api.Logs())
		}
		load, _ := os.ReadFile("/proc/loadavg")
		return round{run: r.FinishedAt.Sub(*r.StartedAt), cpu: cpu, res: res, load: strings.Join(strings.Fields(string(load))[:3], " ")}
	}
	b.ResetTimer()
	for range b.N {
		var bare []round
		loaded := make([][]round, len(settings))
		for range rounds {
			bare = append(bare, one(nil))
			for k := range settings {
				loaded[k] = append(loaded[k], one(&settings[k]))
			}
		}
		med := func(rs []round, f func(round) float64) float64 {
			v := make([]float64, len(rs))
			for i, r := range rs {
				v[i] = f(r)
			}
			slices.Sort(v)
			return v[len(v)/2]
		}
		runBare := med(bare, func(r round) float64 { return float64(r.run) })
		cpuBare := med(bare, func(r round) float64 { return float64(r.cpu) })
		for i, r := range bare {
			b.Logf("round %d, no subscribers: run %s, server CPU %s (load average %s)", i, r.run.Round(time.Millisecond), r.cpu.Round(time.Millisecond), r.load)
		}
		for k, set := range settings {
			subs, window := set.subs, set.window
			for i, r := range loaded[k] {
				res := r.res
				if res.Ended != subs || res.StoredEnds != subs || res.Complete != subs {
					b.Fatalf("round %d: of %d subscribers %d saw an end event, %d the stored one, %d every stored event in order", i, subs, res.Ended, res.StoredEnds, res.Complete)
				}
				perEvent := float64(r.cpu-time.Duration(cpuBare)) / float64(res.Events)
				reading := res.CPU - res.ReadyCPU
				b.Logf("round %d, coalesce %s: %d subscribers, %d events delivered in %d batches, %d reads, %d resumes; lag from at p50 %s p99 %s max %s; from commit p50 %s p99 %s max %s; run %s (no subscribers, median: %s); server CPU %s (no subscribers: %s) = %.2f µs per delivered event; subscriber process CPU %s, reading %s = %.2f µs per delivered event (%.0f %% system) (load average %s)",
					i, window, res.Subscribers, res.Events, res.Batches, res.Reads, res.Resumes, ms(res.P50), ms(res.P99), ms(res.Max), ms(res.CommitP50), ms(res.CommitP99), ms(res.CommitMax),
					r.run.Round(time.Millisecond), time.Duration(runBare).Round(time.Millisecond),
					r.cpu.Round(time.Millisecond), time.Duration(cpuBare).Round(time.Millisecond), perEvent/1e3,
					res.CPU.Round(time.Millisecond), reading.Round(time.Millisecond), float64(reading)/float64(res.Events)/1e3, 100*float64(res.ReadingSystem)/float64(reading), r.load)
			}
			unit := func(name string) string { return fmt.Sprintf("%s-%d-%s", name, subs, window) }
			rs := loaded[k]
			b.ReportMetric(med(rs, func(r round) float64 { return float64(r.res.P99) / 1e6 }), unit("lag-at-p99-ms"))
			b.ReportMetric(med(rs, func(r round) float64 { return float64(r.res.CommitP99) / 1e6 }), unit("lag-commit-p99-ms"))
			b.ReportMetric(med(rs, func(r round) float64 { return float64(r.run) })/runBare, unit("run-time-ratio"))
			b.ReportMetric(med(rs, func(r round) float64 { return (float64(r.cpu) - cpuBare) / float64(r.res.Events) / 1e3 }), unit("server-µs/event"))
			b.ReportMetric(med(rs, func(r round) float64 { return float64(r.res.CPU-r.res.ReadyCPU) / float64(r.res.Events) / 1e3 }), unit("subscriber-µs/event"))
		}
	}
}

func ms(d time.Duration) string { return d.Round(100 * time.Microsecond).String() }

func cpuNow() time.Duration {
	user, system := cpuSplit()
	return user + system
}

// cpuSplit returns this process's CPU time in user space and in the kernel.
func cpuSplit() (user, system time.Duration) {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano()), time.Duration(ru.Stime.Nano())
}

// TestLiveWebAppProcess is the tested application of BenchmarkLiveEvents in a process of its own:
// it serves the runs tests' web application, prints its URL and serves until its standard input
// closes. Without SDODS_LIVE_WEBAPP (in a plain go test run) it has nothing to do.
func TestLiveWebAppProcess(t *testing.T) {
	if os.Getenv("SDODS_LIVE_WEBAPP") == "" {
		t.Skip("run by BenchmarkLiveEvents")
	}
	web := webApp(t)
	fmt.Println(web.URL)
	_, _ = io.Copy(io.Discard, os.Stdin)
}
