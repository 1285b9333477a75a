package httpapi

import (
	"encoding/json"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/sdods/sdods/gen/serverapi"
	"github.com/sdods/sdods/impl/jsonappend"
	"github.com/sdods/sdods/impl/server/results"
	"github.com/sdods/sdods/impl/server/results/resultsapi"
	"github.com/sdods/sdods/impl/server/runs"
)

// The run list, a run's detail and its report (and the feature list) are the answers that grow with a workspace's
// history; encoding/json spent a fifth of the run list's CPU and of the run detail's in
// reflection (docs/benchmarks.md, read paths). They are written by the append encoders below,
// field for field in the order and with the escaping of encoding/json (HTML characters
// escaped, invalid UTF-8 replaced, U+2028 and U+2029 escaped), so that the bytes are the same
// (TestEncodersMatchEncodingJSON).

// jsonBufs holds response buffers between requests; one larger than maxPooledJSON is dropped.
var jsonBufs = sync.Pool{New: func() any { b := make([]byte, 0, 16<<10); return &b }}

const maxPooledJSON = 4 << 20

// writeJSON writes status and the document enc appends, as the generated Visit methods do
// (Content-Type, status, the document and a newline).
func writeJSON(w http.ResponseWriter, status int, enc func([]byte) ([]byte, error)) error {
	bp := jsonBufs.Get().(*[]byte)
	b, err := enc((*bp)[:0])
	if err != nil {
		return err
	}
	b = append(b, '\n')
	// The length, known here, spares net/http the chunked encoding: a page of the run list (22 KB)
	// went out in three writes (the buffered head and first bytes, the rest, the last chunk's
	// terminator); with a Content-Length it goes in two (docs/benchmarks.md, read paths round 8).
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	_, err = w.Write(b)
	if cap(b) <= maxPooledJSON {
		*bp = b[:0]
		jsonBufs.Put(bp)
	}
	return err
}

// runPageJSON is the run list's 200 answer, encoded by appendRunPage straight from the service's
// runs: the bytes appendRunList writes for their summaries (runSummary), without building the
// page's []serverapi.RunSummary (16 KB and two allocations a run: docs/benchmarks.md, read
// paths round 8). TestRunPageMatchesRunList.
type runPageJSON struct {
	rows []runs.ProjectRun
	next *string
}

func (p runPageJSON) VisitListRunsResponse(w http.ResponseWriter) error {
	return writeJSON(w, http.StatusOK, func(b []byte) ([]byte, error) { return appendRunPage(b, p.rows, p.next) })
}

// appendRunPage writes the run list page of rows (items null when nil) and next.
func appendRunPage(b []byte, rows []runs.ProjectRun, next *string) ([]byte, error) {
	// appendRunHead lets what runHead points to escape: one value holds every row's counts and
	// duration in turn, rather than two allocations a row.
	s := new(runScratch)
	return appendPage(b, rows, next, s.appendProjectRun)
}

type runScratch struct {
	read   results.Counts
	counts serverapi.Counts
	ms     int64
	head   runHead
}

// appendProjectRun writes runSummary(pr.Run, pr.ProjectSlug) as appendRunSummary does.
func (s *runScratch) appendProjectRun(b []byte, pr *runs.ProjectRun) ([]byte, error) {
	r := &pr.Run
	readCounts(r.Counts, &s.read)
	s.counts = resultsapi.Counts(s.read)
	s.head = runHead{Branch: r.Branch, Commit: r.CommitSha, Counts: &s.counts, CreatedAt: r.CreatedAt, Environment: r.Environment,
		FinishedAt: r.FinishedAt, ID: r.ID, Label: r.Label, Paths: r.Paths, ProcessName: r.ProcessName, Project: pr.ProjectSlug,
		ScheduleID: r.ScheduleID, Source: r.Source, Status: r.Status, Trigger: r.Trigger, StartedAt: r.StartedAt, Tags: r.Tags,
		UpdatedAt: r.UpdatedAt}
	if r.StartedAt != nil && r.FinishedAt != nil {
		s.ms = r.FinishedAt.Sub(*r.StartedAt).Milliseconds()
		s.head.DurationMs = &s.ms
	}
	return appendRunHead(b, &s.head)
}

// featureListJSON is the feature list's 200 answer, encoded by appendFeatureList.
type featureListJSON serverapi.FeatureList

func (l featureListJSON) VisitListFeaturesResponse(w http.ResponseWriter) error {
	return writeJSON(w, http.StatusOK, func(b []byte) ([]byte, error) { return appendFeatureList(b, (*serverapi.FeatureList)(&l)) })
}

func appendFeatureList(b []byte, l *serverapi.FeatureList) ([]byte, error) {
	return appendPage(b, l.Items, l.NextCursor, appendFeatureSummary)
}

func appendFeatureSummary(b []byte, f *serverapi.FeatureSummary) ([]byte, error) {
	var err error
	b = append(b, `{"createdAt":`...)
	if b, err = appendTime(b, f.CreatedAt); err != nil {
		return nil, err
	}
	b = append(b, `,"etag":`...)
	b = jsonappend.String(b, f.Etag)
	b = append(b, `,"module":`...)
	b = jsonappend.String(b, f.Module)
	if f.Name != nil {
		b = append(b, `,"name":`...)
		b = jsonappend.String(b, *f.Name)
	}
	b = append(b, `,"path":`...)
	b = jsonappend.String(b, f.Path)
	b = append(b, `,"scenarioCount":`...)
	b = strconv.AppendInt(b, int64(f.ScenarioCount), 10)
	b = append(b, `,"sizeBytes":`...)
	b = strconv.AppendInt(b, int64(f.SizeBytes), 10)
	b = append(b, `,"tags":`...)
	b = appendStrings(b, f.Tags)
	b = append(b, `,"updatedAt":`...)
	if b, err = appendTime(b, f.UpdatedAt); err != nil {
		return nil, err
	}
	b = append(b, '}')
	return b, nil
}

// appendPage writes a list page as encoding/json does: {"items":[…],"nextCursor":…}, items null
// when nil.
func appendPage[T any](b []byte, items []T, next *string, appendItem func([]byte, *T) ([]byte, error)) ([]byte, error) {
	b = append(b, `{"items":`...)
	b, err := appendList(b, items, appendItem)
	if err != nil {
		return nil, err
	}
	b = append(b, `,"nextCursor":`...)
	b = appendStringPtrOrNull(b, next)
	return append(b, '}'), nil
}

// appendList writes items as encoding/json writes a slice: [a,b,…], null when nil.
func appendList[T any](b []byte, items []T, appendItem func([]byte, *T) ([]byte, error)) ([]byte, error) {
	if items == nil {
		return append(b, "null"...), nil
	}
	var err error
	b = append(b, '[')
	for i := range items {
		if i > 0 {
			b = append(b, ',')
		}
		if b, err = appendItem(b, &items[i]); err != nil {
			return nil, err
		}
	}
	return append(b, ']'), nil
}

// runJSON is a run's detail, encoded by appendRun.
type runJSON serverapi.Run

func (r runJSON) VisitGetRunResponse(w http.ResponseWriter) error {
	return writeJSON(w, http.StatusOK, func(b []byte) ([]byte, error) { return appendRun(b, (*serverapi.Run)(&r)) })
}

// runReportJSON is a run's report, encoded by appendRunReport.
type runReportJSON serverapi.RunReport

func (r runReportJSON) VisitGetRunReportResponse(w http.ResponseWriter) error {
	return writeJSON(w, http.StatusOK, func(b []byte) ([]byte, error) { return appendRunReport(b, (*serverapi.RunReport)(&r)) })
}

func appendRunList(b []byte, l *serverapi.RunList) ([]byte, error) {
	return appendPage(b, l.Items, l.NextCursor, appendRunSummary)
}

// runHead is what RunSummary and Run share, in the order encoding/json writes their fields
// (alphabetical, as generated); Run's own fields go in between through extra.
type runHead struct {
	Branch, Commit          *string
	Counts                  *serverapi.Counts
	CreatedAt               time.Time
	CreatedBy               *serverapi.UserSummary
	DurationMs              *int64
	Environment             *string
	Error                   *string // Run only
	FinishedAt              *time.Time
	ID                      uuid.UUID
	Label                   *string
	Modules                 []serverapi.RunModule // Run only
	isRun                   bool
	Paths                   []string
	ProcessName             *string
	Project                 string
	ScheduleID              *uuid.UUID
	Source, Status, Trigger string
	StartedAt               *time.Time
	Tags                    *string
	UpdatedAt               time.Time
	Variables               *map[string]string // Run only
}

func appendRunSummary(b []byte, r *serverapi.RunSummary) ([]byte, error) {
	return appendRunHead(b, &runHead{Branch: r.Branch, Commit: r.Commit, Counts: &r.Counts, CreatedAt: r.CreatedAt, CreatedBy: r.CreatedBy,
		DurationMs: r.DurationMs, Environment: r.Environment, FinishedAt: r.FinishedAt, ID: r.Id, Label: r.Label, Paths: r.Paths,
		ProcessName: r.ProcessName, Project: r.Project, ScheduleID: r.ScheduleId, Source: string(r.Source), Status: string(r.Status),
		Trigger: string(r.Trigger), StartedAt: r.StartedAt, Tags: r.Tags, UpdatedAt: r.UpdatedAt})
}

func appendRun(b []byte, r *serverapi.Run) ([]byte, error) {
	return appendRunHead(b, &runHead{Branch: r.Branch, Commit: r.Commit, Counts: &r.Counts, CreatedAt: r.CreatedAt, CreatedBy: r.CreatedBy,
		DurationMs: r.DurationMs, Environment: r.Environment, Error: r.Error, FinishedAt: r.FinishedAt, ID: r.Id, Label: r.Label,
		Modules: r.Modules, isRun: true, Paths: r.Paths, ProcessName: r.ProcessName, Project: r.Project, ScheduleID: r.ScheduleId,
		Source: string(r.Source), Status: string(r.Status), Trigger: string(r.Trigger), StartedAt: r.StartedAt, Tags: r.Tags,
		UpdatedAt: r.UpdatedAt, Variables: r.Variables})
}

func appendRunHead(b []byte, r *runHead) ([]byte, error) {
	var err error
	b = append(b, '{')
	var m members
	if r.Branch != nil {
		b = m.key(b, "branch")
		b = jsonappend.String(b, *r.Branch)
	}
	if r.Commit != nil {
		b = m.key(b, "commit")
		b = jsonappend.String(b, *r.Commit)
	}
	b = m.key(b, "counts")
	b = appendCounts(b, r.Counts)
	b = m.key(b, "createdAt")
	if b, err = appendTime(b, r.CreatedAt); err != nil {
		return nil, err
	}
	if r.CreatedBy != nil {
		b = m.key(b, "createdBy")
		if b, err = appendMarshal(b, r.CreatedBy); err != nil {
			return nil, err
		}
	}
	if r.DurationMs != nil {
		b = m.key(b, "durationMs")
		b = strconv.AppendInt(b, *r.DurationMs, 10)
	}
	if r.Environment != nil {
		b = m.key(b, "environment")
		b = jsonappend.String(b, *r.Environment)
	}
	if r.Error != nil {
		b = m.key(b, "error")
		b = jsonappend.String(b, *r.Error)
	}
	if r.FinishedAt != nil {
		b = m.key(b, "finishedAt")
		if b, err = appendTime(b, *r.FinishedAt); err != nil {
			return nil, err
		}
	}
	b = m.key(b, "id")
	b = jsonappend.UUID(b, r.ID)
	if r.Label != nil {
		b = m.key(b, "label")
		b = jsonappend.String(b, *r.Label)
	}
	if r.isRun {
		b = m.key(b, "modules")
		if b, err = appendModules(b, r.Modules); err != nil {
			return nil, err
		}
	}
	b = m.key(b, "paths")
	b = appendStrings(b, r.Paths)
	if r.ProcessName != nil {
		b = m.key(b, "processName")
		b = jsonappend.String(b, *r.ProcessName)
	}
	b = m.key(b, "project")
	b = jsonappend.String(b, r.Project)
	if r.ScheduleID != nil {
		b = m.key(b, "scheduleId")
		b = jsonappend.UUID(b, *r.ScheduleID)
	}
	b = m.key(b, "source")
	b = jsonappend.String(b, r.Source)
	if r.StartedAt != nil {
		b = m.key(b, "startedAt")
		if b, err = appendTime(b, *r.StartedAt); err != nil {
			return nil, err
		}
	}
	b = m.key(b, "status")
	b = jsonappend.String(b, r.Status)
	if r.Tags != nil {
		b = m.key(b, "tags")
		b = jsonappend.String(b, *r.Tags)
	}
	b = m.key(b, "trigger")
	b = jsonappend.String(b, r.Trigger)
	b = m.key(b, "updatedAt")
	if b, err = appendTime(b, r.UpdatedAt); err != nil {
		return nil, err
	}
	if r.Variables != nil {
		b = m.key(b, "variables")
		b = jsonappend.StringMap(b, *r.Variables)
	}
	return append(b, '}'), nil
}

func appendModules(b []byte, mods []serverapi.RunModule) ([]byte, error) {
	if mods == nil {
		return append(b, "null"...), nil
	}
	b = append(b, '[')
	for i := range mods {
		m := &mods[i]
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"counts":`...)
		b = appendCounts(b, &m.Counts)
		if m.DurationMs != nil {
			b = append(b, `,"durationMs":`...)
			b = strconv.AppendInt(b, *m.DurationMs, 10)
		}
		b = append(b, `,"features":`...)
		if m.Features == nil {
			b = append(b, "null"...)
		} else {
			b = append(b, '[')
			for j := range m.Features {
				if j > 0 {
					b = append(b, ',')
				}
				b = appendFeature(b, &m.Features[j])
			}
			b = append(b, ']')
		}
		b = append(b, `,"name":`...)
		b = jsonappend.String(b, m.Name)
		b = append(b, `,"status":`...)
		b = jsonappend.String(b, string(m.Status))
		b = append(b, '}')
	}
	return append(b, ']'), nil
}

func appendFeature(b []byte, f *serverapi.RunFeature) []byte {
	b = append(b, `{"counts":`...)
	b = appendCounts(b, &f.Counts)
	if f.DurationMs != nil {
		b = append(b, `,"durationMs":`...)
		b = strconv.AppendInt(b, *f.DurationMs, 10)
	}
	b = append(b, `,"name":`...)
	b = jsonappend.String(b, f.Name)
	b = append(b, `,"path":`...)
	b = jsonappend.String(b, f.Path)
	b = append(b, `,"scenarios":`...)
	if f.Scenarios == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for k := range f.Scenarios {
			if k > 0 {
				b = append(b, ',')
			}
			b = appendScenarioSummary(b, &f.Scenarios[k])
		}
		b = append(b, ']')
	}
	b = append(b, `,"status":`...)
	b = jsonappend.String(b, string(f.Status))
	return append(b, '}')
}

func appendScenarioSummary(b []byte, s *serverapi.RunScenarioSummary) []byte {
	b = append(b, `{"attempts":`...)
	b = strconv.AppendInt(b, int64(s.Attempts), 10)
	if s.Dataset != nil {
		b = append(b, `,"dataset":`...)
		b = jsonappend.String(b, *s.Dataset)
	}
	if s.DurationMs != nil {
		b = append(b, `,"durationMs":`...)
		b = strconv.AppendInt(b, *s.DurationMs, 10)
	}
	if s.ExampleRow != nil {
		b = append(b, `,"exampleRow":`...)
		b = strconv.AppendInt(b, int64(*s.ExampleRow), 10)
	}
	b = append(b, `,"id":`...)
	b = jsonappend.UUID(b, s.Id)
	b = append(b, `,"line":`...)
	b = strconv.AppendInt(b, int64(s.Line), 10)
	b = append(b, `,"name":`...)
	b = jsonappend.String(b, s.Name)
	if s.Row != nil {
		b = append(b, `,"row":`...)
		b = strconv.AppendInt(b, int64(*s.Row), 10)
	}
	b = append(b, `,"status":`...)
	b = jsonappend.String(b, string(s.Status))
	b = append(b, `,"tags":`...)
	b = appendStrings(b, s.Tags)
	return append(b, '}')
}

func appendRunReport(b []byte, r *serverapi.RunReport) ([]byte, error) {
	var err error
	b = append(b, `{"counts":`...)
	b = appendCounts(b, &r.Counts)
	if r.DurationMs != nil {
		b = append(b, `,"durationMs":`...)
		b = strconv.AppendInt(b, *r.DurationMs, 10)
	}
	if r.Error != nil {
		b = append(b, `,"error":`...)
		b = jsonappend.String(b, *r.Error)
	}
	b = append(b, `,"failures":`...)
	if r.Failures == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i := range r.Failures {
			f := &r.Failures[i]
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, '{')
			if f.Error != nil {
				b = append(b, `"error":`...)
				b = appendStepError(b, f.Error)
				b = append(b, ',')
			}
			b = append(b, `"featurePath":`...)
			b = jsonappend.String(b, f.FeaturePath)
			b = append(b, `,"scenario":`...)
			b = jsonappend.String(b, f.Scenario)
			b = append(b, `,"scenarioId":`...)
			b = jsonappend.UUID(b, f.ScenarioId)
			if f.ScreenshotArtifactId != nil {
				b = append(b, `,"screenshotArtifactId":`...)
				b = jsonappend.UUID(b, *f.ScreenshotArtifactId)
			}
			if f.Step != nil {
				b = append(b, `,"step":`...)
				b = jsonappend.String(b, *f.Step)
			}
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	if r.FinishedAt != nil {
		b = append(b, `,"finishedAt":`...)
		if b, err = appendTime(b, *r.FinishedAt); err != nil {
			return nil, err
		}
	}
	b = append(b, `,"flaky":`...)
	if r.Flaky == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i := range r.Flaky {
			f := &r.Flaky[i]
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"attempts":`...)
			b = strconv.AppendInt(b, int64(f.Attempts), 10)
			b = append(b, `,"featurePath":`...)
			b = jsonappend.String(b, f.FeaturePath)
			b = append(b, `,"scenario":`...)
			b = jsonappend.String(b, f.Scenario)
			b = append(b, `,"scenarioId":`...)
			b = jsonappend.UUID(b, f.ScenarioId)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	b = append(b, `,"htmlUrl":`...)
	b = jsonappend.String(b, r.HtmlUrl)
	b = append(b, `,"runId":`...)
	b = jsonappend.UUID(b, r.RunId)
	b = append(b, `,"slowest":`...)
	if r.Slowest == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i := range r.Slowest {
			s := &r.Slowest[i]
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"durationMs":`...)
			b = strconv.AppendInt(b, s.DurationMs, 10)
			b = append(b, `,"featurePath":`...)
			b = jsonappend.String(b, s.FeaturePath)
			b = append(b, `,"scenario":`...)
			b = jsonappend.String(b, s.Scenario)
			b = append(b, `,"scenarioId":`...)
			b = jsonappend.UUID(b, s.ScenarioId)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	if r.StartedAt != nil {
		b = append(b, `,"startedAt":`...)
		if b, err = appendTime(b, *r.StartedAt); err != nil {
			return nil, err
		}
	}
	b = append(b, `,"status":`...)
	b = jsonappend.String(b, string(r.Status))
	return append(b, '}'), nil
}

func appendStepError(b []byte, e *serverapi.RunStepError) []byte {
	b = append(b, '{')
	if e.Actual != nil {
		b = append(b, `"actual":`...)
		b = jsonappend.String(b, *e.Actual)
		b = append(b, ',')
	}
	if e.Expected != nil {
		b = append(b, `"expected":`...)
		b = jsonappend.String(b, *e.Expected)
		b = append(b, ',')
	}
	b = append(b, `"message":`...)
	b = jsonappend.String(b, e.Message)
	if e.Stack != nil {
		b = append(b, `,"stack":`...)
		b = jsonappend.String(b, *e.Stack)
	}
	if e.Type != nil {
		b = append(b, `,"type":`...)
		b = jsonappend.String(b, *e.Type)
	}
	return append(b, '}')
}

func appendCounts(b []byte, c *serverapi.Counts) []byte {
	b = append(b, `{"failed":`...)
	b = strconv.AppendInt(b, int64(c.Failed), 10)
	b = append(b, `,"flaky":`...)
	b = strconv.AppendInt(b, int64(c.Flaky), 10)
	b = append(b, `,"passed":`...)
	b = strconv.AppendInt(b, int64(c.Passed), 10)
	b = append(b, `,"pending":`...)
	b = strconv.AppendInt(b, int64(c.Pending), 10)
	if c.Quarantined != nil {
		b = append(b, `,"quarantined":`...)
		b = strconv.AppendInt(b, int64(*c.Quarantined), 10)
	}
	b = append(b, `,"skipped":`...)
	b = strconv.AppendInt(b, int64(c.Skipped), 10)
	b = append(b, `,"total":`...)
	b = strconv.AppendInt(b, int64(c.Total), 10)
	b = append(b, `,"undefined":`...)
	b = strconv.AppendInt(b, int64(c.Undefined), 10)
	return append(b, '}')
}

// appendMarshal appends v as encoding/json writes it: for the rare members whose encoding
// validates (a user's email), one per answer.
func appendMarshal(b []byte, v any) ([]byte, error) {
	j, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return append(b, j...), nil
}

// appendTime appends t as time.Time's MarshalJSON does (RFC 3339 with nanoseconds); the times
// it writes otherwise or refuses (a year outside 0–9999, an offset of seconds or of a day or more)
// go through it.
func appendTime(b []byte, t time.Time) ([]byte, error) {
	if _, off := t.Zone(); t.Year() < 0 || t.Year() > 9999 || off%60 != 0 || off <= -24*3600 || off >= 24*3600 {
		return appendMarshal(b, t)
	}
	b = append(b, '"')
	b = t.AppendFormat(b, time.RFC3339Nano)
	return append(b, '"'), nil
}

func appendStrings(b []byte, s []string) []byte {
	if s == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i, v := range s {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsonappend.String(b, v)
	}
	return append(b, ']')
}

func appendStringPtrOrNull(b []byte, s *string) []byte {
	if s == nil {
		return append(b, "null"...)
	}
	return jsonappend.String(b, *s)
}

// upcomingRunsJSON is the upcoming firings' 200 answer, encoded by appendUpcomingRuns.
type upcomingRunsJSON serverapi.UpcomingRunList

func (l upcomingRunsJSON) VisitListUpcomingRunsResponse(w http.ResponseWriter) error {
	return writeJSON(w, http.StatusOK, func(b []byte) ([]byte, error) { return appendUpcomingRuns(b, (*serverapi.UpcomingRunList)(&l)) })
}

func appendUpcomingRuns(b []byte, l *serverapi.UpcomingRunList) ([]byte, error) {
	return appendPage(b, l.Items, l.NextCursor, appendUpcomingRun)
}

func appendUpcomingRun(b []byte, u *serverapi.UpcomingRun) ([]byte, error) {
	var err error
	b = append(b, `{"at":`...)
	if b, err = appendTime(b, u.At); err != nil {
		return nil, err
	}
	if u.Dst != nil {
		b = append(b, `,"dst":`...)
		b = jsonappend.String(b, string(*u.Dst))
	}
	b = append(b, `,"local":`...)
	b = jsonappend.String(b, u.Local)
	if u.Project != nil {
		b = append(b, `,"project":`...)
		b = jsonappend.String(b, *u.Project)
	}
	if u.ScheduleId != nil {
		b = append(b, `,"scheduleId":`...)
		b = jsonappend.UUID(b, *u.ScheduleId)
	}
	if u.ScheduleName != nil {
		b = append(b, `,"scheduleName":`...)
		b = jsonappend.String(b, *u.ScheduleName)
	}
	if u.StartsBy != nil {
		b = append(b, `,"startsBy":`...)
		if b, err = appendTime(b, *u.StartsBy); err != nil {
			return nil, err
		}
	}
	b = append(b, `,"timezone":`...)
	b = jsonappend.String(b, u.Timezone)
	if u.WallTime != nil {
		b = append(b, `,"wallTime":`...)
		b = jsonappend.String(b, *u.WallTime)
	}
	return append(b, '}'), nil
}

// members writes an object's keys: the comma before every member but the first, the key quoted
// (a Go identifier-like name: nothing to escape) and the colon.
type members struct{ n int }

func (m *members) key(b []byte, k string) []byte {
	if m.n > 0 {
		b = append(b, ',')
	}
	m.n++
	b = append(b, '"')
	b = append(b, k...)
	return append(b, '"', ':')
}
