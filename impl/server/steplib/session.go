package steplib

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sdods/sdods/impl/server/egress"
)

// Status is the outcome of one step.
type Status string

// The step statuses, as Cucumber names them.
const (
	StatusPassed    Status = "passed"
	StatusFailed    Status = "failed"
	StatusSkipped   Status = "skipped"
	StatusPending   Status = "pending"
	StatusUndefined Status = "undefined"
	StatusAmbiguous Status = "ambiguous"
)

// ErrPending marks a step as pending (not implemented yet) instead of failed.
var ErrPending = errors.New("pending")

// Step is a step to execute: its text with the keyword apart, and its docstring or data table.
type Step struct {
	Keyword   string
	Text      string
	DocString *DocString
	DataTable [][]string
}

// DocString is a step's docstring.
type DocString struct {
	MediaType string
	Content   string
}

// Outcome is what executing a step gave.
type Outcome struct {
	Status Status
	// Error explains a failed, pending, undefined or ambiguous step; secrets are masked.
	Error string
	// DefinitionID is the matched definition's ID, when exactly one matched.
	DefinitionID string
	Duration     time.Duration
}

// Attachment is a file produced by a step (a screenshot, a response body).
type Attachment struct {
	Name      string
	MediaType string
	Data      []byte
}

// Heal records that a selector no longer matched and an alternative was used instead.
type Heal struct {
	// Selector is the selector the feature names; Healed the one that matched instead.
	Selector string
	Healed   string
	// Strategy is the strongest recorded alternative the new element satisfied: test-id, id,
	// role, text, label or attribute.
	Strategy string
	// Score is the weighted share of the recorded alternatives the new element satisfied, 0..1.
	Score float64
	// RunnerUp is the best other element (nil when none scored), and Ambiguous tells that its
	// score is within HealAmbiguityMargin of Score.
	RunnerUp  *HealCandidate
	Ambiguous bool
}

// HealCandidate is an element a heal scored: a unique selector for it and its score.
type HealCandidate struct {
	Selector string
	Score    float64
}

// VisualCheck records a screenshot to compare with a named baseline; the comparison happens
// elsewhere (per project, name, browser and viewport).
type VisualCheck struct {
	Name     string
	Browser  string
	Viewport string // "1280x800"
	// Selector is set when one element was captured rather than the viewport.
	Selector  string
	MediaType string // image/png
	Image     []byte
	// Result is the comparison with the baseline, when a BaselineChecker made one.
	Result *VisualResult
}

// BaselineChecker compares a visual capture with the project's current baseline of its name,
// browser and viewport. The visual-check steps call it synchronously, so that a mismatch fails
// the step itself.
type BaselineChecker interface {
	// CheckBaseline returns the comparison; an error (the baseline could not be read) fails the step.
	CheckBaseline(ctx context.Context, v VisualCheck) (VisualResult, error)
}

// The visual check outcomes.
const (
	VisualPassed  = "passed"
	VisualFailed  = "failed"
	VisualPending = "pending" // no baseline existed: the capture became it, pending review
)

// VisualResult is the outcome of comparing a capture with its baseline.
type VisualResult struct {
	// Status is VisualPassed, VisualFailed or VisualPending.
	Status string
	// MismatchPixels and MismatchRatio are the pixel diff's figures at Threshold (YIQ, 0..1).
	MismatchPixels int
	MismatchRatio  float64
	Threshold      float64
	// SizeMismatch tells that the capture and the baseline differ in size.
	SizeMismatch bool
	// Expected is the baseline image and Diff the diff image (PNG), both set when the check failed.
	Expected []byte
	Diff     []byte
}

// Reporter receives what a step produces besides its outcome. Calls come from the goroutine
// executing the step.
type Reporter interface {
	// Log records a line; level is "debug", "info", "warn" or "error".
	Log(level, message string)
	Attach(Attachment)
	Heal(Heal)
	VisualCheck(VisualCheck)
}

// Config is what a Session needs from its scenario and run.
type Config struct {
	// Project scopes the self-healing locators.
	Project string
	// BaseURL resolves relative request paths and page addresses.
	BaseURL string
	// Vars resolves ${name}; nil means no variables.
	Vars *Variables
	// HTTPClient sends requests; its Jar is replaced by one per session. Default: a client that
	// dials through Egress.
	HTTPClient *http.Client
	// Egress decides which addresses HTTP steps may reach when HTTPClient is nil; nil: the
	// built-in denies alone (no loopback, link-local or cloud metadata).
	Egress *egress.Policy
	// Browser provides the page for browser steps; nil makes them fail with a clear message.
	Browser *Browser
	// Locators stores self-healing alternatives; nil disables healing.
	Locators LocatorStore
	// RejectedHeals maps a selector to the replacements reviewers rejected for it: healing
	// never picks an element one of them matches.
	RejectedHeals map[string][]RejectedHeal
	// WaitTimeout bounds waiting for an element or a text (default 10s).
	WaitTimeout time.Duration
	// HealDelay is how long a selector must have matched nothing before healing is tried
	// (default 1s), so that a page still loading is not healed against.
	HealDelay time.Duration
	// StepTimeout bounds one step (default 5 minutes).
	StepTimeout time.Duration
	// Lease leases an account of the users pool for the scenario (label may be empty) and
	// returns its fields (username, password, ...); nil makes the lease steps fail.
	Lease func(ctx context.Context, label string) (map[string]string, error)
	// Process returns the steps of a named process of the project; nil makes process.run fail.
	Process func(name string) ([]Step, error)
	// Baselines compares visual checks with the project's baselines; nil records the captures
	// without comparing them.
	Baselines BaselineChecker
	// Recorder records the scenario's trace (trace.go); nil records nothing.
	Recorder *Recorder
}

// Session executes the steps of one scenario, keeping its variables, HTTP state and browser page.
// It is not safe for concurrent use.
type Session struct {
	cfg    Config
	vars   *Variables
	client *http.Client
	http   httpState
	page   *page
	depth  int // process nesting
	// stepTimedOut is the cause of a step's context when StepTimeout passes.
	stepTimedOut error

	mu           sync.Mutex
	fingerprints map[string][]Alternative // selector → alternatives seen this scenario (made at the first)
	healed       map[string]string        // selector → healed selector (made at the first)
}

// NewSession returns a session for one scenario.
func NewSession(cfg Config) *Session {
	if cfg.WaitTimeout <= 0 {
		cfg.WaitTimeout = 10 * time.Second
	}
	if cfg.HealDelay <= 0 {
		cfg.HealDelay = time.Second
	}
	if cfg.StepTimeout <= 0 {
		cfg.StepTimeout = 5 * time.Minute
	}
	if cfg.Vars == nil {
		cfg.Vars = NewVariables(nil, nil, nil)
	}
	base := cfg.HTTPClient
	if base == nil {
		pol := cfg.Egress
		if pol == nil {
			pol, _ = egress.New(egress.Config{})
		}
		base = &http.Client{Transport: pol.Transport()}
	}
	client := *base
	client.Jar = &sessionJar{}
	return &Session{
		cfg:          cfg,
		vars:         cfg.Vars,
		client:       &client,
		stepTimedOut: stepTimeoutError(cfg.StepTimeout),
		http:         httpState{headers: http.Header{}},
	}
}

// sessionJar is a session's cookie jar, made when the first response sets a cookie: until then
// a request has no cookie to send, and asking an empty cookiejar.Jar for them still costs it the
// request's host parsed and its key built, at every request of every scenario.
type sessionJar struct {
	mu  sync.Mutex
	jar *cookiejar.Jar
}

func (j *sessionJar) SetCookies(u *url.URL, cookies []*http.Cookie) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.jar == nil {
		j.jar, _ = cookiejar.New(nil)
	}
	j.jar.SetCookies(u, cookies)
}

func (j *sessionJar) Cookies(u *url.URL) []*http.Cookie {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.jar == nil {
		return nil
	}
	return j.jar.Cookies(u)
}

// Vars returns the session's variables.
func (s *Session) Vars() *Variables { return s.vars }

// Finish ends the scenario: when it passed, the locator alternatives seen during it are saved for
// later heals; the browser page is closed either way.
func (s *Session) Finish(ctx context.Context, passed bool) error {
	var errs []error
	if passed && s.cfg.Locators != nil {
		s.mu.Lock()
		fps := s.fingerprints
		s.fingerprints = nil
		s.mu.Unlock()
		for sel, alts := range fps {
			if err := s.cfg.Locators.Save(ctx, s.cfg.Project, sel, alts); err != nil {
				errs = append(errs, fmt.Errorf("save locator %q: %w", sel, err))
			}
		}
	}
	if s.page != nil {
		s.page.close()
		s.page = nil
	}
	return errors.Join(errs...)
}

// call is one invocation of a step implementation.
type call struct {
	step  Step
	def   Definition
	args  []Arg
	doc   *DocString
	table [][]string
	rep   Reporter
}

func (c *call) str(i int) string {
	if s, ok := c.args[i].Value.(string); ok {
		return s
	}
	return c.args[i].Raw
}

func (c *call) int(i int) (int64, error) {
	if n, ok := c.args[i].Value.(int64); ok {
		return n, nil
	}
	return 0, fmt.Errorf("%s is out of range", c.args[i].Raw)
}

func (c *call) float(i int) (float64, error) {
	if n, ok := c.args[i].Value.(float64); ok {
		return n, nil
	}
	return 0, fmt.Errorf("%s is not a number", c.args[i].Raw)
}

type stepFunc func(ctx context.Context, s *Session, c *call) error

var implsOnce = sync.OnceValue(implementations)

// Implemented reports whether the built-in definition has an implementation.
func Implemented(id string) bool { return implsOnce()[id] != nil }

// Execute runs one step: it matches the text against the catalog, interpolates the arguments and
// runs the implementation. A panic becomes a failed step; a cancelled ctx ends the step within a
// fraction of a second even when the implementation does not return.
func (s *Session) Execute(ctx context.Context, step Step, rep Reporter) (out Outcome) {
	start := time.Now()
	defer func() { out.Duration = time.Since(start); out.Error = s.vars.Mask(out.Error) }()
	if rep == nil {
		rep = nopReporter{}
	}
	var tr *TraceStep
	if s.cfg.Recorder != nil && s.depth == 0 {
		tr = s.cfg.Recorder.begin(step, "", "other")
		defer func() {
			o := out
			o.Duration, o.Error = time.Since(start), s.vars.Mask(o.Error)
			s.cfg.Recorder.end(tr, o)
		}()
	}
	matches := matchAll(step.Text)
	switch len(matches) {
	case 0:
		return Outcome{Status: StatusUndefined, Error: fmt.Sprintf("undefined step: no step definition matches %q (see the step catalog, docs/steps.md)", step.Text)}
	case 1:
	default:
		var names []string
		for _, m := range matches {
			names = append(names, fmt.Sprintf("%s (%q)", m.def.ID, m.def.Pattern))
		}
		return Outcome{Status: StatusAmbiguous, Error: fmt.Sprintf("ambiguous step: %q matches %d definitions: %s", step.Text, len(matches), strings.Join(names, ", "))}
	}
	m := matches[0]
	out.DefinitionID = m.def.ID
	fail := func(err error) Outcome {
		o := Outcome{Status: StatusFailed, DefinitionID: m.def.ID, Error: err.Error()}
		if errors.Is(err, ErrPending) {
			o.Status = StatusPending
		}
		return o
	}
	impl := implsOnce()[m.def.ID]
	if impl == nil {
		return fail(fmt.Errorf("step %s is not implemented: %w", m.def.ID, ErrPending))
	}
	c, err := s.prepare(step, m)
	if err != nil {
		return fail(err)
	}
	c.rep = rep
	if tr != nil {
		// What recording takes is left out of the step's duration.
		tr.Definition, tr.Kind = m.def.ID, stepKind(m.def.ID)
		t0 := time.Now()
		s.traceBefore(ctx, tr, c)
		start = start.Add(time.Since(t0))
		defer func() {
			t1 := time.Now()
			s.traceAfter(ctx, tr, c)
			start = start.Add(time.Since(t1))
		}()
	}
	if err := s.run(ctx, impl, c); err != nil {
		return fail(err)
	}
	return Outcome{Status: StatusPassed, DefinitionID: m.def.ID}
}

// prepare interpolates the arguments and checks the docstring or table the definition expects.
func (s *Session) prepare(step Step, m match) (*call, error) {
	c := &call{step: step, def: m.def, args: m.args}
	for i, a := range c.args {
		if str, ok := a.Value.(string); ok && (a.Type == "string" || a.Type == "word" || a.Type == "") {
			v, err := s.vars.Interpolate(str)
			if err != nil {
				return nil, fmt.Errorf("parameter %d: %w", i+1, err)
			}
			c.args[i].Value = v
		}
	}
	wantsDoc, wantsTable := false, false
	for _, p := range m.def.Parameters {
		wantsDoc = wantsDoc || p.Type == "docstring"
		wantsTable = wantsTable || p.Type == "datatable"
	}
	switch {
	case step.DocString != nil && !wantsDoc:
		return nil, fmt.Errorf("step %s takes no docstring", m.def.ID)
	case step.DataTable != nil && !wantsTable:
		return nil, fmt.Errorf("step %s takes no data table", m.def.ID)
	case wantsTable && step.DataTable == nil:
		return nil, fmt.Errorf("step %s needs a data table", m.def.ID)
	}
	if step.DocString != nil {
		content, err := s.vars.Interpolate(step.DocString.Content)
		if err != nil {
			return nil, fmt.Errorf("docstring: %w", err)
		}
		c.doc = &DocString{MediaType: step.DocString.MediaType, Content: content}
	}
	for _, row := range step.DataTable {
		out := make([]string, len(row))
		for j, cell := range row {
			v, err := s.vars.Interpolate(cell)
			if err != nil {
				return nil, fmt.Errorf("data table: %w", err)
			}
			out[j] = v
		}
		c.table = append(c.table, out)
	}
	return c, nil
}

// run executes the implementation on its own goroutine so that a cancelled context or the step
// timeout ends the step even when the implementation is stuck.
func (s *Session) run(ctx context.Context, impl stepFunc, c *call) error {
	ctx, cancel := context.WithTimeoutCause(ctx, s.cfg.StepTimeout, s.stepTimedOut)
	defer cancel()
	done := make(chan error, 1)
	goStep(func() {
		defer func() {
			if r := recover(); r != nil {
				done <- fmt.Errorf("step %s panicked: %v\n%s", c.def.ID, r, firstLines(string(debug.Stack()), 12))
			}
		}()
		done <- impl(ctx, s, c)
	})
	select {
	case err := <-done:
		if err != nil && ctx.Err() != nil {
			return stepContextError(ctx)
		}
		return err
	case <-ctx.Done():
		// Give the implementation a moment to notice and return its own message.
		select {
		case <-done:
		case <-time.After(200 * time.Millisecond):
		}
		return stepContextError(ctx)
	}
}

// stepTimeoutError is the cause of a step's context when the step timeout passes.
type stepTimeoutError time.Duration

func (e stepTimeoutError) Error() string { return "step timed out after " + time.Duration(e).String() }

// maxIdleStepWorkers bounds the goroutines that wait for a step to run (stepWorker).
const maxIdleStepWorkers = 16

// idleStepWorkers are goroutines that ran a step and wait for another, each behind its channel.
var idleStepWorkers = make(chan chan func(), maxIdleStepWorkers)

// stepWorkersStarted counts the step workers started (for the tests).
var stepWorkersStarted atomic.Int64

// goStep runs f on a goroutine of its own: an idle step worker's, or a new one. A step's goroutine
// grows its stack through the HTTP client and the JSON decoder; a new goroutine for each step
// copied its stack as it grew, at every step of every scenario, while a worker keeps what it grew.
// A step that never returns keeps its worker: it is not idle, and the next step takes another.
func goStep(f func()) {
	select {
	case w := <-idleStepWorkers:
		w <- f
	default:
		stepWorkersStarted.Add(1)
		go stepWorker(f)
	}
}

func stepWorker(f func()) {
	work := make(chan func())
	for {
		f()
		f = nil // what the step held is not kept while the worker waits
		select {
		case idleStepWorkers <- work:
		default:
			return // enough are idle
		}
		f = <-work
	}
}

func stepContextError(ctx context.Context) error {
	cause := context.Cause(ctx)
	if errors.Is(cause, context.Canceled) {
		return errors.New("interrupted: the run was cancelled")
	}
	if errors.Is(cause, context.DeadlineExceeded) {
		return errors.New("interrupted: the run timed out")
	}
	return cause
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, "\n")
}

type nopReporter struct{}

func (nopReporter) Log(string, string)      {}
func (nopReporter) Attach(Attachment)       {}
func (nopReporter) Heal(Heal)               {}
func (nopReporter) VisualCheck(VisualCheck) {}
