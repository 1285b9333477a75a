package runner

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/sdods/sdods/impl/server/steplib"
)

// errTimedOut is the cause of a run's context when its timeout passes.
var errTimedOut = errors.New("the run timed out")

// maxStepLogs bounds the log lines kept in a step's result (events carry all of them).
const maxStepLogs = 200

// cleanupTimeout bounds releasing leases and saving locators after a scenario, which happens even
// when the run was cancelled.
const cleanupTimeout = 5 * time.Second

// Run executes the run and returns its result tree. It refuses an invalid tag expression before
// doing anything; everything else (syntax errors, missing datasets, failing steps, cancellation
// through ctx, the run's timeout) is reported in the result and the events.
func (r *Runner) Run(ctx context.Context, run Run, events Events) (*Result, error) {
	filter, err := ParseTagExpr(run.Tags)
	if err != nil {
		return nil, err
	}
	if events == nil {
		events = EventsFunc(func(Event) {})
	}
	em := &emitter{runID: run.ID, sink: events}
	started := time.Now()

	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	if run.Timeout > 0 {
		var cancelT context.CancelFunc
		runCtx, cancelT = context.WithTimeoutCause(runCtx, run.Timeout, errTimedOut)
		defer cancelT()
	}

	planned, problems := plan(run, filter, &r.plans)
	refs := make([]ScenarioRef, len(planned))
	for i, p := range planned {
		refs[i] = p.ref
	}
	em.emit(Event{Type: EventRunStarted, Run: &RunStarted{Scenarios: refs, Problems: problems}})
	for _, p := range problems {
		em.emit(Event{Type: EventLog, Log: &LogLine{Level: "error", Message: fmt.Sprintf("%s:%d: %s", p.Path, p.Line, p.Message)}})
	}

	browser := steplib.NewBrowser(steplib.BrowserOptions{
		ExecPath: r.cfg.Chromium,
		Egress:   r.cfg.Egress,
		Logf: func(format string, args ...any) {
			r.cfg.Logger.Debug(fmt.Sprintf(format, args...), "run", run.ID)
		},
	})
	defer browser.Close()

	procs := &processCache{src: run.Processes, parsed: map[string][]steplib.Step{}}
	results := make([]ScenarioResult, len(planned))
	jobs := make(chan int)
	var wg sync.WaitGroup
	workers := run.Concurrency
	if workers <= 0 {
		workers = r.cfg.Parallel
	}
	workers = max(min(workers, len(planned)), 1)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				if runCtx.Err() != nil {
					results[i] = notRun(planned[i], runCtx)
					continue
				}
				res := r.runScenario(runCtx, run, planned[i], browser, procs, em, 1)
				for res.Status == steplib.StatusFailed && res.Attempts <= run.Retries && runCtx.Err() == nil {
					em.emit(Event{Type: EventLog, ScenarioID: planned[i].ref.ID, Log: &LogLine{Level: "warn",
						Message: fmt.Sprintf("scenario %q failed (%s); retry %d of %d", planned[i].ref.Name, res.Error, res.Attempts, run.Retries)}})
					res = r.runScenario(runCtx, run, planned[i], browser, procs, em, res.Attempts+1)
				}
				results[i] = res
			}
		}()
	}
	for i := range planned {
		jobs <- i
	}
	close(jobs)
	wg.Wait()

	res := &Result{RunID: run.ID, Started: started, Problems: problems}
	res.Modules = buildTree(results)
	for _, m := range res.Modules {
		res.Counts.Total += m.Counts.Total
		res.Counts.Passed += m.Counts.Passed
		res.Counts.Failed += m.Counts.Failed
		res.Counts.Pending += m.Counts.Pending
		res.Counts.Skipped += m.Counts.Skipped
		res.Counts.Flaky += m.Counts.Flaky
	}
	switch {
	case errors.Is(context.Cause(runCtx), errTimedOut):
		res.Status, res.Error = RunTimedOut, fmt.Sprintf("the run exceeded its timeout of %s", run.Timeout)
	case ctx.Err() != nil:
		res.Status, res.Error = RunCancelled, "the run was cancelled"
	case len(problems) > 0:
		res.Status, res.Error = RunErrored, fmt.Sprintf("%d feature problem(s): %s:%d: %s", len(problems), problems[0].Path, problems[0].Line, problems[0].Message)
	case res.Counts.Failed > 0:
		res.Status = RunFailed
	default:
		res.Status = RunPassed
	}
	res.Duration = time.Since(started)
	em.emit(Event{Type: EventRunFinished, RunEnd: &RunResultSummary{Status: res.Status, Error: res.Error, Duration: res.Duration, Counts: res.Counts}})
	return res, nil
}

func notRun(p plannedScenario, ctx context.Context) ScenarioResult {
	why := "not run: the run was cancelled"
	if errors.Is(context.Cause(ctx), errTimedOut) {
		why = "not run: the run timed out"
	}
	sr := ScenarioResult{ScenarioRef: p.ref, Status: steplib.StatusSkipped, Error: why, Attempts: 1}
	for i, st := range p.steps {
		sr.Steps = append(sr.Steps, StepResult{Index: i, Keyword: st.Keyword, Text: st.Text, Line: st.Line, Status: steplib.StatusSkipped})
		sr.Counts.add(steplib.StatusSkipped)
	}
	return sr
}

func (r *Runner) runScenario(ctx context.Context, run Run, p plannedScenario, browser *steplib.Browser, procs *processCache, em *emitter, attempt int) ScenarioResult {
	sr := ScenarioResult{ScenarioRef: p.ref, Started: time.Now(), Attempts: attempt}
	if len(p.steps) > 0 {
		sr.Steps = make([]StepResult, 0, len(p.steps)) // a scenario without steps keeps nil
	}
	sid := p.ref.ID
	ref := p.ref
	em.emit(Event{Type: EventScenarioStarted, ScenarioID: sid, Scenario: &ref})

	env := map[string]string{}
	maps.Copy(env, run.Environment.Variables)
	var secrets []string
	for k, v := range run.Environment.Secrets {
		env[k] = v
		secrets = append(secrets, v)
	}
	vars := steplib.NewVariables(env, p.ref.Example, secrets)

	var (
		leaseMu sync.Mutex
		leased  []Account
	)
	lease := func(ctx context.Context, label string) (map[string]string, error) {
		if run.Leaser == nil {
			return nil, errors.New("this run has no users pool")
		}
		acc, err := run.Leaser.Lease(ctx, LeaseRequest{RunID: run.ID, Project: run.Project, ScenarioID: sid, Label: label})
		if err != nil {
			return nil, err
		}
		leaseMu.Lock()
		leased = append(leased, acc)
		leaseMu.Unlock()
		fields := map[string]string{}
		maps.Copy(fields, acc.Attributes)
		fields["username"], fields["password"] = acc.Username, acc.Password
		return fields, nil
	}
	rec := run.Tracing.recorder()
	sess := steplib.NewSession(steplib.Config{
		Recorder:    rec,
		Project:     run.Project,
		BaseURL:     run.Environment.BaseURL,
		Vars:        vars,
		HTTPClient:  r.cfg.HTTPClient,
		Egress:      r.cfg.Egress,
		Browser:     browser,
		Locators:    r.cfg.Locators,
		WaitTimeout: r.cfg.WaitTimeout,
		HealDelay:   r.cfg.HealDelay,
		StepTimeout: r.cfg.StepTimeout,
		Lease:       lease,
		Process:     procs.steps,
		Baselines:   run.Baselines,

		// Heal rejections reviewers made (docs/agents.md, Reject).
		RejectedHeals: run.RejectedHeals,
	})

	stopped := false
	for _, label := range p.leases {
		fields, err := lease(ctx, label)
		if err != nil {
			sr.Error = vars.Mask(fmt.Sprintf("lease an account for @user%s: %v", labelSuffix(label), err))
			stopped = true
			break
		}
		vars.SetAccount(fields)
		em.emit(Event{Type: EventLog, ScenarioID: sid, Log: &LogLine{Level: "info", Message: fmt.Sprintf("leased the account %q", fields["username"])}})
	}

	for i, st := range p.steps {
		idx := i
		res := StepResult{Index: i, Keyword: st.Keyword, Text: st.Text, Line: st.Line}
		if stopped {
			res.Status = steplib.StatusSkipped
			em.emit(Event{Type: EventStepFinished, ScenarioID: sid, Step: &idx, StepEnd: &res})
			sr.Steps = append(sr.Steps, res)
			sr.Counts.add(res.Status)
			continue
		}
		em.emit(Event{Type: EventStepStarted, ScenarioID: sid, Step: &idx, StepStart: &StepRef{Keyword: st.Keyword, Text: st.Text, Line: st.Line}})
		rep := &stepReporter{em: em, sid: sid, idx: idx, res: &res, vars: vars}
		out := sess.Execute(ctx, st.Step, rep)
		rep.mu.Lock()
		res.DefinitionID, res.Status, res.Error, res.Duration = out.DefinitionID, out.Status, out.Error, out.Duration
		final := res
		rep.done = true
		rep.mu.Unlock()
		em.emit(Event{Type: EventStepFinished, ScenarioID: sid, Step: &idx, StepEnd: &final})
		sr.Steps = append(sr.Steps, final)
		sr.Counts.add(final.Status)
		if final.Status != steplib.StatusPassed {
			stopped = true
			if sr.Error == "" {
				sr.Error = fmt.Sprintf("step %d (%s%s) %s: %s", i+1, st.Keyword, st.Text, final.Status, final.Error)
			}
		}
	}

	switch {
	case sr.Error != "" && sr.Counts.Failed+sr.Counts.Undefined+sr.Counts.Ambiguous > 0:
		sr.Status = steplib.StatusFailed
	case sr.Error != "" && sr.Counts.Pending > 0:
		sr.Status = steplib.StatusPending
	case sr.Error != "":
		sr.Status = steplib.StatusFailed // a lease failed before any step
	case len(p.steps) == 0:
		sr.Status, sr.Error = steplib.StatusSkipped, "the scenario has no steps"
	default:
		sr.Status = steplib.StatusPassed
	}

	cctx, ccancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	keepTrace(em, sid, vars, rec, run.Tracing, attempt, sr.Status)
	if err := sess.Finish(cctx, sr.Status == steplib.StatusPassed); err != nil {
		em.emit(Event{Type: EventLog, ScenarioID: sid, Log: &LogLine{Level: "warn", Message: vars.Mask(err.Error())}})
	}
	for _, acc := range leased {
		if err := run.Leaser.Release(cctx, acc); err != nil {
			em.emit(Event{Type: EventLog, ScenarioID: sid, Log: &LogLine{Level: "warn", Message: vars.Mask(fmt.Sprintf("release the account %q: %v", acc.Username, err))}})
		}
	}
	ccancel()
	sr.Duration = time.Since(sr.Started)
	em.emit(Event{Type: EventScenarioFinished, ScenarioID: sid, ScenarioEnd: &ScenarioSummary{Status: sr.Status, Error: sr.Error, Duration: sr.Duration, Attempt: attempt}})
	return sr
}

func labelSuffix(label string) string {
	if label == "" {
		return ""
	}
	return ":" + label
}

// buildTree groups scenario results by module and feature, sorted by name and path; scenarios keep
// their source order.
func buildTree(results []ScenarioResult) []ModuleResult {
	modIndex := map[string]int{}
	var mods []ModuleResult
	featIndex := map[string][2]int{}
	for _, sr := range results {
		mi, ok := modIndex[sr.Module]
		if !ok {
			mi = len(mods)
			modIndex[sr.Module] = mi
			mods = append(mods, ModuleResult{Name: sr.Module})
		}
		fi, ok := featIndex[sr.FeaturePath]
		if !ok {
			fi = [2]int{mi, len(mods[mi].Features)}
			featIndex[sr.FeaturePath] = fi
			mods[mi].Features = append(mods[mi].Features, FeatureResult{Path: sr.FeaturePath, Name: sr.FeatureName})
		}
		f := &mods[mi].Features[fi[1]]
		f.Scenarios = append(f.Scenarios, sr)
		f.Counts.addScenario(sr)
		f.Duration += sr.Duration
		mods[mi].Counts.addScenario(sr)
		mods[mi].Duration += sr.Duration
	}
	sort.Slice(mods, func(i, j int) bool { return mods[i].Name < mods[j].Name })
	for i := range mods {
		m := &mods[i]
		sort.Slice(m.Features, func(a, b int) bool { return m.Features[a].Path < m.Features[b].Path })
		for j := range m.Features {
			m.Features[j].Status = m.Features[j].Counts.status()
		}
		m.Status = m.Counts.status()
	}
	return mods
}

// emitter numbers events and hands them to the sink one at a time.
type emitter struct {
	runID string
	sink  Events
	mu    sync.Mutex
	seq   int64
}

func (e *emitter) emit(ev Event) int64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.seq++
	ev.Seq, ev.Time, ev.RunID = e.seq, time.Now().UTC(), e.runID
	e.sink.Emit(ev)
	return ev.Seq
}

// stepReporter turns what a step reports into events and into its result.
type stepReporter struct {
	em   *emitter
	sid  string
	idx  int
	vars *steplib.Variables

	mu   sync.Mutex
	res  *StepResult
	done bool // the step ended: late reports (from an abandoned goroutine) are dropped
}

func (r *stepReporter) Log(level, message string) {
	message = r.vars.Mask(message)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.done {
		return
	}
	if len(r.res.Logs) < maxStepLogs {
		r.res.Logs = append(r.res.Logs, LogLine{Level: level, Message: message})
	}
	idx := r.idx
	r.em.emit(Event{Type: EventLog, ScenarioID: r.sid, Step: &idx, Log: &LogLine{Level: level, Message: message}})
}

func (r *stepReporter) Attach(a steplib.Attachment) {
	// An attachment (a response body) may echo a secret the step sent: masked before it is
	// stored. Bytes that are an image or a video by their signature are left whole: replacing
	// bytes would corrupt them, and their pixels cannot be searched anyway.
	a.Name = r.vars.Mask(a.Name)
	if sniffed := http.DetectContentType(a.Data); !strings.HasPrefix(sniffed, "image/") && !strings.HasPrefix(sniffed, "video/") {
		a.Data = r.vars.MaskBytes(a.Data)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.done {
		return
	}
	idx := r.idx
	seq := r.em.emit(Event{Type: EventAttachment, ScenarioID: r.sid, Step: &idx, Attachment: &AttachmentEvent{Name: a.Name, MediaType: a.MediaType, Size: len(a.Data), Data: a.Data}})
	r.res.Attachments = append(r.res.Attachments, AttachmentRef{Seq: seq, Name: a.Name, MediaType: a.MediaType, Size: len(a.Data)})
}

func (r *stepReporter) Heal(h steplib.Heal) {
	h.Selector, h.Healed = r.vars.Mask(h.Selector), r.vars.Mask(h.Healed)
	if h.RunnerUp != nil {
		h.RunnerUp = &steplib.HealCandidate{Selector: r.vars.Mask(h.RunnerUp.Selector), Score: h.RunnerUp.Score}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.done {
		return
	}
	idx := r.idx
	r.em.emit(Event{Type: EventHeal, ScenarioID: r.sid, Step: &idx, Heal: &h})
	r.res.Heals = append(r.res.Heals, h)
}

func (r *stepReporter) VisualCheck(v steplib.VisualCheck) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.done {
		return
	}
	idx := r.idx
	seq := r.em.emit(Event{Type: EventVisualCheck, ScenarioID: r.sid, Step: &idx, VisualCheck: &v})
	ref := VisualCheckRef{Seq: seq, Name: v.Name, Browser: v.Browser, Viewport: v.Viewport, Selector: v.Selector}
	if v.Result != nil {
		ref.Status = v.Result.Status
	}
	r.res.VisualChecks = append(r.res.VisualChecks, ref)
}

// processCache parses each process once per run.
type processCache struct {
	mu     sync.Mutex
	src    map[string]string
	parsed map[string][]steplib.Step
}

func (c *processCache) steps(name string) ([]steplib.Step, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s, ok := c.parsed[name]; ok {
		return s, nil
	}
	src, ok := c.src[name]
	if !ok {
		names := make([]string, 0, len(c.src))
		for n := range c.src {
			names = append(names, n)
		}
		sort.Strings(names)
		return nil, fmt.Errorf("the project has no process %q (processes: %v)", name, names)
	}
	s, err := processSteps(name, src)
	if err != nil {
		return nil, err
	}
	c.parsed[name] = s
	return s, nil
}
