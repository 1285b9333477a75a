package app_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sdods/sdods/impl/server/app"
	"github.com/sdods/sdods/impl/server/app/apptest"
)

// BenchmarkReadStack measures the server's own cost per request of a few read endpoints: the
// whole handler stack (request id, logging, routing, authentication, validation, policy,
// handler, JSON) called in-process, without a network, on a small seeded database (2,000 runs ×
// 5 results and the read-path extras; SDODS_READ_STACK_DATABASE keeps it between runs). ns/op
// includes PostgreSQL's time for the statements; allocs/op and a CPU profile
// (-cpuprofile) are the server's alone; cpu-µs/op is the process's CPU per request and
// pg-cpu-µs/op its database backends', gc-cpu-µs/op the collector's part of cpu-µs/op. The collector
// runs at the target sdods serve sets (servedGC).
func BenchmarkReadStack(b *testing.B) {
	servedGC(b)
	slow := &slowStatements{}
	s, conn, browser := statsBenchServer(b, os.Getenv("SDODS_READ_STACK_DATABASE"), 2000, 5, func(c *app.Config) { c.QueryTracer = slow })
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
		{"runs-all", "/api/runs?limit=50"},
		{"runs-status", "/api/runs?project=shop&status=failed&limit=50"},
		{"runs-tag", "/api/runs?project=shop&tag=nightly&limit=50"},
		{"runs-branch", "/api/runs?project=shop&branch=feature%2Ff-17&limit=50"},
		{"features", "/api/projects/shop/features?limit=50"},
		{"features-tag", "/api/projects/shop/features?tag=%40smoke&limit=50"},
		{"audit-target", "/api/audit?targetKind=run&targetId=c4ca4238a0b923820dcc509a6f75849b&limit=50"},
		{"schedules", "/api/schedules?project=shop&status=paused&limit=50"},
		{"quarantines", "/api/projects/shop/quarantine?includeReleased=true&limit=50"},
		{"upcoming", "/api/schedules/next?project=shop&limit=50"},
		{"agent-jobs", "/api/agents/jobs?project=shop&status=failed&limit=50"},
		{"agent-jobs-kind", "/api/agents/jobs?project=shop&kind=llm&limit=50"},
		{"proposals", "/api/proposals?project=shop&status=pending&limit=50"},
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
				slow.report(b)
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
			cpu, pg, gc := processCPU(), backendCPU(b, s.App.Store.Pool), gcCPU()
			for b.Loop() {
				w := httptest.NewRecorder()
				s.App.Handler.ServeHTTP(w, req)
				if w.Code != http.StatusOK {
					b.Fatalf("%s: %d %s", c.path, w.Code, w.Body)
				}
			}
			// The server's CPU per request (this process: PostgreSQL's is not counted),
			// garbage collection included.
			b.ReportMetric(float64((processCPU()-cpu).Microseconds())/float64(b.N), "cpu-µs/op")
			b.ReportMetric(float64((gcCPU()-gc).Microseconds())/float64(b.N), "gc-cpu-µs/op")
			// And the database's backends' (schedstat: this database's connections, the
			// statements' work; a statement that writes its answer's JSON moves CPU here).
			b.ReportMetric(float64(backendCPUSince(b, s.App.Store.Pool, pg).Microseconds())/float64(b.N), "pg-cpu-µs/op")
		})
	}
}

// slowStatements is a pgx tracer that keeps the statements, and the waits for one of the pool's
// connections, longer than 20 ms: where a request's latency tail comes from.
type slowStatements struct {
	mu   sync.Mutex
	seen []string
}

type traceStart struct{}

func (t *slowStatements) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	return context.WithValue(ctx, traceStart{}, [2]any{time.Now(), d.SQL})
}

func (t *slowStatements) TraceQueryEnd(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryEndData) {
	v, ok := ctx.Value(traceStart{}).([2]any)
	if !ok {
		return
	}
	if took := time.Since(v[0].(time.Time)); took > 20*time.Millisecond {
		sql := strings.Join(strings.Fields(v[1].(string)), " ")
		t.mu.Lock()
		t.seen = append(t.seen, fmt.Sprintf("%6.1f ms %.90s", float64(took.Microseconds())/1000, sql))
		t.mu.Unlock()
	}
}

type acquireStart struct{}

func (t *slowStatements) TraceAcquireStart(ctx context.Context, _ *pgxpool.Pool, _ pgxpool.TraceAcquireStartData) context.Context {
	return context.WithValue(ctx, acquireStart{}, time.Now())
}

func (t *slowStatements) TraceAcquireEnd(ctx context.Context, _ *pgxpool.Pool, _ pgxpool.TraceAcquireEndData) {
	if start, ok := ctx.Value(acquireStart{}).(time.Time); ok {
		if took := time.Since(start); took > 20*time.Millisecond {
			t.mu.Lock()
			t.seen = append(t.seen, fmt.Sprintf("%6.1f ms waiting for a connection", float64(took.Microseconds())/1000))
			t.mu.Unlock()
		}
	}
}

// report logs and forgets the slow statements seen.
func (t *slowStatements) report(b *testing.B) {
	t.mu.Lock()
	defer t.mu.Unlock()
	slices.Sort(t.seen)
	shown := t.seen
	if len(shown) > 12 {
		shown = shown[len(shown)-12:] // the slowest
	}
	b.Logf("%d statements or connection waits over 20 ms; the slowest:\n%s", len(t.seen), strings.Join(shown, "\n"))
	t.seen = nil
}
