package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"

	"github.com/sdods/sdods/impl/server/oas"
	"github.com/sdods/sdods/impl/textclip"
)

// The composite tools do in one call what an agent would otherwise do in several; each step is a
// generated tool's REST request through the pipeline, so each is checked as the REST call is.

// terminalStatuses are the run statuses a run ends in.
var terminalStatuses = map[string]bool{"passed": true, "failed": true, "errored": true, "cancelled": true, "timed_out": true}

const (
	defaultWait = 300
	maxWait     = 1800
)

// needOps returns the generated tools of ids, or an error naming the one the document lacks.
func (s *Server) needOps(ids ...string) ([]*oas.Operation, error) {
	var out []*oas.Operation
	for _, id := range ids {
		t, ok := s.ops[id]
		if !ok {
			return nil, fmt.Errorf("mcp: composite tool needs operation %s, which is no tool", id)
		}
		out = append(out, t.op)
	}
	return out, nil
}

func (s *Server) addComposites() error {
	ops, err := s.needOps("createRun", "getRun")
	if err != nil {
		return err
	}
	createIn := map[string]any{}
	_ = json.Unmarshal(s.ops["createRun"].tool.RawInputSchema, &createIn)
	props, _ := createIn["properties"].(map[string]any)
	props["timeoutSeconds"] = map[string]any{"type": "integer", "minimum": 1, "maximum": maxWait, "default": defaultWait,
		"description": "How long to wait for the run to end; the run goes on after a timeout (poll getRun)."}
	rawIn, _ := json.Marshal(createIn)
	runOut := map[string]any{}
	_ = json.Unmarshal(s.ops["getRun"].tool.RawOutputSchema, &runOut)
	defs := runOut["$defs"]
	delete(runOut, "$defs")
	waitOut := map[string]any{"type": "object", "required": []string{"run", "timedOut"}, "properties": map[string]any{
		"run": runOut, "timedOut": map[string]any{"type": "boolean", "description": "The run had not ended when the timeout passed."}}}
	if defs != nil {
		waitOut["$defs"] = defs
	}
	rawOut, _ := json.Marshal(waitOut)
	s.add(&tool{name: "runAndWait", toolset: "runs", ops: ops, desc: "Start a run and wait for its end"},
		mcpserver.ServerTool{Tool: mcp.Tool{Name: "runAndWait", Title: "Start a run and wait for its end",
			Description: "Starts a run (as createRun) and waits until it ends or timeoutSeconds pass, sending progress notifications " +
				"(scenarios done of total) when the request carries a progressToken. Answers the run as getRun does; for a failed run, " +
				"call failedRunSummary with its id.",
			RawInputSchema: rawIn, RawOutputSchema: rawOut,
			Annotations: mcp.ToolAnnotation{Title: "Start a run and wait", ReadOnlyHint: mcp.ToBoolPtr(false), DestructiveHint: mcp.ToBoolPtr(false),
				IdempotentHint: mcp.ToBoolPtr(false), OpenWorldHint: mcp.ToBoolPtr(false)}},
			Handler: s.runAndWait})

	// Screenshots need artifacts:read too; without it the summary comes without them.
	ops, err = s.needOps("getRunReport")
	if err != nil {
		return err
	}
	summaryIn, _ := json.Marshal(map[string]any{"type": "object", "required": []string{"runId"}, "additionalProperties": false,
		"properties": map[string]any{"runId": map[string]any{"type": "string", "format": "uuid"},
			"screenshots": map[string]any{"type": "integer", "minimum": 0, "maximum": 10, "default": 3, "description": "How many failure screenshots to include as images."}}})
	s.add(&tool{name: "failedRunSummary", toolset: "runs", ops: ops, readOnly: true, desc: "Why a run failed"},
		mcpserver.ServerTool{Tool: mcp.Tool{Name: "failedRunSummary", Title: "Why a run failed",
			Description: "Summarises a run's failures: each failed scenario with its failing step and error, the failures grouped into " +
				"clusters by their masked message and step, the failure screenshots as images, and links to the HTML report and the trace viewer.",
			RawInputSchema: summaryIn,
			Annotations: mcp.ToolAnnotation{Title: "Why a run failed", ReadOnlyHint: mcp.ToBoolPtr(true), DestructiveHint: mcp.ToBoolPtr(false),
				IdempotentHint: mcp.ToBoolPtr(true), OpenWorldHint: mcp.ToBoolPtr(false)}},
			Handler: s.failedRunSummary})

	ops, err = s.needOps("lintFeatures", "getFeature", "validateFeature")
	if err != nil {
		return err
	}
	lintIn, _ := json.Marshal(map[string]any{"type": "object", "required": []string{"slug", "path"}, "additionalProperties": false,
		"properties": map[string]any{"slug": map[string]any{"type": "string", "description": "Project slug."},
			"path":    map[string]any{"type": "string", "description": "Feature path, e.g. auth/login.feature."},
			"content": map[string]any{"type": "string", "maxLength": 1 << 20, "description": "Gherkin to lint instead of the saved file (a draft not saved yet: saving refuses content with errors)."}}})
	s.add(&tool{name: "lintFeature", toolset: "features", ops: ops, readOnly: true, desc: "Lint a feature, with fixes"},
		mcpserver.ServerTool{Tool: mcp.Tool{Name: "lintFeature", Title: "Lint a feature, with fixes",
			Description: "Lints one feature file of a project and gives each diagnostic with the fix the linter knows: the corrected line " +
				"for trailing whitespace, the closest step definitions for an unknown step, what to add or remove for the structural rules.",
			RawInputSchema: lintIn,
			Annotations: mcp.ToolAnnotation{Title: "Lint a feature", ReadOnlyHint: mcp.ToBoolPtr(true), DestructiveHint: mcp.ToBoolPtr(false),
				IdempotentHint: mcp.ToBoolPtr(true), OpenWorldHint: mcp.ToBoolPtr(false)}},
			Handler: s.lintFeature})
	return nil
}

// json calls a generated tool and decodes its JSON answer; a refusal comes back as the tool's
// error result.
func (s *Server) json(ctx context.Context, opID string, args map[string]any, into any) (*mcp.CallToolResult, error) {
	t := s.ops[opID]
	rec, err := s.do(ctx, t, args)
	if err != nil {
		return mcp.NewToolResultError(err.Error()), nil
	}
	if rec.statusCode() >= 300 {
		return t.result(rec), nil
	}
	if into != nil {
		if err := json.Unmarshal(rec.body.Bytes(), into); err != nil {
			return nil, fmt.Errorf("%s answered what is not JSON: %w", opID, err)
		}
	}
	return nil, nil
}

func (s *Server) runAndWait(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	args := req.GetArguments()
	timeout := defaultWait
	if v, ok := args["timeoutSeconds"].(float64); ok {
		if v < 1 || v > maxWait {
			return mcp.NewToolResultError(fmt.Sprintf("timeoutSeconds must be between 1 and %d", maxWait)), nil
		}
		timeout = int(v)
	}
	createArgs := map[string]any{}
	for k, v := range args {
		if k != "timeoutSeconds" {
			createArgs[k] = v
		}
	}
	var accepted struct {
		ID string `json:"id"`
	}
	if res, err := s.json(ctx, "createRun", createArgs, &accepted); res != nil || err != nil {
		return res, err
	}
	var token mcp.ProgressToken
	if req.Params.Meta != nil {
		token = req.Params.Meta.ProgressToken
	}
	deadline := time.Now().Add(time.Duration(timeout) * time.Second)
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	lastProgress := -1.0
	for {
		var run map[string]any
		res, err := s.json(ctx, "getRun", map[string]any{"runId": accepted.ID}, &run)
		if res != nil || err != nil {
			return res, err
		}
		status, _ := run["status"].(string)
		done, total := progressOf(run)
		if token != nil && (done != lastProgress || lastProgress < 0) {
			lastProgress = done
			params := map[string]any{"progressToken": token, "progress": done, "message": "run " + accepted.ID + " " + status}
			if total > 0 {
				params["total"] = total
			}
			_ = s.mcp.SendNotificationToClient(ctx, "notifications/progress", params)
			if terminalStatuses[status] {
				// mcp-go drops a notification its forwarder takes off the queue just as the
				// response is written: give the last one a moment to reach the stream first.
				select {
				case <-ctx.Done():
				case <-time.After(250 * time.Millisecond):
				}
			}
		}
		if terminalStatuses[status] || time.Now().After(deadline) {
			out := map[string]any{"run": run, "timedOut": !terminalStatuses[status]}
			b, _ := json.Marshal(out)
			text := string(b)
			if status == "failed" || status == "errored" {
				text = fmt.Sprintf("The run %s %s; failedRunSummary with runId %s says why.\n%s", accepted.ID, status, accepted.ID, text)
			}
			return &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent(text)}, StructuredContent: out}, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-tick.C:
		}
	}
}

// progressOf counts a run's scenarios that have ended, of its total.
func progressOf(run map[string]any) (done, total float64) {
	counts, _ := run["counts"].(map[string]any)
	for _, k := range []string{"passed", "failed", "skipped", "pending", "undefined"} {
		if v, ok := counts[k].(float64); ok {
			done += v
		}
	}
	total, _ = counts["total"].(float64)
	return done, total
}

var (
	maskUUID   = regexp.MustCompile(`[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}`)
	maskQuoted = regexp.MustCompile(`"[^"]*"|'[^']*'`)
	maskNumber = regexp.MustCompile(`\d+`)
)

// signature masks what varies between occurrences of one failure (ids, quoted values, numbers).
func signature(msg, step string) string {
	mask := func(s string) string {
		s = maskUUID.ReplaceAllString(s, "<id>")
		s = maskQuoted.ReplaceAllString(s, `"…"`)
		s = maskNumber.ReplaceAllString(s, "<n>")
		if len(s) > 300 {
			s = s[:300]
		}
		return strings.TrimSpace(s)
	}
	firstLine, _, _ := strings.Cut(msg, "\n")
	return mask(firstLine) + " ¦ " + mask(step)
}

func (s *Server) failedRunSummary(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	args := req.GetArguments()
	runID, _ := args["runId"].(string)
	shots := 3
	if v, ok := args["screenshots"].(float64); ok && v >= 0 && v <= 10 {
		shots = int(v)
	}
	var report struct {
		RunID    string         `json:"runId"`
		Status   string         `json:"status"`
		Counts   map[string]any `json:"counts"`
		Error    string         `json:"error,omitempty"`
		HTMLURL  string         `json:"htmlUrl"`
		Failures []struct {
			ScenarioID           string `json:"scenarioId"`
			FeaturePath          string `json:"featurePath"`
			Scenario             string `json:"scenario"`
			Step                 string `json:"step"`
			ScreenshotArtifactID string `json:"screenshotArtifactId"`
			Error                *struct {
				Message  string `json:"message"`
				Expected string `json:"expected,omitempty"`
				Actual   string `json:"actual,omitempty"`
			} `json:"error"`
		} `json:"failures"`
	}
	if res, err := s.json(ctx, "getRunReport", map[string]any{"runId": runID}, &report); res != nil || err != nil {
		return res, err
	}
	type cluster struct {
		Signature string   `json:"signature"`
		Count     int      `json:"count"`
		Scenarios []string `json:"scenarios"`
	}
	byClusterSig := map[string]*cluster{}
	var lines []string
	for _, f := range report.Failures {
		msg := ""
		if f.Error != nil {
			msg = f.Error.Message
		}
		sig := signature(msg, f.Step)
		c := byClusterSig[sig]
		if c == nil {
			c = &cluster{Signature: sig}
			byClusterSig[sig] = c
		}
		c.Count++
		c.Scenarios = append(c.Scenarios, f.FeaturePath+": "+f.Scenario)
		line := fmt.Sprintf("- %s — %s\n  step: %s\n  error: %s", f.FeaturePath, f.Scenario, f.Step, firstLineOf(msg))
		if f.Error != nil && (f.Error.Expected != "" || f.Error.Actual != "") {
			line += fmt.Sprintf("\n  expected: %s\n  actual: %s", textclip.Clip(f.Error.Expected, 300), textclip.Clip(f.Error.Actual, 300))
		}
		lines = append(lines, line)
	}
	clusters := make([]*cluster, 0, len(byClusterSig))
	for _, c := range byClusterSig {
		clusters = append(clusters, c)
	}
	sort.Slice(clusters, func(i, j int) bool {
		if clusters[i].Count != clusters[j].Count {
			return clusters[i].Count > clusters[j].Count
		}
		return clusters[i].Signature < clusters[j].Signature
	})
	base := strings.TrimSuffix(s.cfg.BaseURL, "/")
	traceURL := base + "/trace/?run=" + url.QueryEscape(report.RunID)
	reportURL := report.HTMLURL
	if strings.HasPrefix(reportURL, "/") {
		reportURL = base + reportURL
	}
	summary := map[string]any{"runId": report.RunID, "status": report.Status, "counts": report.Counts, "failures": report.Failures,
		"clusters": clusters, "traceUrl": traceURL, "reportUrl": reportURL}
	if report.Error != "" {
		summary["error"] = report.Error
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Run %s: %s, %d failed scenario(s) in %d cluster(s).\n", report.RunID, report.Status, len(report.Failures), len(clusters))
	if report.Error != "" {
		fmt.Fprintf(&b, "Run error: %s\n", report.Error)
	}
	if len(lines) > 0 {
		b.WriteString("\nFailures:\n" + strings.Join(lines, "\n") + "\n")
	}
	if len(clusters) > 0 {
		b.WriteString("\nClusters:\n")
		for _, c := range clusters {
			fmt.Fprintf(&b, "- %d× %s\n", c.Count, c.Signature)
		}
	}
	fmt.Fprintf(&b, "\nTrace: %s\nReport: %s\n", traceURL, reportURL)
	raw, _ := json.Marshal(summary)
	content := []mcp.Content{mcp.NewTextContent(b.String()), mcp.NewTextContent(string(raw))}
	if _, ok := s.ops["getArtifact"]; !ok {
		shots = 0
	}
	for _, f := range report.Failures {
		if shots == 0 {
			break
		}
		if f.ScreenshotArtifactID == "" {
			continue
		}
		rec, err := s.do(ctx, s.ops["getArtifact"], map[string]any{"artifactId": f.ScreenshotArtifactID})
		if err != nil || rec.statusCode() != http.StatusOK {
			continue
		}
		res := s.ops["getArtifact"].result(rec)
		for _, c := range res.Content {
			if img, ok := c.(mcp.ImageContent); ok {
				content = append(content, mcp.NewTextContent("Screenshot of "+f.FeaturePath+": "+f.Scenario), img)
				shots--
			}
		}
	}
	return &mcp.CallToolResult{Content: content}, nil
}

func firstLineOf(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return textclip.Clip(l, 500)
}

// fix is what to do about one diagnostic.
type fix struct {
	Description string `json:"description"`
	// Line and Replacement: replace that line with this text.
	Line        int      `json:"line,omitempty"`
	Replacement *string  `json:"replacement,omitempty"`
	Candidates  []string `json:"candidates,omitempty"`
}

func (s *Server) lintFeature(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	args := req.GetArguments()
	slug, _ := args["slug"].(string)
	path, _ := args["path"].(string)
	var feature struct {
		Content string `json:"content"`
	}
	var lint struct {
		Diagnostics []map[string]any `json:"diagnostics"`
	}
	if draft, ok := args["content"].(string); ok {
		feature.Content = draft
		body := map[string]any{"content": draft, "path": path, "lint": true}
		if res, err := s.json(ctx, "validateFeature", map[string]any{"slug": slug, "body": body}, &lint); res != nil || err != nil {
			return res, err
		}
	} else {
		if res, err := s.json(ctx, "getFeature", map[string]any{"slug": slug, "path": path}, &feature); res != nil || err != nil {
			return res, err
		}
		if res, err := s.json(ctx, "lintFeatures", map[string]any{"slug": slug, "body": map[string]any{"paths": []string{path}}}, &lint); res != nil || err != nil {
			return res, err
		}
	}
	lines := strings.Split(feature.Content, "\n")
	var steps []string
	stepsLoaded := false
	out := make([]map[string]any, 0, len(lint.Diagnostics))
	for _, d := range lint.Diagnostics {
		rule, _ := d["rule"].(string)
		lineNo := 0
		if v, ok := d["line"].(float64); ok {
			lineNo = int(v)
		}
		text := ""
		if lineNo >= 1 && lineNo <= len(lines) {
			text = strings.TrimSuffix(lines[lineNo-1], "\r")
		}
		var f fix
		switch rule {
		case "trailing-whitespace":
			trimmed := strings.TrimRight(text, " \t")
			f = fix{Description: "remove the trailing whitespace", Line: lineNo, Replacement: &trimmed}
		case "unknown-step":
			if !stepsLoaded {
				steps = s.stepPatterns(ctx, slug)
				stepsLoaded = true
			}
			f = fix{Description: "use a defined step (closest first), or define a process with this step", Candidates: closest(stepText(text), steps, 3)}
		case "ambiguous-step":
			f = fix{Description: "reword the step so that exactly one definition matches it"}
		case "duplicate-scenario-name":
			renamed := text + " (2)"
			f = fix{Description: "give the scenario a name no other scenario of the feature has", Line: lineNo, Replacement: &renamed}
		case "empty-scenario":
			f = fix{Description: "add steps to the scenario, or delete it"}
		case "empty-feature":
			f = fix{Description: "add a Feature with at least one Scenario"}
		case "outline-without-examples":
			f = fix{Description: "add an Examples: table under the Scenario Outline, with a header row naming its <parameters> and at least one row"}
		case "unused-background":
			f = fix{Description: "delete the Background, or add the scenarios that use it"}
		case "tag-convention":
			f = fix{Description: "rename the tag to match the project's tag pattern (settings.tagPattern)"}
		case "parse":
			f = fix{Description: "correct the Gherkin syntax at this line and column"}
		default:
			f = fix{Description: "see the rule's description in docs/features.md"}
		}
		entry := map[string]any{}
		for k, v := range d {
			entry[k] = v
		}
		entry["fix"] = f
		out = append(out, entry)
	}
	result := map[string]any{"slug": slug, "path": path, "diagnostics": out}
	raw, _ := json.Marshal(result)
	summary := fmt.Sprintf("%s: %d diagnostic(s).", path, len(out))
	return &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent(summary), mcp.NewTextContent(string(raw))}, StructuredContent: result}, nil
}

// stepText returns a step line without its keyword.
func stepText(line string) string {
	line = strings.TrimSpace(line)
	for _, kw := range []string{"Given ", "When ", "Then ", "And ", "But ", "* "} {
		if strings.HasPrefix(line, kw) {
			return strings.TrimPrefix(line, kw)
		}
	}
	return line
}

// stepPatterns lists the project's step patterns through listSteps (none when refused).
func (s *Server) stepPatterns(ctx context.Context, slug string) []string {
	t, ok := s.ops["listSteps"]
	if !ok {
		return nil
	}
	rec, err := s.do(ctx, t, map[string]any{"slug": slug})
	if err != nil || rec.statusCode() != http.StatusOK {
		return nil
	}
	var list struct {
		Items []struct {
			Keyword string `json:"keyword"`
			Pattern string `json:"pattern"`
		} `json:"items"`
	}
	if json.Unmarshal(rec.body.Bytes(), &list) != nil {
		return nil
	}
	out := make([]string, 0, len(list.Items))
	for _, it := range list.Items {
		out = append(out, it.Pattern)
	}
	return out
}

// closest ranks patterns by the words they share with text.
func closest(text string, patterns []string, n int) []string {
	words := func(s string) map[string]bool {
		out := map[string]bool{}
		for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !(r >= 'a' && r <= 'z') }) {
			if len(w) > 1 {
				out[w] = true
			}
		}
		return out
	}
	tw := words(text)
	type scored struct {
		p     string
		score float64
	}
	var all []scored
	for _, p := range patterns {
		pw := words(p)
		common := 0
		for w := range pw {
			if tw[w] {
				common++
			}
		}
		if common == 0 {
			continue
		}
		all = append(all, scored{p, float64(common) / float64(len(pw)+len(tw)-common)})
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].score > all[j].score })
	out := []string{}
	for i := 0; i < len(all) && i < n; i++ {
		out = append(out, all[i].p)
	}
	return out
}
