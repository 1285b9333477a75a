package ruleserver_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

var (
	wrkRounds   = flag.Int("wrk.rounds", 6, "BenchmarkEvaluationsWrk: rounds, each one wrk run per target")
	wrkDuration = flag.Duration("wrk.duration", 3*time.Second, "BenchmarkEvaluationsWrk: length of one wrk run")
	wrkConns    = flag.Int("wrk.connections", 32, "BenchmarkEvaluationsWrk: wrk's keep-alive connections")
	wrkBaseline = flag.String("wrk.baseline", "", "BenchmarkEvaluationsWrk: another ruleserver binary (an earlier commit) to run in the same rounds")
)

// BenchmarkEvaluationsWrk measures POST /evaluations of the ruleserver binary (its whole
// pipeline: token, body limit, engine shape check, evaluation, canonical JSON) with wrk, side by
// side with a bare net/http handler in this process that reads the body and writes the very
// bytes the rule server answers. The two take turns (which one goes first alternates), so a
// change in the machine's load falls on both alike; every run must have no socket error and no
// status other than 200. It runs once whatever b.N is (use -benchtime 1x) and reports the
// medians of the rounds; each round is logged with the load average.
//
//	go test ./impl/rules/ruleserver -run XXX -bench EvaluationsWrk -benchtime 1x -wrk.rounds 6 -v
func BenchmarkEvaluationsWrk(b *testing.B) {
	wrk, err := exec.LookPath("wrk")
	if err != nil {
		b.Skip("wrk is not installed (make deps installs it: apt-get install wrk)")
	}
	dir := rulesDir(b, "signup/signup.yaml")
	p := startProcess(b, []string{"RULE_SERVER_TOKEN=" + token, "RULE_SERVER_RULES_DIR=" + dir}, "-poll", "0")
	waitFor(b, "readiness", func() bool { return do(b, nil, "GET", p.URL+"/readyz", nil).Status == 200 })
	want := do(b, nil, "POST", p.URL+"/evaluations", benchBody, auth()...)
	if want.Status != 200 {
		b.Fatalf("%d %s", want.Status, want.Body)
	}
	bareURL := serve(b, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(want.Body)
	}))
	if got := do(b, nil, "POST", bareURL+"/evaluations", benchBody, auth()...); !bytes.Equal(got.Body, want.Body) {
		b.Fatal("the bare handler answers other bytes")
	}
	script := filepath.Join(b.TempDir(), "post.lua")
	if err := os.WriteFile(script, []byte(wrkBenchScript(string(benchBody), token)), 0o644); err != nil {
		b.Fatal(err)
	}
	// CPU time of each server per request, which the load of other processes changes less than
	// the rate: the rule server's process, and this process for the bare handler.
	ruleCPU := func() time.Duration { return processCPU(b, p.cmd.Process.Pid) }
	bareCPU := func() time.Duration { return processCPU(b, os.Getpid()) }
	run := func(url string, cpu func() time.Duration) wrkRun {
		c0 := cpu()
		cmd := exec.Command(wrk, "-t2", fmt.Sprintf("-c%d", *wrkConns), fmt.Sprintf("-d%s", *wrkDuration), "--timeout", "10s", "-s", script, url+"/evaluations")
		out, err := cmd.CombinedOutput()
		if err != nil {
			b.Fatalf("wrk: %v\n%s", err, out)
		}
		var r wrkRun
		line := out[bytes.LastIndex(out, []byte("\n{"))+1:]
		if err := json.Unmarshal(line, &r); err != nil {
			b.Fatalf("wrk's summary: %v\n%s", err, out)
		}
		if r.Errors != 0 || r.Requests == 0 {
			b.Fatalf("%s: %d failed requests (socket errors or a status other than 200)\n%s", url, r.Errors, out)
		}
		r.cpuPerRequest = (cpu() - c0) / time.Duration(r.Requests)
		return r
	}
	var base *process
	if *wrkBaseline != "" {
		base = startBinary(b, *wrkBaseline, []string{"RULE_SERVER_TOKEN=" + token, "RULE_SERVER_RULES_DIR=" + dir}, "-poll", "0")
		waitFor(b, "readiness", func() bool { return do(b, nil, "GET", base.URL+"/readyz", nil).Status == 200 })
		if got := do(b, nil, "POST", base.URL+"/evaluations", benchBody, auth()...); !bytes.Equal(got.Body, want.Body) {
			b.Fatal("the baseline answers other bytes")
		}
	}
	var rule, bare, ratio, ruleCPUs, bareCPUs, baseRatio []float64
	for i := 0; i < *wrkRounds; i++ {
		var r, h, o wrkRun
		if i%2 == 0 {
			r, h = run(p.URL, ruleCPU), run(bareURL, bareCPU)
		} else {
			h, r = run(bareURL, bareCPU), run(p.URL, ruleCPU)
		}
		if base != nil {
			o = run(base.URL, func() time.Duration { return processCPU(b, base.cmd.Process.Pid) })
			baseRatio = append(baseRatio, o.rate()/h.rate())
			b.Logf("round %d: baseline %.0f req/s (p50 %d µs, CPU %.1f µs/req), baseline/bare %.2f",
				i+1, o.rate(), o.P50, float64(o.cpuPerRequest.Nanoseconds())/1e3, o.rate()/h.rate())
		}
		rule, bare, ratio = append(rule, r.rate()), append(bare, h.rate()), append(ratio, r.rate()/h.rate())
		ruleCPUs, bareCPUs = append(ruleCPUs, float64(r.cpuPerRequest.Nanoseconds())/1e3), append(bareCPUs, float64(h.cpuPerRequest.Nanoseconds())/1e3)
		b.Logf("round %d: rule %.0f req/s (p50 %d µs, p99 %d µs, CPU %.1f µs/req), bare %.0f req/s (p50 %d µs, p99 %d µs, CPU %.1f µs/req), rule/bare %.2f; load average %s",
			i+1, r.rate(), r.P50, r.P99, ruleCPUs[i], h.rate(), h.P50, h.P99, bareCPUs[i], r.rate()/h.rate(), loadAverage())
	}
	b.ReportMetric(median(rule), "rule-req/s")
	b.ReportMetric(median(bare), "bare-req/s")
	b.ReportMetric(median(ratio), "rule/bare")
	b.ReportMetric(median(ruleCPUs), "rule-cpu-µs/req")
	b.ReportMetric(median(bareCPUs), "bare-cpu-µs/req")
	if base != nil {
		b.ReportMetric(median(baseRatio), "baseline/bare")
	}
}

// processCPU returns the user and system CPU time of process pid so far (Linux /proc).
func processCPU(tb testing.TB, pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		tb.Skipf("no /proc: %v", err)
	}
	// Fields after the command name, which is in parentheses and may hold spaces.
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	var ticks int64
	for _, s := range f[11:13] { // utime, stime (fields 14 and 15)
		var n int64
		fmt.Sscan(s, &n)
		ticks += n
	}
	return time.Duration(ticks) * 10 * time.Millisecond // USER_HZ is 100 on Linux
}

// wrkRun is what wrkBenchScript's done() prints.
type wrkRun struct {
	Requests   int   `json:"requests"`
	DurationUS int64 `json:"duration_us"`
	Errors     int   `json:"errors"`
	P50        int   `json:"p50_us"`
	P99        int   `json:"p99_us"`

	cpuPerRequest time.Duration
}

func (r wrkRun) rate() float64 { return float64(r.Requests) / (float64(r.DurationUS) / 1e6) }

func median(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// loadAverage returns the 1-, 5- and 15-minute load averages, or "?".
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

// wrkBenchScript posts body with the token and prints the run's counts as one JSON line; errors
// counts socket errors and answers whose status is not 2xx or 3xx (each target answers 200 only).
func wrkBenchScript(body, tok string) string {
	return fmt.Sprintf(`wrk.method = "POST"
wrk.body = %q
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer %s"
function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('\n{"requests":%%d,"duration_us":%%d,"errors":%%d,"p50_us":%%d,"p99_us":%%d}\n',
    summary.requests, summary.duration, e.connect + e.read + e.write + e.status + e.timeout,
    latency:percentile(50), latency:percentile(99)))
end
`, body, tok)
}
