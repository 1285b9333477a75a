package features

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	messages "github.com/cucumber/messages/go/v34"
)

// The lint rule ids. Every rule can be turned off per project (settings.disabledLintRules).
const (
	RuleUnknownStep            = "unknown-step"
	RuleAmbiguousStep          = "ambiguous-step"
	RuleDuplicateScenarioName  = "duplicate-scenario-name"
	RuleEmptyScenario          = "empty-scenario"
	RuleEmptyFeature           = "empty-feature"
	RuleOutlineWithoutExamples = "outline-without-examples"
	RuleUnusedBackground       = "unused-background"
	RuleTagConvention          = "tag-convention"
	RuleTrailingWhitespace     = "trailing-whitespace"
)

// RuleInfo describes a lint rule.
type RuleInfo struct {
	ID          string
	Severity    Severity
	Description string
}

// Rules returns every lint rule, in a stable order. The wording of each rule lives here.
func Rules() []RuleInfo {
	return []RuleInfo{
		{RuleUnknownStep, SeverityError, "A step matches no step definition (built-in step library or project process)."},
		{RuleAmbiguousStep, SeverityError, "A step matches more than one step definition."},
		{RuleDuplicateScenarioName, SeverityError, "Two scenarios of one feature have the same name."},
		{RuleEmptyScenario, SeverityWarning, "A scenario has no steps."},
		{RuleEmptyFeature, SeverityWarning, "A file has no feature, or a feature has no scenarios."},
		{RuleOutlineWithoutExamples, SeverityError, "A Scenario Outline has no Examples rows."},
		{RuleUnusedBackground, SeverityWarning, "A Background is followed by no scenario that would use it."},
		{RuleTagConvention, SeverityWarning, "A tag does not match the project's tag pattern (settings.tagPattern, matched without '@')."},
		{RuleTrailingWhitespace, SeverityWarning, "A line ends in spaces or tabs."},
	}
}

// KnownRule reports whether id names a lint rule.
func KnownRule(id string) bool {
	for _, r := range Rules() {
		if r.ID == id {
			return true
		}
	}
	return false
}

func severityOf(id string) Severity {
	for _, r := range Rules() {
		if r.ID == id {
			return r.Severity
		}
	}
	return SeverityError
}

// StepMatcher finds the step definitions a step text matches (their ids); lint needs nothing else
// of a step library.
type StepMatcher interface {
	Match(text string) []string
}

// Config is what linting a project's features depends on.
type Config struct {
	// Disabled rules report nothing.
	Disabled map[string]bool
	// Only, when not empty, restricts linting to these rules.
	Only map[string]bool
	// TagPattern is the project's tag convention; nil disables the rule.
	TagPattern *regexp.Regexp
	// Steps matches step texts; nil disables the unknown-step and ambiguous-step rules.
	Steps StepMatcher
}

func (c Config) on(rule string) bool {
	if c.Disabled[rule] {
		return false
	}
	return len(c.Only) == 0 || c.Only[rule]
}

// Check parses and lints content saved (or to be saved) at path; the document is nil on a syntax
// error. Every diagnostic carries path.
func Check(path, content string, cfg Config) (*Document, []Diagnostic) {
	doc, diags := Parse(content)
	if doc != nil {
		diags = append(diags, Lint(doc, content, cfg)...)
	} else if cfg.on(RuleTrailingWhitespace) {
		diags = append(diags, trailingWhitespace(content)...)
	}
	for i := range diags {
		diags[i].Path = path
	}
	Sort(diags)
	return doc, diags
}

// Lint runs the enabled rules over a parsed document.
func Lint(doc *Document, content string, cfg Config) []Diagnostic {
	var out []Diagnostic
	add := func(rule string, loc *messages.Location, format string, args ...any) {
		if !cfg.on(rule) {
			return
		}
		d := Diagnostic{Line: 1, Column: 1, Severity: severityOf(rule), Rule: rule, Message: fmt.Sprintf(format, args...)}
		if loc != nil {
			d.Line, d.Column = int(loc.Line), max(int(loc.Column), 1)
		}
		out = append(out, d)
	}
	if cfg.on(RuleTrailingWhitespace) {
		out = append(out, trailingWhitespace(content)...)
	}
	f := doc.AST.Feature
	if f == nil {
		add(RuleEmptyFeature, nil, "the file has no Feature")
		return out
	}
	checkTags := func(tags []*messages.Tag) {
		if cfg.TagPattern == nil {
			return
		}
		for _, t := range tags {
			if !cfg.TagPattern.MatchString(strings.TrimPrefix(t.Name, "@")) {
				add(RuleTagConvention, t.Location, "tag %s does not match the project's tag pattern %s", t.Name, cfg.TagPattern)
			}
		}
	}
	checkTags(f.Tags)
	firstByName := map[string]int64{}
	scenarios := 0
	checkSteps := func(steps []*messages.Step, examples []*messages.Examples) {
		if cfg.Steps == nil {
			return
		}
		for _, s := range steps {
			text := substituteExample(s.Text, examples)
			switch ids := cfg.Steps.Match(text); {
			case len(ids) == 0:
				add(RuleUnknownStep, s.Location, "no step definition matches %q; see GET /api/projects/{slug}/steps", s.Text)
			case len(ids) > 1:
				add(RuleAmbiguousStep, s.Location, "%q matches %d step definitions: %s", s.Text, len(ids), strings.Join(ids, ", "))
			}
		}
	}
	checkScenario := func(sc *messages.Scenario) {
		scenarios++
		checkTags(sc.Tags)
		if first, ok := firstByName[sc.Name]; ok {
			add(RuleDuplicateScenarioName, sc.Location, "scenario name %q is already used on line %d", sc.Name, first)
		} else {
			firstByName[sc.Name] = sc.Location.Line
		}
		if len(sc.Steps) == 0 {
			add(RuleEmptyScenario, sc.Location, "scenario %q has no steps", sc.Name)
		}
		if isOutline(sc) || len(sc.Examples) > 0 {
			rows := 0
			for _, ex := range sc.Examples {
				checkTags(ex.Tags)
				rows += len(ex.TableBody)
				for _, tag := range ex.Tags {
					if strings.HasPrefix(tag.Name, "@dataset:") {
						rows++ // its rows come from the run's dataset (docs/steps.md)
					}
				}
			}
			if rows == 0 {
				add(RuleOutlineWithoutExamples, sc.Location, "scenario outline %q has no Examples rows", sc.Name)
			}
		}
		checkSteps(sc.Steps, sc.Examples)
	}
	// A background is used when a scenario follows it in its container (the feature or a rule;
	// a feature background also serves the scenarios of its rules).
	checkContainer := func(bg *messages.Background, count int) {
		if bg == nil {
			return
		}
		checkSteps(bg.Steps, nil)
		if count == 0 {
			add(RuleUnusedBackground, bg.Location, "the Background is used by no scenario")
		}
	}
	var featureBg *messages.Background
	for _, c := range f.Children {
		switch {
		case c.Background != nil:
			featureBg = c.Background
		case c.Scenario != nil:
			checkScenario(c.Scenario)
		case c.Rule != nil:
			checkTags(c.Rule.Tags)
			var ruleBg *messages.Background
			before := scenarios
			for _, rc := range c.Rule.Children {
				if rc.Background != nil {
					ruleBg = rc.Background
				}
				if rc.Scenario != nil {
					checkScenario(rc.Scenario)
				}
			}
			checkContainer(ruleBg, scenarios-before)
		}
	}
	checkContainer(featureBg, scenarios)
	if scenarios == 0 {
		add(RuleEmptyFeature, f.Location, "feature %q has no scenarios", f.Name)
	}
	return out
}

var placeholder = regexp.MustCompile(`<([^<>]+)>`)

// substituteExample fills an outline step's placeholders with the first example row, so that a
// step such as `I open "<page>"` is matched as the runner will execute it.
func substituteExample(text string, examples []*messages.Examples) string {
	for _, ex := range examples {
		if ex.TableHeader == nil || len(ex.TableBody) == 0 {
			continue
		}
		values := map[string]string{}
		for i, h := range ex.TableHeader.Cells {
			if i < len(ex.TableBody[0].Cells) {
				values[h.Value] = ex.TableBody[0].Cells[i].Value
			}
		}
		return placeholder.ReplaceAllStringFunc(text, func(m string) string {
			if v, ok := values[m[1:len(m)-1]]; ok {
				return v
			}
			return m
		})
	}
	return text
}

func trailingWhitespace(content string) []Diagnostic {
	var out []Diagnostic
	for i, line := range strings.Split(content, "\n") {
		line = strings.TrimSuffix(line, "\r")
		trimmed := strings.TrimRightFunc(line, unicode.IsSpace)
		if len(trimmed) == len(line) || trimmed == "" && line == "" {
			continue
		}
		out = append(out, Diagnostic{Line: i + 1, Column: utf8.RuneCountInString(trimmed) + 1, Severity: severityOf(RuleTrailingWhitespace),
			Rule: RuleTrailingWhitespace, Message: "the line ends in whitespace"})
	}
	return out
}
