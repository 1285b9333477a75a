// Package scenariowrite is the one writer of run scenario rows (issue 19): the runner's event
// batches (impl/server/runs) and ingest (impl/server/ingest) both write a scenario's start, its
// steps in progress and its result through it, so that a scenario stored by either path has the
// same columns, the same JSON (results.Step, results.StepError) and goes through the same
// statements and the same triggers (the quarantine trigger on run_scenarios; the statistics
// rollup follows when the run is finished, in the caller's transaction).
//
// Small batches (a runner batch, a few results every 50 ms) are written with one multi-row
// statement each; a document's scenarios are streamed into the table with COPY (Copy), straight
// into run_scenarios when the run has no scenario yet, through a temporary staging table and one
// INSERT … ON CONFLICT otherwise. Every function writes in the caller's transaction and keeps no
// state, so concurrent callers (scenarios of one run executing in parallel) need no lock here.
package scenariowrite

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/sdods/sdods/gen/db"
	"github.com/sdods/sdods/impl/server/results"
	"github.com/sdods/sdods/impl/server/store"
)

// Result is a scenario's stored result: what run_scenarios holds of it once it has run.
type Result struct {
	// ID is the row's id; zero for a row Copy or Upsert creates (a new id is given).
	ID  uuid.UUID
	Key string
	// Position orders the run's scenarios; an existing row keeps its own.
	Position    int32
	Module      string
	FeaturePath string
	FeatureName string
	Name        string
	Line        int32
	Tags        []string
	ExampleRow  *int32
	// Status is one of passed, failed, skipped, pending, undefined, ambiguous, unknown.
	Status     string
	Error      *results.StepError
	Attempts   int32
	DurationMs *int64
	FinishedAt *time.Time
	Steps      []results.Step
}

// Planned is a scenario of a run that executes features, recorded when the run starts (status
// unknown until it runs).
type Planned struct {
	ID          uuid.UUID
	Key         string
	Module      string
	FeaturePath string
	FeatureName string
	Name        string
	Line        int
	Tags        []string
	// ExampleRow and Dataset name the dataset row that feeds the scenario (0 and "" when none).
	ExampleRow int
	Dataset    string
}

// Plan records a run's scenarios in order, in one statement; a key recorded before is kept.
func Plan(ctx context.Context, q *db.Queries, runID uuid.UUID, planned []Planned) error {
	n := len(planned)
	p := db.InsertRunScenariosParams{RunID: runID, Ids: make([]uuid.UUID, n), Keys: make([]string, n), Positions: make([]int32, n),
		Modules: make([]string, n), FeaturePaths: make([]string, n), FeatureNames: make([]string, n), Names: make([]string, n),
		Lines: make([]int32, n), Tags: make([]string, n), ExampleRows: make([]int32, n), Datasets: make([]string, n)}
	for i, s := range planned {
		tags := s.Tags
		if tags == nil {
			tags = []string{}
		}
		rawTags, _ := json.Marshal(tags)
		p.Ids[i], p.Keys[i], p.Positions[i], p.Modules[i] = s.ID, s.Key, int32(i), s.Module
		p.FeaturePaths[i], p.FeatureNames[i], p.Names[i], p.Lines[i] = s.FeaturePath, s.FeatureName, s.Name, int32(s.Line)
		p.Tags[i], p.ExampleRows[i], p.Datasets[i] = string(rawTags), int32(max(s.ExampleRow, 0)), s.Dataset
	}
	return q.InsertRunScenarios(ctx, p)
}

// eventsOnly is a batch of events without scenario changes or attachments (Batch).
func eventsOnly(runID uuid.UUID, async bool, ev Events) db.WriteRunEventsParams {
	p := db.WriteRunEventsParams{RunID: runID, Async: async, Seqs: ev.Seqs, Ats: ev.Ats, Types: ev.Types, Datas: ev.Datas}
	if p.Seqs == nil {
		p.Seqs, p.Ats, p.Types, p.Datas = []int64{}, []time.Time{}, []string{}, []string{}
	}
	if n := len(ev.Seqs); n > 0 {
		p.LastSeq, p.Payload = ev.Seqs[n-1], ev.Notify
	}
	return p
}

// Interrupt ends the run's scenarios that started and have no result (their worker was lost):
// their steps so far stay, the error says why they have no result.
func Interrupt(ctx context.Context, q *db.Queries, runID uuid.UUID, why string) error {
	msg, _ := json.Marshal(results.StepError{Message: why})
	return q.InterruptRunScenarios(ctx, db.InterruptRunScenariosParams{RunID: runID, Error: msg})
}

// StepsJSON is the stored form of a scenario's steps (JSON null for nil, as always stored).
func StepsJSON(steps []results.Step) []byte {
	b, _ := json.Marshal(steps)
	return JSONBSafe(b)
}

// JSONBSafe makes encoding/json's output storable as jsonb, which refuses the escape \u0000 (a NUL
// in a string: a response body or an error message a test brought in). Each one becomes \ufffd, the
// replacement character, in place; an escaped backslash followed by "u0000" is left alone. Without
// it one NUL failed the statement that carried it — a runner batch, and every batch after it.
func JSONBSafe(b []byte) []byte {
	for i := 0; i < len(b); i++ {
		if b[i] != '\\' || i+1 >= len(b) {
			continue
		}
		if b[i+1] == 'u' && i+5 < len(b) && string(b[i+2:i+6]) == "0000" {
			copy(b[i+2:i+6], "fffd")
		}
		i++ // the escaped character (a \uXXXX's digits are not backslashes)
	}
	return b
}

// Upsert writes results by key, in one statement: a new key is a new row, a key the run has
// already replaces that row's result (its id and position stay; started and finished are
// cleared, as a result that comes from elsewhere). Keys must be distinct.
func Upsert(ctx context.Context, q *db.Queries, runID uuid.UUID, rs []Result) error {
	for len(rs) > 0 {
		n := min(len(rs), upsertBatch)
		rows := make([]row, n)
		for i, r := range rs[:n] {
			rows[i] = encode(r)
		}
		data, err := json.Marshal(rows)
		if err != nil {
			return err
		}
		data = JSONBSafe(data)
		if err := q.UpsertRunScenarios(ctx, db.UpsertRunScenariosParams{RunID: runID, Rows: data}); err != nil {
			return err
		}
		rs = rs[n:]
	}
	return nil
}

// upsertBatch bounds the size of one Upsert statement.
const upsertBatch = 2000

// row is one result as FinishRunScenarios and UpsertRunScenarios read it (jsonb_to_recordset).
type row struct {
	ID          *uuid.UUID      `json:"id,omitempty"`
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
	DurationMs  *int64          `json:"durationMs"`
	FinishedAt  *time.Time      `json:"finishedAt"`
	Steps       json.RawMessage `json:"steps"`
}

func encode(r Result) row {
	out := row{Key: r.Key, Position: r.Position, Module: r.Module, FeaturePath: r.FeaturePath, FeatureName: r.FeatureName, Name: r.Name,
		Line: r.Line, Tags: r.Tags, ExampleRow: r.ExampleRow, Status: r.Status, Error: errorJSON(r.Error), Attempts: max(r.Attempts, 1),
		DurationMs: r.DurationMs, FinishedAt: r.FinishedAt, Steps: StepsJSON(r.Steps)}
	if r.ID != uuid.Nil {
		out.ID = &r.ID
	}
	if r.FinishedAt != nil {
		// Truncated to PostgreSQL's microseconds as pgx sends a time, rather than rounded as
		// PostgreSQL reads one from JSON text.
		t := r.FinishedAt.Truncate(time.Microsecond)
		out.FinishedAt = &t
	}
	if out.Tags == nil {
		out.Tags = []string{}
	}
	return out
}

func errorJSON(e *results.StepError) json.RawMessage {
	if e == nil {
		return nil
	}
	b, _ := json.Marshal(e)
	return JSONBSafe(b)
}

// Source yields the results Copy writes, one at a time: ok false at the end. An error stops the
// copy and is returned by Copy as it is (the caller's transaction then rolls back).
type Source func() (r Result, ok bool, err error)

// Copy streams results into the run's scenarios with COPY, in the caller's transaction q (from
// store.WithTx). Keys must be distinct within the stream. When fresh (the run has no scenario),
// the rows go straight into run_scenarios; otherwise they are staged in a temporary table and
// written with one INSERT … ON CONFLICT, as Upsert does, after dropping the artifacts the
// replaced results referenced. It returns how many results it wrote.
func Copy(ctx context.Context, q *db.Queries, runID uuid.UUID, fresh bool, next Source) (int64, error) {
	tx, ok := store.TxOf(q)
	if !ok {
		return 0, errors.New("scenariowrite: Copy needs the queries of store.WithTx")
	}
	// Every copied row fires prepared statements: the foreign key's check of its run and the
	// quarantine trigger's update. The pool's plan_cache_mode (force_custom_plan, for reads whose
	// plans depend on their parameters) would plan them again for every row; their plans do not
	// depend on the values, so for the COPY the cached plans are used as PostgreSQL would by
	// default. The caller's setting is restored after it (the run's finish follows in the
	// transaction).
	var prevPlanMode string
	if err := tx.QueryRow(ctx, `SELECT current_setting('plan_cache_mode'), set_config('plan_cache_mode', 'auto', true)`).Scan(&prevPlanMode, new(string)); err != nil {
		return 0, store.Translate(err)
	}
	n, err := copyRows(ctx, tx, runID, fresh, next)
	if err != nil {
		return n, err
	}
	if _, err := tx.Exec(ctx, `SELECT set_config('plan_cache_mode', $1, true)`, prevPlanMode); err != nil {
		return n, store.Translate(err)
	}
	return n, nil
}

// copyRows is Copy's COPY, straight or staged.
func copyRows(ctx context.Context, tx pgx.Tx, runID uuid.UUID, fresh bool, next Source) (int64, error) {
	src := &copySource{next: next, run: runID}
	if fresh {
		n, err := tx.CopyFrom(ctx, pgx.Identifier{"run_scenarios"}, copyColumns, src)
		return n, src.cause(err)
	}
	if _, err := tx.Exec(ctx, `CREATE TEMPORARY TABLE scenario_stage (LIKE run_scenarios INCLUDING DEFAULTS) ON COMMIT DROP`); err != nil {
		return 0, fmt.Errorf("stage scenarios: %w", err)
	}
	n, err := tx.CopyFrom(ctx, pgx.Identifier{"scenario_stage"}, copyColumns, src)
	if err != nil {
		return 0, src.cause(err)
	}
	// sqlc cannot see a temporary table: these two statements are the only SQL outside queries/.
	if _, err := tx.Exec(ctx, `DELETE FROM artifacts a USING scenario_stage s WHERE a.run_id = $1 AND a.scenario_key = s.scenario_key`, runID); err != nil {
		return 0, store.Translate(err)
	}
	if _, err := tx.Exec(ctx, `INSERT INTO run_scenarios (id, run_id, scenario_key, position, module, feature_path, feature_name, name, line, tags,
            example_row, status, error, attempts, duration_ms, finished_at, steps)
        SELECT id, run_id, scenario_key, position, module, feature_path, feature_name, name, line, tags,
            example_row, status, error, attempts, duration_ms, finished_at, steps FROM scenario_stage ORDER BY position
        ON CONFLICT (run_id, scenario_key) DO UPDATE SET `+upsertSet); err != nil {
		return 0, store.Translate(err)
	}
	if _, err := tx.Exec(ctx, `DROP TABLE scenario_stage`); err != nil {
		return 0, store.Translate(err)
	}
	return n, nil
}

// upsertSet is what a result written again replaces (UpsertRunScenarios says the same).
const upsertSet = `module = EXCLUDED.module, feature_path = EXCLUDED.feature_path, feature_name = EXCLUDED.feature_name,
    name = EXCLUDED.name, line = EXCLUDED.line, tags = EXCLUDED.tags, example_row = EXCLUDED.example_row,
    status = EXCLUDED.status, error = EXCLUDED.error, attempts = EXCLUDED.attempts, started_at = NULL,
    finished_at = EXCLUDED.finished_at, duration_ms = EXCLUDED.duration_ms, steps = EXCLUDED.steps`

// copyColumns are the columns Copy writes. The id is given, not defaulted: a volatile default
// (gen_random_uuid) would make PostgreSQL insert the rows one at a time.
var copyColumns = []string{"id", "run_id", "scenario_key", "position", "module", "feature_path", "feature_name", "name", "line", "tags",
	"example_row", "status", "error", "attempts", "duration_ms", "finished_at", "steps"}

// copySource adapts a Source to pgx.CopyFromSource.
type copySource struct {
	next   Source
	run    uuid.UUID
	values []any
	err    error
}

func (s *copySource) Next() bool {
	r, ok, err := s.next()
	if err != nil {
		s.err = err
		return false
	}
	if !ok {
		return false
	}
	w := encode(r)
	id := r.ID
	if id == uuid.Nil {
		id = uuid.New()
	}
	var errJSON, finished any
	if w.Error != nil {
		errJSON = string(w.Error)
	}
	if w.FinishedAt != nil {
		finished = *w.FinishedAt
	}
	var exampleRow, duration any
	if w.ExampleRow != nil {
		exampleRow = *w.ExampleRow
	}
	if w.DurationMs != nil {
		duration = *w.DurationMs
	}
	s.values = []any{id, s.run, w.Key, w.Position, w.Module, w.FeaturePath, w.FeatureName, w.Name, w.Line, w.Tags,
		exampleRow, w.Status, errJSON, w.Attempts, duration, finished, string(w.Steps)}
	return true
}

func (s *copySource) Values() ([]any, error) { return s.values, nil }

func (s *copySource) Err() error { return s.err }

// cause returns the source's own error (a malformed document found late in the stream) rather
// than pgx's wrapping of it, and translates the database's.
func (s *copySource) cause(err error) error {
	if s.err != nil {
		return s.err
	}
	if err != nil {
		return store.Translate(err)
	}
	return nil
}

// Change is what one runner batch writes to a planned scenario's row: its start (Started), its
// steps so far while it runs (Steps; nil leaves them as they are), or its result once it finished
// (Result; the latest of each). A scenario is in a batch at most once.
type Change struct {
	ID        uuid.UUID
	Started   bool
	StartedAt time.Time
	Steps     []results.Step
	Result    *Result
}

// Events are a batch's run events, stored with the run's last sequence number; Notify, when set,
// is the payload of the one notification listeners get for the batch. Artifacts are the rows of
// the events' attachments (of the run's project, ProjectID), their blobs already stored.
type Events struct {
	Seqs      []int64
	Ats       []time.Time
	Types     []string
	Datas     []string
	Notify    string
	ProjectID uuid.UUID
	Artifacts []Artifact
}

// Artifact is an artifacts row a batch inserts: a run's attachment whose content is stored under
// BlobKey, or is Content, kept in the database with the row, when BlobKey is ""
// (store.InlineContentMax). ScenarioKey "" and a nil StepIndex are stored as NULL; CreatedAt
// orders the run's artifacts.
type Artifact struct {
	ID          uuid.UUID
	ScenarioKey string
	StepIndex   *int
	Name        string
	Kind        string
	MediaType   string
	SizeBytes   int64
	SHA256      string
	BlobKey     string
	Content     []byte
	CreatedAt   time.Time
}

// Batch writes one runner batch — the scenarios' changes, the run's events and their artifacts — in one statement
// (WriteRunBatch), its own transaction when q is not in one. async lets that transaction commit
// without waiting for its WAL flush (docs/runs.md: only the last batch is at risk).
func Batch(ctx context.Context, q *db.Queries, runID uuid.UUID, async bool, ev Events, changes []Change) error {
	if len(changes) == 0 && len(ev.Artifacts) == 0 {
		// Events alone (the run's end event, in its final transaction): the same rows, through a
		// statement without the scenario rows' and artifacts' parts, cheaper to plan and run.
		return q.WriteRunEvents(ctx, eventsOnly(runID, async, ev))
	}
	p := db.WriteRunBatchParams{RunID: runID, Async: async, Seqs: ev.Seqs, Ats: ev.Ats, Types: ev.Types, Datas: ev.Datas,
		ProgressIds: []uuid.UUID{}, ProgressStarted: []bool{}, ProgressStartedAts: []time.Time{}, ProgressSteps: []string{},
		FinishIds: []uuid.UUID{}, FinishStarted: []bool{}, FinishStartedAts: []time.Time{}, Statuses: []string{}, Errors: []string{},
		FinishedAts: []time.Time{}, DurationsMs: []int64{}, FinishSteps: []string{}, Attempts: []int32{}}
	if p.Seqs == nil {
		p.Seqs, p.Ats, p.Types, p.Datas = []int64{}, []time.Time{}, []string{}, []string{}
	}
	if n := len(ev.Seqs); n > 0 {
		p.LastSeq, p.Payload = ev.Seqs[n-1], ev.Notify
	}
	n := len(ev.Artifacts)
	p.ProjectID = ev.ProjectID
	p.ArtIds, p.ArtScenarioKeys, p.ArtStepIndexes = make([]uuid.UUID, n), make([]string, n), make([]int32, n)
	p.ArtNames, p.ArtKinds, p.ArtMediaTypes = make([]string, n), make([]string, n), make([]string, n)
	p.ArtSizes, p.ArtSha256s, p.ArtBlobKeys, p.ArtCreatedAts = make([]int64, n), make([]string, n), make([]string, n), make([]time.Time, n)
	for i, a := range ev.Artifacts {
		step := int32(-1)
		if a.StepIndex != nil {
			step = int32(*a.StepIndex)
		}
		p.ArtIds[i], p.ArtScenarioKeys[i], p.ArtStepIndexes[i] = a.ID, a.ScenarioKey, step
		p.ArtNames[i], p.ArtKinds[i], p.ArtMediaTypes[i] = a.Name, a.Kind, a.MediaType
		p.ArtSizes[i], p.ArtSha256s[i], p.ArtBlobKeys[i], p.ArtCreatedAts[i] = a.SizeBytes, a.SHA256, a.BlobKey, a.CreatedAt
		if a.BlobKey == "" {
			content := a.Content
			if content == nil {
				content = []byte{} // empty, not NULL
			}
			p.ContentIds, p.Contents = append(p.ContentIds, a.ID), append(p.Contents, content)
		}
	}
	if p.ContentIds == nil {
		p.ContentIds, p.Contents = []uuid.UUID{}, [][]byte{}
	}
	for _, c := range changes {
		if r := c.Result; r != nil {
			var dur int64
			if r.DurationMs != nil {
				dur = *r.DurationMs
			}
			var fin time.Time
			if r.FinishedAt != nil {
				fin = *r.FinishedAt
			}
			p.FinishIds, p.FinishStarted, p.FinishStartedAts = append(p.FinishIds, c.ID), append(p.FinishStarted, c.Started), append(p.FinishStartedAts, c.StartedAt)
			p.Statuses, p.Errors, p.FinishedAts = append(p.Statuses, r.Status), append(p.Errors, string(errorJSON(r.Error))), append(p.FinishedAts, fin)
			p.DurationsMs, p.FinishSteps, p.Attempts = append(p.DurationsMs, dur), append(p.FinishSteps, string(StepsJSON(r.Steps))), append(p.Attempts, max(r.Attempts, 1))
			continue
		}
		var steps []byte // '' in the statement: steps unchanged
		if c.Steps != nil {
			steps = StepsJSON(c.Steps)
		}
		p.ProgressIds, p.ProgressStarted, p.ProgressStartedAts = append(p.ProgressIds, c.ID), append(p.ProgressStarted, c.Started), append(p.ProgressStartedAts, c.StartedAt)
		p.ProgressSteps = append(p.ProgressSteps, string(steps))
	}
	return q.WriteRunBatch(ctx, p)
}
