package httpapi

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/sdods/sdods/gen/db"
	"github.com/sdods/sdods/gen/serverapi"
	"github.com/sdods/sdods/impl/server/apierr"
	"github.com/sdods/sdods/impl/server/audit"
	"github.com/sdods/sdods/impl/server/blob"
	"github.com/sdods/sdods/impl/server/ingest"
	"github.com/sdods/sdods/impl/server/reports"
	"github.com/sdods/sdods/impl/server/safecontent"
	"github.com/sdods/sdods/impl/server/store"
)

// defaultMaxIngest is the largest ingested document when Deps.MaxIngestBytes is not set.
const defaultMaxIngest = 16 << 20

// createIngestRun creates a run that no worker executes: its results come from ingest. It is
// running until the first document arrives.
func (s *Server) createIngestRun(ctx context.Context, b serverapi.CreateRunJSONRequestBody) (serverapi.CreateRunResponseObject, error) {
	p, _, err := s.projectBySlug(ctx, b.Project)
	if err != nil {
		return nil, err
	}
	vars, _ := json.Marshal(map[string]string{})
	if b.Variables != nil {
		vars, _ = json.Marshal(*b.Variables)
	}
	paths := []string{}
	if b.Paths != nil {
		paths = *b.Paths
	}
	var r db.Run
	err = s.Store.WithTx(ctx, func(q *db.Queries) error {
		var err error
		r, err = q.CreateRun(ctx, db.CreateRunParams{ProjectID: p.ID, Status: "running", Trigger: triggerOf(ctx), Source: "ingest", Label: b.Label,
			Paths: paths, Tags: b.Tags, Environment: b.Environment, Branch: b.Branch, CommitSha: b.Commit, Variables: vars, Datasets: []byte("{}"),
			TimeoutSeconds: 3600, CreatedBy: callerID(ctx)})
		if err != nil {
			return err
		}
		return audit.Record(ctx, q, audit.Target{Kind: "run", ID: r.ID.String(), Name: p.Slug}, map[string]any{"source": "ingest", "trigger": r.Trigger})
	})
	if err != nil {
		return nil, err
	}
	url := "/api/runs/" + r.ID.String()
	return serverapi.CreateRun202JSONResponse{Body: serverapi.RunAccepted{Id: r.ID, Status: serverapi.RunStatus(r.Status), Project: p.Slug,
		CreatedAt: r.CreatedAt, Url: url}, Headers: serverapi.CreateRun202ResponseHeaders{Location: &url}}, nil
}

// IngestRunResults maps a JUnit XML, Cucumber JSON or Cucumber Messages document onto the run's
// scenario tree in one transaction. The same document (or Idempotency-Key) again changes nothing
// and answers the first result with duplicate set.
func (s *Server) IngestRunResults(ctx context.Context, req serverapi.IngestRunResultsRequestObject) (serverapi.IngestRunResultsResponseObject, error) {
	r, err := s.runOf(ctx, req.RunId)
	if err != nil {
		return nil, err
	}
	if r.Run.Source != "ingest" {
		return nil, apierr.New(apierr.Conflict, "the run executes features; results cannot be ingested into it",
			"create a run for ingest with POST /api/runs and \"source\": \"ingest\"")
	}
	limit := s.MaxIngestBytes
	if limit <= 0 {
		limit = defaultMaxIngest
	}
	data, err := io.ReadAll(io.LimitReader(req.Body, limit+1))
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) || int64(len(data)) > limit {
		return nil, apierr.New(apierr.PayloadTooLarge, fmt.Sprintf("the document exceeds the ingest limit of %d bytes", limit), "split the results into several documents")
	}
	if err != nil {
		return nil, apierr.Wrap(err, apierr.BadRequest, "the body could not be read", "send the document as the request body")
	}
	sum := sha256.Sum256(data)
	digest := hex.EncodeToString(sum[:])
	key := "sha256:" + digest
	if req.Params.IdempotencyKey != nil && *req.Params.IdempotencyKey != "" {
		key = "key:" + *req.Params.IdempotencyKey
	}
	if prev, err := s.Store.GetRunIngest(ctx, db.GetRunIngestParams{RunID: r.Run.ID, IdempotencyKey: key}); err == nil {
		return s.duplicateIngest(ctx, r, prev)
	} else if !store.IsNotFound(err) {
		return nil, err
	}
	var format ingest.Format
	if req.Params.Format != nil {
		format = ingest.Format(*req.Params.Format)
	}
	doc, err := ingest.Parse(data, format)
	if err != nil {
		var perr *ingest.Error
		if errors.As(err, &perr) {
			return nil, apierr.Wrap(err, apierr.BadRequest, "the document is malformed", perr.Error())
		}
		return nil, err
	}
	// Content goes to the blob store first: it is addressed by its hash, so content of a
	// transaction that then fails is harmless and is stored once when the ingest is repeated.
	docInfo, err := s.Blobs.Put(ctx, bytes.NewReader(data), 0)
	if err != nil {
		return nil, apierr.Wrap(err, apierr.Unavailable, "the blob store is unavailable", "try again later")
	}
	blobs := map[*ingest.Attachment]blobInfo{}
	for i := range doc.Scenarios {
		for j := range doc.Scenarios[i].Steps {
			for k := range doc.Scenarios[i].Steps[j].Attachments {
				a := &doc.Scenarios[i].Steps[j].Attachments[k]
				info, err := s.Blobs.Put(ctx, bytes.NewReader(a.Data), 0)
				if err != nil {
					return nil, apierr.Wrap(err, apierr.Unavailable, "the blob store is unavailable", "try again later")
				}
				blobs[a] = blobInfo{key: info.Key, sha: info.SHA256, size: info.Size}
			}
		}
	}
	var out serverapi.IngestResult
	var duplicate *db.RunIngest
	err = s.Store.WithTx(ctx, func(q *db.Queries) error {
		locked, err := q.LockRun(ctx, r.Run.ID)
		if err != nil {
			return err
		}
		if err := keepBlobs(ctx, q, s.Blobs, docInfo.Key, data, blobs); err != nil {
			return err
		}
		if prev, err := q.GetRunIngest(ctx, db.GetRunIngestParams{RunID: r.Run.ID, IdempotencyKey: key}); err == nil {
			duplicate = &prev // a concurrent request ingested it first
			return audit.Record(ctx, q, audit.Target{Kind: "run", ID: r.Run.ID.String(), Name: r.ProjectSlug}, map[string]any{"duplicate": true, "format": prev.Format})
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
		if err := q.DeleteScenarioArtifacts(ctx, db.DeleteScenarioArtifactsParams{RunID: uuid.NullUUID{UUID: r.Run.ID, Valid: true}, Keys: keys}); err != nil {
			return err
		}
		pos, err := q.NextScenarioPosition(ctx, r.Run.ID)
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
			return q.UpsertIngestedScenarios(ctx, db.UpsertIngestedScenariosParams{RunID: r.Run.ID, Rows: data})
		}
		for i, sc := range doc.Scenarios {
			total = ingest.AddDuration(total, sc.Duration)
			steps := make([]serverapi.RunStep, len(sc.Steps))
			for j, st := range sc.Steps {
				rs := serverapi.RunStep{Index: j, Keyword: st.Keyword, Text: st.Text, Status: serverapi.ResultStatus(st.Status),
					Attachments: []serverapi.Attachment{}, Heals: []serverapi.Heal{}, DocString: st.DocString, Error: apiStepError(st.Error)}
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
					art, err := q.CreateArtifact(ctx, db.CreateArtifactParams{RunID: uuid.NullUUID{UUID: r.Run.ID, Valid: true}, ProjectID: r.Run.ProjectID,
						ScenarioKey: ptr(sc.Key), StepIndex: &idx, Name: a.Name, Kind: string(attachmentKindOf(a.MediaType, a.Name)),
						MediaType: safecontent.MediaType(a.MediaType), SizeBytes: info.size, Sha256: info.sha, BlobKey: info.key})
					if err != nil {
						return err
					}
					rs.Attachments = append(rs.Attachments, serverapi.Attachment{ArtifactId: art.ID, Name: a.Name, MediaType: art.MediaType,
						Kind: serverapi.AttachmentKind(art.Kind), SizeBytes: art.SizeBytes})
				}
				steps[j] = rs
			}
			stepsJSON, _ := json.Marshal(steps)
			var errJSON json.RawMessage
			if e := apiStepError(sc.Error); e != nil {
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
		byStatus, err := q.RunScenarioStatusCounts(ctx, r.Run.ID)
		if err != nil {
			return err
		}
		var counts serverapi.Counts
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
		after, err := q.FinishIngestRun(ctx, db.FinishIngestRunParams{ID: r.Run.ID, Status: status, Counts: countsJSON, Error: runErr, StartedAt: started, FinishedAt: finished})
		if err != nil {
			return err
		}
		art, err := q.CreateArtifact(ctx, db.CreateArtifactParams{RunID: uuid.NullUUID{UUID: r.Run.ID, Valid: true}, ProjectID: after.ProjectID,
			Name: "ingest-" + digest[:12] + documentExt(doc.Format), Kind: string(serverapi.AttachmentKindOther), MediaType: safecontent.MediaType(documentType(doc.Format)),
			SizeBytes: docInfo.Size, Sha256: docInfo.SHA256, BlobKey: docInfo.Key})
		if err != nil {
			return err
		}
		out = serverapi.IngestResult{RunId: r.Run.ID, Format: serverapi.IngestResultFormat(doc.Format), Status: serverapi.RunStatus(after.Status), Counts: runCounts(after.Counts)}
		resultJSON, _ := json.Marshal(out)
		if err := q.InsertRunIngest(ctx, db.InsertRunIngestParams{RunID: r.Run.ID, IdempotencyKey: key, Sha256: digest, Format: string(doc.Format),
			ArtifactID: uuid.NullUUID{UUID: art.ID, Valid: true}, Scenarios: int32(len(doc.Scenarios)), Result: resultJSON}); err != nil {
			return err
		}
		return audit.Record(ctx, q, audit.Target{Kind: "run", ID: r.Run.ID.String(), Name: r.ProjectSlug},
			map[string]any{"format": doc.Format, "scenarios": len(doc.Scenarios), "sha256": digest, "status": after.Status})
	})
	if err != nil {
		return nil, err
	}
	if duplicate != nil {
		return ingestResult(*duplicate)
	}
	return serverapi.IngestRunResults200JSONResponse(out), nil
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
func keepBlobs(ctx context.Context, q *db.Queries, blobs blob.Store, docKey string, doc []byte, atts map[*ingest.Attachment]blobInfo) error {
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

// duplicateIngest answers a document ingested before; the request is audited like any other.
func (s *Server) duplicateIngest(ctx context.Context, r db.GetRunRow, prev db.RunIngest) (serverapi.IngestRunResultsResponseObject, error) {
	err := s.Store.WithTx(ctx, func(q *db.Queries) error {
		return audit.Record(ctx, q, audit.Target{Kind: "run", ID: r.Run.ID.String(), Name: r.ProjectSlug}, map[string]any{"duplicate": true, "format": prev.Format})
	})
	if err != nil {
		return nil, err
	}
	return ingestResult(prev)
}

func ingestResult(prev db.RunIngest) (serverapi.IngestRunResultsResponseObject, error) {
	var out serverapi.IngestResult
	if err := json.Unmarshal(prev.Result, &out); err != nil {
		return nil, fmt.Errorf("stored ingest result: %w", err)
	}
	out.Duplicate = true
	return serverapi.IngestRunResults200JSONResponse(out), nil
}

func apiStepError(e *ingest.StepError) *serverapi.RunStepError {
	if e == nil {
		return nil
	}
	return &serverapi.RunStepError{Message: e.Message, Type: nonEmpty(e.Type), Stack: nonEmpty(e.Stack)}
}

func documentExt(f ingest.Format) string {
	switch f {
	case ingest.JUnit:
		return ".xml"
	case ingest.CucumberMessages:
		return ".ndjson"
	}
	return ".json"
}

func documentType(f ingest.Format) string {
	switch f {
	case ingest.JUnit:
		return "application/xml"
	case ingest.CucumberMessages:
		return "application/x-ndjson"
	}
	return "application/json"
}
