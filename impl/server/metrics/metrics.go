// Package metrics is the server's Prometheus registry (issue 19 item 5): requests by operation
// and status with their latency, errors by code, login throttling, runs by state and their queue
// latency, live-event subscribers, and the database pool. It is served to instance admins at
// GET /metrics and, when -metrics-addr is set, on that separate listener. docs/metrics.md lists
// every series.
package metrics

import (
	"bytes"
	"context"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/common/expfmt"
)

// Streams reports the live-event counters of a process (runs.Service).
type Streams interface {
	StreamCounts() (subscribers, feedReads, dropped int64)
}

// Metrics holds the registry and the instruments the request pipeline feeds.
type Metrics struct {
	Registry *prometheus.Registry

	requests  *prometheus.CounterVec
	latency   *prometheus.HistogramVec
	errors    *prometheus.CounterVec
	throttled prometheus.Counter

	// series caches each operation's latency histogram and counters by status, so that a request
	// hashes no labels (the vectors are never reset: a series, once made, stays the same).
	series sync.Map // operation → *opSeries
}

// opSeries are one operation's series.
type opSeries struct {
	latency  prometheus.Observer
	byStatus sync.Map // int → prometheus.Counter
}

// New registers every series; pool and streams may be nil (a process without them).
func New(pool *pgxpool.Pool, streams Streams) *Metrics {
	reg := prometheus.NewRegistry()
	m := &Metrics{
		Registry: reg,
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "sdods_http_requests_total",
			Help: "HTTP requests served, by OpenAPI operation id (\"none\" when no operation matched) and status."}, []string{"operation", "status"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "sdods_http_request_duration_seconds",
			Help:    "Time to serve a request, by operation id (an event stream counts until it ends).",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}}, []string{"operation"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "sdods_http_errors_total",
			Help: "Error responses, by the error code of their body ({\"error\":{\"code\"}})."}, []string{"code"}),
		throttled: prometheus.NewCounter(prometheus.CounterOpts{Name: "sdods_login_throttled_total",
			Help: "Sign-ins refused by the login throttle (429)."}),
	}
	reg.MustRegister(m.requests, m.latency, m.errors, m.throttled,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if streams != nil {
		reg.MustRegister(streamCollector{streams})
	}
	if pool != nil {
		reg.MustRegister(poolCollector{pool}, newRunCollector(pool), jobCollector{pool})
	}
	return m
}

// ObserveRequest counts one request; code is the error code of an error response ("" otherwise).
func (m *Metrics) ObserveRequest(operation string, status int, code string, d time.Duration) {
	if m == nil {
		return
	}
	if operation == "" {
		operation = "none"
	}
	s, ok := m.series.Load(operation)
	if !ok {
		s, _ = m.series.LoadOrStore(operation, &opSeries{latency: m.latency.WithLabelValues(operation)})
	}
	ops := s.(*opSeries)
	c, ok := ops.byStatus.Load(status)
	if !ok {
		c, _ = ops.byStatus.LoadOrStore(status, m.requests.WithLabelValues(operation, strconv.Itoa(status)))
	}
	c.(prometheus.Counter).Inc()
	ops.latency.Observe(d.Seconds())
	if code != "" {
		m.errors.WithLabelValues(code).Inc()
	}
	if operation == "login" && status == http.StatusTooManyRequests {
		m.throttled.Inc()
	}
}

// Handler serves the registry (for the -metrics-addr listener).
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.Registry, promhttp.HandlerOpts{})
}

// ContentType is the media type of Exposition.
var ContentType = string(expfmt.NewFormat(expfmt.TypeTextPlain))

// Exposition gathers every series in the Prometheus text format.
func (m *Metrics) Exposition() ([]byte, error) {
	families, err := m.Registry.Gather()
	var buf bytes.Buffer
	enc := expfmt.NewEncoder(&buf, expfmt.NewFormat(expfmt.TypeTextPlain))
	for _, f := range families {
		if err := enc.Encode(f); err != nil {
			return nil, err
		}
	}
	return buf.Bytes(), err
}

var (
	subscribersDesc = prometheus.NewDesc("sdods_sse_subscribers", "Open event streams (server-sent events) served by this process.", nil, nil)
	feedReadsDesc   = prometheus.NewDesc("sdods_sse_feed_reads_total", "Database reads of the live-event feeds of this process (one per notification batch and run).", nil, nil)
	droppedDesc     = prometheus.NewDesc("sdods_sse_dropped_total", "Event streams ended for falling too far behind (the client resumes with Last-Event-ID).", nil, nil)
)

type streamCollector struct{ s Streams }

func (c streamCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- subscribersDesc
	ch <- feedReadsDesc
	ch <- droppedDesc
}

func (c streamCollector) Collect(ch chan<- prometheus.Metric) {
	subs, reads, dropped := c.s.StreamCounts()
	ch <- prometheus.MustNewConstMetric(subscribersDesc, prometheus.GaugeValue, float64(subs))
	ch <- prometheus.MustNewConstMetric(feedReadsDesc, prometheus.CounterValue, float64(reads))
	ch <- prometheus.MustNewConstMetric(droppedDesc, prometheus.CounterValue, float64(dropped))
}

var (
	poolAcquired = prometheus.NewDesc("sdods_db_pool_connections", "Connections of the PostgreSQL pool, by state (acquired, idle, constructing).", []string{"state"}, nil)
	poolMax      = prometheus.NewDesc("sdods_db_pool_max_connections", "Largest size of the PostgreSQL pool.", nil, nil)
	poolAcquires = prometheus.NewDesc("sdods_db_pool_acquires_total", "Connections acquired from the pool.", nil, nil)
	poolEmpty    = prometheus.NewDesc("sdods_db_pool_empty_acquires_total", "Acquires that had to wait for a connection (the pool was empty).", nil, nil)
	poolWait     = prometheus.NewDesc("sdods_db_pool_acquire_wait_seconds_total", "Time spent waiting for pool connections.", nil, nil)
)

type poolCollector struct{ p *pgxpool.Pool }

func (c poolCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{poolAcquired, poolMax, poolAcquires, poolEmpty, poolWait} {
		ch <- d
	}
}

func (c poolCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.p.Stat()
	ch <- prometheus.MustNewConstMetric(poolAcquired, prometheus.GaugeValue, float64(s.AcquiredConns()), "acquired")
	ch <- prometheus.MustNewConstMetric(poolAcquired, prometheus.GaugeValue, float64(s.IdleConns()), "idle")
	ch <- prometheus.MustNewConstMetric(poolAcquired, prometheus.GaugeValue, float64(s.ConstructingConns()), "constructing")
	ch <- prometheus.MustNewConstMetric(poolMax, prometheus.GaugeValue, float64(s.MaxConns()))
	ch <- prometheus.MustNewConstMetric(poolAcquires, prometheus.CounterValue, float64(s.AcquireCount()))
	ch <- prometheus.MustNewConstMetric(poolEmpty, prometheus.CounterValue, float64(s.EmptyAcquireCount()))
	ch <- prometheus.MustNewConstMetric(poolWait, prometheus.CounterValue, s.AcquireDuration().Seconds())
}

var (
	runsDesc       = prometheus.NewDesc("sdods_runs", "Runs in the database, by state (queued, running, passed, failed, errored, cancelled, timed_out).", []string{"state"}, nil)
	oldestDesc     = prometheus.NewDesc("sdods_runs_oldest_queued_seconds", "Age of the oldest queued run (0 when none waits).", nil, nil)
	runStatesKnown = []string{"queued", "running", "passed", "failed", "errored", "cancelled", "timed_out"}
)

// runCollector reads the runs by state at each scrape, and observes the queue latency (created
// to started) of every run that started since the previous scrape into a histogram. The database
// is shared: every process reports every run, so aggregate these series with max, not sum.
type runCollector struct {
	pool   *pgxpool.Pool
	queue  prometheus.Histogram
	mu     sync.Mutex
	since  time.Time
	primed bool
}

func newRunCollector(pool *pgxpool.Pool) *runCollector {
	return &runCollector{pool: pool, queue: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "sdods_run_queue_latency_seconds",
		Help:    "Time runs waited queued before a worker started them (runs started since this process started).",
		Buckets: []float64{.01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600}})}
}

func (c *runCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- runsDesc
	ch <- oldestDesc
	c.queue.Describe(ch)
}

func (c *runCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	counts := map[string]float64{}
	for _, s := range runStatesKnown {
		counts[s] = 0
	}
	var oldest float64
	rows, err := c.pool.Query(ctx, `SELECT status, count(*),
	        coalesce(extract(epoch FROM now() - min(created_at) FILTER (WHERE status = 'queued')), 0)::float8
	    FROM runs GROUP BY status`)
	if err == nil {
		for rows.Next() {
			var status string
			var n int64
			var age float64
			if rows.Scan(&status, &n, &age) == nil {
				counts[status] = float64(n)
				if status == "queued" {
					oldest = age
				}
			}
		}
		rows.Close()
		err = rows.Err()
	}
	if err == nil {
		for s, n := range counts {
			ch <- prometheus.MustNewConstMetric(runsDesc, prometheus.GaugeValue, n, s)
		}
		ch <- prometheus.MustNewConstMetric(oldestDesc, prometheus.GaugeValue, oldest)
	} else {
		ch <- prometheus.NewInvalidMetric(runsDesc, err)
	}
	c.observeQueue(ctx)
	c.queue.Collect(ch)
}

// observeQueue adds the queue latency of the runs started since the last scrape.
func (c *runCollector) observeQueue(ctx context.Context) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.primed {
		c.since, c.primed = time.Now().Add(-time.Minute), true
	}
	rows, err := c.pool.Query(ctx, `SELECT started_at, extract(epoch FROM started_at - created_at)::float8
	    FROM runs WHERE started_at > $1 AND source = 'execute' ORDER BY started_at LIMIT 10000`, c.since)
	if err != nil {
		return
	}
	defer rows.Close()
	for rows.Next() {
		var at time.Time
		var wait float64
		if rows.Scan(&at, &wait) == nil {
			c.queue.Observe(max(wait, 0))
			c.since = at
		}
	}
}

var (
	jobsDesc       = prometheus.NewDesc("sdods_jobs", "Background jobs in River's table, by queue (runs, webhooks, schedules, agents, maintenance…) and state.", []string{"queue", "state"}, nil)
	jobsOldestDesc = prometheus.NewDesc("sdods_jobs_oldest_available_seconds", "Age of the oldest job ready to be worked, by queue (how far the workers are behind).", []string{"queue"}, nil)
	jobStatesKnown = []string{"available", "scheduled", "running", "retryable", "completed", "cancelled", "discarded", "pending"}
)

// jobCollector reads River's jobs by queue and state at each scrape. Like runCollector, every
// process reports the shared table: aggregate with max, not sum.
type jobCollector struct{ pool *pgxpool.Pool }

func (c jobCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- jobsDesc
	ch <- jobsOldestDesc
}

func (c jobCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	rows, err := c.pool.Query(ctx, `SELECT queue, state::text, count(*),
	        coalesce(extract(epoch FROM now() - min(scheduled_at) FILTER (WHERE state = 'available')), 0)::float8
	    FROM river_job GROUP BY queue, state`)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(jobsDesc, err)
		return
	}
	defer rows.Close()
	counts := map[string]map[string]float64{}
	oldest := map[string]float64{}
	for rows.Next() {
		var queue, state string
		var n int64
		var age float64
		if rows.Scan(&queue, &state, &n, &age) != nil {
			continue
		}
		if counts[queue] == nil {
			counts[queue] = map[string]float64{}
			for _, s := range jobStatesKnown {
				counts[queue][s] = 0
			}
		}
		counts[queue][state] = float64(n)
		if state == "available" {
			oldest[queue] = age
		}
	}
	if err := rows.Err(); err != nil {
		ch <- prometheus.NewInvalidMetric(jobsDesc, err)
		return
	}
	for queue, states := range counts {
		for s, n := range states {
			ch <- prometheus.MustNewConstMetric(jobsDesc, prometheus.GaugeValue, n, queue, s)
		}
		ch <- prometheus.MustNewConstMetric(jobsOldestDesc, prometheus.GaugeValue, oldest[queue], queue)
	}
}
