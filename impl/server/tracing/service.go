package tracing

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"time"

	"github.com/google/uuid"

	"github.com/sdods/sdods/gen/db"
	"github.com/sdods/sdods/impl/server/apierr"
	"github.com/sdods/sdods/impl/server/blob"
	"github.com/sdods/sdods/impl/server/steplib"
	"github.com/sdods/sdods/impl/server/store"
)

// maxManifestBytes bounds a manifest read from the blob store (the recorder's caps keep real
// ones far below it).
const maxManifestBytes = 32 << 20

// Service finds and compares scenario traces.
type Service struct {
	st    *store.Store
	blobs blob.Store
}

// NewService returns the traces' service.
func NewService(st *store.Store, blobs blob.Store) *Service { return &Service{st: st, blobs: blobs} }

// Baseline is the run's scenario a trace was compared with.
type Baseline struct {
	RunID, ScenarioID uuid.UUID
	Attempt           int
	StartedAt         *time.Time
}

// Comparison is a scenario's trace compared with its baseline's.
type Comparison struct {
	RunID, ScenarioID uuid.UUID
	Attempt           int
	// Baseline is nil when no earlier passing run of the scenario kept a trace; Reason says so.
	Baseline        *Baseline
	Reason          string
	Steps           []StepDiff
	FirstDifference int
}

// Compare compares the trace of the scenario scenarioID of run runID (its last failed attempt
// kept, else its last attempt) with the trace of the most recent earlier run of the same
// identity in the project that passed and kept one. It refuses with not_found when the
// scenario does not exist or kept no trace.
func (s *Service) Compare(ctx context.Context, runID, scenarioID uuid.UUID) (Comparison, error) {
	sc, err := s.st.TraceScenario(ctx, db.TraceScenarioParams{RunID: runID, ID: scenarioID})
	if err != nil {
		return Comparison{}, err
	}
	cur, err := s.manifests(ctx, runID, sc.ScenarioKey)
	if err != nil {
		return Comparison{}, err
	}
	if len(cur) == 0 {
		return Comparison{}, apierr.New(apierr.NotFound, "the scenario kept no trace",
			"the project's tracing was off when it ran, or the run predates tracing (settings.tracing of the project)")
	}
	pick := cur[len(cur)-1]
	for _, m := range cur {
		if m.Status == string(steplib.StatusFailed) {
			pick = m
		}
	}
	out := Comparison{RunID: runID, ScenarioID: scenarioID, Attempt: pick.Attempt, Steps: []StepDiff{}, FirstDifference: -1}
	if sc.Identity == nil {
		out.Reason = "the scenario has no identity to find earlier runs of"
		return out, nil
	}
	base, err := s.st.TraceBaseline(ctx, db.TraceBaselineParams{ProjectID: sc.ProjectID, Identity: sc.Identity, RunID: runID, Before: sc.RunAt})
	if store.IsNotFound(err) {
		out.Reason = "no earlier passing run of this scenario kept a trace (with tracing on_failure, a passing run keeps its manifest; with off, nothing)"
		return out, nil
	}
	if err != nil {
		return Comparison{}, err
	}
	bm, err := s.manifests(ctx, base.RunID, base.ScenarioKey)
	if err != nil {
		return Comparison{}, err
	}
	if len(bm) == 0 {
		out.Reason = "the baseline's trace is gone"
		return out, nil
	}
	b := bm[len(bm)-1]
	out.Baseline = &Baseline{RunID: base.RunID, ScenarioID: base.ID, Attempt: b.Attempt, StartedAt: base.StartedAt}
	out.Steps, out.FirstDifference = Diff(pick, b)
	return out, nil
}

var manifestName = regexp.MustCompile(`^trace-a([0-9]+)\.json$`)

// manifests loads the trace manifests kept of a run's scenario, in the order they were made.
func (s *Service) manifests(ctx context.Context, runID uuid.UUID, key string) ([]steplib.TraceManifest, error) {
	rows, err := s.st.TraceManifests(ctx, db.TraceManifestsParams{RunID: uuid.NullUUID{UUID: runID, Valid: true}, ScenarioKey: &key})
	if err != nil {
		return nil, err
	}
	var out []steplib.TraceManifest
	for _, r := range rows {
		m := manifestName.FindStringSubmatch(r.Name)
		if m == nil {
			continue
		}
		rc, err := s.st.OpenArtifact(ctx, s.blobs, r.ID, r.BlobKey)
		if err != nil {
			return nil, apierr.Wrap(err, apierr.Unavailable, "the blob store is unavailable", "try again later")
		}
		b, err := io.ReadAll(io.LimitReader(rc, maxManifestBytes))
		rc.Close()
		if err != nil {
			return nil, fmt.Errorf("read trace manifest %s: %w", r.ID, err)
		}
		var tm steplib.TraceManifest
		if err := json.Unmarshal(b, &tm); err != nil {
			return nil, fmt.Errorf("trace manifest %s: %w", r.ID, err)
		}
		if tm.Attempt == 0 {
			tm.Attempt, _ = strconv.Atoi(m[1])
		}
		out = append(out, tm)
	}
	return out, nil
}
