package app_test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/sdods/sdods/impl/server/app/apptest"
)

// BenchmarkReadStack measures the server's own cost per request of a few read endpoints: the
// whole handler stack (request id, logging, routing, authentication, validation, policy,
// handler, JSON) called in-process, without a network, on a small seeded database (2,000 runs ×
// 5 results and the read-path extras; SDODS_READ_STACK_DATABASE keeps it between runs). ns/op
// includes PostgreSQL's time for the statements; allocs/op and a CPU profile
// (-cpuprofile) are the server's alone.
func BenchmarkReadStack(b *testing.B) {
	s, conn, browser := statsBenchServer(b, os.Getenv("SDODS_READ_STACK_DATABASE"), 2000, 5, nil)
	var audits int
	if err := conn.QueryRow(b.Context(), `SELECT count(*) FROM audit_entries`).Scan(&audits); err != nil {
		b.Fatal(err)
	}
	if audits < 1000 {
		seedReadExtras(b, conn)
	}
	token := apptest.Token(b, browser, "runs:read", "features:read", "stats:read", "schedules:read", "agents:read", "admin:read", "projects:read")
	s.DiscardLogs()
	for _, c := range []struct{ name, path string }{
		{"runs", "/api/runs?project=shop&limit=50"},
		{"features-tag", "/api/projects/shop/features?tag=%40smoke&limit=50"},
		{"audit-target", "/api/audit?targetKind=run&targetId=c4ca4238a0b923820dcc509a6f75849b&limit=50"},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			if conc := envInt("SDODS_READ_STACK_CONCURRENCY", 1); conc > 1 {
				// As wrk does: conc requests at a time; the latency percentiles reported.
				b.SetParallelism((conc + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
				var mu sync.Mutex
				var took []time.Duration
				before := s.App.Store.Pool.Stat()
				b.RunParallel(func(pb *testing.PB) {
					req := httptest.NewRequest(http.MethodGet, c.path, nil)
					req.Header.Set("Authorization", "Bearer "+token)
					var mine []time.Duration
					for pb.Next() {
						start := time.Now()
						w := httptest.NewRecorder()
						s.App.Handler.ServeHTTP(w, req)
						mine = append(mine, time.Since(start))
						if w.Code != http.StatusOK {
							b.Errorf("%s: %d %s", c.path, w.Code, w.Body)
							return
						}
					}
					mu.Lock()
					took = append(took, mine...)
					mu.Unlock()
				})
				// How long requests waited for one of the pool's connections, and how often.
				after := s.App.Store.Pool.Stat()
				b.ReportMetric(float64((after.AcquireDuration()-before.AcquireDuration()).Microseconds())/1000/float64(b.N), "pool-wait-ms/op")
				b.ReportMetric(float64(after.EmptyAcquireCount()-before.EmptyAcquireCount())/float64(b.N), "pool-waits/op")
				slices.Sort(took)
				if len(took) > 0 {
					b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "p50-ms")
					b.ReportMetric(float64(took[len(took)*99/100].Microseconds())/1000, "p99-ms")
					b.ReportMetric(float64(took[len(took)-1].Microseconds())/1000, "max-ms")
				}
				return
			}
			req := httptest.NewRequest(http.MethodGet, c.path, nil)
			req.Header.Set("Authorization", "Bearer "+token)
			for b.Loop() {
				w := httptest.NewRecorder()
				s.App.Handler.ServeHTTP(w, req)
				if w.Code != http.StatusOK {
					b.Fatalf("%s: %d %s", c.path, w.Code, w.Body)
				}
			}
		})
	}
}
