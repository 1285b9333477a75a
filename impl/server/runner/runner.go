// Package runner executes Gherkin features with the built-in step library: it parses the sources,
// selects scenarios by path and tag expression, feeds Scenario Outlines from datasets, leases
// accounts of the users pool, runs each scenario in its own steplib.Session, and reports what
// happens through an Events sink while building the result tree (module → feature → scenario).
package runner

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/sdods/sdods/impl/server/egress"
	"github.com/sdods/sdods/impl/server/steplib"
)

// Status is the status of a step or a scenario: passed, failed, skipped, pending, undefined,
// ambiguous (steps only).
type Status = steplib.Status

// RunStatus is how a run ended.
type RunStatus string

// The run outcomes.
const (
	RunPassed    RunStatus = "passed"
	RunFailed    RunStatus = "failed"
	RunErrored   RunStatus = "errored"
	RunCancelled RunStatus = "cancelled"
	RunTimedOut  RunStatus = "timed_out"
)

// Config holds what every run of a runner shares.
type Config struct {
	// Chromium is the browser binary: a path or a name looked up in PATH (default "chromium").
	Chromium string
	// Locators keeps self-healing alternatives across runs; default: in memory.
	Locators steplib.LocatorStore
	// HTTPClient sends the HTTP steps' requests; default: one client for all runs, dialling
	// through Egress.
	HTTPClient *http.Client
	// Egress decides which addresses HTTP and browser steps may reach; nil: the built-in denies
	// alone (no loopback, link-local or cloud metadata).
	Egress *egress.Policy
	// Logger receives the runner's own diagnostics; default: discard.
	Logger *slog.Logger
	// Parallel is how many scenarios of a run execute at once when the run does not say
	// (Run.Concurrency; default 1).
	Parallel int
	// WaitTimeout bounds browser waits for an element or text (default 10s).
	WaitTimeout time.Duration
	// HealDelay is how long a selector must match nothing before self-healing (default 1s).
	HealDelay time.Duration
	// StepTimeout bounds one step (default 5 minutes).
	StepTimeout time.Duration
}

// Runner executes runs.
type Runner struct {
	cfg   Config
	plans planCache
}

// New returns a runner.
func New(cfg Config) *Runner {
	if cfg.Locators == nil {
		cfg.Locators = steplib.NewMemoryLocatorStore()
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Parallel <= 0 {
		cfg.Parallel = 1
	}
	if cfg.HTTPClient == nil {
		// One transport for every scenario of every run: its connections are kept alive and
		// reused (a session takes a copy of the client with a cookie jar of its own, so no
		// scenario sees another's cookies). A transport per session dialled a new connection
		// for each scenario and left it idle, with its two goroutines, for a minute and a half.
		pol := cfg.Egress
		if pol == nil {
			pol, _ = egress.New(egress.Config{})
		}
		cfg.HTTPClient = &http.Client{Transport: pol.Transport()}
	}
	return &Runner{cfg: cfg}
}

// Run is one execution request.
type Run struct {
	// ID identifies the run in events and leases.
	ID string
	// Project scopes self-healing locators and leases.
	Project string
	// Features maps a feature path ("checkout/pay.feature"; its folder is the module) to its Gherkin.
	Features map[string]string
	// Paths restricts the run to these feature paths or folders ("checkout" or "checkout/");
	// empty runs every feature.
	Paths []string
	// Tags is a tag expression selecting scenarios ("@smoke and not @wip"); empty selects all.
	Tags string
	// Environment gives the base URL and the variables.
	Environment Environment
	// Datasets feed Examples tagged @dataset:<name>.
	Datasets map[string]Dataset
	// Processes maps a process name to its Gherkin (a feature whose first scenario holds the
	// steps, or bare step lines), run by the step `I run the process "name"`.
	Processes map[string]string
	// Leaser leases users-pool accounts; nil makes lease steps and @user tags fail.
	Leaser Leaser
	// Baselines compares visual checks with the project's baselines (the step fails on a
	// mismatch); nil records the captures without comparing.
	Baselines steplib.BaselineChecker
	// Concurrency is how many of the run's scenarios execute at once, each in its own session
	// (variables, cookies, browser context, leased accounts); 0 takes Config.Parallel. Events
	// keep one sequence for the run, and each scenario's events stay in order.
	Concurrency int
	// Timeout bounds the whole run; zero means none.
	Timeout time.Duration
	// Retries runs a failed scenario again, up to this many times; the last attempt is its
	// result, and a scenario that passes on a retry counts as flaky.
	Retries int
	// Tracing is what the runner records for the trace viewer: TracingOff (or the zero value),
	// TracingOnFailure or TracingAlways (trace.go).
	Tracing Tracing
	// Quarantined holds the identities (Identity) of the project's quarantined scenarios: they
	// still run, tagged QuarantinedTag, so that Tags can leave them out.
	Quarantined map[string]bool
	// RejectedHeals maps a selector to the replacements reviewers rejected for it (rejected heal
	// proposals, docs/agents.md): self-healing never picks an element one of them matches.
	RejectedHeals map[string][]steplib.RejectedHeal
}

// Environment is the environment a run executes in.
type Environment struct {
	Name    string
	BaseURL string
	// Variables are available as ${name}.
	Variables map[string]string
	// Secrets are available as ${name} too, and their values are masked as *** in logs and errors.
	Secrets map[string]string
}

// Dataset is a table of rows feeding Scenario Outline examples.
type Dataset struct {
	Columns []string
	Rows    [][]string
}

// Account is a leased users-pool account.
type Account struct {
	// LeaseID identifies the lease for Release.
	LeaseID  string
	Username string
	Password string
	// Attributes are further fields, available as ${user.<name>}.
	Attributes map[string]string
}

// LeaseRequest says who wants an account.
type LeaseRequest struct {
	RunID, Project, ScenarioID string
	// Label restricts the pool to accounts carrying it; empty takes any.
	Label string
}

// Leaser hands out users-pool accounts exclusively to one scenario at a time.
type Leaser interface {
	// Lease returns an account; it may wait for one until ctx ends.
	Lease(ctx context.Context, req LeaseRequest) (Account, error)
	// Release returns the account to the pool; the runner calls it when the scenario ends.
	Release(ctx context.Context, acc Account) error
}
