package ingest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/sdods/sdods/gen/db"
	"github.com/sdods/sdods/impl/server/apierr"
	"github.com/sdods/sdods/impl/server/audit"
	"github.com/sdods/sdods/impl/server/blob"
	"github.com/sdods/sdods/impl/server/reports"
	"github.com/sdods/sdods/impl/server/results"
	"github.com/sdods/sdods/impl/server/safecontent"
	"github.com/sdods/sdods/impl/server/scenariowrite"
	"github.com/sdods/sdods/impl/server/stats"
	"github.com/sdods/sdods/impl/server/store"
)

// Service writes ingested results: it creates the runs that take them and maps a document onto
// a run's scenario tree in one transaction.
type Service struct {
	st    *store.Store
	blobs blob.Store
}

// NewService returns the ingest service.
func NewService(st *store.Store, blobs blob.Store) *Service { return &Service{st: st, blobs: blobs} }

// NewRun is a run for ingest as requested.
type NewRun struct {
	ProjectID                            uuid.UUID
	Project                              string
	Trigger                              string
	Label                                *string
	Paths                                []string
	Tags, Environment, Branch, CommitSha *string
	Variables                            json.RawMessage
	CreatedBy                            uuid.NullUUID
}

// CreatedRun is a run created for ingest.
type CreatedRun struct {
	ID        uuid.UUID
	Status    string
	CreatedAt time.Time
}

// CreateRun creates a run that no worker executes: its results come from ingest. It is running
// until the first document arrives.
func (s *Service) CreateRun(ctx context.Context, in NewRun) (CreatedRun, error) {
	var r db.Run
	err := s.st.WithTx(ctx, func(q *db.Queries) error {
		var err error
		r, err = q.CreateRun(ctx, db.CreateRunParams{ProjectID: in.ProjectID, Status: "running", Trigger: in.Trigger, Source: "ingest", Label: in.Label,
			Paths: in.Paths, Tags: in.Tags, Environment: in.Environment, Branch: in.Branch, CommitSha: in.CommitSha, Variables: in.Variables, Datasets: []byte("{}"),
			TimeoutSeconds: 3600, CreatedBy: in.CreatedBy})
		if err != nil {
			return err
		}
		return audit.Record(ctx, q, audit.Target{Kind: "run", ID: r.ID.String(), Name: in.Project}, map[string]any{"source": "ingest", "trigger": r.Trigger})
	})
	if err != nil {
		return CreatedRun{}, err
	}
	return CreatedRun{ID: r.ID, Status: r.Status, CreatedAt: r.CreatedAt}, nil
}

// Target is the run a document is ingested into.
type Target struct {
	RunID, ProjectID uuid.UUID
	Project          string
}

// Ingest maps a JUnit XML, Cucumber JSON or Cucumber Messages document (format, or detected when
// empty) read from body (at most limit bytes) onto the run's scenario tree in one transaction.
// The same document (or idempotencyKey, when not empty) again changes nothing and answers the
// first result with Duplicate set.
//
// The document is streamed (issue 31, item 2): the body goes to the blob store (which hashes it),
// then is parsed from there as the scenarios are COPYed into the run (scenariowrite.Copy), so
// memory holds one test case or feature at a time, not the document. A malformed document is a
// bad request even when the fault is found at its end: the transaction rolls back, nothing of it
// is written.
func (s *Service) Ingest(ctx context.Context, r Target, body io.Reader, limit int64, idempotencyKey string, format Format) (Outcome, error) {
	// Content goes to the blob store first: it is addressed by its hash, so content of a
	// transaction that then fails is harmless and is stored once when the ingest is repeated.
	in := &bodyReader{r: body}
	docInfo, err := s.blobs.Put(ctx, in, limit)
	var tooLarge *http.MaxBytesError
	switch {
	case errors.Is(err, blob.ErrTooLarge) || errors.As(in.err, &tooLarge):
		return Outcome{}, apierr.New(apierr.PayloadTooLarge, fmt.Sprintf("the document exceeds the ingest limit of %d bytes", limit), "split the results into several documents")
	case in.err != nil:
		return Outcome{}, apierr.Wrap(in.err, apierr.BadRequest, "the body could not be read", "send the document as the request body")
	case err != nil:
		return Outcome{}, apierr.Wrap(err, apierr.Unavailable, "the blob store is unavailable", "try again later")
	}
	digest := docInfo.SHA256
	key := "sha256:" + digest
	if idempotencyKey != "" {
		key = "key:" + idempotencyKey
	}
	if prev, err := s.st.GetRunIngest(ctx, db.GetRunIngestParams{RunID: r.RunID, IdempotencyKey: key}); err == nil {
		return s.duplicate(ctx, r, prev)
	} else if !store.IsNotFound(err) {
		return Outcome{}, err
	}
	var out Outcome
	var duplicate *db.RunIngest
	err = s.st.WithTx(ctx, func(q *db.Queries) error {
		locked, err := q.LockRun(ctx, r.RunID)
		if err != nil {
			return err
		}
		if prev, err := q.GetRunIngest(ctx, db.GetRunIngestParams{RunID: r.RunID, IdempotencyKey: key}); err == nil {
			duplicate = &prev // a concurrent request ingested it first
			return audit.Record(ctx, q, audit.Target{Kind: "run", ID: r.RunID.String(), Name: r.Project}, map[string]any{"duplicate": true, "format": prev.Format})
		} else if !store.IsNotFound(err) {
			return err
		}
		if locked.Status == "cancelled" || locked.Status == "errored" || locked.Status == "timed_out" {
			return apierr.New(apierr.Conflict, "the run ended "+locked.Status, "create another run for ingest")
		}
		pos, err := q.NextScenarioPosition(ctx, r.RunID)
		if err != nil {
			return err
		}
		doc, err := s.blobs.Open(ctx, docInfo.Key)
		if err != nil {
			return apierr.Wrap(err, apierr.Unavailable, "the blob store is unavailable", "try again later")
		}
		defer doc.Close()
		w := &docWriter{s: s, r: r, pos: pos, arts: map[string][]db.Artifact{}, blobKeys: map[string]bool{docInfo.Key: true}}
		sum, scenarios, err := w.write(ctx, q, doc, format)
		if err != nil {
			return err
		}
		if err := w.insertArtifacts(ctx, q); err != nil {
			return err
		}
		if err := holdBlobs(ctx, q, s.blobs, w.blobKeys); err != nil {
			return err
		}
		var total time.Duration
		for _, d := range w.durations {
			total = AddDuration(total, d)
		}
		return s.finish(ctx, q, r, locked, finishing{sum: sum, scenarios: scenarios, total: total, key: key, digest: digest, doc: docInfo}, &out)
	})
	if err != nil {
		var perr *Error
		if errors.As(err, &perr) {
			return Outcome{}, apierr.Wrap(err, apierr.BadRequest, "the document is malformed", perr.Error())
		}
		return Outcome{}, err
	}
	if duplicate != nil {
		return storedResult(*duplicate)
	}
	return out, nil
}

// bodyReader remembers the request body's own read error, told apart from the blob store's.
type bodyReader struct {
	r   io.Reader
	err error
}

func (b *bodyReader) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err != nil && !errors.Is(err, io.EOF) {
		b.err = err
	}
	return n, err
}

// docWriter writes one document's scenarios while it is parsed.
type docWriter struct {
	s   *Service
	r   Target
	pos int32
	// arts are the artifacts of the document's attachments by scenario key, inserted once the
	// scenarios are written (the connection is busy with the COPY meanwhile).
	arts     map[string][]db.Artifact
	blobKeys map[string]bool
	// durations of the document's scenarios by index (a rerun's replace its first attempt's).
	durations []time.Duration
	// reruns are the results of test cases run again, written over their first attempt.
	reruns map[string]scenariowrite.Result
}

// errStopped stops the parse when the COPY ended early.
var errStopped = errors.New("ingest: the write stopped")

// write parses the document in a goroutine of its own and COPYs its scenarios as they come,
// returning its summary and how many scenarios it has.
func (w *docWriter) write(ctx context.Context, q *db.Queries, doc io.Reader, format Format) (Summary, int, error) {
	ch := make(chan scenariowrite.Result, 64)
	done := make(chan struct{})
	var (
		sum  Summary
		perr error
	)
	go func() {
		defer close(ch)
		sum, perr = Stream(doc, format, func(sc Scenario, index int, again bool) error {
			res, err := w.result(ctx, sc, index)
			if err != nil {
				return err
			}
			if again {
				w.durations[index] = sc.Duration
				if w.reruns == nil {
					w.reruns = map[string]scenariowrite.Result{}
				}
				w.reruns[res.Key] = res
				return nil
			}
			w.durations = append(w.durations, sc.Duration)
			select {
			case ch <- res:
				return nil
			case <-done:
				return errStopped
			}
		})
	}()
	next := func() (scenariowrite.Result, bool, error) {
		if res, ok := <-ch; ok {
			return res, true, nil
		}
		if perr != nil {
			return scenariowrite.Result{}, false, perr
		}
		return scenariowrite.Result{}, false, nil
	}
	_, err := scenariowrite.Copy(ctx, q, w.r.RunID, w.pos == 0, next)
	close(done)
	for range ch { // the parse has stopped once ch is closed
	}
	if err == nil {
		err = perr
	}
	if err != nil {
		return sum, 0, err
	}
	reruns := make([]scenariowrite.Result, 0, len(w.reruns))
	for _, res := range w.reruns {
		reruns = append(reruns, res)
	}
	sort.Slice(reruns, func(i, j int) bool { return reruns[i].Position < reruns[j].Position })
	if err := scenariowrite.Upsert(ctx, q, w.r.RunID, reruns); err != nil {
		return sum, 0, err
	}
	return sum, len(w.durations), nil
}

// result converts a parsed scenario to its stored result, storing its attachments' content.
func (w *docWriter) result(ctx context.Context, sc Scenario, index int) (scenariowrite.Result, error) {
	steps := make([]results.Step, len(sc.Steps))
	var arts []db.Artifact
	for j, st := range sc.Steps {
		rs := results.NewStep(j)
		rs.Keyword, rs.Text, rs.Status, rs.DocString, rs.Error = st.Keyword, st.Text, st.Status, st.DocString, storedStepError(st.Error)
		if st.Line > 0 {
			rs.Line = ptr(st.Line)
		}
		if st.Duration != nil {
			rs.DurationMs = ptr(st.Duration.Milliseconds())
		}
		if len(st.DataTable) > 0 {
			rs.DataTable = &st.DataTable
		}
		for _, a := range st.Attachments {
			info, err := w.s.blobs.Put(ctx, bytes.NewReader(a.Data), 0)
			if err != nil {
				return scenariowrite.Result{}, apierr.Wrap(err, apierr.Unavailable, "the blob store is unavailable", "try again later")
			}
			w.blobKeys[info.Key] = true
			idx := int32(j)
			// The document's media type is only a hint: stored from the allow-list.
			art := db.Artifact{ID: uuid.New(), RunID: uuid.NullUUID{UUID: w.r.RunID, Valid: true}, ProjectID: w.r.ProjectID, ScenarioKey: ptr(sc.Key),
				StepIndex: &idx, Name: a.Name, Kind: safecontent.Kind(a.MediaType, a.Name), MediaType: safecontent.MediaType(a.MediaType),
				SizeBytes: info.Size, Sha256: info.SHA256, BlobKey: info.Key}
			arts = append(arts, art)
			rs.Attachments = append(rs.Attachments, results.Attachment{ArtifactID: art.ID, Name: a.Name, MediaType: art.MediaType,
				Kind: art.Kind, SizeBytes: art.SizeBytes})
		}
		steps[j] = rs
	}
	if arts != nil || w.arts[sc.Key] != nil { // a rerun's attachments replace its first attempt's
		w.arts[sc.Key] = arts
	}
	var row *int32
	if sc.ExampleRow != nil {
		row = ptr(int32(*sc.ExampleRow))
	}
	return scenariowrite.Result{Key: sc.Key, Position: w.pos + int32(index), Module: sc.Module, FeaturePath: sc.FeaturePath,
		FeatureName: sc.FeatureName, Name: sc.Name, Line: int32(sc.Line), Tags: sc.Tags, ExampleRow: row, Status: sc.Status,
		Error: storedStepError(sc.Error), Attempts: int32(max(sc.Attempts, 1)), DurationMs: ptr(sc.Duration.Milliseconds()), Steps: steps}, nil
}

// insertArtifacts records the attachments' artifacts, in one COPY.
func (w *docWriter) insertArtifacts(ctx context.Context, q *db.Queries) error {
	var rows [][]any
	for _, arts := range w.arts {
		for _, a := range arts {
			rows = append(rows, []any{a.ID, a.RunID, a.ProjectID, a.ScenarioKey, a.StepIndex, a.Name, a.Kind, a.MediaType, a.SizeBytes, a.Sha256, a.BlobKey})
		}
	}
	if len(rows) == 0 {
		return nil
	}
	tx, ok := store.TxOf(q)
	if !ok {
		return errors.New("ingest: no transaction")
	}
	_, err := tx.CopyFrom(ctx, pgx.Identifier{"artifacts"}, []string{"id", "run_id", "project_id", "scenario_key", "step_index", "name", "kind",
		"media_type", "size_bytes", "sha256", "blob_key"}, pgx.CopyFromRows(rows))
	return store.Translate(err)
}

// holdBlobs keeps the content of keys until the transaction ends (the lock of store.KeepBlob),
// locking them in order so that two ingests cannot wait for each other. Content the clean-up
// deleted meanwhile (content stored long ago, unreferenced, removed between the put and the lock)
// is not held in memory to be put again: the ingest fails and can be repeated.
func holdBlobs(ctx context.Context, q *db.Queries, blobs blob.Store, set map[string]bool) error {
	keys := make([]string, 0, len(set))
	for k := range set {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if err := q.LockBlob(ctx, k); err != nil {
			return err
		}
		rc, err := blobs.Open(ctx, k)
		if err != nil {
			return apierr.Wrap(err, apierr.Unavailable, "stored content went missing during the ingest", "repeat the request")
		}
		if err := rc.Close(); err != nil {
			return err
		}
	}
	return nil
}

// finishing is what finish needs of a written document.
type finishing struct {
	sum         Summary
	scenarios   int
	total       time.Duration
	key, digest string
	doc         blob.Info
}

// finish computes the run's counts and status, finishes it (the statistics rollup follows, by
// trigger, in this transaction) and records the document.
func (s *Service) finish(ctx context.Context, q *db.Queries, r Target, locked db.LockRunRow, f finishing, out *Outcome) error {
	now := time.Now().UTC()
	byStatus, err := q.RunScenarioStatusCounts(ctx, r.RunID)
	if err != nil {
		return err
	}
	var counts results.Counts
	// docs/runs.md: passed means every scenario passed or was skipped, and nothing outside a
	// scenario (a hook of the whole run, the test run itself) failed, in this document or an earlier one.
	status := "passed"
	for _, c := range byStatus {
		for k := int32(0); k < c.N; k++ {
			reports.Add(&counts, c.Status, int(c.Attempts))
		}
		if c.Status != "passed" && c.Status != "skipped" {
			status = "failed"
		}
	}
	runErr := locked.Error
	if len(f.sum.Errors) > 0 {
		joined := strings.Join(f.sum.Errors, "\n")
		if runErr != nil && *runErr != "" {
			joined = *runErr + "\n" + joined
		}
		runErr = &joined
	}
	if runErr != nil && *runErr != "" {
		status = "failed"
	}
	started := now.Add(-f.total)
	if f.sum.StartedAt != nil && f.sum.StartedAt.Before(now) {
		started = *f.sum.StartedAt
	}
	finished := started.Add(f.total)
	countsJSON, _ := json.Marshal(counts)
	after, err := q.FinishIngestRun(ctx, db.FinishIngestRunParams{ID: r.RunID, Status: status, Counts: countsJSON, Error: runErr, StartedAt: started, FinishedAt: finished})
	if err != nil {
		return err
	}
	// The statistics rollup of the run is applied after this transaction (stats/rollup.go), by a
	// job inserted with its first finish only: a later document into a run still pending is
	// applied by that job, and one into an applied run was recomputed by the finish itself.
	if locked.Status == "queued" || locked.Status == "running" {
		if err := stats.QueueRollup(ctx, q, after.ProjectID); err != nil {
			return err
		}
	}
	art, err := q.CreateArtifact(ctx, db.CreateArtifactParams{RunID: uuid.NullUUID{UUID: r.RunID, Valid: true}, ProjectID: after.ProjectID,
		Name: "ingest-" + f.digest[:12] + documentExt(f.sum.Format), Kind: results.KindOther, MediaType: safecontent.MediaType(documentType(f.sum.Format)),
		SizeBytes: f.doc.Size, Sha256: f.doc.SHA256, BlobKey: f.doc.Key})
	if err != nil {
		return err
	}
	var afterCounts results.Counts
	_ = json.Unmarshal(after.Counts, &afterCounts)
	*out = Outcome{RunID: r.RunID, Format: f.sum.Format, Status: after.Status, Counts: afterCounts}
	resultJSON, _ := json.Marshal(out)
	if err := q.InsertRunIngest(ctx, db.InsertRunIngestParams{RunID: r.RunID, IdempotencyKey: f.key, Sha256: f.digest, Format: string(f.sum.Format),
		ArtifactID: uuid.NullUUID{UUID: art.ID, Valid: true}, Scenarios: int32(f.scenarios), Result: resultJSON}); err != nil {
		return err
	}
	return audit.Record(ctx, q, audit.Target{Kind: "run", ID: r.RunID.String(), Name: r.Project},
		map[string]any{"format": f.sum.Format, "scenarios": f.scenarios, "sha256": f.digest, "status": after.Status})
}

// duplicate answers a document ingested before; the request is audited like any other.
func (s *Service) duplicate(ctx context.Context, r Target, prev db.RunIngest) (Outcome, error) {
	err := s.st.WithTx(ctx, func(q *db.Queries) error {
		return audit.Record(ctx, q, audit.Target{Kind: "run", ID: r.RunID.String(), Name: r.Project}, map[string]any{"duplicate": true, "format": prev.Format})
	})
	if err != nil {
		return Outcome{}, err
	}
	return storedResult(prev)
}

func storedResult(prev db.RunIngest) (Outcome, error) {
	var out Outcome
	if err := json.Unmarshal(prev.Result, &out); err != nil {
		return out, fmt.Errorf("stored ingest result: %w", err)
	}
	out.Duplicate = true
	return out, nil
}

// Outcome is the result of ingesting a document, stored in run_ingests.result and answered again
// for the same document; its JSON is the API's IngestResult (TestOutcomeStoredShape).
type Outcome struct {
	Counts    results.Counts `json:"counts"`
	Duplicate bool           `json:"duplicate"`
	Format    Format         `json:"format"`
	RunID     uuid.UUID      `json:"runId"`
	Status    string         `json:"status"`
}

// storedStepError is a step's error as run_scenarios stores it.
func storedStepError(e *StepError) *results.StepError {
	if e == nil {
		return nil
	}
	return &results.StepError{Message: e.Message, Type: nonEmpty(e.Type), Stack: nonEmpty(e.Stack)}
}

func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func documentExt(f Format) string {
	switch f {
	case JUnit:
		return ".xml"
	case CucumberMessages:
		return ".ndjson"
	}
	return ".json"
}

func documentType(f Format) string {
	switch f {
	case JUnit:
		return "application/xml"
	case CucumberMessages:
		return "application/x-ndjson"
	}
	return "application/json"
}
