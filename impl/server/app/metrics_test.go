package app_test

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/sdods/sdods/gen/serverclient"
	"github.com/sdods/sdods/impl/server/app"
	"github.com/sdods/sdods/impl/server/app/apptest"
	"github.com/sdods/sdods/impl/server/store/storetest"
)

// scrape reads url with the bearer token (none: no header) and parses it as Prometheus does.
func scrape(t *testing.T, url, token string) map[string]*dto.MetricFamily {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d %s", url, resp.StatusCode, body)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") || !strings.Contains(ct, "version=0.0.4") {
		t.Fatalf("content type %q", ct)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("parse the exposition: %v\n%s", err, body)
	}
	return fams
}

// value returns the value of the series of family name whose labels include labels (a counter,
// gauge, or a histogram's count), and whether there is one.
func value(fams map[string]*dto.MetricFamily, name string, labels ...string) (float64, bool) {
	f := fams[name]
	if f == nil {
		return 0, false
	}
next:
	for _, m := range f.Metric {
		for i := 0; i+1 < len(labels); i += 2 {
			found := false
			for _, l := range m.Label {
				if l.GetName() == labels[i] && l.GetValue() == labels[i+1] {
					found = true
				}
			}
			if !found {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue(), true
		case m.Gauge != nil:
			return m.Gauge.GetValue(), true
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount()), true
		case m.Untyped != nil:
			return m.Untyped.GetValue(), true
		}
	}
	return 0, false
}

// TestMetrics scrapes GET /metrics through the real server as an instance admin's token and the
// -metrics-addr listener, parses both with Prometheus's text parser, and checks that the series
// move with what the server does: requests by operation and status with their latency, errors
// by code, login throttling, runs by state and queue latency, event-stream subscribers, the pool.
func TestMetrics(t *testing.T) {
	s := apptest.Start(t)
	admin := s.Setup(t)
	token := apptest.Token(t, admin, "admin:read", "runs:read")
	url := s.URL + "/metrics"
	before := scrape(t, url, token)

	for range 3 {
		if st, body, _ := s.Do(t, "GET", "/api/health", "", nil); st != 200 {
			t.Fatalf("health: %d %s", st, body)
		}
	}
	if st, _, _ := s.Do(t, "GET", "/api/runs/00000000-0000-4000-8000-000000000000", "", nil, "Authorization", "Bearer "+token); st != 404 {
		t.Fatalf("unknown run: %d", st)
	}
	throttledAt := 0
	for i := range 10 {
		st, _, _ := s.Do(t, http.MethodPost, "/api/auth/login", "application/json", []byte(loginBody("admin@example.com", "wrong password")))
		if st == http.StatusTooManyRequests {
			throttledAt = i + 1
			break
		}
	}
	if throttledAt == 0 {
		t.Fatal("ten wrong logins were never throttled")
	}
	// A run, and a stream of it open while it runs.
	web := webApp(t)
	project(t, admin, web.URL, map[string]string{"api/health.feature": healthFeature, "slow.feature": slowFeature})
	done := createRun(t, admin.ClientWithResponses, serverclient.CreateRunJSONRequestBody{Project: "shop", Environment: ptr("local"), Paths: &[]string{"api/health.feature"}})
	waitRun(t, admin.ClientWithResponses, done, terminal)
	slow := createRun(t, admin.ClientWithResponses, serverclient.CreateRunJSONRequestBody{Project: "shop", Environment: ptr("local"), Paths: &[]string{"slow.feature"}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", s.URL+"/api/runs/"+slow.String()+"/events", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("events: %v", err)
	}
	defer resp.Body.Close()
	deadline := time.Now().Add(10 * time.Second)
	for s.App.Runs.Subscribers() != 1 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}

	after := scrape(t, url, token)
	moved := func(name string, want float64, labels ...string) {
		t.Helper()
		b, _ := value(before, name, labels...)
		a, ok := value(after, name, labels...)
		if !ok || a-b < want {
			t.Errorf("%s%v: %v → %v (present %v), want it up by %v", name, labels, b, a, ok, want)
		}
	}
	moved("sdods_http_requests_total", 3, "operation", "getHealth", "status", "200")
	moved("sdods_http_request_duration_seconds", 3, "operation", "getHealth")
	moved("sdods_http_requests_total", 1, "operation", "getRun", "status", "404")
	moved("sdods_http_errors_total", 1, "code", "not_found")
	moved("sdods_http_errors_total", 1, "code", "rate_limited")
	moved("sdods_http_requests_total", float64(throttledAt-1), "operation", "login", "status", "401")
	moved("sdods_login_throttled_total", 1)
	moved("sdods_http_requests_total", 1, "operation", "getMetrics", "status", "200")
	moved("sdods_db_pool_acquires_total", 1)
	moved("sdods_run_queue_latency_seconds", 1)
	if v, _ := value(after, "sdods_runs", "state", "failed"); v != 1 {
		t.Errorf("sdods_runs{state=failed} = %v, want 1 (the health feature has a failing scenario)", v)
	}
	if v, _ := value(after, "sdods_runs", "state", "running"); v+mustValue(t, after, "sdods_runs", "state", "queued") != 1 {
		t.Errorf("the slow run is neither running nor queued")
	}
	// Both runs had a River job on the runs queue, whatever state each is in now.
	jobs := 0.0
	for _, st := range []string{"available", "scheduled", "running", "retryable", "completed", "cancelled", "discarded", "pending"} {
		v, _ := value(after, "sdods_jobs", "queue", "runs", "state", st)
		jobs += v
	}
	if jobs < 2 {
		t.Errorf("sdods_jobs{queue=runs} sums to %v, want at least 2", jobs)
	}
	if v, _ := value(after, "sdods_sse_subscribers"); v != 1 {
		t.Errorf("sdods_sse_subscribers = %v, want 1", v)
	}
	if v, _ := value(after, "sdods_db_pool_max_connections"); v < 1 {
		t.Errorf("sdods_db_pool_max_connections = %v", v)
	}

	// Instance admins only: a token without admin:read and a member are refused.
	if st, _, _ := s.Do(t, "GET", "/metrics", "", nil, "Authorization", "Bearer "+apptest.Token(t, admin, "runs:read")); st != http.StatusForbidden {
		t.Errorf("a token without admin:read: %d", st)
	}
	if st, _, _ := s.Do(t, "GET", "/metrics", "", nil); st != http.StatusUnauthorized {
		t.Errorf("anonymous: %d", st)
	}

	// The separate listener serves the same series without credentials.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	msrv := s.App.MetricsServer()
	go func() { _ = msrv.Serve(ln) }()
	defer msrv.Close()
	side := scrape(t, "http://"+ln.Addr().String()+"/metrics", "")
	if v, ok := value(side, "sdods_http_requests_total", "operation", "getHealth", "status", "200"); !ok || v < 3 {
		t.Errorf("the metrics listener: getHealth 200 = %v", v)
	}
	if _, ok := side["go_goroutines"]; !ok {
		t.Error("the metrics listener has no Go runtime series")
	}

	// Every access-log line names its request, its operation and, for errors, the code.
	logs := s.Logs()
	lines := 0
	for _, l := range strings.Split(logs, "\n") {
		if !strings.Contains(l, "msg=request ") {
			continue
		}
		lines++
		if !regexp.MustCompile(`request_id=[0-9a-f]{16}`).MatchString(l) {
			t.Fatalf("a request's log line without its request_id: %s", l)
		}
		if strings.Contains(l, "path=/api/runs/00000000-0000-4000-8000-000000000000 ") && (!strings.Contains(l, "operation=getRun") || !strings.Contains(l, "code=not_found")) {
			t.Fatalf("the access log line of an error names no operation or code: %s", l)
		}
	}
	if lines < 10 {
		t.Fatalf("%d access-log lines", lines)
	}
	cancel()
	_, _ = admin.CancelRunWithResponse(context.Background(), slow)
}

func mustValue(t *testing.T, fams map[string]*dto.MetricFamily, name string, labels ...string) float64 {
	t.Helper()
	v, ok := value(fams, name, labels...)
	if !ok {
		t.Fatalf("no series %s%v", name, labels)
	}
	return v
}

// TestServeMetricsAddr: Serve with MetricsAddr (-metrics-addr) answers GET /metrics there without
// credentials, counts the main listener's requests, serves nothing else there, and closes it on
// shutdown.
func TestServeMetricsAddr(t *testing.T) {
	free := func() string {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		return ln.Addr().String()
	}
	addr, maddr := free(), free()
	cfg := app.Config{Addr: addr, MetricsAddr: maddr, DatabaseURL: storetest.NewDatabase(t), DataDir: t.TempDir(), MaxBody: 1 << 20, LogFormat: "json"}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- app.Serve(ctx, cfg) }()
	var err error
	for i := 0; i < 200; i++ {
		var resp *http.Response
		if resp, err = http.Get("http://" + addr + "/api/health"); err == nil {
			resp.Body.Close()
			if resp, err = http.Get("http://" + maddr + "/metrics"); err == nil {
				resp.Body.Close()
				break
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("never answered: %v", err)
	}
	fams := scrape(t, "http://"+maddr+"/metrics", "")
	if v, ok := value(fams, "sdods_http_requests_total", "operation", "getHealth", "status", "200"); !ok || v < 1 {
		t.Errorf("getHealth 200 = %v", v)
	}
	if resp, err := http.Get("http://" + maddr + "/api/health"); err == nil {
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("the metrics listener serves /api/health: %d", resp.StatusCode)
		}
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Serve returned %v", err)
		}
	case <-time.After(35 * time.Second):
		t.Fatal("Serve did not return after shutdown")
	}
	if _, err := http.Get("http://" + maddr + "/metrics"); err == nil {
		t.Fatal("the metrics listener is still open after shutdown")
	}
}
