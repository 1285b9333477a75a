package httpapi

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/sdods/sdods/gen/serverapi"
	"github.com/sdods/sdods/impl/server/apierr"
	"github.com/sdods/sdods/impl/server/artifacts"
	"github.com/sdods/sdods/impl/server/blob"
	"github.com/sdods/sdods/impl/server/reports"
	"github.com/sdods/sdods/impl/server/results"
	"github.com/sdods/sdods/impl/server/results/resultsapi"
	"github.com/sdods/sdods/impl/server/runs"
	"github.com/sdods/sdods/impl/server/safecontent"
)

// The files of a run (GET /api/runs/{runId}/files/{path}):
//
//	report.json                      the report (GET /api/runs/{runId}/report)
//	report.html                      the self-contained HTML report
//	trace.json                       the trace: every scenario's steps, logs, network entries and files
//	scenarios/<scenarioId>/<name>    a step's attachment (a repeated name gets -2, -3, … before its extension)
//	run/<name>                       a file of the run itself (an ingested document: ingest-<sha256 prefix>.<ext>)
//	artifacts/<artifactId>           any artifact of the run by id
const (
	fileReport     = "report.json"
	fileReportHTML = "report.html"
	fileTrace      = "trace.json"
)

// runFile is a file of a run: an artifact in the blob store, or content made on request.
type runFile struct {
	artifact    *artifacts.Artifact
	content     []byte
	contentType string
}

// filesRun is the run whose files are served: what the trace shows of it, and its report data
// and HTML report, made on request.
type filesRun struct {
	ID                      uuid.UUID
	Project, Status, Source string
	report                  func() (reports.Run, error)
	html                    func() ([]byte, error)
}

// reportFile is report.json of a run.
func reportFile(run reports.Run, id uuid.UUID) runFile {
	b, _ := json.Marshal(buildReport(run, id))
	return runFile{content: b, contentType: "application/json"}
}

// runFilePaths lays a run's artifacts out as paths (artifact id → path).
func runFilePaths(scenarios []runs.Scenario, arts []artifacts.Artifact) map[uuid.UUID]string {
	byKey := map[string]uuid.UUID{}
	for _, sc := range scenarios {
		byKey[sc.ScenarioKey] = sc.ID
	}
	out := map[uuid.UUID]string{}
	taken := map[string]bool{}
	// In step order, then in the order they were made (the store lists them by time).
	arts = slices.Clone(arts)
	slices.SortStableFunc(arts, func(a, b artifacts.Artifact) int { return cmp.Compare(stepOf(a), stepOf(b)) })
	for _, a := range arts {
		dir := "run"
		if a.ScenarioKey != nil {
			id, ok := byKey[*a.ScenarioKey]
			if !ok {
				continue
			}
			dir = "scenarios/" + id.String()
		}
		name := safeFileName(a.Name)
		p := dir + "/" + name
		for n := 2; taken[p]; n++ {
			ext := path.Ext(name)
			p = dir + "/" + strings.TrimSuffix(name, ext) + "-" + strconv.Itoa(n) + ext
		}
		taken[p] = true
		out[a.ID] = p
	}
	return out
}

func stepOf(a artifacts.Artifact) int32 {
	if a.StepIndex == nil {
		return -1
	}
	return *a.StepIndex
}

var unsafeNameChars = regexp.MustCompile(`[/\\\x00-\x1f\x7f]+`)

// safeFileName keeps an attachment's name as one path segment.
func safeFileName(name string) string {
	name = strings.TrimSpace(unsafeNameChars.ReplaceAllString(name, "_"))
	if name == "" || name == "." || name == ".." {
		return "file"
	}
	return name
}

// cleanRunPath refuses a path that is not a plain relative path inside the run.
func cleanRunPath(p string) (string, error) {
	bad := apierr.New(apierr.ValidationFailed, "the path leaves the run's files", "path parameter \"path\": a relative path such as scenarios/<scenarioId>/<name>, without '..', '.', empty segments or backslashes")
	if p == "" || strings.ContainsAny(p, "\\\x00") || strings.HasPrefix(p, "/") {
		return "", bad
	}
	for _, seg := range strings.Split(p, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return "", bad
		}
	}
	return p, nil
}

// findRunFile resolves a path of the run's files.
func (s *Server) findRunFile(ctx context.Context, r filesRun, p string) (runFile, error) {
	notFound := apierr.New(apierr.NotFound, "the run has no file "+p, "GET /api/runs/{runId}/files/trace.json lists the run's files")
	switch p {
	case fileReport:
		run, err := r.report()
		if err != nil {
			return runFile{}, err
		}
		return reportFile(run, r.ID), nil
	case fileReportHTML:
		b, err := r.html()
		return runFile{content: b, contentType: "text/html; charset=utf-8"}, err
	case fileTrace:
		b, err := s.traceJSON(ctx, r)
		return runFile{content: b, contentType: "application/json"}, err
	}
	arts, err := s.Artifacts.OfRun(ctx, r.ID)
	if err != nil {
		return runFile{}, err
	}
	if rest, ok := strings.CutPrefix(p, "artifacts/"); ok {
		id, err := uuid.Parse(rest)
		if err != nil {
			return runFile{}, notFound
		}
		for i := range arts {
			if arts[i].ID == id {
				return runFile{artifact: &arts[i]}, nil
			}
		}
		return runFile{}, notFound
	}
	scenarios, err := s.Runs.Scenarios(ctx, r.ID)
	if err != nil {
		return runFile{}, err
	}
	paths := runFilePaths(scenarios, arts)
	for i := range arts {
		if paths[arts[i].ID] == p {
			return runFile{artifact: &arts[i]}, nil
		}
	}
	return runFile{}, notFound
}

// GetRunFile serves a file of the run with its content type (an artifact's from the allow-list
// of impl/server/safecontent), an ETag (304 on If-None-Match) and single byte ranges (206, 416); every
// answer carries nosniff, a CSP (a sandbox for files a test brought in, the report's own for
// report.html) and CORP.
func (s *Server) GetRunFile(ctx context.Context, req serverapi.GetRunFileRequestObject) (serverapi.GetRunFileResponseObject, error) {
	r, err := s.runByID(ctx, req.RunId)
	if err != nil {
		return nil, err
	}
	p, err := cleanRunPath(req.Path)
	if err != nil {
		return nil, err
	}
	fr := filesRun{ID: r.Run.ID, Project: r.ProjectSlug, Status: r.Run.Status, Source: r.Run.Source,
		report: func() (reports.Run, error) { return s.reportRun(ctx, r) },
		html:   func() ([]byte, error) { return s.htmlReport(ctx, r) }}
	f, err := s.findRunFile(ctx, fr, p)
	if err != nil {
		return nil, err
	}
	resp, err := s.getRunFile(ctx, req, f)
	if err != nil {
		return nil, err
	}
	set := jsonDataHeaders
	switch {
	case f.artifact != nil:
		set = artifactHeaders(f.artifact.MediaType, f.artifact.Name)
	case p == fileReportHTML:
		set = reportHeaders
	}
	return runFileResponse{GetRunFileResponseObject: resp, set: set}, nil
}

func (s *Server) getRunFile(ctx context.Context, req serverapi.GetRunFileRequestObject, f runFile) (serverapi.GetRunFileResponseObject, error) {
	var etag, contentType string
	var size int64
	if f.artifact != nil {
		etag, contentType, size = `"`+f.artifact.Sha256+`"`, safecontent.ContentType(f.artifact.MediaType), f.artifact.SizeBytes
	} else {
		sum := sha256.Sum256(f.content)
		etag, contentType, size = `"`+hex.EncodeToString(sum[:])+`"`, f.contentType, int64(len(f.content))
	}
	if req.Params.IfNoneMatch != nil && etagMatches(string(*req.Params.IfNoneMatch), etag) {
		return serverapi.GetRunFile304Response{}, nil
	}
	start, length, partial, err := byteRange(req.Params.Range, size)
	if err != nil {
		return nil, err
	}
	body, err := s.openRange(ctx, f, start, length)
	if err != nil {
		return nil, err
	}
	accept := "bytes"
	if partial {
		cr := fmt.Sprintf("bytes %d-%d/%d", start, start+length-1, size)
		return serverapi.GetRunFile206AsteriskResponse{Body: body, ContentType: contentType, ContentLength: length,
			Headers: serverapi.GetRunFile206ResponseHeaders{ETag: &etag, AcceptRanges: &accept, ContentRange: &cr}}, nil
	}
	return serverapi.GetRunFile200AsteriskResponse{Body: body, ContentType: contentType, ContentLength: length,
		Headers: serverapi.GetRunFile200ResponseHeaders{ETag: &etag, AcceptRanges: &accept}}, nil
}

// openRange returns length bytes of f from start.
func (s *Server) openRange(ctx context.Context, f runFile, start, length int64) (io.Reader, error) {
	if f.artifact == nil {
		return bytes.NewReader(f.content[start : start+length]), nil
	}
	rc, err := s.Artifacts.OpenRange(ctx, *f.artifact, start, length)
	if err != nil {
		if isBlobNotFound(err) {
			return nil, apierr.Wrap(err, apierr.NotFound, "the file's content is missing from the blob store", "the run's files may have been purged")
		}
		return nil, apierr.Wrap(err, apierr.Unavailable, "the blob store is unavailable", "try again later")
	}
	return rc, nil
}

func isBlobNotFound(err error) bool { return errors.Is(err, blob.ErrNotFound) }

// byteRange reads a Range header of one range (bytes=a-b, a-, -n). A header it does not
// understand, or with several ranges, is ignored (the whole file is served), as RFC 9110 allows.
func byteRange(h *serverapi.Range, size int64) (start, length int64, partial bool, err error) {
	if h == nil {
		return 0, size, false, nil
	}
	spec, ok := strings.CutPrefix(strings.TrimSpace(string(*h)), "bytes=")
	if !ok || strings.Contains(spec, ",") {
		return 0, size, false, nil
	}
	a, b, ok := strings.Cut(strings.TrimSpace(spec), "-")
	if !ok {
		return 0, size, false, nil
	}
	unsatisfiable := apierr.New(apierr.RangeNotSatisfiable, fmt.Sprintf("the range %s lies outside the file's %d bytes", string(*h), size),
		fmt.Sprintf("ask for bytes between 0 and %d", max(size-1, 0)))
	if a == "" { // the last n bytes
		n, err := strconv.ParseInt(b, 10, 64)
		if err != nil || n < 0 {
			return 0, size, false, nil
		}
		if n == 0 || size == 0 {
			return 0, 0, false, unsatisfiable
		}
		n = min(n, size)
		return size - n, n, true, nil
	}
	first, err1 := strconv.ParseInt(a, 10, 64)
	if err1 != nil || first < 0 {
		return 0, size, false, nil
	}
	last := size - 1
	if b != "" {
		l, err := strconv.ParseInt(b, 10, 64)
		if err != nil || l < first {
			return 0, size, false, nil
		}
		last = min(l, size-1)
	}
	if first >= size {
		return 0, 0, false, unsatisfiable
	}
	return first, last - first + 1, true, nil
}

// traceStep is a step in the trace, with its files addressed by path.
type traceStep struct {
	serverapi.RunStep
	Files []traceFile `json:"files"`
}

type traceFile struct {
	Path       string    `json:"path"`
	Name       string    `json:"name"`
	MediaType  string    `json:"mediaType"`
	Kind       string    `json:"kind"`
	SizeBytes  int64     `json:"sizeBytes"`
	ArtifactID uuid.UUID `json:"artifactId"`
}

type traceLog struct {
	At        time.Time `json:"at"`
	Level     string    `json:"level"`
	Message   string    `json:"message"`
	StepIndex *int      `json:"stepIndex,omitempty"`
}

type traceRequest struct {
	At         time.Time `json:"at"`
	Method     string    `json:"method"`
	URL        string    `json:"url"`
	Status     string    `json:"status"`
	DurationMs *int64    `json:"durationMs,omitempty"`
	StepIndex  *int      `json:"stepIndex,omitempty"`
}

type traceScenario struct {
	ID          uuid.UUID               `json:"id"`
	Module      string                  `json:"module"`
	FeaturePath string                  `json:"featurePath"`
	FeatureName string                  `json:"featureName,omitempty"`
	Name        string                  `json:"name"`
	Line        int                     `json:"line"`
	Status      string                  `json:"status"`
	Attempts    int                     `json:"attempts"`
	StartedAt   *time.Time              `json:"startedAt,omitempty"`
	DurationMs  *int64                  `json:"durationMs,omitempty"`
	Error       *serverapi.RunStepError `json:"error,omitempty"`
	Steps       []traceStep             `json:"steps"`
	Logs        []traceLog              `json:"logs"`
	Network     []traceRequest          `json:"network"`
	// Traces are the recorded attempts kept (tracing): each a manifest (steplib.TraceManifest)
	// and its files, by stored name → run file path.
	Traces []traceAttempt `json:"traces"`
	// Files are the scenario's files outside its steps (an ingested Playwright trace, …).
	Files []traceFile `json:"files"`
}

type traceAttempt struct {
	Attempt  int               `json:"attempt"`
	Manifest string            `json:"manifest"`
	Files    map[string]string `json:"files"`
}

// traceManifestName matches the name of a trace manifest (runner.TraceManifestName).
var traceManifestName = regexp.MustCompile(`^trace-a([0-9]+)\.json$`)

type traceDoc struct {
	RunID     uuid.UUID       `json:"runId"`
	Project   string          `json:"project"`
	Status    string          `json:"status"`
	Source    string          `json:"source"`
	Scenarios []traceScenario `json:"scenarios"`
}

// traceAttempts lists the kept traces of a scenario (key) among the run's artifacts, by attempt.
func traceAttempts(key string, arts []artifacts.Artifact, paths map[uuid.UUID]string) []traceAttempt {
	out := []traceAttempt{}
	byAttempt := map[int]int{}
	for _, a := range arts {
		if a.ScenarioKey == nil || *a.ScenarioKey != key || a.StepIndex != nil {
			continue
		}
		if m := traceManifestName.FindStringSubmatch(a.Name); m != nil {
			n, _ := strconv.Atoi(m[1])
			byAttempt[n] = len(out)
			out = append(out, traceAttempt{Attempt: n, Manifest: paths[a.ID], Files: map[string]string{}})
		}
	}
	for _, a := range arts {
		if a.ScenarioKey == nil || *a.ScenarioKey != key || a.StepIndex != nil || traceManifestName.MatchString(a.Name) {
			continue
		}
		var n int
		var rest string
		if _, err := fmt.Sscanf(a.Name, "trace-a%d-%s", &n, &rest); err != nil {
			continue
		}
		if i, ok := byAttempt[n]; ok {
			out[i].Files[a.Name] = paths[a.ID]
		}
	}
	slices.SortFunc(out, func(a, b traceAttempt) int { return cmp.Compare(a.Attempt, b.Attempt) })
	return out
}

// requestLine is how HTTP and browser steps log a request: "GET http://… → 200 OK in 12 ms (…)"
// or "opened http://… → 200".
var requestLine = regexp.MustCompile(`^(?:([A-Z]+) |opened )(\S+) → (\d{3}[^()]*?)(?: in (\d+) ms)?(?: \(.*\))?$`)

// traceJSON is the run's trace for the trace viewer.
func (s *Server) traceJSON(ctx context.Context, r filesRun) ([]byte, error) {
	scenarios, err := s.Runs.Scenarios(ctx, r.ID)
	if err != nil {
		return nil, err
	}
	arts, err := s.Artifacts.OfRun(ctx, r.ID)
	if err != nil {
		return nil, err
	}
	paths := runFilePaths(scenarios, arts)
	logs, err := s.Runs.LogEvents(ctx, r.ID, 20000)
	if err != nil {
		return nil, err
	}
	doc := traceDoc{RunID: r.ID, Project: r.Project, Status: r.Status, Source: r.Source, Scenarios: []traceScenario{}}
	index := map[uuid.UUID]int{}
	for _, sc := range scenarios {
		ts := traceScenario{ID: sc.ID, Module: sc.Module, FeaturePath: sc.FeaturePath, FeatureName: sc.FeatureName, Name: sc.Name, Line: int(sc.Line),
			Status: sc.Status, Attempts: int(sc.Attempts), StartedAt: sc.StartedAt, DurationMs: sc.DurationMs, Steps: []traceStep{}, Logs: []traceLog{}, Network: []traceRequest{},
			Traces: traceAttempts(sc.ScenarioKey, arts, paths), Files: []traceFile{}}
		for _, a := range arts {
			if a.ScenarioKey != nil && *a.ScenarioKey == sc.ScenarioKey && a.StepIndex == nil && !strings.HasPrefix(a.Name, "trace-a") {
				ts.Files = append(ts.Files, traceFile{Path: paths[a.ID], Name: a.Name, MediaType: safecontent.MediaType(a.MediaType), Kind: a.Kind, SizeBytes: a.SizeBytes, ArtifactID: a.ID})
			}
		}
		if len(sc.Error) > 0 {
			var e results.StepError
			if json.Unmarshal(sc.Error, &e) == nil && e.Message != "" {
				ts.Error = resultsapi.StepError(&e)
			}
		}
		var steps []results.Step
		if err := json.Unmarshal(sc.Steps, &steps); err != nil {
			return nil, fmt.Errorf("scenario %s steps: %w", sc.ID, err)
		}
		for _, st := range steps {
			t := traceStep{RunStep: resultsapi.Step(st), Files: []traceFile{}}
			for _, a := range st.Attachments {
				t.Files = append(t.Files, traceFile{Path: paths[a.ArtifactID], Name: a.Name, MediaType: safecontent.MediaType(a.MediaType), Kind: a.Kind, SizeBytes: a.SizeBytes, ArtifactID: a.ArtifactID})
			}
			ts.Steps = append(ts.Steps, t)
		}
		index[sc.ID] = len(doc.Scenarios)
		doc.Scenarios = append(doc.Scenarios, ts)
	}
	for _, l := range logs {
		var ev results.Event
		if json.Unmarshal(l.Data, &ev) != nil || ev.ScenarioID == nil || ev.Message == nil {
			continue
		}
		i, ok := index[*ev.ScenarioID]
		if !ok {
			continue
		}
		level := "info"
		if ev.Level != nil {
			level = *ev.Level
		}
		sc := &doc.Scenarios[i]
		sc.Logs = append(sc.Logs, traceLog{At: l.At, Level: level, Message: *ev.Message, StepIndex: ev.StepIndex})
		if m := requestLine.FindStringSubmatch(*ev.Message); m != nil {
			req := traceRequest{At: l.At, Method: m[1], URL: m[2], Status: strings.TrimSpace(m[3]), StepIndex: ev.StepIndex}
			if req.Method == "" {
				req.Method = "GET" // a page navigation
			}
			if m[4] != "" {
				n, _ := strconv.ParseInt(m[4], 10, 64)
				req.DurationMs = &n
			}
			sc.Network = append(sc.Network, req)
		}
	}
	return json.Marshal(doc)
}
