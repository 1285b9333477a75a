package agents

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/sdods/sdods/gen/db"
	"github.com/sdods/sdods/impl/server/store"
)

// Stabilise proposes, for each flaky browser scenario, an explicit wait for the element of the
// step that flips (a feature patch, verified like a heal), or else a quarantine.
func Stabilise() *Kind {
	return &Kind{
		Name: "stabilise",
		Description: "For browser scenarios that flip between passed and failed (last 30 days), proposes an explicit wait for the element before the step that fails " +
			"(a feature_patch verified by a verification run), or a quarantine with an owner and an expiry when there is no element to wait for.",
		Scopes: []string{"agents:write", "runs:write"},
		InputSchema: map[string]any{"type": "object", "additionalProperties": false, "properties": map[string]any{
			"owner":         map[string]any{"type": "string", "description": "owner of proposed quarantines (default: who started the job)"},
			"expiresInDays": map[string]any{"type": "integer", "minimum": 1, "maximum": 365, "description": "expiry of proposed quarantines (default 14)"}}},
		Run: runStabilise,
	}
}

func runStabilise(ctx context.Context, j *Job) error {
	q := j.Queries()
	flaky, err := q.FlakyBrowserScenarios(ctx, db.FlakyBrowserScenariosParams{ProjectID: j.Row.ProjectID, Since: time.Now().Add(-30 * 24 * time.Hour)})
	if err != nil {
		return err
	}
	_ = j.Log(ctx, "%d flaky scenario(s)", len(flaky))
	owner, days := j.Input.Owner, j.Input.ExpiresInDays
	if owner == "" {
		owner = j.Row.ActorName
	}
	if days <= 0 {
		days = 14
	}
	patches, quarantines := 0, 0
	for i, f := range flaky {
		target := map[string]any{"featurePath": f.FeaturePath, "scenario": f.Identity, "scenarioName": f.Name}
		if f.ExampleRow >= 0 {
			target["exampleRow"] = f.ExampleRow
		}
		evidence := map[string]any{"passed": f.Passed, "failed": f.Failed, "flippingStep": f.StepText, "element": f.Locator}
		confidence := float64(min(f.Passed, f.Failed)) / float64(f.Passed+f.Failed) * 2 // 1 when it flips half the time
		done := false
		if f.Locator != "" && !strings.HasPrefix(f.StepText, "I wait for ") {
			feat, err := q.GetFeature(ctx, db.GetFeatureParams{ProjectID: j.Row.ProjectID, Path: f.FeaturePath})
			if err != nil && !store.IsNotFound(err) {
				return err
			}
			if err == nil {
				if after, ok := insertWait(feat.Content, f.StepText, f.Locator); ok {
					diff := UnifiedDiff(f.FeaturePath, feat.Content, after)
					target["etag"] = feat.Etag
					id, err := j.propose(ctx, Draft{Kind: "feature_patch", Title: fmt.Sprintf("%s › %s: wait for %s before %q", f.FeaturePath, f.Name, f.Locator, f.StepText),
						Target: target, Diff: &diff, Evidence: evidence, Confidence: confidence}, &after)
					if err != nil {
						return err
					}
					if _, err := j.verify(ctx, id, f.FeaturePath, after, f.Environment); err != nil {
						return err
					}
					patches++
					done = true
				}
			}
		}
		if !done {
			evidence["owner"], evidence["expiresInDays"] = owner, days
			if _, err := j.Propose(ctx, Draft{Kind: "quarantine", Title: fmt.Sprintf("quarantine %s › %s (flaky, owner %s, %d days)", f.FeaturePath, f.Name, owner, days),
				Target: target, Evidence: evidence, Confidence: confidence}); err != nil {
				return err
			}
			quarantines++
		}
		if err := j.Progress(ctx, (i+1)*100/len(flaky), f.FeaturePath+" › "+f.Name); err != nil {
			return err
		}
	}
	j.Summarize(fmt.Sprintf("%d flaky scenario(s): %d wait patch(es), %d quarantine(s) proposed", len(flaky), patches, quarantines))
	return nil
}

// insertWait puts `And I wait for "locator"` before each line whose step text is step. The
// diff of an insertion is not line for line, so the content changes by whole lines only.
func insertWait(content, step, locator string) (string, bool) {
	lines := strings.Split(content, "\n")
	var out []string
	found := false
	for _, l := range lines {
		trimmed := strings.TrimSpace(l)
		for _, kw := range []string{"Given ", "When ", "Then ", "And ", "But ", "* "} {
			if strings.HasPrefix(trimmed, kw) && strings.TrimSpace(strings.TrimPrefix(trimmed, kw)) == step {
				indent := l[:len(l)-len(strings.TrimLeft(l, " \t"))]
				out = append(out, indent+`And I wait for "`+locator+`"`)
				found = true
				break
			}
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n"), found
}
