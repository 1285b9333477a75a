package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/sdods/sdods/gen/serverapi"
	"github.com/sdods/sdods/impl/server/agents"
	"github.com/sdods/sdods/impl/server/authz"
	"github.com/sdods/sdods/impl/server/blob"
	"github.com/sdods/sdods/impl/server/egress"
	"github.com/sdods/sdods/impl/server/httpapi"
	"github.com/sdods/sdods/impl/server/identity"
	"github.com/sdods/sdods/impl/server/integrations"
	"github.com/sdods/sdods/impl/server/jobs"
	"github.com/sdods/sdods/impl/server/mcp"
	"github.com/sdods/sdods/impl/server/metrics"
	"github.com/sdods/sdods/impl/server/oas"
	"github.com/sdods/sdods/impl/server/runner"
	"github.com/sdods/sdods/impl/server/runs"
	"github.com/sdods/sdods/impl/server/schedules"
	"github.com/sdods/sdods/impl/server/secrets"
	"github.com/sdods/sdods/impl/server/stats"
	"github.com/sdods/sdods/impl/server/store"
	"github.com/sdods/sdods/impl/server/webui"
)

// Version is the server's version, set at build time with -ldflags "-X …/impl/server/app.Version=…".
var Version = "0.1.0-dev"

// App is a wired server: its handler and what it owns.
type App struct {
	Handler http.Handler
	Store   *store.Store
	Log     *slog.Logger
	// Runs executes queued runs once Start is called.
	Runs *runs.Service
	// Schedules owns schedules; their firing is the River periodic job it registers.
	Schedules *schedules.Service
	// Jobs is the River client of the process's background work (impl/server/jobs), started by
	// Start.
	Jobs *jobs.Client
	// Agents works agent jobs (on Jobs) and streams their events.
	Agents *agents.Service
	// Egress is the policy of what steps and Git integrations may reach; whoever serves Handler
	// adds its listener with DenyListener.
	Egress *egress.Policy
	// Startup is what New did to get the database ready.
	Startup Startup
	// Metrics is the registry of GET /metrics and of the -metrics-addr listener.
	Metrics *metrics.Metrics
}

// Startup is what happened at start, printed by Serve so that a newcomer knows where they are.
type Startup struct {
	// Database is the database URL without its password.
	Database string
	// Created tells that the database did not exist and was created.
	Created bool
	// MigratedFrom and MigratedTo are the schema versions before and after migrating.
	MigratedFrom, MigratedTo uint
	// SetupRequired tells that the first administrator still has to be created.
	SetupRequired bool
}

// DenyListener adds the address a server of Handler listens on to the egress policy's built-in
// denies: a test must not reach the server's own API through it.
func (a *App) DenyListener(addr net.Addr) {
	if ap, err := netip.ParseAddrPort(addr.String()); err == nil {
		a.Egress.DenyEndpoint(ap, "this server's own listener")
	}
}

// newEgress builds the egress policy of cfg with the database's addresses denied.
func newEgress(ctx context.Context, cfg Config) (*egress.Policy, error) {
	pol, err := egress.New(egress.Config{Allow: cfg.EgressAllow, Deny: cfg.EgressDeny})
	if err != nil {
		return nil, err
	}
	if pc, err := pgconn.ParseConfig(cfg.DatabaseURL); err == nil {
		hosts := []*pgconn.FallbackConfig{{Host: pc.Host, Port: pc.Port}}
		hosts = append(hosts, pc.Fallbacks...)
		for _, h := range hosts {
			if !strings.HasPrefix(h.Host, "/") { // a Unix socket is out of a step's reach anyway
				pol.DenyHostPort(ctx, h.Host, h.Port, "this server's database")
			}
		}
	}
	if ap, err := netip.ParseAddrPort(cfg.Addr); err == nil && ap.Port() != 0 {
		pol.DenyEndpoint(ap, "this server's own listener")
	}
	return pol, nil
}

// Start runs the run workers and the job client until ctx ends; the returned function waits for
// them to stop.
func (a *App) Start(ctx context.Context) (wait func()) {
	waitRuns := a.Runs.Start(ctx)
	a.Agents.Start(ctx)
	stopped := make(chan struct{})
	if err := a.Jobs.Start(context.WithoutCancel(ctx)); err != nil {
		a.Log.Error("jobs: not started", "error", err)
		close(stopped)
	} else {
		go func() {
			defer close(stopped)
			<-ctx.Done()
			stopCtx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			a.Jobs.Stop(stopCtx)
		}()
	}
	return func() { <-stopped; waitRuns() }
}

// New connects to the database (creating it first with cfg.CreateDB), migrates it and builds the
// HTTP handler.
func New(ctx context.Context, cfg Config, log *slog.Logger) (*App, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	// Every line logged in a request's context names the request.
	log = slog.New(httpapi.LogRequestID(log.Handler()))
	startup := Startup{Database: redactURL(cfg.DatabaseURL)}
	if cfg.CreateDB {
		created, err := store.CreateDatabase(ctx, cfg.DatabaseURL)
		if err != nil {
			return nil, err
		}
		startup.Created = created
	}
	if v, err := store.MigrationVersion(cfg.DatabaseURL); err == nil {
		startup.MigratedFrom = v.Version
	}
	if err := store.MigrateUp(cfg.DatabaseURL); err != nil {
		return nil, err
	}
	if v, err := store.MigrationVersion(cfg.DatabaseURL); err == nil {
		startup.MigratedTo = v.Version
	}
	st, err := store.OpenTraced(ctx, cfg.DatabaseURL, cfg.QueryTracer)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(cfg.DataDir, 0o750); err != nil {
		st.Close()
		return nil, fmt.Errorf("create data dir: %w", err)
	}
	key, err := secrets.LoadOrCreate(cfg.SecretKey, cfg.DataDir)
	if err != nil {
		st.Close()
		return nil, err
	}
	box, err := secrets.New(key)
	if err != nil {
		st.Close()
		return nil, err
	}
	blobs, err := cfg.Blob.open(ctx, filepath.Join(cfg.DataDir, "blobs"))
	if err != nil {
		st.Close()
		return nil, err
	}
	pol, err := newEgress(ctx, cfg)
	if err != nil {
		st.Close()
		return nil, err
	}
	reg := jobs.NewRegistry() // every service with background work registers on it
	exec := runner.New(runner.Config{Chromium: cfg.Chromium, Logger: log, Locators: runs.NewLocators(st), Egress: pol})
	rs := runs.New(st, blobs, box, exec, log, runs.Config{Workers: cfg.Workers, StaleAfter: cfg.RunStaleAfter, Heartbeat: cfg.RunHeartbeat,
		Webhook: integrations.Webhook{AllowPrivate: cfg.WebhookAllowPrivate}})
	sched := schedules.New(st, rs, log, schedules.Config{ProcessID: rs.WorkerID()})
	sched.Register(reg)
	stats.RegisterRollup(reg, st)
	m := metrics.New(st.Pool, rs)
	ag := newAgents(st, box, log, rs.WorkerID(), reg, pol)
	if !cfg.NoAutoHeal {
		rs.SetFinishHook(ag.QueueHealTx)
	}
	h, err := newHandler(cfg, log, st, box, blobs, rs, sched, ag, pol, m)
	if err != nil {
		st.Close()
		return nil, err
	}
	rs.Register(reg)
	throttle := identity.DefaultThrottle
	if cfg.Throttle != nil {
		throttle = *cfg.Throttle
	}
	jobs.RegisterCleanup(reg, st, blobs, jobs.Cleanup{LoginWindow: throttle.Window})
	jc, err := jobs.New(st.Pool, reg, jobs.Config{Work: cfg.Role != RoleAPI, ID: rs.WorkerID(), Logger: log})
	if err != nil {
		st.Close()
		return nil, err
	}
	if ident, err := identity.New(st, identity.DefaultThrottle); err == nil {
		startup.SetupRequired, _ = ident.SetupRequired(ctx)
	}
	return &App{Handler: h, Store: st, Log: log, Runs: rs, Schedules: sched, Jobs: jc, Agents: ag, Egress: pol, Startup: startup, Metrics: m}, nil
}

func newHandler(cfg Config, log *slog.Logger, st *store.Store, box *secrets.Box, blobs blob.Store, rs *runs.Service, sched *schedules.Service, ag *agents.Service, pol *egress.Policy, m *metrics.Metrics) (http.Handler, error) {
	doc, err := serverapi.GetSpec()
	if err != nil {
		return nil, fmt.Errorf("load embedded openapi/server.yaml: %w", err)
	}
	table, err := oas.Build(doc)
	if err != nil {
		return nil, err
	}
	enforcer, err := authz.New()
	if err != nil {
		return nil, err
	}
	throttle := identity.DefaultThrottle
	if cfg.Throttle != nil {
		throttle = *cfg.Throttle
	}
	ident, err := identity.New(st, throttle)
	if err != nil {
		return nil, err
	}
	mcpSrv, err := mcp.New(mcp.Config{Log: log, Doc: doc, Table: table, Enforcer: enforcer, Store: st, Version: Version, BaseURL: cfg.BaseURL,
		AllowedOrigins: cfg.MCPAllowedOrigins})
	if err != nil {
		return nil, err
	}
	git, webhook := integrations.Git{AllowLocal: cfg.GitAllowLocal, Egress: pol, Log: log}, integrations.Webhook{AllowPrivate: cfg.WebhookAllowPrivate}
	api := httpapi.NewServer(httpapi.Deps{MCP: mcpSrv, Log: log, Version: Version, Table: table, BaseURL: cfg.BaseURL, Identity: ident, Enforcer: enforcer,
		Blobs: blobs, MaxDatasetBytes: cfg.MaxDataset, MaxIngestBytes: cfg.MaxIngest, Egress: pol,
		Steps: stepLibrary{}, Runs: rs, Schedules: sched, Metrics: m, Agents: ag,
		Services: newServices(serviceDeps{Store: st, Secrets: box, Steps: stepLibrary{}, Git: git, Webhook: webhook, Blobs: blobs, Log: log})})
	routes := mcpSrv.Routes(httpapi.Routes(api, log))
	pipeline := httpapi.Pipeline{Log: log, Doc: doc, Table: table, Auth: httpapi.Credentials{Identity: ident}, Enforcer: enforcer,
		MaxBody: cfg.MaxBody, Store: st, SecureCookies: strings.HasPrefix(cfg.BaseURL, "https://"), TrustedProxies: cfg.TrustedProxies, Metrics: m}
	h, err := pipeline.Handler(routes)
	if err != nil {
		return nil, err
	}
	mcpSrv.SetDispatch(h) // a tool call is a request through the whole pipeline
	return webui.Wrap(h), nil
}

// Print tells a person what happened at start and what to do next: the database used or created,
// the migrations applied, whether setup is still needed and the exact command that does it, and
// where the web UI and the API answer.
func (s Startup) Print(w io.Writer, baseURL string) {
	fmt.Fprintf(w, "sdods %s\n", Version)
	state := "existing"
	if s.Created {
		state = "created now"
	}
	fmt.Fprintf(w, "database:   %s (%s)\n", s.Database, state)
	if s.MigratedTo != s.MigratedFrom {
		fmt.Fprintf(w, "migrations: applied %d → %d\n", s.MigratedFrom, s.MigratedTo)
	} else {
		fmt.Fprintf(w, "migrations: up to date (version %d)\n", s.MigratedTo)
	}
	if s.SetupRequired {
		fmt.Fprintf(w, "setup:      needed; create the first administrator in the web UI, or with\n")
		fmt.Fprintf(w, "  curl -X POST %s/api/auth/setup -H 'Content-Type: application/json' \\\n", baseURL)
		fmt.Fprintf(w, "    -d '{\"email\":\"admin@example.com\",\"password\":\"choose a long password\",\"displayName\":\"Admin\"}'\n")
	} else {
		fmt.Fprintf(w, "setup:      done (an administrator exists)\n")
	}
	if s.SetupRequired {
		fmt.Fprintf(w, "web UI:     %s/ (open it in a browser to create the first administrator)\n", baseURL)
	} else {
		fmt.Fprintf(w, "web UI:     %s/\n", baseURL)
	}
	fmt.Fprintf(w, "API:        %s/api (health: %s/api/health)\n", baseURL, baseURL)
}

// redactURL returns a database URL without its password.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable database URL)"
	}
	if _, has := u.User.Password(); has {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	return u.String()
}

// MetricsServer serves GET /metrics alone, without credentials (the -metrics-addr listener).
func (a *App) MetricsServer() *http.Server {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", a.Metrics.Handler())
	return &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
}

// Close releases the database pool.
func (a *App) Close() { a.Store.Close() }

// gogc is the collector's target Serve runs with, for its start-up line: the configuration's, or
// the GOGC the runtime read.
func gogc(cfg Config) string {
	if cfg.GCPercent > 0 {
		return strconv.Itoa(cfg.GCPercent)
	}
	return os.Getenv("GOGC")
}

// Serve runs the server until ctx ends, then drains in-flight requests for up to 30 seconds.
func Serve(ctx context.Context, cfg Config) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	log := cfg.Logger()
	if cfg.GCPercent > 0 {
		debug.SetGCPercent(cfg.GCPercent)
	}
	a, err := New(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer a.Close()
	workCtx, stopWork := context.WithCancel(context.WithoutCancel(ctx))
	waitWork := a.Start(workCtx)
	defer func() { stopWork(); waitWork() }()
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.Addr, err)
	}
	a.DenyListener(ln.Addr())
	srv := &http.Server{Handler: roleHandler(cfg.Role, a.Handler, log), ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	log.Info("sdods serving", "url", cfg.BaseURL, "addr", ln.Addr().String(), "version", Version, "role", cfg.Role, "gogc", gogc(cfg))
	a.Startup.Print(os.Stdout, cfg.BaseURL)
	if cfg.MetricsAddr != "" {
		mln, err := net.Listen("tcp", cfg.MetricsAddr)
		if err != nil {
			return fmt.Errorf("listen on %s (metrics): %w", cfg.MetricsAddr, err)
		}
		a.DenyListener(mln.Addr())
		msrv := a.MetricsServer()
		go func() { _ = msrv.Serve(mln) }()
		defer msrv.Close()
		log.Info("sdods metrics", "addr", mln.Addr().String(), "path", "/metrics")
	}
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	log.Info("sdods shutting down: draining requests")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
