package app_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/sdods/sdods/gen/serverclient"
	"github.com/sdods/sdods/impl/server/app"
	"github.com/sdods/sdods/impl/server/app/apptest"
	"github.com/sdods/sdods/impl/server/ingest"
	"github.com/sdods/sdods/impl/server/store/storetest"
)

// benchJUnitDoc is a JUnit XML document of n test cases, 1 in 20 failing, produced at the given time.
func benchJUnitDoc(n int, at time.Time) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "<testsuites><testsuite name=\"bench\" timestamp=%q>\n", at.Format("2006-01-02T15:04:05"))
	for i := 0; i < n; i++ {
		if i%20 == 7 {
			fmt.Fprintf(&b, "  <testcase classname=\"pkg.Class%d\" name=\"case %d\" time=\"0.%03d\"><failure message=\"expected %d\">stack</failure></testcase>\n", i%100, i, i%1000, i)
		} else {
			fmt.Fprintf(&b, "  <testcase classname=\"pkg.Class%d\" name=\"case %d\" time=\"0.%03d\"/>\n", i%100, i, i%1000)
		}
	}
	b.WriteString("</testsuite></testsuites>\n")
	return []byte(b.String())
}

// BenchmarkIngestJUnit ingests a JUnit document of SDODS_INGEST_BENCH_CASES cases (default 10,000)
// through the real endpoint, and, alternating with it, the floor: parsing the document and
// COPYing the same rows into run_scenarios in one transaction (parseAndCopy). It reports both
// times per document and their ratio, and apart from them the statistics rollup its job applies
// after the ingest's transaction (waited for before the floor); docs/benchmarks.md has the figures.
func BenchmarkIngestJUnit(b *testing.B) {
	servedGC(b)
	n := envInt("SDODS_INGEST_BENCH_CASES", 10000)
	// Each ingest is a later CI run of the same suite (one hour apart), as history arrives.
	at := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)
	next := func() []byte { at = at.Add(time.Hour); return benchJUnitDoc(n, at) }
	doc := next()
	dbURL := storetest.NewDatabase(b)
	s := apptest.StartOn(b, dbURL, func(c *app.Config) { c.Workers = 0; c.MaxBody = 1 << 30; c.MaxIngest = 1 << 30 })
	admin := s.Setup(b)
	ctx := context.Background()
	if r, err := admin.CreateProjectWithResponse(ctx, serverclient.CreateProjectJSONRequestBody{Slug: "shop", Name: "Shop", WorkspaceSlug: "default"}); err != nil || r.StatusCode() != http.StatusCreated {
		b.Fatalf("create project: %v", err)
	}
	token := apptest.Token(b, admin, "runs:ingest", "runs:write")
	bearer := s.Bearer(b, token)
	b.Logf("%d cases, %d bytes", n, len(doc))
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(ctx)
	var project uuid.UUID
	if err := conn.QueryRow(ctx, `SELECT id FROM projects WHERE slug = 'shop'`).Scan(&project); err != nil {
		b.Fatal(err)
	}
	// The ingest and its floor alternate, so that both see the same load. Beside the wall time,
	// the CPU each used — this process's (server and client, or the floor's parse and encoding)
	// and the database's backends' (schedstat) — which the machine's other work does not inflate.
	var ingestTime, floorTime, ingestCPU, floorCPU, ingestPG, floorPG, rollupTime, rollupCPU, rollupPG time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		id := ingestRun(&testing.T{}, bearer)
		doc := next()
		cpu, pg := processCPU(), backendCPU(b, s.App.Store.Pool)
		start := time.Now()
		status, body, _ := s.Do(b, "POST", "/api/runs/"+id.String()+"/ingest", "application/xml", doc, "Authorization", "Bearer "+token)
		if status != http.StatusOK {
			b.Fatalf("ingest: %d %s", status, body)
		}
		ingestTime += time.Since(start)
		ingestCPU += processCPU() - cpu
		ingestPG += backendCPUSince(b, s.App.Store.Pool, pg)
		// The run's statistics rollup, applied by its job after the ingest's transaction: waited
		// for (and measured apart) before the floor, so that it never runs during the floor.
		cpu, pg = processCPU(), backendCPU(b, s.App.Store.Pool)
		start = time.Now()
		waitRollup(b, conn)
		rollupTime += time.Since(start)
		rollupCPU += processCPU() - cpu
		rollupPG += backendCPUSince(b, s.App.Store.Pool, pg)
		cpu, pg = processCPU(), backendCPU(b, s.App.Store.Pool)
		start = time.Now()
		parseAndCopy(b, conn, project, doc)
		floorTime += time.Since(start)
		floorCPU += processCPU() - cpu
		floorPG += backendCPUSince(b, s.App.Store.Pool, pg)
	}
	b.StopTimer()
	docs := float64(b.N)
	b.ReportMetric(float64(ingestTime.Milliseconds())/docs, "ingest-ms/doc")
	b.ReportMetric(float64(floorTime.Milliseconds())/docs, "floor-ms/doc")
	b.ReportMetric(float64(ingestTime)/float64(floorTime), "ratio")
	b.ReportMetric(float64(ingestCPU.Milliseconds())/docs, "ingest-cpu-ms/doc")
	b.ReportMetric(float64(ingestPG.Milliseconds())/docs, "ingest-pg-cpu-ms/doc")
	b.ReportMetric(float64(floorCPU.Milliseconds())/docs, "floor-cpu-ms/doc")
	b.ReportMetric(float64(floorPG.Milliseconds())/docs, "floor-pg-cpu-ms/doc")
	b.ReportMetric(float64(ingestCPU+ingestPG)/float64(floorCPU+floorPG), "cpu-ratio")
	b.ReportMetric(float64(rollupTime.Milliseconds())/docs, "rollup-ms/doc")
	b.ReportMetric(float64(rollupCPU.Milliseconds())/docs, "rollup-cpu-ms/doc")
	b.ReportMetric(float64(rollupPG.Milliseconds())/docs, "rollup-pg-cpu-ms/doc")
	b.ReportMetric(float64(ingestCPU+ingestPG+rollupCPU+rollupPG)/float64(floorCPU+floorPG), "cpu-ratio-with-rollup")
}

// waitRollup returns once no finished run waits for the statistics rollup (schema 000035).
func waitRollup(tb testing.TB, conn *pgx.Conn) {
	tb.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		var pending bool
		if err := conn.QueryRow(context.Background(), `SELECT EXISTS (SELECT 1 FROM stats_rollup_pending)`).Scan(&pending); err != nil {
			tb.Fatal(err)
		}
		if !pending {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatal("the statistics rollup was not applied within a minute")
		}
		time.Sleep(10 * time.Millisecond) // a poll costs the database ~0.1 ms: rarely, not to count much
	}
}

// parseAndCopy is the floor of an ingest: parsing the document with ingest.Parse and COPYing the
// same rows into run_scenarios of a new run in one transaction.
func parseAndCopy(b *testing.B, conn *pgx.Conn, project uuid.UUID, doc []byte) {
	ctx := context.Background()
	parsed, err := ingest.Parse(doc, ingest.JUnit)
	if err != nil {
		b.Fatal(err)
	}
	tx, err := conn.Begin(ctx)
	if err != nil {
		b.Fatal(err)
	}
	var run uuid.UUID
	if err := tx.QueryRow(ctx, `INSERT INTO runs (project_id, status, source) VALUES ($1, 'running', 'ingest') RETURNING id`, project).Scan(&run); err != nil {
		b.Fatal(err)
	}
	rows := make([][]any, len(parsed.Scenarios))
	for j, sc := range parsed.Scenarios {
		var errJSON any
		if sc.Error != nil {
			errJSON = fmt.Sprintf(`{"message":%q}`, sc.Error.Message)
		}
		rows[j] = []any{run, sc.Key, int32(j), sc.Module, sc.FeaturePath, sc.FeatureName, sc.Name, int32(sc.Line), sc.Tags, sc.Status,
			errJSON, int32(max(sc.Attempts, 1)), sc.Duration.Milliseconds(), "[]"}
	}
	if _, err := tx.CopyFrom(ctx, pgx.Identifier{"run_scenarios"}, []string{"run_id", "scenario_key", "position", "module", "feature_path",
		"feature_name", "name", "line", "tags", "status", "error", "attempts", "duration_ms", "steps"}, pgx.CopyFromRows(rows)); err != nil {
		b.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		b.Fatal(err)
	}
}

// junitStream generates the document benchJUnitDoc writes, case by case, without holding it.
type junitStream struct {
	n, i int
	at   time.Time
	buf  []byte
	done bool
}

func (g *junitStream) Read(p []byte) (int, error) {
	for len(g.buf) == 0 {
		switch {
		case g.done:
			return 0, io.EOF
		case g.i < 0:
			g.buf = fmt.Appendf(g.buf, "<testsuites><testsuite name=\"bench\" timestamp=%q>\n", g.at.Format("2006-01-02T15:04:05"))
			g.i = 0
		case g.i < g.n:
			if g.i%20 == 7 {
				g.buf = fmt.Appendf(g.buf, "  <testcase classname=\"pkg.Class%d\" name=\"case %d\" time=\"0.%03d\"><failure message=\"expected %d\">stack</failure></testcase>\n", g.i%100, g.i, g.i%1000, g.i)
			} else {
				g.buf = fmt.Appendf(g.buf, "  <testcase classname=\"pkg.Class%d\" name=\"case %d\" time=\"0.%03d\"/>\n", g.i%100, g.i, g.i%1000)
			}
			g.i++
		default:
			g.buf = append(g.buf, "</testsuite></testsuites>\n"...)
			g.done = true
		}
	}
	n := copy(p, g.buf)
	g.buf = g.buf[n:]
	return n, nil
}

// procStatusKB reads a memory figure (VmRSS, VmHWM) of this process, in KiB.
func procStatusKB(tb testing.TB, field string) int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		tb.Skipf("no /proc/self/status: %v", err)
	}
	for _, l := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(l, field+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				tb.Fatal(err)
			}
			return kb
		}
	}
	tb.Fatalf("no %s in /proc/self/status", field)
	return 0
}

// BenchmarkIngestJUnitMemory posts a JUnit document of SDODS_INGEST_MEMORY_CASES test cases
// (default 100,000), generated as it is sent, to the real endpoint of a server in this process,
// and reports the growth of the process' peak resident memory during the request: the peak
// (VmHWM) is reset through /proc/self/clear_refs just before, and the figure is the peak minus
// the resident memory (VmRSS) at that moment. It fails at 100 MB or more (issue 31, item 2).
func BenchmarkIngestJUnitMemory(b *testing.B) {
	n := envInt("SDODS_INGEST_MEMORY_CASES", 100000)
	dbURL := storetest.NewDatabase(b)
	s := apptest.StartOn(b, dbURL, func(c *app.Config) { c.Workers = 0; c.MaxBody = 1 << 30; c.MaxIngest = 1 << 30 })
	admin := s.Setup(b)
	ctx := context.Background()
	if r, err := admin.CreateProjectWithResponse(ctx, serverclient.CreateProjectJSONRequestBody{Slug: "shop", Name: "Shop", WorkspaceSlug: "default"}); err != nil || r.StatusCode() != http.StatusCreated {
		b.Fatalf("create project: %v", err)
	}
	token := apptest.Token(b, admin, "runs:ingest", "runs:write")
	bearer := s.Bearer(b, token)
	at := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)
	var worst int64
	for i := 0; i < b.N; i++ {
		id := ingestRun(&testing.T{}, bearer)
		at = at.Add(time.Hour)
		runtime.GC()
		debug.FreeOSMemory()
		if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
			b.Skipf("cannot reset the peak resident memory: %v", err)
		}
		base := procStatusKB(b, "VmRSS")
		req, err := http.NewRequest("POST", s.URL+"/api/runs/"+id.String()+"/ingest", &junitStream{n: n, i: -1, at: at})
		if err != nil {
			b.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/xml")
		req.Header.Set("Authorization", "Bearer "+token)
		start := time.Now()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("ingest: %d %s", resp.StatusCode, body)
		}
		growth := procStatusKB(b, "VmHWM") - base
		worst = max(worst, growth)
		b.Logf("%d cases in %v: peak resident memory %d KiB above the %d KiB before; %s", n, time.Since(start).Round(time.Millisecond), growth, base, body)
	}
	b.ReportMetric(float64(worst)/1024, "peak-rss-growth-MiB")
	if worst >= 100*1000*1000/1024 {
		b.Errorf("peak resident memory grew by %d KiB: the goal is under 100 MB", worst)
	}
}
