package ingest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/sdods/sdods/gen/db"
	"github.com/sdods/sdods/impl/server/apierr"
	"github.com/sdods/sdods/impl/server/audit"
	"github.com/sdods/sdods/impl/server/blob"
	"github.com/sdods/sdods/impl/server/reports"
	"github.com/sdods/sdods/impl/server/results"
	"github.com/sdods/sdods/impl/server/safecontent"
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
// empty) onto the run's scenario tree in one transaction. The same document (or idempotencyKey,
// when not empty) again changes nothing and answers the first result with Duplicate set.
func (s *Service) Ingest(ctx context.Context, r Target, data []byte, idempotencyKey string, format Format) (Outcome, error) {
	sum := sha256.Sum256(data)
	digest := hex.EncodeToString(sum[:])
	key := "sha256:" + digest
	if idempotencyKey != "" {
		key = "key:" + idempotencyKey
	}
	if prev, err := s.st.GetRunIngest(ctx, db.GetRunIngestParams{RunID: r.RunID, IdempotencyKey: key}); err == nil {
		return s.duplicate(ctx, r, prev)
	} else if !store.IsNotFound(err) {
		return Outcome{}, err
	}
	doc, err := Parse(data, format)
	if err != nil {
		var perr *Error
		if errors.As(err, &perr) {
			return Outcome{}, apierr.Wrap(err, apierr.BadRequest, "the document is malformed", perr.Error())
		}
		return Outcome{}, err
	}
	// Content goes to the blob store first: it is addressed by its hash, so content of a
	// transaction that then fails is harmless and is stored once when the ingest is repeated.
	docInfo, err := s.blobs.Put(ctx, bytes.NewReader(data), 0)
	if err != nil {
		return Outcome{}, apierr.Wrap(err, apierr.Unavailable, "the blob store is unavailable", "try again later")
	}
	blobs := map[*Attachment]blobInfo{}
	for i := range doc.Scenarios {
		for j := range doc.Scenarios[i].Steps {
			for k := range doc.Scenarios[i].Steps[j].Attachments {
				a := &doc.Scenarios[i].Steps[j].Attachments[k]
				info, err := s.blobs.Put(ctx, bytes.NewReader(a.Data), 0)
				if err != nil {
					return Outcome{}, apierr.Wrap(err, apierr.Unavailable, "the blob store is unavailable", "try again later")
				}
				blobs[a] = blobInfo{key: info.Key, sha: info.SHA256, size: info.Size}
			}
		}
	}
	var out Outcome
	var duplicate *db.RunIngest
	err = s.st.WithTx(ctx, func(q *db.Queries) error {
		locked, err := q.LockRun(ctx, r.RunID)
		if err != nil {
			return err
		}
		if err := keepBlobs(ctx, q, s.blobs, docInfo.Key, data, blobs); err != nil {
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
		keys := make([]string, len(doc.Scenarios))
		for i, sc := range doc.Scenarios {
			keys[i] = sc.Key
		}
		if err := q.DeleteScenarioArtifacts(ctx, db.DeleteScenarioArtifactsParams{RunID: uuid.NullUUID{UUID: r.RunID, Valid: true}, Keys: keys}); err != nil {
			return err
		}
		pos, err := q.NextScenarioPosition(ctx, r.RunID)
		if err != nil {
			return err
		}
		now := time.Now().UTC()
		var total time.Duration
		// Scenarios are written ingestBatch at a time, each batch one statement (issue 31, item 2).
		batch := make([]ingestedRow, 0, min(len(doc.Scenarios), ingestBatch))
		batchAt := map[string]int{}
		flush := func() error {
			rows := batch[:0:0]
			for _, b := range batch {
				if b.Key != "" {
					rows = append(rows, b)
				}
			}
			batch, batchAt = batch[:0], map[string]int{}
			if len(rows) == 0 {
				return nil
			}
			data, err := json.Marshal(rows)
			if err != nil {
				return err
			}
			return q.UpsertIngestedScenarios(ctx, db.UpsertIngestedScenariosParams{RunID: r.RunID, Rows: data})
		}
		for i, sc := range doc.Scenarios {
			total = AddDuration(total, sc.Duration)
			steps := make([]results.Step, len(sc.Steps))
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
				for k := range st.Attachments {
					a := &st.Attachments[k]
					info := blobs[a]
					idx := int32(j)
					// The document's media type is only a hint: stored from the allow-list.
					art, err := q.CreateArtifact(ctx, db.CreateArtifactParams{RunID: uuid.NullUUID{UUID: r.RunID, Valid: true}, ProjectID: r.ProjectID,
						ScenarioKey: ptr(sc.Key), StepIndex: &idx, Name: a.Name, Kind: safecontent.Kind(a.MediaType, a.Name),
						MediaType: safecontent.MediaType(a.MediaType), SizeBytes: info.size, Sha256: info.sha, BlobKey: info.key})
					if err != nil {
						return err
					}
					rs.Attachments = append(rs.Attachments, results.Attachment{ArtifactID: art.ID, Name: a.Name, MediaType: art.MediaType,
						Kind: art.Kind, SizeBytes: art.SizeBytes})
				}
				steps[j] = rs
			}
			stepsJSON, _ := json.Marshal(steps)
			var errJSON json.RawMessage
			if e := storedStepError(sc.Error); e != nil {
				errJSON, _ = json.Marshal(e)
			}
			var row *int32
			if sc.ExampleRow != nil {
				row = ptr(int32(*sc.ExampleRow))
			}
			if at, seen := batchAt[sc.Key]; seen { // a key twice in one document: the last one wins, as one upsert after another
				batch[at] = ingestedRow{}
			}
			batchAt[sc.Key] = len(batch)
			batch = append(batch, ingestedRow{Key: sc.Key, Position: pos + int32(i), Module: sc.Module, FeaturePath: sc.FeaturePath,
				FeatureName: sc.FeatureName, Name: sc.Name, Line: int32(sc.Line), Tags: sc.Tags, ExampleRow: row, Status: sc.Status,
				Error: errJSON, Attempts: int32(max(sc.Attempts, 1)), DurationMs: sc.Duration.Milliseconds(), Steps: stepsJSON})
			if len(batch) == ingestBatch {
				if err := flush(); err != nil {
					return err
				}
			}
		}
		if err := flush(); err != nil {
			return err
		}
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
		if len(doc.Errors) > 0 {
			joined := strings.Join(doc.Errors, "\n")
			if runErr != nil && *runErr != "" {
				joined = *runErr + "\n" + joined
			}
			runErr = &joined
		}
		if runErr != nil && *runErr != "" {
			status = "failed"
		}
		started := now.Add(-total)
		if doc.StartedAt != nil && doc.StartedAt.Before(now) {
			started = *doc.StartedAt
		}
		finished := started.Add(total)
		countsJSON, _ := json.Marshal(counts)
		after, err := q.FinishIngestRun(ctx, db.FinishIngestRunParams{ID: r.RunID, Status: status, Counts: countsJSON, Error: runErr, StartedAt: started, FinishedAt: finished})
		if err != nil {
			return err
		}
		art, err := q.CreateArtifact(ctx, db.CreateArtifactParams{RunID: uuid.NullUUID{UUID: r.RunID, Valid: true}, ProjectID: after.ProjectID,
			Name: "ingest-" + digest[:12] + documentExt(doc.Format), Kind: results.KindOther, MediaType: safecontent.MediaType(documentType(doc.Format)),
			SizeBytes: docInfo.Size, Sha256: docInfo.SHA256, BlobKey: docInfo.Key})
		if err != nil {
			return err
		}
		var afterCounts results.Counts
		_ = json.Unmarshal(after.Counts, &afterCounts)
		out = Outcome{RunID: r.RunID, Format: doc.Format, Status: after.Status, Counts: afterCounts}
		resultJSON, _ := json.Marshal(out)
		if err := q.InsertRunIngest(ctx, db.InsertRunIngestParams{RunID: r.RunID, IdempotencyKey: key, Sha256: digest, Format: string(doc.Format),
			ArtifactID: uuid.NullUUID{UUID: art.ID, Valid: true}, Scenarios: int32(len(doc.Scenarios)), Result: resultJSON}); err != nil {
			return err
		}
		return audit.Record(ctx, q, audit.Target{Kind: "run", ID: r.RunID.String(), Name: r.Project},
			map[string]any{"format": doc.Format, "scenarios": len(doc.Scenarios), "sha256": digest, "status": after.Status})
	})
	if err != nil {
		return Outcome{}, err
	}
	if duplicate != nil {
		return storedResult(*duplicate)
	}
	return out, nil
}

// ingestBatch is how many scenarios one statement writes.
const ingestBatch = 2000

// ingestedRow is one scenario of UpsertIngestedScenarios (queries/reports.sql).
type ingestedRow struct {
	Key         string          `json:"key"`
	Position    int32           `json:"position"`
	Module      string          `json:"module"`
	FeaturePath string          `json:"featurePath"`
	FeatureName string          `json:"featureName"`
	Name        string          `json:"name"`
	Line        int32           `json:"line"`
	Tags        []string        `json:"tags"`
	ExampleRow  *int32          `json:"exampleRow"`
	Status      string          `json:"status"`
	Error       json.RawMessage `json:"error"`
	Attempts    int32           `json:"attempts"`
	DurationMs  int64           `json:"durationMs"`
	Steps       json.RawMessage `json:"steps"`
}

// keepBlobs keeps the document's and the attachments' content until the transaction ends (see
// store.KeepBlob), locking the keys in order so that two ingests cannot wait for each other.
func keepBlobs(ctx context.Context, q *db.Queries, blobs blob.Store, docKey string, doc []byte, atts map[*Attachment]blobInfo) error {
	content := map[string][]byte{docKey: doc}
	for a, info := range atts {
		content[info.key] = a.Data
	}
	keys := make([]string, 0, len(content))
	for k := range content {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if err := store.KeepBlob(ctx, q, blobs, k, content[k]); err != nil {
			return err
		}
	}
	return nil
}

type blobInfo struct {
	key, sha string
	size     int64
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
