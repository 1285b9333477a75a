package agents

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/google/uuid"

	"github.com/sdods/sdods/gen/db"
	"github.com/sdods/sdods/impl/server/store"
)

// Triage classifies each failure of a failed run from its evidence (docs/agents.md).
func Triage() *Kind {
	return &Kind{
		Name: "triage",
		Description: "Classifies each failure of a failed run (product_bug, test_bug, environment, flaky) from its failure signature and history, " +
			"retries and flips, HTTP status classes, timeouts, selectors not found and heals; links the 5 most similar past failures; proposes a quarantine for flaky scenarios.",
		Scopes: []string{"agents:write", "runs:read"},
		InputSchema: map[string]any{"type": "object", "required": []string{"runId"}, "additionalProperties": false,
			"properties": map[string]any{"runId": map[string]any{"type": "string", "format": "uuid", "description": "the failed run"}}},
		Run: runTriage,
	}
}

var (
	reHTTP     = regexp.MustCompile(`(?:GET|HEAD|POST|PUT|PATCH|DELETE|OPTIONS) \S+ answered ([0-9]{3})`)
	reStatus   = regexp.MustCompile(`\bstatus(?: code)? (?:was |of |= ?)?([1-5][0-9]{2})\b|\bexpected [1-5][0-9]{2}[^0-9]+([1-5][0-9]{2})\b`)
	reTimeout  = regexp.MustCompile(`(?i)time(?:d)? ?out|deadline exceeded`)
	reEnv      = regexp.MustCompile(`(?i)connection refused|no such host|ECONNREFUSED|ECONNRESET|connection reset|dial tcp|network is unreachable|TLS handshake`)
	reSelector = regexp.MustCompile(`(?i)(?:element|selector|locator)[^\n]*not found|no element|not visible|waiting for selector|no node found`)
)

// classification is triage's verdict on one failure.
type classification struct {
	Class      string
	Confidence float64
	Reasons    []string
}

func classify(f db.TriageFailuresRow) classification {
	var reasons []string
	// Flaky by the metrics of docs/stats.md: the scenario's results flip (this failure after a
	// pass is one flip, so two mean it failed and passed before), or it passed on a retry.
	flips := f.Flips >= 2 || f.RetryPasses > 0
	status := 0
	if m := reHTTP.FindStringSubmatch(f.Message); m != nil {
		fmt.Sscan(m[1], &status)
	} else if m := reStatus.FindStringSubmatch(f.Message); m != nil {
		s := m[1]
		if s == "" {
			s = m[2]
		}
		fmt.Sscan(s, &status)
	}
	switch {
	case f.Status == "undefined" || f.Status == "ambiguous":
		return classification{"test_bug", 0.95, []string{"the step is " + f.Status}}
	case flips:
		reasons = append(reasons, fmt.Sprintf("the scenario flips: %d flip(s) and %d pass(es) on retry in its history (passed %d and failed %d times before)", f.Flips, f.RetryPasses, f.PassedBefore, f.FailedBefore))
		if f.Heals > 0 {
			reasons = append(reasons, fmt.Sprintf("%d heal(s) involved", f.Heals))
		}
		return classification{"flaky", 0.8, reasons}
	case reEnv.MatchString(f.Message):
		return classification{"environment", 0.85, []string{"the system under test could not be reached"}}
	case reTimeout.MatchString(f.Message):
		return classification{"environment", 0.6, []string{"a timeout"}}
	case status >= 500:
		return classification{"product_bug", 0.8, []string{fmt.Sprintf("the server answered %d (5xx)", status)}}
	case status >= 400:
		return classification{"test_bug", 0.6, []string{fmt.Sprintf("the server answered %d (4xx): the request or its expectation is wrong", status)}}
	case reSelector.MatchString(f.Message):
		reasons = append(reasons, "a selector was not found")
		if f.Heals > 0 {
			reasons = append(reasons, fmt.Sprintf("%d heal(s) involved", f.Heals))
		}
		return classification{"test_bug", 0.7, reasons}
	}
	if f.PassedBefore > 0 {
		return classification{"product_bug", 0.6, []string{fmt.Sprintf("a regression: the scenario passed %d time(s) before and never failed", f.PassedBefore)}}
	}
	if f.SignatureSeen > 0 {
		return classification{"product_bug", 0.5, []string{fmt.Sprintf("a known failure: its signature occurred %d time(s) before", f.SignatureSeen)}}
	}
	return classification{"product_bug", 0.4, []string{"an assertion failed with no other evidence"}}
}

// similarity is the Jaccard similarity of the word sets of two signatures.
func similarity(a, b string) float64 {
	wa, wb := words(a), words(b)
	if len(wa) == 0 || len(wb) == 0 {
		return 0
	}
	inter := 0
	for w := range wa {
		if wb[w] {
			inter++
		}
	}
	return float64(inter) / float64(len(wa)+len(wb)-inter)
}

func words(s string) map[string]bool {
	out := map[string]bool{}
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '<' || r == '>' || r == '_' || r == '.')
	}) {
		out[w] = true
	}
	return out
}

func runTriage(ctx context.Context, j *Job) error {
	runID, err := uuid.Parse(j.Input.RunID)
	if err != nil {
		return fmt.Errorf("input.runId is not a run id")
	}
	q := j.Queries()
	run, err := q.GetRun(ctx, runID)
	if store.IsNotFound(err) || (err == nil && run.Run.ProjectID != j.Row.ProjectID) {
		return fmt.Errorf("run %s not found in the job's project", runID)
	}
	if err != nil {
		return err
	}
	if run.Run.Status != "failed" && run.Run.Status != "errored" && run.Run.Status != "timed_out" {
		return fmt.Errorf("run %s is %s, not failed: nothing to triage", runID, run.Run.Status)
	}
	failures, err := q.TriageFailures(ctx, runID)
	if err != nil {
		return err
	}
	past, err := q.SimilarFailures(ctx, db.SimilarFailuresParams{ProjectID: j.Row.ProjectID, RunID: runID})
	if err != nil {
		return err
	}
	if err := j.Log(ctx, "triaging %d failure(s) of run %s against %d past failure(s)", len(failures), runID, len(past)); err != nil {
		return err
	}
	counts := map[string]int{}
	for i, f := range failures {
		if err := ctx.Err(); err != nil {
			return err
		}
		c := classify(f)
		counts[c.Class]++
		type similar struct {
			RunID      uuid.UUID `json:"runId"`
			ScenarioID uuid.UUID `json:"scenarioId"`
			Feature    string    `json:"featurePath"`
			Name       string    `json:"name"`
			Score      float64   `json:"score"`
		}
		var sims []similar
		for _, p := range past {
			if sc := similarity(f.Signature, p.Signature); sc > 0 {
				sims = append(sims, similar{p.RunID, p.ScenarioID, p.FeaturePath, p.Name, float64(int(sc*1000)) / 1000})
			}
		}
		sort.SliceStable(sims, func(a, b int) bool { return sims[a].Score > sims[b].Score })
		if len(sims) > 5 {
			sims = sims[:5]
		}
		target := map[string]any{"featurePath": f.FeaturePath, "scenario": f.Identity, "scenarioName": f.Name, "runId": runID, "exampleRow": f.ExampleRow}
		evidence := map[string]any{"class": c.Class, "reasons": c.Reasons, "signature": f.Signature, "signatureSeen": f.SignatureSeen,
			"passedBefore": f.PassedBefore, "failedBefore": f.FailedBefore, "flips": f.Flips, "retryPasses": f.RetryPasses, "attempts": f.Attempts, "heals": f.Heals,
			"failingStep": strings.TrimSpace(f.StepKeyword + f.StepText), "message": f.Message, "similar": sims}
		if _, err := j.Propose(ctx, Draft{Kind: "classification", Title: fmt.Sprintf("%s › %s: %s", f.FeaturePath, f.Name, c.Class),
			Target: target, Evidence: evidence, Confidence: c.Confidence}); err != nil {
			return err
		}
		if c.Class == "flaky" {
			evidence := map[string]any{"reasons": c.Reasons, "passedBefore": f.PassedBefore, "failedBefore": f.FailedBefore, "owner": j.Row.ActorName, "expiresInDays": 14}
			if _, err := j.Propose(ctx, Draft{Kind: "quarantine", Title: fmt.Sprintf("quarantine %s › %s (flaky)", f.FeaturePath, f.Name),
				Target: target, Evidence: evidence, Confidence: c.Confidence}); err != nil {
				return err
			}
		}
		if err := j.Progress(ctx, (i+1)*100/len(failures), fmt.Sprintf("%s › %s: %s", f.FeaturePath, f.Name, c.Class)); err != nil {
			return err
		}
	}
	parts := []string{}
	for _, k := range []string{"product_bug", "test_bug", "environment", "flaky"} {
		if counts[k] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[k], k))
		}
	}
	j.Summarize(fmt.Sprintf("%d failure(s) triaged: %s", len(failures), strings.Join(parts, ", ")))
	return nil
}
