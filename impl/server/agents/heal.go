package agents

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/sdods/sdods/gen/db"
	"github.com/sdods/sdods/impl/server/audit"
	"github.com/sdods/sdods/impl/server/features"
	"github.com/sdods/sdods/impl/server/runs"
	"github.com/sdods/sdods/impl/server/stats"
	"github.com/sdods/sdods/impl/server/steplib"
	"github.com/sdods/sdods/impl/server/store"
)

// DefaultMinOccurrences is how many runs a heal must recur in before heal proposes a patch.
const DefaultMinOccurrences = 2

// Heal turns recurring heals into feature patches verified by a verification run.
func Heal() *Kind {
	return &Kind{
		Name: "heal",
		Description: "Turns heal events that recurred (the same old selector healed to the same new one in minOccurrences runs) into a feature_patch " +
			"replacing the selector in the feature file, and verifies each patch by running the patched scenario; a rejected replacement is never proposed again.",
		Scopes: []string{"agents:write", "runs:write"},
		InputSchema: map[string]any{"type": "object", "additionalProperties": false,
			"properties": map[string]any{"minOccurrences": map[string]any{"type": "integer", "minimum": 1, "maximum": 1000,
				"description": fmt.Sprintf("runs a heal must recur in (default %d)", DefaultMinOccurrences)}}},
		Run: runHeal,
	}
}

func runHeal(ctx context.Context, j *Job) error {
	n := j.Input.MinOccurrences
	if n <= 0 {
		n = DefaultMinOccurrences
	}
	q := j.Queries()
	heals, err := q.RecurringHeals(ctx, db.RecurringHealsParams{ProjectID: j.Row.ProjectID, MinRuns: int64(n)})
	if err != nil {
		return err
	}
	if err := j.Log(ctx, "%d heal(s) recurred in at least %d runs", len(heals), n); err != nil {
		return err
	}
	proposed, verified := 0, 0
	for i, h := range heals {
		f, err := q.GetFeature(ctx, db.GetFeatureParams{ProjectID: j.Row.ProjectID, Path: h.FeaturePath})
		if store.IsNotFound(err) {
			_ = j.Log(ctx, "%s no longer exists; %s → %s skipped", h.FeaturePath, h.OldSelector, h.NewSelector)
			continue
		}
		if err != nil {
			return err
		}
		after, changed := replaceSelector(f.Content, h.OldSelector, h.NewSelector)
		if changed == 0 {
			_ = j.Log(ctx, "%s no longer uses %s; skipped", h.FeaturePath, h.OldSelector)
			continue
		}
		diff := UnifiedDiff(h.FeaturePath, f.Content, after)
		target := map[string]any{"featurePath": h.FeaturePath, "etag": f.Etag, "scenario": h.Identity, "scenarioName": h.ScenarioName}
		evidence := map[string]any{"oldSelector": h.OldSelector, "newSelector": h.NewSelector, "strategy": h.Strategy, "score": h.Score,
			"minScore": h.MinScore, "runs": h.Runs, "replacements": changed, "ambiguous": h.Ambiguous, "ambiguityMargin": steplib.HealAmbiguityMargin,
			"healedTo": h.Targets}
		confidence := h.MinScore
		if h.RunnerUpSelector != "" {
			evidence["runnerUp"] = map[string]any{"selector": h.RunnerUpSelector, "score": h.RunnerUpScore}
			evidence["gap"] = math.Round(h.MinGap*100) / 100
			if h.Ambiguous {
				// How close the runner-up came, within the margin, scales the confidence down.
				confidence *= min(max(h.MinGap, 0)/steplib.HealAmbiguityMargin, 1)
			}
		}
		id, err := j.propose(ctx, Draft{Kind: "feature_patch", Title: fmt.Sprintf("%s: replace %s with %s", h.FeaturePath, h.OldSelector, h.NewSelector),
			Target: target, Diff: &diff, Evidence: evidence, Confidence: confidence}, &after)
		if err != nil {
			return err
		}
		proposed++
		if h.Ambiguous {
			// Ambiguous: never verified automatically; a person decides (force, by an admin).
			if err := j.Log(ctx, "%s → %s in %s is ambiguous (runner-up %s scored %.2f, within %.2f of %.2f): not verified automatically",
				h.OldSelector, h.NewSelector, h.FeaturePath, h.RunnerUpSelector, h.RunnerUpScore, steplib.HealAmbiguityMargin, h.RunnerUpScore+h.MinGap); err != nil {
				return err
			}
			continue
		}
		ok, err := j.verify(ctx, id, h.FeaturePath, after, h.Environment)
		if err != nil {
			return err
		}
		if ok {
			verified++
		}
		if err := j.Progress(ctx, (i+1)*100/len(heals), fmt.Sprintf("%s → %s: verification %v", h.OldSelector, h.NewSelector, map[bool]string{true: "passed", false: "failed"}[ok])); err != nil {
			return err
		}
	}
	j.Summarize(fmt.Sprintf("%d patch(es) proposed, %d verified", proposed, verified))
	return nil
}

// replaceSelector replaces every quoted occurrence of old in content with new. A step argument
// is between double quotes, so double quotes of new (an attribute selector) become single ones.
func replaceSelector(content, old, new string) (string, int) {
	if strings.Contains(new, `"`) && !strings.Contains(new, `'`) {
		new = strings.ReplaceAll(new, `"`, `'`)
	}
	n := strings.Count(content, `"`+old+`"`)
	return strings.ReplaceAll(content, `"`+old+`"`, `"`+new+`"`), n
}

// verify runs the patched feature in a verification run (its saved content is not touched) and
// records the outcome on the proposal: verified when the run passed.
func (j *Job) verify(ctx context.Context, proposal uuid.UUID, path, content string, environment string) (bool, error) {
	var run db.Run
	err := j.s.st.WithTx(ctx, func(q *db.Queries) error {
		var err error
		p := runs.CreateParams{ProjectID: j.Row.ProjectID, Trigger: "agent", Label: ptr("verification of proposal " + proposal.String()),
			Paths: []string{path}, TimeoutSeconds: 600}
		if environment != "" {
			p.Environment = &environment
		}
		if run, err = runs.Create(ctx, q, p); err != nil {
			return err
		}
		return q.InsertRunFeatureOverride(ctx, db.InsertRunFeatureOverrideParams{RunID: run.ID, Path: path, Content: content})
	})
	if err != nil {
		return false, err
	}
	_ = j.Log(ctx, "verification run %s of proposal %s", run.ID, proposal)
	t := time.NewTicker(250 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			// The run must not outlive the job.
			c, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			_ = j.s.st.WithTx(c, func(q *db.Queries) error {
				r, err := q.RequestCancel(c, run.ID)
				if err == nil && r.Status == "cancelled" { // it was still queued: it ends now
					err = stats.QueueRollup(c, q, r.ProjectID)
				}
				if err == nil {
					err = q.NotifyRunEvent(c, "cancel:"+run.ID.String())
				}
				return err
			})
			cancel()
			return false, ctx.Err()
		case <-t.C:
		}
		r, err := j.s.st.GetRun(ctx, run.ID)
		if err != nil {
			return false, err
		}
		if !runs.Terminal(r.Run.Status) {
			continue
		}
		passed := r.Run.Status == "passed"
		v, _ := json.Marshal(map[string]any{"runId": run.ID, "status": r.Run.Status})
		err = j.s.st.WithTx(ctx, func(q *db.Queries) error {
			p, err := q.SetProposalVerification(ctx, db.SetProposalVerificationParams{ID: proposal, VerificationRunID: uuid.NullUUID{UUID: run.ID, Valid: true},
				Passed: passed, Verification: v})
			if err != nil {
				return err
			}
			actx := audit.WithRequest(ctx, j.actor())
			return audit.Record(actx, q, audit.Target{Kind: "proposal", ID: proposal.String(), Name: p.Title}, map[string]any{"verificationRunId": run.ID, "status": p.Status})
		})
		return passed, err
	}
}

// UnifiedDiff is the unified diff (3 lines of context) of two versions of a file, from a longest
// common subsequence of their lines (features are small).
func UnifiedDiff(path, before, after string) string {
	a, b := strings.Split(before, "\n"), strings.Split(after, "\n")
	// lcs[i][j] is the LCS length of a[i:] and b[j:].
	lcs := make([][]int, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	type op struct {
		kind byte // ' ', '-', '+'
		text string
		ai   int // lines of a before this op
		bi   int
	}
	var ops []op
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			ops = append(ops, op{' ', a[i], i, j})
			i++
			j++
		case i < len(a) && (j == len(b) || lcs[i+1][j] >= lcs[i][j+1]):
			ops = append(ops, op{'-', a[i], i, j})
			i++
		default:
			ops = append(ops, op{'+', b[j], i, j})
			j++
		}
	}
	var out strings.Builder
	fmt.Fprintf(&out, "--- a/%s\n+++ b/%s\n", path, path)
	for k := 0; k < len(ops); {
		if ops[k].kind == ' ' {
			k++
			continue
		}
		start := max(k-3, 0)
		end := k
		for end < len(ops) {
			if ops[end].kind != ' ' {
				end++
				continue
			}
			// a run of context: the hunk ends when it is longer than 6 lines (or reaches the end)
			run := end
			for run < len(ops) && ops[run].kind == ' ' {
				run++
			}
			if run == len(ops) || run-end > 6 {
				end = min(end+3, len(ops))
				break
			}
			end = run
		}
		na, nb := 0, 0
		for _, o := range ops[start:end] {
			if o.kind != '+' {
				na++
			}
			if o.kind != '-' {
				nb++
			}
		}
		fmt.Fprintf(&out, "@@ -%d,%d +%d,%d @@\n", ops[start].ai+1, na, ops[start].bi+1, nb)
		for _, o := range ops[start:end] {
			out.WriteString(string(o.kind) + o.text + "\n")
		}
		k = end
	}
	return out.String()
}

// applyPatch saves a feature patch's content in q's transaction when the feature still has the
// ETag the patch was made from; ok is false when it does not (the proposal is stale).
func applyPatch(ctx context.Context, q *db.Queries, projectID uuid.UUID, path, etag, content string) (db.Feature, bool, error) {
	cur, err := q.GetFeatureForUpdate(ctx, db.GetFeatureForUpdateParams{ProjectID: projectID, Path: path})
	if store.IsNotFound(err) {
		return cur, false, nil
	}
	if err != nil || cur.Etag != etag {
		return cur, false, err
	}
	doc, diags := features.Parse(content)
	if features.HasErrors(diags) {
		return cur, false, fmt.Errorf("the patched feature does not parse: %s", diags[0].Message)
	}
	p := db.UpdateFeatureParams{ProjectID: projectID, Path: path, Content: content, Etag: features.ETag(content), Tags: []string{},
		SizeBytes: int32(len(content)), SyncedEtag: cur.SyncedEtag}
	if doc != nil {
		if doc.AST != nil && doc.AST.Feature != nil {
			p.Name = ptr(doc.Name)
		}
		if doc.Tags != nil {
			p.Tags = doc.Tags
		}
		p.ScenarioCount = int32(len(doc.Scenarios))
	}
	saved, err := q.UpdateFeature(ctx, p)
	return saved, err == nil, err
}
