package features

import (
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// StepParam is a parameter of a step definition.
type StepParam struct {
	Name        string
	Type        string
	Description string
}

// StepDef is a step definition as the steps catalog shows it.
type StepDef struct {
	ID          string // e.g. "http.request" or "process:login"
	Source      string // builtin or process
	Category    string // http, browser, assert, data, visual or process
	Keyword     string // Given, When, Then or Any
	Pattern     string // Cucumber expression
	Parameters  []StepParam
	Description string
	Examples    []string
}

// Library is the built-in step library as features sees it: its definitions and a matcher.
type Library interface {
	StepMatcher
	Definitions() []StepDef
}

// processStep is how a feature calls a project process (the step library's process.run step):
// `When I run the process "sign in"`.
var processStep = regexp.MustCompile(`^I run the process "((?:[^"\\]|\\.)*)"$`)

// ProcessStepText returns the step text that calls the process name.
func ProcessStepText(name string) string { return `I run the process ` + strconv.Quote(name) }

// ProcessCalled returns the process a step text calls, if it calls one.
func ProcessCalled(text string) (string, bool) {
	m := processStep.FindStringSubmatch(strings.TrimSpace(text))
	if m == nil {
		return "", false
	}
	name, err := strconv.Unquote(`"` + m[1] + `"`)
	return name, err == nil
}

// Catalog matches steps against the built-in library (may be nil) and the project's processes.
type Catalog struct {
	Builtin   StepMatcher
	Processes map[string]bool
}

// Match implements StepMatcher: a process call matches its process (and nothing else); other
// texts match what the library matches.
func (c Catalog) Match(text string) []string {
	if name, ok := ProcessCalled(text); ok {
		if c.Processes[name] {
			return []string{"process:" + name}
		}
		return nil
	}
	if c.Builtin == nil {
		return nil
	}
	return c.Builtin.Match(text)
}

// ProcessDef returns the catalog entry of a process.
func ProcessDef(name, description string, params []string) StepDef {
	ps := make([]StepParam, 0, len(params))
	for _, p := range params {
		ps = append(ps, StepParam{Name: p, Type: "string", Description: "process parameter <" + p + ">"})
	}
	return StepDef{ID: "process:" + name, Source: "process", Category: "process", Keyword: "Any",
		Pattern: ProcessStepText(name), Parameters: ps, Description: description, Examples: []string{"When " + ProcessStepText(name)}}
}

// processHeader wraps a process body so that the Cucumber parser reads it as a scenario.
const processHeader = "Feature: process\nScenario: process\n"

// ParseProcess parses a process body (Gherkin steps, one per line, with optional doc strings and
// tables) and returns its steps and the names of the <parameters> they use; positions refer to
// the body's own lines.
func ParseProcess(content string) ([]Step, []string, []Diagnostic) {
	const offset = 2
	doc, diags := Parse(processHeader + content)
	for i := range diags {
		diags[i].Line = max(diags[i].Line-offset, 1)
	}
	if doc == nil {
		return nil, nil, diags
	}
	f := doc.AST.Feature
	if f == nil || len(f.Children) != 1 || f.Children[0].Scenario == nil {
		return nil, nil, []Diagnostic{{Line: 1, Column: 1, Severity: SeverityError, Rule: RuleParse,
			Message: "a process is a list of steps (Given/When/Then/And/But …), without Feature, Scenario or Background"}}
	}
	steps := make([]Step, 0, len(doc.Steps))
	if len(doc.Steps) == 0 {
		return nil, nil, []Diagnostic{{Line: 1, Column: 1, Severity: SeverityError, Rule: RuleParse, Message: "a process has at least one step"}}
	}
	seen := map[string]bool{}
	params := []string{}
	for _, s := range doc.Steps {
		s.Line -= offset
		steps = append(steps, s)
		for _, m := range placeholder.FindAllStringSubmatch(s.Text, -1) {
			if !seen[m[1]] {
				seen[m[1]] = true
				params = append(params, m[1])
			}
		}
	}
	sort.Strings(params)
	return steps, params, nil
}
