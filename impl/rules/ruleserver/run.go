package ruleserver

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime/debug"
	"strconv"
	"syscall"
	"time"

	"github.com/sdods/sdods/engine"
)

// Environment variables read by Config.FromEnv.
const (
	EnvToken        = "RULE_SERVER_TOKEN"
	EnvAllowOpen    = "RULE_SERVER_ALLOW_OPEN"
	EnvAddr         = "RULE_SERVER_ADDR"
	EnvRulesDir     = "RULE_SERVER_RULES_DIR"
	EnvMaxBody      = "RULE_SERVER_MAX_BODY"
	EnvPoll         = "RULE_SERVER_POLL_INTERVAL"
	EnvDrainDelay   = "RULE_SERVER_DRAIN_DELAY"
	EnvDrainTimeout = "RULE_SERVER_DRAIN_TIMEOUT"
	EnvLogLevel     = "RULE_SERVER_LOG_LEVEL"
)

// DefaultGCPercent is the rule server's collector target when GOGC is not set: the heap may grow
// to five times what is live after a collection, instead of Go's two. Most of what is live is
// the compiled rules, which stay for the life of the process; with Go's default the collector
// marks them again every few thousand requests, which cost about a fifth of the CPU time per
// request under wrk (docs/benchmarks.md, "Rule server"). Memory stays bounded by
// GOMEMLIMIT, which the Kubernetes manifest sets from the container's limit.
const DefaultGCPercent = 400

// LevelFatal is the level of the one line logged before the server exits with status 1.
const LevelFatal = slog.Level(12)

// ErrNoToken refuses to start without RULE_SERVER_TOKEN and without RULE_SERVER_ALLOW_OPEN=1.
var ErrNoToken = errors.New(EnvToken + " is not set: refusing to start without a token (set " + EnvAllowOpen +
	"=1 to serve without one, on private networks only)")

// Config is everything the rule server needs to run.
type Config struct {
	Addr         string
	RulesDir     string
	Token        string
	AllowOpen    bool
	MaxBody      int64
	PollInterval time.Duration // 0 turns polling off (SIGHUP still reloads)
	DrainDelay   time.Duration // readiness is off this long before the listener closes
	DrainTimeout time.Duration // in-flight requests get this long to finish
	LogLevel     string

	// GCPercent, when above 0, is set as the collector's target (runtime/debug.SetGCPercent)
	// when Run starts. FromEnv makes it DefaultGCPercent unless GOGC is set.
	GCPercent int

	// Operators are the custom operators the host registers (embedding only).
	Operators map[string]engine.Operator
	// Listener, when set, is served instead of listening on Addr (tests).
	Listener net.Listener
}

// FromEnv fills c from the environment; flags parsed later override it.
func (c *Config) FromEnv(getenv func(string) string) error {
	c.Addr, c.RulesDir, c.LogLevel = ":8080", "rules", "info"
	c.MaxBody, c.PollInterval, c.DrainDelay, c.DrainTimeout = DefaultMaxBody, 2*time.Second, 0, 20*time.Second
	c.Token = getenv(EnvToken)
	if getenv("GOGC") == "" {
		c.GCPercent = DefaultGCPercent
	}
	switch v := getenv(EnvAllowOpen); v {
	case "", "0":
	case "1":
		c.AllowOpen = true
	default:
		return fmt.Errorf("%s=%q: only 1 opens the server", EnvAllowOpen, v)
	}
	if v := getenv(EnvAddr); v != "" {
		c.Addr = v
	}
	if v := getenv(EnvRulesDir); v != "" {
		c.RulesDir = v
	}
	if v := getenv(EnvLogLevel); v != "" {
		c.LogLevel = v
	}
	if v := getenv(EnvMaxBody); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 {
			return fmt.Errorf("%s=%q: want a positive number of bytes", EnvMaxBody, v)
		}
		c.MaxBody = n
	}
	for _, d := range []struct {
		env string
		dst *time.Duration
	}{{EnvPoll, &c.PollInterval}, {EnvDrainDelay, &c.DrainDelay}, {EnvDrainTimeout, &c.DrainTimeout}} {
		if v := getenv(d.env); v != "" {
			x, err := time.ParseDuration(v)
			if err != nil || x < 0 {
				return fmt.Errorf("%s=%q: want a duration such as 2s", d.env, v)
			}
			*d.dst = x
		}
	}
	return nil
}

// Flags registers the command-line flags; their defaults are the values already in c. The token
// has no flag: command lines are visible to every user of the machine.
func (c *Config) Flags(fs *flag.FlagSet) {
	fs.StringVar(&c.Addr, "addr", c.Addr, "listen address ("+EnvAddr+")")
	fs.StringVar(&c.RulesDir, "rules", c.RulesDir, "rules directory: *.yaml, *.yml, *.json sources and *.bundle.json bundles ("+EnvRulesDir+")")
	fs.Int64Var(&c.MaxBody, "max-body", c.MaxBody, "request body limit in bytes ("+EnvMaxBody+")")
	fs.DurationVar(&c.PollInterval, "poll", c.PollInterval, "how often the rules directory is checked for changes; 0 turns it off ("+EnvPoll+")")
	fs.DurationVar(&c.DrainDelay, "drain-delay", c.DrainDelay, "on SIGTERM, how long readiness is off before the listener closes ("+EnvDrainDelay+")")
	fs.DurationVar(&c.DrainTimeout, "drain-timeout", c.DrainTimeout, "on SIGTERM, how long in-flight requests may take to finish ("+EnvDrainTimeout+")")
	fs.StringVar(&c.LogLevel, "log-level", c.LogLevel, "debug (one line per request), info, warn or error ("+EnvLogLevel+")")
}

// NewLogger returns a JSON logger at level (debug, info, warn, error) whose LevelFatal records
// say "FATAL".
func NewLogger(w io.Writer, level string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("log level %q: want debug, info, warn or error", level)
	}
	h := slog.NewJSONHandler(w, &slog.HandlerOptions{Level: l, ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.LevelKey && a.Value.Any() == LevelFatal {
			a.Value = slog.StringValue("FATAL")
		}
		return a
	}})
	return slog.New(h), nil
}

// Run checks the token rule before anything else, loads the rules, serves until ctx ends or
// SIGTERM/SIGINT arrives, and drains: readiness off, DrainDelay, then in-flight requests get
// DrainTimeout to finish. SIGHUP and changed files reload the rules. It returns ErrNoToken
// without a token and without AllowOpen, and an error when the drain timed out.
func Run(ctx context.Context, c Config, log *slog.Logger) error {
	if c.Token == "" && !c.AllowOpen {
		return ErrNoToken
	}
	if c.Token == "" {
		log.Warn("serving every endpoint WITHOUT a token (" + EnvAllowOpen + "=1): for private networks only")
	} else if c.AllowOpen {
		log.Info(EnvAllowOpen + " is ignored: " + EnvToken + " is set")
	}
	if c.GCPercent > 0 {
		debug.SetGCPercent(c.GCPercent)
	}
	s := NewServer(c.RulesDir, c.Operators, log)
	h, err := s.Handler(HandlerOptions{Token: c.Token, MaxBody: c.MaxBody})
	if err != nil {
		return err
	}
	ln := c.Listener
	if ln == nil {
		if ln, err = net.Listen("tcp", c.Addr); err != nil {
			return err
		}
	}
	conns := newConnTracker()
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 90 * time.Second, MaxHeaderBytes: 64 << 10,
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelDebug), ConnState: conns.hook}

	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGHUP, syscall.SIGTERM, os.Interrupt)
	defer signal.Stop(sigs)

	log.Info("listening", "addr", ln.Addr().String(), "rules", c.RulesDir, "max_body", c.MaxBody, "poll", c.PollInterval.String())
	served := make(chan error, 1)
	probe := &acceptProbe{}
	go func() { served <- srv.Serve(errorListener{Listener: ln, probe: probe}) }()

	s.Reload(ctx)
	wctx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	if c.PollInterval > 0 {
		go s.Watch(wctx, c.PollInterval)
	}
	for {
		select {
		case err := <-served:
			return fmt.Errorf("serve: %w", err)
		case sig := <-sigs:
			if sig == syscall.SIGHUP {
				log.Info("SIGHUP: reloading")
				s.Reload(ctx)
				continue
			}
			log.Info("shutting down", "signal", sig.String())
		case <-ctx.Done():
			log.Info("shutting down", "reason", context.Cause(ctx).Error())
		}
		break
	}
	stopWatch()
	return drain(s, srv, ln, probe, conns, c, log)
}

// drain stops the server without failing a request of a client that retries nothing:
//
//  1. readiness turns off and every answer from now on carries Connection: close (closeOnDrain),
//     those of requests already running included; the server keeps accepting and serving for
//     DrainDelay, while load balancers take it out of rotation;
//  2. the listener closes, once every connection the kernel had queued on it is accepted
//     (acceptQueued): closing a listening socket resets the connections still in its queue;
//  3. each connection closes after it has answered (net/http closes it after an answer with
//     Connection: close); one that sends nothing for idleGrace is closed as idle. http.Server's
//     Shutdown is not used: it closes idle keep-alive connections at once, and a request the
//     client has just sent on one, not yet read, is then lost.
//
// Requests still running DrainTimeout after the listener closed are cut off, and drain returns
// an error.
func drain(s *Server, srv *http.Server, ln net.Listener, probe *acceptProbe, conns *connTracker, c Config, log *slog.Logger) error {
	s.Drain()
	if c.DrainDelay > 0 {
		log.Info("readiness off; serving with Connection: close before closing the listener", "drain_delay", c.DrainDelay.String())
		time.Sleep(c.DrainDelay)
	}
	acceptQueued(ln, probe, c.DrainTimeout/2)
	_ = ln.Close()
	start := time.Now()
	grace := idleGrace
	if grace > c.DrainTimeout/2 {
		grace = c.DrainTimeout / 2
	}
	seen := map[*errorConn]idleSeen{}
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for now := start; conns.sweep(seen, now, grace) > 0; now = <-tick.C {
		if now.Sub(start) >= c.DrainTimeout {
			_ = srv.Close()
			return fmt.Errorf("drain: in-flight requests did not finish within %s", c.DrainTimeout)
		}
	}
	_ = srv.Close()
	log.Info("drained; exiting", "took_ms", time.Since(start).Milliseconds())
	return nil
}
