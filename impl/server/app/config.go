// Package app wires the test automation server together: configuration, the database, the
// policy, the HTTP pipeline and the handlers. It is the only place that calls constructors.
package app

import (
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/netip"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/sdods/sdods/impl/server/egress"
	"github.com/sdods/sdods/impl/server/httpapi"
	"github.com/sdods/sdods/impl/server/identity"
	"github.com/sdods/sdods/impl/server/store"
)

// The roles of a process (Config.Role, -role): several processes on one database may take
// different roles, e.g. two api processes behind a load balancer and workers on other machines.
const (
	// RoleAll serves the API and works jobs (runs, clean-up, deliveries).
	RoleAll = "all"
	// RoleAPI serves the API and works no job; it still ends runs whose worker died.
	RoleAPI = "api"
	// RoleWorker works jobs and serves only /api/health.
	RoleWorker = "worker"
)

// DefaultGCPercent is the collector's target of sdods serve when GOGC is not set: the heap may grow
// to five times what is live after a collection, instead of Go's two. A request or a run allocates
// much and keeps little (rows decoded, pages encoded, events buffered), so with Go's default the
// collector ran every few requests and took a sixth to a quarter of the server's CPU
// (docs/benchmarks.md, "Collector target (session 15)"). Memory stays bounded by GOMEMLIMIT,
// which the Kubernetes manifests set from the container's limit; GOGC=100 restores Go's default.
const DefaultGCPercent = 400

// Config is the server's configuration, from flags with environment fallbacks.
type Config struct {
	Addr string
	// MetricsAddr, when set, serves GET /metrics without credentials on its own listener
	// (docs/metrics.md); keep it off the public network.
	MetricsAddr string
	DatabaseURL string
	// QueryTracer, when set, sees every statement of the server's connection pool (benchmarks).
	QueryTracer pgx.QueryTracer
	DataDir     string
	BaseURL     string
	MaxBody     int64
	CreateDB    bool
	LogLevel    slog.Level
	// Workers is how many runs this process executes at once.
	Workers int
	// Role is what this process does: RoleAll (default), RoleAPI or RoleWorker.
	Role string
	// Chromium is the browser of browser steps: a path or a name in PATH.
	Chromium string
	// RunHeartbeat and RunStaleAfter tune how a dead worker's runs are found (defaults 5s, 30s).
	RunHeartbeat, RunStaleAfter time.Duration
	LogFormat                   string
	// SecretKey encrypts secrets at rest (64 hex digits or base64 of 32 bytes); empty: the key
	// file secret.key in DataDir, created on first start.
	SecretKey string
	// MaxDataset is the largest dataset upload in bytes (0: 16 MiB, capped by MaxBody).
	MaxDataset int64
	// MaxIngest is the largest ingested results document in bytes (0: 16 MiB, capped by MaxBody).
	MaxIngest int64
	// Blob chooses and configures the blob store of run files and artifacts.
	Blob BlobConfig
	// GitAllowLocal permits Git integrations on local paths and file:// URLs.
	GitAllowLocal bool
	// EgressAllow and EgressDeny are the operator's rules of the egress policy of steps and Git
	// integrations (CIDRs, addresses, address:port endpoints, host names, *.suffixes), on top of
	// the built-in denies (loopback, link-local, this server's listeners and database).
	EgressAllow, EgressDeny []string
	// WebhookAllowPrivate permits webhook deliveries to loopback, private and link-local
	// addresses (refused by default).
	WebhookAllowPrivate bool
	// NoAutoHeal stops the automatic heal job a finished run with selector heals starts
	// (docs/agents.md); heal jobs then start only on request.
	NoAutoHeal bool
	// TrustedProxies are the reverse proxies whose X-Forwarded-For header names the client (by
	// default none: the header is ignored and the connection's peer is the client).
	TrustedProxies []netip.Prefix
	// MCPAllowedOrigins are the browser origins (scheme://host[:port]) allowed to call /mcp besides
	// the server's own (BaseURL); docs/mcp.md.
	MCPAllowedOrigins []string
	// GCPercent, when above 0, is set as the collector's target (runtime/debug.SetGCPercent) when
	// Serve starts: DefaultGCPercent unless GOGC is set, which the runtime then reads itself.
	GCPercent int
	// Throttle replaces identity.DefaultThrottle (tests tune it; there is no flag).
	Throttle          *identity.Throttle
	trustedProxiesErr error
	// envErrs are the environment variables that could not be read: a start-up error (Validate).
	envErrs []string
}

func env(name, fallback string) string {
	if v, ok := os.LookupEnv(name); ok && v != "" {
		return v
	}
	return fallback
}

// envParsed reads the environment variable name with parse, falling back when it is unset; a value
// that does not parse is recorded and reported by Validate (bad configuration must not start a
// server that silently does something else).
func envParsed[T any](c *Config, name, fallback string, parse func(string) (T, error)) T {
	v, err := parse(env(name, fallback))
	if err != nil {
		c.envErrs = append(c.envErrs, fmt.Sprintf("%s=%q is not valid: %v", name, os.Getenv(name), errors.Unwrap(err)))
		v, _ = parse(fallback)
	}
	return v
}

func parseInt64(s string) (int64, error) { return strconv.ParseInt(s, 10, 64) }

func parseNonNegative(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err == nil && n < 0 {
		return 0, fmt.Errorf("parse: %w", errors.New("must not be negative"))
	}
	return n, err
}

// Flags registers the configuration flags on fs; defaults come from the environment.
func (c *Config) Flags(fs *flag.FlagSet) {
	fs.StringVar(&c.Addr, "addr", env("SDODS_ADDR", "127.0.0.1:8080"), "listen address (SDODS_ADDR)")
	fs.StringVar(&c.MetricsAddr, "metrics-addr", env("SDODS_METRICS_ADDR", ""), "also serve /metrics without credentials on this address, e.g. :9090 (SDODS_METRICS_ADDR; default off: instance admins read GET /metrics)")
	fs.StringVar(&c.DatabaseURL, "database-url", env("DATABASE_URL", store.DefaultURL), "PostgreSQL URL (DATABASE_URL)")
	fs.StringVar(&c.DataDir, "data-dir", env("SDODS_DATA_DIR", ".data/sdods"), "directory for blobs and run files (SDODS_DATA_DIR)")
	fs.StringVar(&c.BaseURL, "base-url", env("SDODS_BASE_URL", ""), "public base URL, e.g. https://sdods.example.com (SDODS_BASE_URL; default http://<addr>)")
	maxBody := envParsed(c, "SDODS_MAX_BODY", "33554432", parseInt64)
	fs.Int64Var(&c.MaxBody, "max-body", maxBody, "largest accepted request body in bytes (SDODS_MAX_BODY)")
	createDB := envParsed(c, "SDODS_CREATE_DB", "false", strconv.ParseBool)
	fs.BoolVar(&c.CreateDB, "create-db", createDB, "create the database when it does not exist (SDODS_CREATE_DB)")
	fs.Func("log-level", "debug, info, warn or error (SDODS_LOG_LEVEL)", func(s string) error { return c.LogLevel.UnmarshalText([]byte(s)) })
	if err := c.LogLevel.UnmarshalText([]byte(env("SDODS_LOG_LEVEL", "info"))); err != nil {
		c.envErrs = append(c.envErrs, fmt.Sprintf("SDODS_LOG_LEVEL=%q is not valid: use debug, info, warn or error", os.Getenv("SDODS_LOG_LEVEL")))
	}
	fs.StringVar(&c.SecretKey, "secret-key", env("SDODS_SECRET_KEY", ""), "key encrypting secrets at rest: 64 hex digits or base64 of 32 bytes (SDODS_SECRET_KEY; default: <data-dir>/secret.key, created on first start)")
	maxDataset := envParsed(c, "SDODS_MAX_DATASET", "16777216", parseInt64)
	fs.Int64Var(&c.MaxDataset, "max-dataset", maxDataset, "largest dataset upload in bytes (SDODS_MAX_DATASET)")
	maxIngest := envParsed(c, "SDODS_MAX_INGEST", "16777216", parseInt64)
	fs.Int64Var(&c.MaxIngest, "max-ingest", maxIngest, "largest ingested results document in bytes (SDODS_MAX_INGEST)")
	c.Blob.flags(fs)
	gitLocal := envParsed(c, "SDODS_GIT_ALLOW_LOCAL", "false", strconv.ParseBool)
	fs.BoolVar(&c.GitAllowLocal, "git-allow-local", gitLocal, "allow Git integrations on local paths and file:// URLs (SDODS_GIT_ALLOW_LOCAL)")
	hookPrivate := envParsed(c, "SDODS_WEBHOOK_ALLOW_PRIVATE", "false", strconv.ParseBool)
	fs.BoolVar(&c.WebhookAllowPrivate, "webhook-allow-private", hookPrivate, "allow webhook deliveries to loopback, private and link-local addresses (SDODS_WEBHOOK_ALLOW_PRIVATE)")
	c.NoAutoHeal = !envParsed(c, "SDODS_AUTO_HEAL", "true", strconv.ParseBool)
	fs.Func("auto-heal", "start a heal agent job when a finished run recorded selector heals, at most one waiting per project (SDODS_AUTO_HEAL; default true)", func(s string) error {
		b, err := strconv.ParseBool(s)
		c.NoAutoHeal = !b
		return err
	})
	fs.Func("egress-allow", "comma-separated egress rules steps and Git integrations may reach despite the built-in denies, e.g. 127.0.0.0/8 for local development (SDODS_EGRESS_ALLOW)", listFlag(&c.EgressAllow))
	c.EgressAllow = splitList(env("SDODS_EGRESS_ALLOW", ""))
	fs.Func("egress-deny", "comma-separated egress rules steps and Git integrations may not reach (SDODS_EGRESS_DENY)", listFlag(&c.EgressDeny))
	c.EgressDeny = splitList(env("SDODS_EGRESS_DENY", ""))
	c.TrustedProxies, c.trustedProxiesErr = httpapi.ParseTrustedProxies(env("SDODS_TRUSTED_PROXIES", ""))
	fs.Func("trusted-proxies", "comma-separated addresses and CIDR prefixes of reverse proxies whose X-Forwarded-For names the client; "+
		"from any other peer the header is ignored (SDODS_TRUSTED_PROXIES; default none)", func(s string) error {
		c.TrustedProxies, c.trustedProxiesErr = httpapi.ParseTrustedProxies(s)
		return c.trustedProxiesErr
	})
	fs.Func("mcp-allowed-origins", "comma-separated browser origins allowed to call /mcp besides the server's own, e.g. https://agent.example.com (SDODS_MCP_ALLOWED_ORIGINS)", listFlag(&c.MCPAllowedOrigins))
	c.MCPAllowedOrigins = splitList(env("SDODS_MCP_ALLOWED_ORIGINS", ""))
	workers := envParsed(c, "SDODS_WORKERS", "2", parseNonNegative)
	fs.IntVar(&c.Workers, "workers", workers, "runs executed at once by this process (SDODS_WORKERS)")
	fs.StringVar(&c.Role, "role", env("SDODS_ROLE", RoleAll), "what this process does: all (serve the API and work jobs), api (serve the API, work no job) or worker (work jobs, serve only /api/health) (SDODS_ROLE)")
	fs.StringVar(&c.Chromium, "chromium", env("SDODS_CHROMIUM", "chromium"), "browser for browser steps: path or name in PATH (SDODS_CHROMIUM)")
	fs.StringVar(&c.LogFormat, "log-format", env("SDODS_LOG_FORMAT", "text"), "text or json (SDODS_LOG_FORMAT)")
	c.GCPercent = 0
	if os.Getenv("GOGC") == "" {
		c.GCPercent = DefaultGCPercent
	}
}

// listFlag appends comma-separated values; the flag may be repeated. A flag given on the command
// line replaces the environment's list.
func listFlag(dst *[]string) func(string) error {
	set := false
	return func(s string) error {
		if !set {
			*dst, set = nil, true
		}
		*dst = append(*dst, splitList(s)...)
		return nil
	}
}

func splitList(s string) []string {
	var out []string
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}

// Validate refuses a configuration the server cannot start with.
func (c *Config) Validate() error {
	if len(c.envErrs) > 0 {
		return fmt.Errorf("configuration from the environment: %s", strings.Join(c.envErrs, "; "))
	}
	if c.Workers < 0 {
		return fmt.Errorf("workers must not be negative")
	}
	switch c.Role {
	case "":
		c.Role = RoleAll
	case RoleAll, RoleAPI, RoleWorker:
	default:
		return fmt.Errorf("role must be all, api or worker, not %q", c.Role)
	}
	if c.MaxBody <= 0 {
		return fmt.Errorf("max-body must be positive")
	}
	if c.trustedProxiesErr != nil {
		return fmt.Errorf("trusted-proxies: %w", c.trustedProxiesErr)
	}
	if c.LogFormat != "text" && c.LogFormat != "json" {
		return fmt.Errorf("log-format must be text or json")
	}
	if c.MaxDataset <= 0 {
		c.MaxDataset = 16 << 20
	}
	if c.MaxDataset > c.MaxBody {
		c.MaxDataset = c.MaxBody
	}
	if c.MaxIngest <= 0 {
		c.MaxIngest = 16 << 20
	}
	if c.MaxIngest > c.MaxBody {
		c.MaxIngest = c.MaxBody
	}
	if _, err := egress.New(egress.Config{Allow: c.EgressAllow, Deny: c.EgressDeny}); err != nil {
		return err
	}
	if err := c.Blob.validate(); err != nil {
		return err
	}
	for _, o := range c.MCPAllowedOrigins {
		if u, err := url.Parse(o); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") {
			return fmt.Errorf("mcp-allowed-origins: %q is not an origin (scheme://host[:port])", o)
		}
	}
	if c.BaseURL == "" {
		c.BaseURL = "http://" + c.Addr
	}
	c.BaseURL = strings.TrimRight(c.BaseURL, "/")
	return nil
}

// Logger returns the configured structured logger.
func (c *Config) Logger() *slog.Logger {
	opts := &slog.HandlerOptions{Level: c.LogLevel}
	if c.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(os.Stderr, opts))
	}
	return slog.New(slog.NewTextHandler(os.Stderr, opts))
}
