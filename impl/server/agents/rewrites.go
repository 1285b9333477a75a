package agents

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/sdods/sdods/gen/db"
	"github.com/sdods/sdods/impl/server/features"
	"github.com/sdods/sdods/impl/server/redact"
	"github.com/sdods/sdods/impl/server/store"
)

// rewritesFence opens the block of step rewrites a model may end its answer with
// (docs/agents.md, The llm kind).
const rewritesFence = "```sdods-rewrites"

// maxRewrites bounds the rewrites read from one answer.
const maxRewrites = 20

// rewritesInstruction tells the model the format of step rewrites.
const rewritesInstruction = "If a step of the test itself is wrong (not the application), you may propose rewrites of the steps shown: " +
	"end your answer with a block that starts with the line " + rewritesFence + " and ends with the line ```, holding a JSON array of " +
	`{"feature": "<feature path>", "line": <line number>, "step": "<the step exactly as shown>", "replacement": "<the new step, keyword included>"}. ` +
	"Only the steps shown with a line number can be rewritten; one step per line."

// Rewrite is a step rewrite a model proposed.
type Rewrite struct {
	Feature     string `json:"feature"`
	Line        int    `json:"line"`
	Step        string `json:"step"`
	Replacement string `json:"replacement"`
}

// shownStep is a step line a prompt showed: the feature it is in, the scenario, and its text as
// shown (redacted).
type shownStep struct {
	text         string
	identity     string
	scenarioName string
}

// shownSteps is what a prompt showed, by feature path and line.
type shownSteps map[string]map[int]shownStep

func (s shownSteps) add(path string, line int, text, identity, name string) {
	if line <= 0 {
		return
	}
	if s[path] == nil {
		s[path] = map[int]shownStep{}
	}
	s[path][line] = shownStep{text: text, identity: identity, scenarioName: name}
}

// splitRewrites separates the summary from the rewrites block of a model's answer; a block that
// does not hold a JSON array of rewrites is an error (the summary is still returned).
func splitRewrites(answer string) (string, []Rewrite, error) {
	i := strings.Index(answer, rewritesFence)
	if i < 0 {
		return strings.TrimSpace(answer), nil, nil
	}
	summary := strings.TrimSpace(answer[:i])
	body := answer[i+len(rewritesFence):]
	end := strings.Index(body, "```")
	if end < 0 {
		return summary, nil, fmt.Errorf("the rewrites block is not closed")
	}
	if rest := strings.TrimSpace(body[end+3:]); rest != "" {
		summary = strings.TrimSpace(summary + "\n" + rest)
	}
	var rw []Rewrite
	dec := json.NewDecoder(strings.NewReader(body[:end]))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rw); err != nil {
		return summary, nil, fmt.Errorf("the rewrites block is not a JSON array of rewrites: %v", err)
	}
	if len(rw) > maxRewrites {
		return summary, nil, fmt.Errorf("the answer proposes %d rewrites, more than %d", len(rw), maxRewrites)
	}
	return summary, rw, nil
}

// patchDraft is the patch of one feature made of a model's rewrites.
type patchDraft struct {
	path, etag, before, after string
	identity, scenarioName    string
	applied                   []map[string]any
}

// applyRewrites checks each rewrite against what the prompt showed and the saved feature, and
// returns the patched features; a rewrite that does not fit is logged and left out. A rewrite
// replaces one step line (its indentation kept) and nothing else.
func applyRewrites(ctx context.Context, j *Job, q *db.Queries, red *redact.Redactor, shown shownSteps, rws []Rewrite) ([]patchDraft, error) {
	drafts := map[string]*patchDraft{}
	for _, rw := range rws {
		skip := func(format string, args ...any) error {
			return j.Log(ctx, "rewrite of %s line %d skipped: %s", red.String(rw.Feature), rw.Line, fmt.Sprintf(format, args...))
		}
		st, ok := shown[rw.Feature][rw.Line]
		if !ok {
			if err := skip("the prompt showed no step there"); err != nil {
				return nil, err
			}
			continue
		}
		if strings.TrimSpace(rw.Step) != st.text {
			if err := skip("the step is not the one shown"); err != nil {
				return nil, err
			}
			continue
		}
		repl := strings.TrimSpace(rw.Replacement)
		if repl == "" || strings.ContainsAny(repl, "\r\n") || len(repl) > 1000 {
			if err := skip("the replacement is not one step line"); err != nil {
				return nil, err
			}
			continue
		}
		if red.String(repl) != repl || strings.Contains(repl, "***") {
			if err := skip("the replacement holds a secret or a mask"); err != nil {
				return nil, err
			}
			continue
		}
		d := drafts[rw.Feature]
		if d == nil {
			f, err := q.GetFeature(ctx, db.GetFeatureParams{ProjectID: j.Row.ProjectID, Path: rw.Feature})
			if store.IsNotFound(err) {
				if err := skip("the feature no longer exists"); err != nil {
					return nil, err
				}
				continue
			}
			if err != nil {
				return nil, err
			}
			d = &patchDraft{path: f.Path, etag: f.Etag, before: f.Content, after: f.Content, identity: st.identity, scenarioName: st.scenarioName}
			drafts[rw.Feature] = d
		}
		lines := strings.Split(d.after, "\n")
		if rw.Line > len(lines) {
			if err := skip("the feature changed since the run"); err != nil {
				return nil, err
			}
			continue
		}
		raw := lines[rw.Line-1]
		if red.String(raw) != raw {
			// The prompt showed it masked: a rewrite would write the mask into the feature.
			if err := skip("the step holds a secret"); err != nil {
				return nil, err
			}
			continue
		}
		if strings.TrimSpace(raw) != st.text {
			if err := skip("the feature changed since the run"); err != nil {
				return nil, err
			}
			continue
		}
		indent := raw[:len(raw)-len(strings.TrimLeft(raw, " \t"))]
		lines[rw.Line-1] = indent + repl
		d.after = strings.Join(lines, "\n")
		d.applied = append(d.applied, map[string]any{"line": rw.Line, "from": st.text, "to": repl})
	}
	out := make([]patchDraft, 0, len(drafts))
	for _, d := range drafts {
		if len(d.applied) == 0 || d.after == d.before {
			continue
		}
		if _, diags := features.Parse(d.after); features.HasErrors(diags) {
			if err := j.Log(ctx, "the rewrites of %s are left out: the patched feature does not parse (%s)", d.path, diags[0].Message); err != nil {
				return nil, err
			}
			continue
		}
		out = append(out, *d)
	}
	sort.Slice(out, func(a, b int) bool { return out[a].path < out[b].path })
	return out, nil
}
