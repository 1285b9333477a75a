package ruleserver_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sdods/sdods/impl/rules/ruleserver"
)

// The load generator: concurrency workers on keep-alive loopback connections send POST
// /evaluations until b.N requests are done or maxRun has passed, whichever comes first; the
// latency of every request is kept for p50 and p99.
const (
	concurrency = 16
	maxRun      = 60 * time.Second
)

// benchBody is a signup evaluation with four findings.
var benchBody = []byte(`{"ruleset":"signup","data":{"account":{"email":"ana@example","password":"short","passwordConfirm":"short","username":"Ana","kind":"private"},"profile":{"birthDate":"1990-04-01","firstName":"Ana"},"consent":{"terms":false,"newsletter":false}},"ctx":{"today":"2025-06-15"},"locale":"en"}`)

// BenchmarkEvaluationsHTTP compares POST /evaluations of the rule server (token, body limit,
// routing, kin-openapi validation, engine shape check, evaluation) with a bare net/http handler
// that reads the body and writes the same bytes, in the same run, on loopback. Metrics: req/s,
// p50-µs and p99-µs.
func BenchmarkEvaluationsHTTP(b *testing.B) {
	dir := rulesDir(b, "signup/signup.yaml")
	s := ruleserver.NewServer(dir, nil, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if !s.Reload(context.Background()) {
		b.Fatal("load failed")
	}
	h, err := s.Handler(ruleserver.HandlerOptions{Token: token})
	if err != nil {
		b.Fatal(err)
	}
	ruleURL := serve(b, h)
	want := do(b, nil, "POST", ruleURL+"/evaluations", benchBody, auth()...)
	if want.Status != 200 {
		b.Fatalf("%d %s", want.Status, want.Body)
	}
	bare := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(want.Body)
	})
	bareURL := serve(b, bare)
	if got := do(b, nil, "POST", bareURL+"/evaluations", benchBody); !bytes.Equal(got.Body, want.Body) {
		b.Fatal("the bare handler answers other bytes")
	}
	// The two targets take turns in rounds, so that a change in the machine's load during the
	// run affects both alike.
	b.Run("side-by-side", func(b *testing.B) {
		const rounds = 8
		rule, bareStats := &stats{}, &stats{}
		deadline := time.Now().Add(maxRun)
		for i := 0; i < rounds; i++ {
			n := b.N / rounds
			if i < b.N%rounds {
				n++
			}
			rule.add(generate(b, ruleURL+"/evaluations", want.Body, n, deadline))
			bareStats.add(generate(b, bareURL+"/evaluations", want.Body, n, deadline))
		}
		rule.report(b, "rule-")
		bareStats.report(b, "bare-")
		b.ReportMetric(rule.rate()/bareStats.rate(), "rule/bare")
	})
}

// stats accumulates the rounds of one target.
type stats struct {
	lat     []time.Duration
	elapsed time.Duration
}

func (s *stats) add(lat []time.Duration, elapsed time.Duration) {
	s.lat = append(s.lat, lat...)
	s.elapsed += elapsed
}

func (s *stats) rate() float64 { return float64(len(s.lat)) / s.elapsed.Seconds() }

func (s *stats) report(b *testing.B, prefix string) {
	if len(s.lat) == 0 {
		return
	}
	sort.Slice(s.lat, func(i, j int) bool { return s.lat[i] < s.lat[j] })
	b.ReportMetric(s.rate(), prefix+"req/s")
	b.ReportMetric(float64(s.lat[len(s.lat)/2].Microseconds()), prefix+"p50-µs")
	b.ReportMetric(float64(s.lat[len(s.lat)*99/100].Microseconds()), prefix+"p99-µs")
}

func serve(b *testing.B, h http.Handler) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0") // loopback only
	if err != nil {
		b.Fatal(err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	b.Cleanup(func() { _ = srv.Close() })
	return "http://" + ln.Addr().String()
}

// generate sends n requests (or fewer, at deadline) from concurrency workers and returns the
// latency of each and the time taken.
func generate(b *testing.B, url string, want []byte, n int, deadline time.Time) ([]time.Duration, time.Duration) {
	tr := &http.Transport{MaxIdleConnsPerHost: concurrency, MaxConnsPerHost: concurrency}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	var next atomic.Int64
	var failed atomic.Int64
	lat := make([][]time.Duration, concurrency)
	var wg sync.WaitGroup
	start := time.Now()
	for w := 0; w < concurrency; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			var bb bytes.Buffer
			for next.Add(1) <= int64(n) && time.Now().Before(deadline) {
				req, _ := http.NewRequest("POST", url, bytes.NewReader(benchBody))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Authorization", "Bearer "+token)
				t0 := time.Now()
				resp, err := client.Do(req)
				if err != nil {
					failed.Add(1)
					continue
				}
				bb.Reset()
				_, _ = bb.ReadFrom(resp.Body)
				resp.Body.Close()
				lat[w] = append(lat[w], time.Since(t0))
				if resp.StatusCode != 200 || !bytes.Equal(bb.Bytes(), want) {
					failed.Add(1)
				}
			}
		}(w)
	}
	wg.Wait()
	elapsed := time.Since(start)
	if failed.Load() > 0 {
		b.Fatalf("%d requests failed", failed.Load())
	}
	var all []time.Duration
	for _, l := range lat {
		all = append(all, l...)
	}
	return all, elapsed
}
