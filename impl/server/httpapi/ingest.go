package httpapi

import (
	"context"
	"encoding/json"

	"github.com/sdods/sdods/gen/serverapi"
	"github.com/sdods/sdods/impl/server/apierr"
	"github.com/sdods/sdods/impl/server/ingest"
	"github.com/sdods/sdods/impl/server/results/resultsapi"
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
	r, err := s.Ingest.CreateRun(ctx, ingest.NewRun{ProjectID: p.ID, Project: p.Slug, Trigger: triggerOf(ctx), Label: b.Label, Paths: paths,
		Tags: b.Tags, Environment: b.Environment, Branch: b.Branch, CommitSha: b.Commit, Variables: vars, CreatedBy: callerID(ctx)})
	if err != nil {
		return nil, err
	}
	url := "/api/runs/" + r.ID.String()
	return serverapi.CreateRun202JSONResponse{Body: serverapi.RunAccepted{Id: r.ID, Status: serverapi.RunStatus(r.Status), Project: p.Slug,
		CreatedAt: r.CreatedAt, Url: url}, Headers: serverapi.CreateRun202ResponseHeaders{Location: &url}}, nil
}

// IngestRunResults maps a JUnit XML, Cucumber JSON or Cucumber Messages document onto the run's
// scenario tree in one transaction (ingest.Service.Ingest). The same document (or
// Idempotency-Key) again changes nothing and answers the first result with duplicate set.
func (s *Server) IngestRunResults(ctx context.Context, req serverapi.IngestRunResultsRequestObject) (serverapi.IngestRunResultsResponseObject, error) {
	r, err := s.runByID(ctx, req.RunId)
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
	var key string
	if req.Params.IdempotencyKey != nil {
		key = *req.Params.IdempotencyKey
	}
	var format ingest.Format
	if req.Params.Format != nil {
		format = ingest.Format(*req.Params.Format)
	}
	out, err := s.Ingest.Ingest(ctx, ingest.Target{RunID: r.Run.ID, ProjectID: r.Run.ProjectID, Project: r.ProjectSlug}, req.Body, limit, key, format)
	if err != nil {
		return nil, err
	}
	return serverapi.IngestRunResults200JSONResponse(ingestResult(out)), nil
}

// ingestResult converts the ingest service's outcome to the API's type.
func ingestResult(o ingest.Outcome) serverapi.IngestResult {
	return serverapi.IngestResult{Counts: resultsapi.Counts(o.Counts), Duplicate: o.Duplicate, Format: serverapi.IngestResultFormat(o.Format),
		RunId: o.RunID, Status: serverapi.RunStatus(o.Status)}
}
