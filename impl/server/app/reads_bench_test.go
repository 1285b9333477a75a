package app_test

import (
	"bufio"
	"context"
	"database/sql/driver"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sdods/sdods/impl/httpkit"
	"github.com/sdods/sdods/impl/server/app"
	"github.com/sdods/sdods/impl/server/app/apptest"
)

// BenchmarkReadPaths measures the read endpoints that grow with a workspace's history (the run
// list with its filters, a 2,000-scenario run's detail and report, features, flaky scenarios,
// quarantines, schedules, agent jobs, proposals, audit) against a floor measured in the same
// rounds: the handler's own SQL. Each endpoint is first requested once with the server's
// statements recorded (a pgx tracer on its pool); those statements, with the values they were
// sent with, are the floor's pgbench script (prepared statements, as the server sends them). Then,
// round after round and in alternating order, wrk (16 connections) requests the endpoint and
// pgbench (16 connections) runs its script, each for SDODS_READS_BENCH_SECONDS (default 3); the
// latency percentiles of both and the load average are logged per round, and the medians over
// the rounds reported (p99-ms, floor-p99-ms, ratio-p99). A second floor, the Go floor (goFloor),
// is measured in the same rounds with wrk too: the least a Go HTTP server adds to the same SQL.
//
// The database is the statistics benchmark's (scripts/stats-bench-seed.sql: 100,000 runs × 50
// results by default here, and the read-path extras at its end), kept between runs in
// SDODS_READS_BENCH_DATABASE (default sdods_reads_5m). SDODS_READS_BENCH_ONLY selects cases by
// name (comma-separated); SDODS_READS_BENCH_PROFILE=dir writes a CPU profile of the server per
// case while wrk runs. docs/benchmarks.md has the figures and the commands.
func BenchmarkReadPaths(b *testing.B) {
	servedGC(b)
	wrkBin, err := exec.LookPath("wrk")
	if err != nil {
		b.Skip("wrk is not installed (make deps installs it: apt-get install wrk)")
	}
	pgbenchBin, err := exec.LookPath("pgbench")
	if err != nil {
		b.Skip("pgbench is not installed (apt-get install postgresql-client)")
	}
	kept := os.Getenv("SDODS_READS_BENCH_DATABASE")
	if kept == "" {
		kept = "sdods_reads_5m"
	}
	rec := &recorder{}
	s, conn, browser := statsBenchServer(b, kept, envInt("SDODS_READS_BENCH_RUNS", 100000), envInt("SDODS_STATS_BENCH_SCENARIOS", 50),
		func(c *app.Config) { c.QueryTracer = rec })
	ctx := context.Background()
	seedReadExtras(b, conn)
	token := apptest.Token(b, browser, "runs:read", "features:read", "stats:read", "schedules:read", "agents:read", "admin:read", "projects:read")
	// Hundreds of thousands of requests: an in-memory log that grows by a line each pauses the
	// server whenever it doubles (see apptest.Server.DiscardLogs).
	s.DiscardLogs()

	var big, schedule uuid.UUID
	if err := conn.QueryRow(ctx, `SELECT id FROM runs WHERE label = 'bench-2000'`).Scan(&big); err != nil {
		b.Fatal(err)
	}
	if err := conn.QueryRow(ctx, `SELECT schedule_id FROM runs WHERE schedule_id IS NOT NULL ORDER BY created_at DESC LIMIT 1`).Scan(&schedule); err != nil {
		b.Fatal(err)
	}
	day := time.Now().UTC().Add(-48 * time.Hour).Truncate(time.Hour)
	cases := []struct{ name, path string }{
		{"runs", "/api/runs?project=shop&limit=50"},
		{"runs-all", "/api/runs?limit=50"},
		{"runs-status", "/api/runs?project=shop&status=failed&limit=50"},
		{"runs-branch", "/api/runs?project=shop&branch=feature%2Ff-17&limit=50"},
		{"runs-not-branch", "/api/runs?project=shop&notBranch=main&limit=50"},
		{"runs-trigger", "/api/runs?project=shop&trigger=schedule&limit=50"},
		{"runs-schedule", "/api/runs?scheduleId=" + schedule.String() + "&limit=50"},
		{"runs-tag", "/api/runs?project=shop&tag=nightly&limit=50"},
		// A tag, a trigger and a tag beside a status that no run has: read paths round 11.
		{"runs-tag-none", "/api/runs?project=shop&tag=no-such-tag&limit=50"},
		{"runs-trigger-none", "/api/runs?project=shop&trigger=ui&limit=50"},
		{"runs-status-tag-none", "/api/runs?project=shop&status=failed&tag=no-such-tag&limit=50"},
		{"runs-window", "/api/runs?project=shop&since=" + url.QueryEscape(day.Format(time.RFC3339)) + "&until=" + url.QueryEscape(day.Add(time.Hour).Format(time.RFC3339)) + "&limit=50"},
		{"run-detail", "/api/runs/" + big.String()},
		{"run-report", "/api/runs/" + big.String() + "/report"},
		{"features", "/api/projects/shop/features?limit=50"},
		{"features-prefix", "/api/projects/shop/features?prefix=features%2Farea7%2F&limit=50"},
		{"features-tag", "/api/projects/shop/features?tag=%40smoke&limit=50"},
		{"flaky", "/api/stats/flaky?project=shop&minResults=10&limit=50"},
		{"quarantines", "/api/projects/shop/quarantine?includeReleased=true&limit=50"},
		{"quarantines-open", "/api/projects/shop/quarantine?limit=50"},
		{"schedules", "/api/schedules?project=shop&status=paused&limit=50"},
		{"upcoming", "/api/schedules/next?project=shop&limit=50"},
		{"agent-jobs", "/api/agents/jobs?project=shop&status=failed&limit=50"},
		{"agent-jobs-kind", "/api/agents/jobs?project=shop&kind=llm&limit=50"},
		{"proposals", "/api/proposals?project=shop&status=pending&limit=50"},
		{"audit", "/api/audit?action=createRun&limit=50"},
		{"audit-outcome", "/api/audit?outcome=denied&limit=50"},
		{"audit-target", "/api/audit?targetKind=run&targetId=c4ca4238a0b923820dcc509a6f75849b&limit=50"},
	}
	if only := os.Getenv("SDODS_READS_BENCH_ONLY"); only != "" {
		want := map[string]bool{}
		for _, n := range strings.Split(only, ",") {
			want[n] = true
		}
		kept := cases[:0]
		for _, c := range cases {
			if want[c.name] {
				kept = append(kept, c)
			}
		}
		cases = kept
	}
	rounds, secs := envInt("SDODS_READS_BENCH_ROUNDS", 3), envInt("SDODS_READS_BENCH_SECONDS", 3)
	dir := b.TempDir()
	profDir := os.Getenv("SDODS_READS_BENCH_PROFILE")
	u, _ := url.Parse(s.DatabaseURL)

	type result struct{ p50, p99, f50, f99, g50, g99 []float64 }
	results := make([]result, len(cases))
	scripts := make([]pgbenchScript, len(cases))
	goFloors := make([]*httptest.Server, len(cases))
	for i, c := range cases {
		// One request with the statements recorded (after one that is not: the token's first use
		// is written once, not on every request): its body must be a non-empty answer.
		getOK(b, s.URL+c.path, token)
		rec.start()
		body := getOK(b, s.URL+c.path, token)
		stmts := rec.stop()
		// A "-none" case asks for what no run has: its answer is an empty page, the point being
		// what finding nothing costs.
		if len(body) < 20 && !(strings.HasSuffix(c.name, "-none") && strings.HasPrefix(string(body), `{"items":[]`)) {
			b.Fatalf("%s: answer too small to measure: %s", c.name, body)
		}
		scripts[i] = newPgbenchScript(b, stmts)
		goFloors[i] = goFloor(b, s.App.Store.Pool, stmts, body)
		getOK(b, goFloors[i].URL, token) // the floor's statements answer as the server's did
		if os.Getenv("SDODS_READS_BENCH_EXPLAIN") != "" {
			explain(b, conn, c.name, stmts)
		}
		b.Logf("%s: %d bytes, %d statements (PGOPTIONS %q):\n%s", c.name, len(body), len(stmts), rec.pgOptions(), scripts[i].summary())
	}
	for round := 0; round < rounds; round++ {
		for i, c := range cases {
			floor := func() {
				p50, p99, n := runPgbench(b, pgbenchBin, u, scripts[i], rec.pgOptions(), dir, secs)
				results[i].f50, results[i].f99 = append(results[i].f50, p50), append(results[i].f99, p99)
				b.Logf("round %d %-16s floor  p50 %7.2f ms p99 %7.2f ms (%d transactions) load %s", round, c.name, p50, p99, n, loadAvg())
			}
			server := func() {
				var prof *os.File
				if profDir != "" && round == 0 {
					prof, err = os.Create(filepath.Join(profDir, c.name+".pprof"))
					if err != nil {
						b.Fatal(err)
					}
					if err := pprof.StartCPUProfile(prof); err != nil {
						b.Fatal(err)
					}
				}
				p50, p99, n := runWrk(b, wrkBin, s.URL+c.path, token, dir, secs)
				if prof != nil {
					pprof.StopCPUProfile()
					prof.Close()
				}
				results[i].p50, results[i].p99 = append(results[i].p50, p50), append(results[i].p99, p99)
				b.Logf("round %d %-16s server p50 %7.2f ms p99 %7.2f ms (%d requests) load %s", round, c.name, p50, p99, n, loadAvg())
			}
			goFloorRound := func() {
				p50, p99, n := runWrk(b, wrkBin, goFloors[i].URL, token, dir, secs)
				results[i].g50, results[i].g99 = append(results[i].g50, p50), append(results[i].g99, p99)
				b.Logf("round %d %-16s go     p50 %7.2f ms p99 %7.2f ms (%d requests) load %s", round, c.name, p50, p99, n, loadAvg())
			}
			if (round+i)%2 == 0 {
				floor()
				goFloorRound()
				server()
			} else {
				server()
				goFloorRound()
				floor()
			}
		}
	}
	for i, c := range cases {
		r := results[i]
		ratios, goRatios, goFloorRatios := make([]float64, len(r.p99)), make([]float64, len(r.p99)), make([]float64, len(r.p99))
		for k := range r.p99 {
			ratios[k], goRatios[k], goFloorRatios[k] = r.p99[k]/r.f99[k], r.p99[k]/r.g99[k], r.g99[k]/r.f99[k]
		}
		b.Logf("%-16s p99 %7.2f ms, floor %7.2f ms, ratio %.2f (median of %d rounds; per round %s)", c.name, median(r.p99), median(r.f99), median(ratios), rounds, fmtRatios(ratios))
		b.Logf("%-16s go floor p99 %7.2f ms: server / go floor %.2f (per round %s), go floor / floor %.2f (per round %s)", c.name, median(r.g99),
			median(goRatios), fmtRatios(goRatios), median(goFloorRatios), fmtRatios(goFloorRatios))
	}
	b.ReportMetric(0, "ns/op")
}

// goFloor is the least a Go HTTP server adds to a request's SQL, measured with wrk as the server is:
// a net/http handler that sends the request's recorded statements on the server's own pool (its
// settings and statement cache; a recorded batch as one pipeline, as the server sent it), reads
// their rows without decoding them, and writes the answer the server gave. No routing,
// authentication, validation, decoding or encoding: what the server's p99 adds beyond this floor's
// is its own work, what this floor's adds beyond pgbench's is net/http's, pgx's and the
// runtime's on a machine where wrk, the server and PostgreSQL share the cores.
func goFloor(b *testing.B, pool *pgxpool.Pool, stmts []recorded, body []byte) *httptest.Server {
	drain := func(rows pgx.Rows, err error) error {
		if err != nil {
			return err
		}
		for rows.Next() {
			_ = rows.RawValues()
		}
		rows.Close()
		return rows.Err()
	}
	run := func(ctx context.Context) error {
		for i := 0; i < len(stmts); {
			if stmts[i].batch == 0 {
				if err := drain(pool.Query(ctx, stmts[i].sql, stmts[i].args...)); err != nil {
					return err
				}
				i++
				continue
			}
			var batch pgx.Batch
			j := i
			for ; j < len(stmts) && stmts[j].batch == stmts[i].batch; j++ {
				batch.Queue(stmts[j].sql, stmts[j].args...)
			}
			br := pool.SendBatch(ctx, &batch)
			for k := i; k < j; k++ {
				if err := drain(br.Query()); err != nil {
					br.Close()
					return err
				}
			}
			if err := br.Close(); err != nil {
				return err
			}
			i = j
		}
		return nil
	}
	length := strconv.Itoa(len(body))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := run(r.Context()); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", length)
		w.Write(body)
	}))
	b.Cleanup(srv.Close)
	return srv
}

// explain logs the plan of each of a request's statements with its values (EXPLAIN ANALYZE,
// under the server's plan settings): which index answers, and the execution time.
func explain(b *testing.B, conn *pgx.Conn, name string, stmts []recorded) {
	ctx := context.Background()
	if _, err := conn.Exec(ctx, "SET jit = off; SET plan_cache_mode = force_custom_plan"); err != nil {
		b.Fatal(err)
	}
	for i, st := range stmts {
		var kept []string
		for _, l := range strings.Split(st.sql, "\n") {
			if !strings.HasPrefix(strings.TrimSpace(l), "--") {
				kept = append(kept, l)
			}
		}
		q := strings.TrimSpace(strings.Join(kept, "\n"))
		if !strings.HasPrefix(strings.ToUpper(q), "SELECT") && !strings.HasPrefix(strings.ToUpper(q), "WITH") {
			continue
		}
		var rows pgx.Rows
		var err error
		if st.batch != 0 {
			// Sent under its generic plan (store.QueryGeneric): that plan, explained as a prepared
			// statement's with the values written in.
			rows, err = explainGeneric(ctx, b, conn, q, st.args)
		} else {
			rows, err = conn.Query(ctx, "EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) "+q, st.args...)
		}
		if err != nil {
			b.Logf("explain %s #%d: %v", name, i, err)
			continue
		}
		var plan []string
		for rows.Next() {
			var line string
			if err := rows.Scan(&line); err != nil {
				b.Fatal(err)
			}
			plan = append(plan, line)
		}
		rows.Close()
		if st.batch != 0 {
			if _, err := conn.Exec(ctx, "DEALLOCATE explained; SET plan_cache_mode = force_custom_plan"); err != nil {
				b.Fatal(err)
			}
		}
		b.Logf("EXPLAIN %s #%d:\n%s", name, i, strings.Join(plan, "\n"))
	}
}

// explainGeneric explains q's generic plan with args: prepared under force_generic_plan and
// executed with its values as literals.
func explainGeneric(ctx context.Context, b *testing.B, conn *pgx.Conn, q string, args []any) (pgx.Rows, error) {
	if _, err := conn.Exec(ctx, "SET plan_cache_mode = force_generic_plan"); err != nil {
		return nil, err
	}
	if _, err := conn.Exec(ctx, "PREPARE explained AS "+q); err != nil {
		return nil, err
	}
	lits := make([]string, len(args))
	for i, a := range args {
		v, null := pgText(b, a)
		if null {
			lits[i] = "NULL"
		} else {
			lits[i] = "'" + strings.ReplaceAll(v, "'", "''") + "'"
		}
	}
	call := "EXECUTE explained"
	if len(lits) > 0 {
		call += "(" + strings.Join(lits, ", ") + ")"
	}
	rows, err := conn.Query(ctx, "EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) "+call, pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		return nil, err
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return conn.Query(ctx, "EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) "+call, pgx.QueryExecModeSimpleProtocol)
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func fmtRatios(v []float64) string {
	parts := make([]string, len(v))
	for i, x := range v {
		parts[i] = strconv.FormatFloat(x, 'f', 2, 64)
	}
	return strings.Join(parts, " ")
}

func loadAvg() string {
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

func getOK(b *testing.B, u, token string) []byte {
	req, _ := http.NewRequest("GET", u, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		b.Fatalf("GET %s: %d %s", u, resp.StatusCode, body)
	}
	return body
}

// recorder is a pgx tracer that keeps the statements sent while it is on, and those of batches.
type recorder struct {
	mu      sync.Mutex
	on      bool
	stmts   []recorded
	params  map[string]string // the server's connection settings (jit, plan_cache_mode)
	batches int
}

// pgOptions is PGOPTIONS for pgbench: the settings the server's connections run with.
func (r *recorder) pgOptions() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var opts []string
	for _, k := range []string{"jit", "plan_cache_mode"} {
		if v, ok := r.params[k]; ok {
			opts = append(opts, "-c "+k+"="+v)
		}
	}
	return strings.Join(opts, " ")
}

type recorded struct {
	sql  string
	args []any
	// batch numbers the statements sent in one round trip (a pgx batch: store.QueryGeneric's,
	// under their generic plans), 0 for a statement sent on its own.
	batch int
}

func (r *recorder) start() {
	r.mu.Lock()
	r.on, r.stmts = true, nil
	r.mu.Unlock()
}

func (r *recorder) stop() []recorded {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.on = false
	return r.stmts
}

func (r *recorder) TraceQueryStart(ctx context.Context, conn *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	r.mu.Lock()
	if r.params == nil {
		r.params = map[string]string{}
		for k, v := range conn.Config().RuntimeParams {
			r.params[k] = v
		}
	}
	// Only the statements of a request (its context carries a request id): not River's, nor the
	// background jobs'.
	if r.on && httpkit.RequestID(ctx) != "" {
		r.stmts = append(r.stmts, recorded{sql: data.SQL, args: append([]any(nil), data.Args...)})
	}
	r.mu.Unlock()
	return ctx
}

func (r *recorder) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

type batchNumber struct{}

// TraceBatchStart numbers a request's batch: its statements are one pipeline of the floor.
func (r *recorder) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	if httpkit.RequestID(ctx) == "" {
		return ctx
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.batches++
	return context.WithValue(ctx, batchNumber{}, r.batches)
}

func (r *recorder) TraceBatchQuery(ctx context.Context, _ *pgx.Conn, data pgx.TraceBatchQueryData) {
	n, ok := ctx.Value(batchNumber{}).(int)
	if !ok {
		return
	}
	r.mu.Lock()
	if r.on {
		r.stmts = append(r.stmts, recorded{sql: data.SQL, args: append([]any(nil), data.Args...), batch: n})
	}
	r.mu.Unlock()
}

func (r *recorder) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}

// pgbenchScript is a request's statements as a pgbench script: each parameter a pgbench variable
// (-D), sent as a parameter of the prepared statement as the server sends it; a NULL parameter
// written into the statement as NULL (pgbench has no NULL variable).
type pgbenchScript struct {
	text string
	vars []string // name=value
}

var paramRE = regexp.MustCompile(`\$(\d+)`)

func newPgbenchScript(b *testing.B, stmts []recorded) pgbenchScript {
	var out pgbenchScript
	var sb strings.Builder
	batch := 0
	for i, st := range stmts {
		// A batch's statements are one pipeline, one round trip (and one implicit transaction:
		// its set_config holds until the pipeline's end), as pgx sends them.
		if st.batch != batch {
			if batch != 0 {
				sb.WriteString("\\endpipeline\n")
			}
			if st.batch != 0 {
				sb.WriteString("\\startpipeline\n")
			}
			batch = st.batch
		}
		// pgx's query options (a result format) come before the arguments: they are not sent.
		for len(st.args) > 0 {
			switch st.args[0].(type) {
			case pgx.QueryResultFormats, pgx.QueryResultFormatsByOID, pgx.QueryExecMode:
				st.args = st.args[1:]
				continue
			}
			break
		}
		q := paramRE.ReplaceAllStringFunc(st.sql, func(m string) string {
			k, _ := strconv.Atoi(m[1:])
			if k < 1 || k > len(st.args) {
				b.Fatalf("statement %d has %s but %d arguments", i, m, len(st.args))
			}
			v, null := pgText(b, st.args[k-1])
			if null {
				return "NULL"
			}
			name := fmt.Sprintf("a%d_%d", i, k)
			out.vars = append(out.vars, name+"="+v)
			return ":" + name
		})
		// One line per statement: pgbench reads a statement up to its semicolon; comments go.
		var lines []string
		for _, l := range strings.Split(q, "\n") {
			if j := strings.Index(l, "--"); j >= 0 {
				l = l[:j]
			}
			if strings.TrimSpace(l) != "" {
				lines = append(lines, strings.TrimSpace(l))
			}
		}
		sb.WriteString(strings.TrimSuffix(strings.Join(lines, " "), ";"))
		sb.WriteString(";\n")
	}
	if batch != 0 {
		sb.WriteString("\\endpipeline\n")
	}
	out.text = sb.String()
	return out
}

func (p pgbenchScript) summary() string {
	var sb strings.Builder
	for _, l := range strings.Split(strings.TrimSpace(p.text), "\n") {
		if len(l) > 160 {
			l = l[:160] + "…"
		}
		sb.WriteString("    " + l + "\n")
	}
	return sb.String()
}

// pgText is v in PostgreSQL's text input form; null when v is SQL NULL.
func pgText(b *testing.B, v any) (string, bool) {
	switch x := v.(type) {
	case nil:
		return "", true
	case string:
		return x, false
	case *string:
		if x == nil {
			return "", true
		}
		return *x, false
	case bool:
		return strconv.FormatBool(x), false
	case *bool:
		if x == nil {
			return "", true
		}
		return strconv.FormatBool(*x), false
	case int:
		return strconv.Itoa(x), false
	case int32:
		return strconv.FormatInt(int64(x), 10), false
	case int64:
		return strconv.FormatInt(x, 10), false
	case float32, float64:
		return fmt.Sprint(x), false
	case uuid.UUID:
		return x.String(), false
	case *uuid.UUID:
		if x == nil {
			return "", true
		}
		return x.String(), false
	case uuid.NullUUID:
		if !x.Valid {
			return "", true
		}
		return x.UUID.String(), false
	case time.Time:
		return x.Format(time.RFC3339Nano), false
	case *time.Time:
		if x == nil {
			return "", true
		}
		return x.Format(time.RFC3339Nano), false
	case pgtype.Date:
		if !x.Valid {
			return "", true
		}
		return x.Time.Format("2006-01-02"), false
	case []string:
		return pgArray(x), false
	case []uuid.UUID:
		s := make([]string, len(x))
		for i, u := range x {
			s[i] = u.String()
		}
		return pgArray(s), false
	case json.RawMessage:
		return string(x), false
	case []byte:
		return `\x` + hex.EncodeToString(x), false // bytea
	case driver.Valuer:
		dv, err := x.Value()
		if err != nil {
			b.Fatal(err)
		}
		return pgText(b, dv)
	}
	b.Fatalf("pgText: no text form for %T", v)
	return "", false
}

func pgArray(s []string) string {
	q := make([]string, len(s))
	for i, e := range s {
		q[i] = `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(e) + `"`
	}
	return "{" + strings.Join(q, ",") + "}"
}

// runPgbench runs script over 16 connections for secs seconds and returns the p50 and p99 of its
// transactions' latencies in ms, from pgbench's per-transaction log.
func runPgbench(b *testing.B, bin string, u *url.URL, script pgbenchScript, pgOptions, dir string, secs int) (float64, float64, int) {
	f := filepath.Join(dir, "floor.sql")
	if err := os.WriteFile(f, []byte(script.text), 0o644); err != nil {
		b.Fatal(err)
	}
	logDir, err := os.MkdirTemp(dir, "pgbench")
	if err != nil {
		b.Fatal(err)
	}
	args := []string{"-n", "-M", "prepared", "-c", "16", "-j", "2", "-T", strconv.Itoa(secs), "-f", f, "-l", "--log-prefix", filepath.Join(logDir, "tx"),
		"-h", u.Hostname(), "-p", portOr(u.Port(), "5432"), "-U", u.User.Username()}
	for _, v := range script.vars {
		args = append(args, "-D", v)
	}
	args = append(args, strings.TrimPrefix(u.Path, "/"))
	cmd := exec.Command(bin, args...)
	// The floor's connections run with the server's settings (impl/server/store: jit, plans).
	cmd.Env = append(os.Environ(), "PGOPTIONS="+pgOptions)
	out, err := cmd.CombinedOutput()
	if err != nil {
		b.Fatalf("pgbench: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "number of failed transactions: 0") && strings.Contains(string(out), "number of failed transactions") {
		b.Fatalf("pgbench: failed transactions\n%s", out)
	}
	files, _ := filepath.Glob(filepath.Join(logDir, "tx.*"))
	var lat []float64
	for _, name := range files {
		fh, err := os.Open(name)
		if err != nil {
			b.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			if len(fields) >= 3 {
				if us, err := strconv.ParseFloat(fields[2], 64); err == nil {
					lat = append(lat, us/1000)
				}
			}
		}
		fh.Close()
	}
	if len(lat) == 0 {
		b.Fatalf("pgbench logged no transaction\n%s", out)
	}
	sort.Float64s(lat)
	return lat[len(lat)/2], lat[int(0.99*float64(len(lat)-1))], len(lat)
}

func portOr(p, def string) string {
	if p == "" {
		return def
	}
	return p
}

// runWrk requests u over 16 keep-alive connections for secs seconds and returns wrk's p50 and
// p99 latency in ms; any socket error or status other than 200 fails the benchmark.
func runWrk(b *testing.B, bin, u, token, dir string, secs int) (float64, float64, int) {
	script := filepath.Join(dir, "get.lua")
	lua := fmt.Sprintf(`wrk.headers["Authorization"] = "Bearer %s"
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('{"requests":%%d,"errors":%%d,"non2xx":%%d,"p50":%%d,"p99":%%d}\n',
    summary.requests, e.connect + e.read + e.write + e.timeout, e.status, latency:percentile(50), latency:percentile(99)))
end
`, token)
	if err := os.WriteFile(script, []byte(lua), 0o644); err != nil {
		b.Fatal(err)
	}
	out, err := exec.Command(bin, "-t2", "-c16", "-d"+strconv.Itoa(secs)+"s", "--timeout", "30s", "-s", script, u).CombinedOutput()
	if err != nil {
		b.Fatalf("wrk: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	var got struct{ Requests, Errors, Non2xx, P50, P99 int }
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &got); err != nil {
		b.Fatalf("wrk's summary: %v\n%s", err, out)
	}
	if got.Errors > 0 || got.Non2xx > 0 || got.Requests == 0 {
		b.Fatalf("wrk: %+v\n%s", got, out)
	}
	return float64(got.P50) / 1000, float64(got.P99) / 1000, got.Requests
}

// seedReadExtras adds the read-path part of scripts/stats-bench-seed.sql to a database seeded
// before it existed (the part skips itself when it ran already).
func seedReadExtras(b *testing.B, conn *pgx.Conn) {
	script, err := os.ReadFile("../../../scripts/stats-bench-seed.sql")
	if err != nil {
		b.Fatal(err)
	}
	i := strings.Index(string(script), "\n-- Read paths")
	if i < 0 {
		b.Fatal("scripts/stats-bench-seed.sql has no read-path part")
	}
	start := time.Now()
	if _, err := conn.Exec(context.Background(), string(script[i:])); err != nil {
		b.Fatal(err)
	}
	b.Logf("read-path extras: %s", time.Since(start).Round(time.Millisecond))
}
