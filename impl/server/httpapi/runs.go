package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/sdods/sdods/gen/serverapi"
	"github.com/sdods/sdods/impl/server/apierr"
	"github.com/sdods/sdods/impl/server/authz"
	"github.com/sdods/sdods/impl/server/projects"
	"github.com/sdods/sdods/impl/server/results"
	"github.com/sdods/sdods/impl/server/results/resultsapi"
	"github.com/sdods/sdods/impl/server/runs"
	"github.com/sdods/sdods/impl/server/store"
)

// CreateRun queues a run of a project's features; a worker of any sdods process executes it.
func (s *Server) CreateRun(ctx context.Context, req serverapi.CreateRunRequestObject) (serverapi.CreateRunResponseObject, error) {
	b := req.Body
	if b.Source != nil && *b.Source == serverapi.RunSourceIngest {
		return s.createIngestRun(ctx, *b)
	}
	p, _, err := s.projectBySlug(ctx, b.Project)
	if err != nil {
		return nil, err
	}
	params := runs.CreateParams{ProjectID: p.ID, Trigger: triggerOf(ctx), Label: b.Label, Tags: b.Tags, Environment: b.Environment,
		Branch: b.Branch, Commit: b.Commit, CreatedBy: callerID(ctx)}
	if b.Paths != nil {
		params.Paths = *b.Paths
	}
	if b.Variables != nil {
		params.Variables = *b.Variables
	}
	if b.Datasets != nil {
		params.Datasets = *b.Datasets
	}
	settings := projects.DecodeSettings(p.Settings)
	params.TimeoutSeconds, params.Retries = settings.RunTimeoutSeconds, settings.Retries
	if b.TimeoutSeconds != nil {
		params.TimeoutSeconds = *b.TimeoutSeconds
	}
	if b.Retries != nil {
		params.Retries = *b.Retries
	}
	if params.Environment == nil && settings.DefaultEnvironment != "" {
		params.Environment = &settings.DefaultEnvironment
	}
	if err := s.Runs.CheckInputs(ctx, params); err != nil {
		return nil, err
	}
	r, err := s.Runs.Queue(ctx, params, p.Slug)
	if err != nil {
		return nil, err
	}
	url := "/api/runs/" + r.ID.String()
	return serverapi.CreateRun202JSONResponse{Body: serverapi.RunAccepted{Id: r.ID, Status: serverapi.RunStatus(r.Status), Project: p.Slug,
		CreatedAt: r.CreatedAt, Url: url}, Headers: serverapi.CreateRun202ResponseHeaders{Location: &url}}, nil
}

func triggerOf(ctx context.Context) string {
	if p := PrincipalFrom(ctx); p != nil && p.Method == authz.MethodToken {
		return "api"
	}
	return "ui"
}

func callerID(ctx context.Context) uuid.NullUUID {
	if p := PrincipalFrom(ctx); p != nil {
		if id, err := uuid.Parse(p.UserID); err == nil {
			return uuid.NullUUID{UUID: id, Valid: true}
		}
	}
	return uuid.NullUUID{}
}

// runByID loads a run the caller may act on with the current operation.
func (s *Server) runByID(ctx context.Context, id uuid.UUID) (runs.ProjectRun, error) {
	r, err := s.Runs.Get(ctx, id)
	if err != nil {
		return r, runNotFoundOr(err, id)
	}
	return r, s.authorizeRun(ctx, id, r.WorkspaceID)
}

func runNotFoundOr(err error, id uuid.UUID) error {
	if store.IsNotFound(err) {
		return runNotFound(id)
	}
	return err
}

func runNotFound(id uuid.UUID) error {
	return apierr.New(apierr.NotFound, "run "+id.String()+" not found", "list runs with GET /api/runs")
}

// authorizeRun checks the caller's role in the run's workspace for the current operation; a run
// of a workspace where the caller has no role does not exist for them.
func (s *Server) authorizeRun(ctx context.Context, id, workspaceID uuid.UUID) error {
	if _, err := s.authorizeWorkspace(ctx, workspaceID); err != nil {
		if apierr.From(err).Code == apierr.NotFound {
			return runNotFound(id)
		}
		return err
	}
	return nil
}

func runCounts(raw []byte) serverapi.Counts {
	var c results.Counts
	readCounts(raw, &c)
	return resultsapi.Counts(c)
}

// readCounts sets *c to the counts raw holds (zero when it holds none encoding/json reads).
func readCounts(raw []byte, c *results.Counts) {
	*c = results.Counts{}
	if !decodeCounts(raw, c) {
		*c = results.Counts{}
		_ = json.Unmarshal(raw, c)
	}
}

// decodeCounts reads a run's counts as PostgreSQL writes the jsonb object ({"total": 3,
// "passed": 2, …}: known members, integers) without encoding/json's reflection, a tenth of the
// run list's CPU; it reports false for anything else (a member it does not know, a fraction, an
// escape, a duplicate), which is then decoded by encoding/json. TestDecodeCountsMatchesEncodingJSON.
func decodeCounts(raw []byte, c *results.Counts) bool {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return false
	}
	var seen uint8
	i = skipSpace(raw, i+1)
	if i < len(raw) && raw[i] == '}' {
		return skipSpace(raw, i+1) == len(raw)
	}
	for {
		if i >= len(raw) || raw[i] != '"' {
			return false
		}
		end := i + 1
		for end < len(raw) && raw[end] != '"' && raw[end] != '\\' {
			end++
		}
		if end >= len(raw) || raw[end] != '"' {
			return false
		}
		key := raw[i+1 : end]
		i = skipSpace(raw, end+1)
		if i >= len(raw) || raw[i] != ':' {
			return false
		}
		i = skipSpace(raw, i+1)
		start := i
		if i < len(raw) && raw[i] == '-' {
			i++
		}
		for i < len(raw) && raw[i] >= '0' && raw[i] <= '9' {
			i++
		}
		digits := raw[start:i]
		if len(digits) > 0 && digits[0] == '-' {
			digits = digits[1:]
		}
		if len(digits) > 1 && digits[0] == '0' { // not JSON
			return false
		}
		n, err := strconv.Atoi(string(raw[start:i]))
		if err != nil || (i < len(raw) && (raw[i] == '.' || raw[i] == 'e' || raw[i] == 'E')) {
			return false
		}
		var field *int
		var bit uint8
		switch string(key) {
		case "failed":
			field, bit = &c.Failed, 1
		case "flaky":
			field, bit = &c.Flaky, 2
		case "passed":
			field, bit = &c.Passed, 4
		case "pending":
			field, bit = &c.Pending, 8
		case "quarantined":
			c.Quarantined, bit = new(int), 16
			field = c.Quarantined
		case "skipped":
			field, bit = &c.Skipped, 32
		case "total":
			field, bit = &c.Total, 64
		case "undefined":
			field, bit = &c.Undefined, 128
		default:
			return false
		}
		if seen&bit != 0 {
			return false
		}
		seen |= bit
		*field = n
		i = skipSpace(raw, i)
		if i >= len(raw) {
			return false
		}
		if raw[i] == '}' {
			return skipSpace(raw, i+1) == len(raw)
		}
		if raw[i] != ',' {
			return false
		}
		i = skipSpace(raw, i+1)
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

func durationMs(start, end *time.Time) *int64 {
	if start == nil || end == nil {
		return nil
	}
	return ptr(end.Sub(*start).Milliseconds())
}

func runSummary(r runs.Run, project string) serverapi.RunSummary {
	return serverapi.RunSummary{Id: r.ID, Project: project, Status: serverapi.RunStatus(r.Status), Trigger: serverapi.RunTrigger(r.Trigger),
		Source: serverapi.RunSource(r.Source), Label: r.Label, Paths: r.Paths, Tags: r.Tags, Environment: r.Environment, Branch: r.Branch,
		Commit: r.CommitSha, ProcessName: r.ProcessName, Counts: runCounts(r.Counts), CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt,
		StartedAt: r.StartedAt, FinishedAt: r.FinishedAt, DurationMs: durationMs(r.StartedAt, r.FinishedAt), ScheduleId: r.ScheduleID}
}

type runCursor struct {
	At time.Time `json:"a"`
	ID uuid.UUID `json:"i"`
}

// ListRuns lists the runs of the caller's workspaces, newest first, with filters.
func (s *Server) ListRuns(ctx context.Context, req serverapi.ListRunsRequestObject) (serverapi.ListRunsResponseObject, error) {
	p, uid, err := principal(ctx)
	if err != nil {
		return nil, err
	}
	q := req.Params
	var cur *runCursor
	if err := decodeCursor(q.Cursor, &cur); err != nil {
		return nil, err
	}
	limit := pageLimit(q.Limit)
	params := runs.ListFilter{AllWorkspaces: p.InstanceAdmin, UserID: uid, Project: q.Project, Statuses: strs(q.Status),
		Branches: strs(q.Branch), NotBranches: strs(q.NotBranch), Triggers: strs(q.Trigger), NotTriggers: strs(q.NotTrigger),
		Tags: strs(q.Tag), NotTags: strs(q.NotTag), Limit: limit + 1}
	params.ScheduleID = q.ScheduleId
	if q.Since != nil {
		params.Since = ptr(time.Time(*q.Since))
	}
	if q.Until != nil {
		params.Until = ptr(time.Time(*q.Until))
	}
	if cur != nil {
		params.BeforeAt, params.BeforeID = &cur.At, cur.ID
	}
	rows, err := s.Runs.List(ctx, params)
	if err != nil {
		return nil, err
	}
	page := runPageJSON{rows: rows}
	if page.rows == nil {
		page.rows = []runs.ProjectRun{} // "items": [], never null
	}
	if len(rows) > limit {
		page.rows = rows[:limit]
		page.next = encodeCursor(runCursor{At: rows[limit-1].Run.CreatedAt, ID: rows[limit-1].Run.ID})
	}
	return page, nil
}

// GetRun returns a run with its scenario tree: module (feature folder) → feature → scenario.
func (s *Server) GetRun(ctx context.Context, req serverapi.GetRunRequestObject) (serverapi.GetRunResponseObject, error) {
	r, err := s.runByID(ctx, req.RunId)
	if err != nil {
		return nil, err
	}
	scenarios, err := s.Runs.ScenarioTree(ctx, r.Run.ID)
	if err != nil {
		return nil, err
	}
	sum := runSummary(r.Run, r.ProjectSlug)
	out := serverapi.GetRun200JSONResponse{Id: sum.Id, Project: sum.Project, Status: sum.Status, Trigger: sum.Trigger, Source: sum.Source,
		Label: sum.Label, Paths: sum.Paths, Tags: sum.Tags, Environment: sum.Environment, Branch: sum.Branch, Commit: sum.Commit,
		ProcessName: sum.ProcessName, Counts: sum.Counts, CreatedAt: sum.CreatedAt, UpdatedAt: sum.UpdatedAt, StartedAt: sum.StartedAt,
		FinishedAt: sum.FinishedAt, DurationMs: sum.DurationMs, ScheduleId: sum.ScheduleId, Error: r.Run.Error, Modules: scenarioTree(scenarios)}
	var vars map[string]string
	if json.Unmarshal(r.Run.Variables, &vars) == nil && len(vars) > 0 {
		out.Variables = &vars
	}
	if r.Run.CreatedBy != nil {
		if u, err := s.Identity.User(ctx, *r.Run.CreatedBy); err == nil {
			out.CreatedBy = ptr(toUserSummary(u))
		}
	}
	return runJSON(out), nil
}

// scenarioTree groups a run's scenarios by module and feature, in execution order. A
// 2,000-scenario run's tree is built with a handful of allocations: the scenarios of all features
// share one array (each feature a range of it, sized by a first pass), and so do the rows and
// durations the summaries point to.
func scenarioTree(rows []runs.Scenario) []serverapi.RunModule {
	type group struct {
		mod, feat, n, next int
		ms                 int64
		hasMs              bool
	}
	modules := []serverapi.RunModule{}
	var mods, feats []group
	modIdx := map[string]int{}
	featIdx := map[[2]string]int{}
	featOf := make([]int32, len(rows))
	nRow := 0
	for i := range rows {
		sc := &rows[i]
		mod := sc.Module
		if mod == "" {
			mod = path.Dir(sc.FeaturePath)
		}
		mi, ok := modIdx[mod]
		if !ok {
			mi = len(modules)
			modIdx[mod] = mi
			modules = append(modules, serverapi.RunModule{Name: mod})
			mods = append(mods, group{})
		}
		fi, ok := featIdx[[2]string{mod, sc.FeaturePath}]
		if !ok {
			fi = len(feats)
			featIdx[[2]string{mod, sc.FeaturePath}] = fi
			feats = append(feats, group{mod: mi, feat: mods[mi].n})
			mods[mi].n++
		}
		featOf[i] = int32(fi)
		feats[fi].n++
		if sc.ExampleRow != nil {
			nRow++
		}
	}
	// Each module's features, then each feature's scenarios, as ranges of one array each.
	allFeats := make([]serverapi.RunFeature, len(feats))
	at := 0
	for mi := range modules {
		modules[mi].Features = allFeats[at : at : at+mods[mi].n]
		at += mods[mi].n
	}
	at = 0
	for fi := range feats {
		feats[fi].next = at
		at += feats[fi].n
	}
	all := make([]serverapi.RunScenarioSummary, len(rows))
	exampleRows := make([]int, 0, nRow)
	for i := range rows {
		sc := &rows[i]
		g := &feats[featOf[i]]
		m := &modules[g.mod]
		if g.feat == len(m.Features) {
			m.Features = append(m.Features, serverapi.RunFeature{Path: sc.FeaturePath, Name: sc.FeatureName, Scenarios: all[g.next : g.next : g.next+g.n]})
		}
		f := &m.Features[g.feat]
		var row *int
		if sc.ExampleRow != nil {
			exampleRows = append(exampleRows, int(*sc.ExampleRow))
			row = &exampleRows[len(exampleRows)-1]
		}
		sum := serverapi.RunScenarioSummary{Id: sc.ID, Name: sc.Name, Line: int(sc.Line), Status: serverapi.ResultStatus(sc.Status),
			DurationMs: sc.DurationMs, Tags: sc.Tags, ExampleRow: row, Attempts: int(sc.Attempts)}
		if sc.Dataset != nil {
			sum.Dataset, sum.Row = sc.Dataset, row // docs/steps.md: a dataset row's scenario carries dataset and row
		}
		f.Scenarios = append(f.Scenarios, sum)
		addCount(&f.Counts, sc.Status)
		addCount(&m.Counts, sc.Status)
		if sc.DurationMs != nil {
			g.ms, g.hasMs = g.ms+*sc.DurationMs, true
			mods[g.mod].ms, mods[g.mod].hasMs = mods[g.mod].ms+*sc.DurationMs, true
		}
	}
	ms := make([]int64, 0, len(mods)+len(feats))
	total := func(g group) *int64 {
		if !g.hasMs {
			return nil
		}
		ms = append(ms, g.ms)
		return &ms[len(ms)-1]
	}
	for _, g := range feats {
		f := &modules[g.mod].Features[g.feat]
		f.Status, f.DurationMs = statusOf(f.Counts), total(g)
	}
	for i := range modules {
		modules[i].Status, modules[i].DurationMs = statusOf(modules[i].Counts), total(mods[i])
	}
	return modules
}

func addCount(c *serverapi.Counts, status string) {
	c.Total++
	switch status {
	case "passed":
		c.Passed++
	case "failed", "ambiguous":
		c.Failed++
	case "pending":
		c.Pending++
	case "skipped":
		c.Skipped++
	case "undefined":
		c.Undefined++
	}
}

// statusOf summarises scenario counts the way the runner does for a run.
func statusOf(c serverapi.Counts) serverapi.ResultStatus {
	switch {
	case c.Failed+c.Undefined > 0:
		return serverapi.ResultStatusFailed
	case c.Passed > 0 && c.Passed+c.Skipped+c.Pending == c.Total:
		return serverapi.ResultStatusPassed
	case c.Pending > 0:
		return serverapi.ResultStatusPending
	case c.Skipped == c.Total && c.Total > 0:
		return serverapi.ResultStatusSkipped
	}
	return serverapi.ResultStatusUnknown
}

// GetRunScenario returns one scenario with its steps, errors and attachments.
func (s *Server) GetRunScenario(ctx context.Context, req serverapi.GetRunScenarioRequestObject) (serverapi.GetRunScenarioResponseObject, error) {
	r, err := s.runByID(ctx, req.RunId)
	if err != nil {
		return nil, err
	}
	sc, err := s.Runs.Scenario(ctx, r.Run.ID, req.ScenarioId)
	if store.IsNotFound(err) {
		return nil, apierr.New(apierr.NotFound, "scenario not found in this run", "GET /api/runs/{runId} lists the run's scenarios")
	}
	if err != nil {
		return nil, err
	}
	out := serverapi.GetRunScenario200JSONResponse{Id: sc.ID, RunId: r.Run.ID, Module: sc.Module, FeaturePath: sc.FeaturePath, FeatureName: nonEmpty(sc.FeatureName),
		Name: sc.Name, Line: int(sc.Line), Tags: sc.Tags, Status: serverapi.ResultStatus(sc.Status), Attempts: int(sc.Attempts),
		StartedAt: sc.StartedAt, FinishedAt: sc.FinishedAt, DurationMs: sc.DurationMs, Steps: []serverapi.RunStep{}, Attachments: []serverapi.Attachment{}}
	if sc.ExampleRow != nil {
		out.ExampleRow = ptr(int(*sc.ExampleRow))
	}
	if sc.Dataset != nil {
		out.Dataset, out.Row = sc.Dataset, out.ExampleRow
	}
	if len(sc.Error) > 0 {
		var e results.StepError
		if json.Unmarshal(sc.Error, &e) == nil {
			out.Error = resultsapi.StepError(&e)
		}
	}
	var steps []results.Step
	if err := json.Unmarshal(sc.Steps, &steps); err != nil {
		return nil, fmt.Errorf("scenario %s steps: %w", sc.ID, err)
	}
	out.Steps = resultsapi.Steps(steps)
	for _, st := range out.Steps {
		out.Attachments = append(out.Attachments, st.Attachments...)
	}
	return out, nil
}

// StreamRunEvents streams a run's events as server-sent events: history first, then live.
func (s *Server) StreamRunEvents(ctx context.Context, req serverapi.StreamRunEventsRequestObject) (serverapi.StreamRunEventsResponseObject, error) {
	r, err := s.runByID(ctx, req.RunId)
	if err != nil {
		return nil, err
	}
	var after int64
	if req.Params.LastEventID != nil {
		n, err := strconv.ParseInt(strings.TrimSpace(string(*req.Params.LastEventID)), 10, 64)
		if err != nil || n < 0 {
			return nil, apierr.New(apierr.ValidationFailed, "Last-Event-ID is not an event id", "header parameter \"Last-Event-ID\": send the id of the last event received")
		}
		after = n
	}
	return sseStream{ctx: ctx, stream: func(ctx context.Context, w io.Writer) error { return s.Runs.Stream(ctx, r.Run.ID, after, w) }}, nil
}

// CancelRun stops a run: at once when queued, within a second when running.
func (s *Server) CancelRun(ctx context.Context, req serverapi.CancelRunRequestObject) (serverapi.CancelRunResponseObject, error) {
	r, err := s.runByID(ctx, req.RunId)
	if err != nil {
		return nil, err
	}
	after, err := s.Runs.Stop(ctx, r)
	if err != nil {
		return nil, err
	}
	return serverapi.CancelRun202JSONResponse(runSummary(after, r.ProjectSlug)), nil
}

// strs is a list query parameter's values as strings (empty when absent).
func strs[T ~string](p *[]T) []string {
	out := []string{}
	if p != nil {
		for _, v := range *p {
			out = append(out, string(v))
		}
	}
	return out
}
