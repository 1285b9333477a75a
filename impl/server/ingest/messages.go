package ingest

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	messages "github.com/cucumber/messages/go/v34"
)

type astNode struct {
	keyword string
	line    int
}

type msgAttempt struct {
	attempt  int64
	caseID   string
	started  *time.Time
	steps    map[string]*messages.TestStepResult
	attached map[string][]Attachment
	finished bool
}

// parseMessages reads Cucumber Messages NDJSON: gherkin documents give lines and keywords,
// pickles the scenarios, test cases their steps, and the last attempt of each test case its
// result (earlier attempts were retried).
func parseMessages(data []byte) (Result, error) {
	var res Result
	features := map[string]*messages.Feature{}
	nodes := map[string]astNode{}
	rows := map[string]int{} // example row id → 1-based index within its table
	pickles := map[string]*messages.Pickle{}
	var pickleOrder []string
	cases := map[string]*messages.TestCase{}
	attempts := map[string]*msgAttempt{} // testCaseStarted id → attempt
	latest := map[string]*msgAttempt{}   // pickle id → its last attempt
	hooks := map[string]*messages.Hook{}
	runHooks := map[string]string{} // testRunHookStarted id → hook id

	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), len(data)+1)
	line := 0
	for sc.Scan() {
		line++
		raw := bytes.TrimSpace(sc.Bytes())
		if len(raw) == 0 {
			continue
		}
		var env messages.Envelope
		if err := json.Unmarshal(raw, &env); err != nil {
			e := jsonError(&window{buf: raw}, 0, "envelope", err).(*Error)
			e.Line = line
			return res, e
		}
		switch {
		case env.GherkinDocument != nil:
			if f := env.GherkinDocument.Feature; f != nil {
				features[env.GherkinDocument.Uri] = f
				walkFeature(f, nodes, rows)
			}
		case env.Pickle != nil:
			p := env.Pickle
			if p.Id == "" {
				return res, &Error{Line: line, Element: "pickle", Message: "the id member is missing"}
			}
			pickles[p.Id] = p
			pickleOrder = append(pickleOrder, p.Id)
		case env.TestCase != nil:
			cases[env.TestCase.Id] = env.TestCase
		case env.TestCaseStarted != nil:
			t := env.TestCaseStarted
			tc, ok := cases[t.TestCaseId]
			if !ok {
				return res, &Error{Line: line, Element: "testCaseStarted", Message: "unknown testCaseId " + strconv.Quote(t.TestCaseId)}
			}
			a := &msgAttempt{attempt: t.Attempt, caseID: t.TestCaseId, steps: map[string]*messages.TestStepResult{}, attached: map[string][]Attachment{}}
			if t.Timestamp != nil {
				at := time.Unix(t.Timestamp.Seconds, t.Timestamp.Nanos).UTC()
				a.started = &at
				if res.StartedAt == nil || at.Before(*res.StartedAt) {
					res.StartedAt = &at
				}
			}
			attempts[t.Id] = a
			if prev := latest[tc.PickleId]; prev == nil || prev.attempt <= a.attempt {
				latest[tc.PickleId] = a
			}
		case env.TestStepFinished != nil:
			t := env.TestStepFinished
			a, ok := attempts[t.TestCaseStartedId]
			if !ok {
				return res, &Error{Line: line, Element: "testStepFinished", Message: "unknown testCaseStartedId " + strconv.Quote(t.TestCaseStartedId)}
			}
			a.steps[t.TestStepId] = t.TestStepResult
		case env.Attachment != nil:
			t := env.Attachment
			a, ok := attempts[t.TestCaseStartedId]
			if !ok {
				continue // attachments of the test run itself have no scenario
			}
			body := []byte(t.Body)
			if t.ContentEncoding == messages.AttachmentContentEncoding_BASE64 {
				b, err := base64.StdEncoding.DecodeString(t.Body)
				if err != nil {
					return res, &Error{Line: line, Element: "attachment", Message: "the body is not base64: " + err.Error()}
				}
				body = b
			}
			name := t.FileName
			if name == "" {
				name = "attachment-" + strconv.Itoa(len(a.attached[t.TestStepId])+1) + extensionOf(t.MediaType)
			}
			a.attached[t.TestStepId] = append(a.attached[t.TestStepId], Attachment{Name: name, MediaType: t.MediaType, Data: body})
		case env.Hook != nil:
			hooks[env.Hook.Id] = env.Hook
		case env.TestRunHookStarted != nil:
			runHooks[env.TestRunHookStarted.Id] = env.TestRunHookStarted.HookId
		case env.TestRunHookFinished != nil:
			r := env.TestRunHookFinished.Result
			if r == nil {
				continue
			}
			switch normStatus(string(r.Status)) {
			case "passed", "skipped", "unknown":
				continue
			}
			res.Errors = append(res.Errors, hookFailure(hooks[runHooks[env.TestRunHookFinished.TestRunHookStartedId]], r))
		case env.TestRunFinished != nil:
			t := env.TestRunFinished
			switch {
			case t.Exception != nil:
				msg := t.Exception.Type
				if t.Exception.Message != "" {
					msg += ": " + t.Exception.Message
				}
				res.Errors = append(res.Errors, "the test run failed: "+msg)
			case t.Message != "":
				res.Errors = append(res.Errors, "the test run failed: "+t.Message)
			}
		case env.TestCaseFinished != nil:
			if a, ok := attempts[env.TestCaseFinished.TestCaseStartedId]; ok {
				a.finished = true
			}
		}
	}
	if err := sc.Err(); err != nil {
		return res, &Error{Line: line + 1, Message: "unreadable line: " + err.Error()}
	}
	for _, id := range pickleOrder {
		p := pickles[id]
		s := Scenario{Key: "cucumber:" + p.Uri + "\x1f" + strings.Join(p.AstNodeIds, "\x1f"), Module: moduleOf(p.Uri), FeaturePath: p.Uri,
			Name: p.Name, Status: "unknown", Attempts: 1, Tags: []string{}}
		if f := features[p.Uri]; f != nil {
			s.FeatureName = f.Name
		}
		if len(p.AstNodeIds) > 0 {
			s.Line = nodes[p.AstNodeIds[0]].line
			s.Key = "cucumber:" + p.Uri + "\x1f" + strconv.Itoa(s.Line)
			if len(p.AstNodeIds) > 1 {
				last := p.AstNodeIds[len(p.AstNodeIds)-1]
				s.ExampleRow = ptr(rows[last])
				s.Key += "\x1f" + strconv.Itoa(nodes[last].line)
				// An outline row's line is its row's, as in Cucumber JSON and the pickle's location.
				s.Line = nodes[last].line
			}
		}
		if p.Location != nil && s.Line == 0 {
			s.Line = int(p.Location.Line)
		}
		for _, t := range p.Tags {
			s.Tags = append(s.Tags, t.Name)
		}
		a := latest[id]
		pickleSteps := map[string]*messages.PickleStep{}
		for _, ps := range p.Steps {
			pickleSteps[ps.Id] = ps
		}
		if a == nil {
			// Never executed: the steps are listed, the scenario stays unknown.
			for _, ps := range p.Steps {
				s.Steps = append(s.Steps, pickleStep(ps, nodes, "unknown"))
			}
			res.Scenarios = append(res.Scenarios, s)
			continue
		}
		s.Attempts = int(a.attempt) + 1
		tc := cases[a.caseID]
		var statuses []string
		var hookAttachments []Attachment
		for _, ts := range tc.TestSteps {
			r := a.steps[ts.Id]
			status := "unknown"
			var dur *time.Duration
			var stepErr *StepError
			if r != nil {
				status = normStatus(string(r.Status))
				if r.Duration != nil {
					d, _ := clampDuration(float64(r.Duration.Seconds) + float64(r.Duration.Nanos)/1e9)
					dur = &d
					s.Duration = AddDuration(s.Duration, d)
				}
				if r.Message != "" || status == "failed" {
					stepErr = &StepError{Message: firstLine(r.Message), Stack: r.Message}
					if r.Exception != nil {
						stepErr.Type = r.Exception.Type
						if r.Exception.Message != "" {
							stepErr.Message = firstLine(r.Exception.Message)
						}
					}
					if stepErr.Message == "" {
						stepErr.Message = status
					}
				}
			}
			statuses = append(statuses, status)
			if ts.PickleStepId == "" { // a hook
				hookAttachments = append(hookAttachments, a.attached[ts.Id]...)
				if status == "failed" && s.Error == nil {
					s.Error = stepErr
				}
				continue
			}
			ps := pickleSteps[ts.PickleStepId]
			if ps == nil {
				continue
			}
			st := pickleStep(ps, nodes, status)
			st.Duration, st.Error = dur, stepErr
			st.Attachments = append(hookAttachments, a.attached[ts.Id]...)
			hookAttachments = nil
			if status == "failed" && s.Error == nil {
				s.Error = stepErr
			}
			s.Steps = append(s.Steps, st)
		}
		if len(hookAttachments) > 0 && len(s.Steps) > 0 {
			last := &s.Steps[len(s.Steps)-1]
			last.Attachments = append(last.Attachments, hookAttachments...)
		}
		s.Status = worst(statuses)
		if !a.finished && s.Status == "passed" {
			s.Status = "unknown"
		}
		if s.Status == "failed" && s.Error == nil {
			s.Error = &StepError{Message: "failed"}
		}
		res.Scenarios = append(res.Scenarios, s)
	}
	return res, nil
}

// hookFailure describes a hook of the whole run that did not pass.
func hookFailure(h *messages.Hook, r *messages.TestStepResult) string {
	what := "a hook of the test run"
	if h != nil {
		kind := map[messages.HookType]string{messages.HookType_BEFORE_TEST_RUN: "BeforeAll", messages.HookType_AFTER_TEST_RUN: "AfterAll"}[h.Type]
		if kind == "" {
			kind = "hook"
		}
		what = kind + " hook"
		if h.Name != "" {
			what += " " + strconv.Quote(h.Name)
		}
		if src := h.SourceReference; src != nil && src.Uri != "" {
			what += " (" + src.Uri
			if src.Location != nil {
				what += ":" + strconv.FormatInt(src.Location.Line, 10)
			}
			what += ")"
		}
	}
	msg := what + " " + normStatus(string(r.Status))
	detail := r.Message
	if r.Exception != nil {
		detail = r.Exception.Type
		if r.Exception.Message != "" {
			detail += ": " + r.Exception.Message
		}
	}
	if detail = firstLine(detail); detail != "" {
		msg += ": " + detail
	}
	return msg
}

func pickleStep(ps *messages.PickleStep, nodes map[string]astNode, status string) Step {
	st := Step{Text: ps.Text, Status: status}
	if len(ps.AstNodeIds) > 0 {
		n := nodes[ps.AstNodeIds[0]]
		st.Keyword, st.Line = n.keyword, n.line
	}
	if ps.Argument != nil {
		if ds := ps.Argument.DocString; ds != nil {
			v := ds.Content
			st.DocString = &v
		}
		if dt := ps.Argument.DataTable; dt != nil {
			for _, r := range dt.Rows {
				var cells []string
				for _, c := range r.Cells {
					cells = append(cells, c.Value)
				}
				st.DataTable = append(st.DataTable, cells)
			}
		}
	}
	return st
}

// walkFeature indexes the lines and keywords of a feature's scenarios, steps and example rows.
func walkFeature(f *messages.Feature, nodes map[string]astNode, rows map[string]int) {
	steps := func(list []*messages.Step) {
		for _, s := range list {
			nodes[s.Id] = astNode{keyword: s.Keyword, line: lineOf(s.Location)}
		}
	}
	scenario := func(s *messages.Scenario) {
		nodes[s.Id] = astNode{keyword: s.Keyword, line: lineOf(s.Location)}
		steps(s.Steps)
		for _, ex := range s.Examples {
			for i, r := range ex.TableBody {
				nodes[r.Id] = astNode{line: lineOf(r.Location)}
				rows[r.Id] = i + 1
			}
		}
	}
	for _, c := range f.Children {
		switch {
		case c.Background != nil:
			steps(c.Background.Steps)
		case c.Scenario != nil:
			scenario(c.Scenario)
		case c.Rule != nil:
			for _, rc := range c.Rule.Children {
				if rc.Background != nil {
					steps(rc.Background.Steps)
				}
				if rc.Scenario != nil {
					scenario(rc.Scenario)
				}
			}
		}
	}
}

func lineOf(l *messages.Location) int {
	if l == nil {
		return 0
	}
	return int(l.Line)
}
