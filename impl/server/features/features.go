// Package features parses Gherkin feature files with the official Cucumber parser and lints them.
// It collects every diagnostic (position, severity, rule, message) instead of stopping at the
// first; parsing and linting have no I/O. Service owns the stored features and processes of a
// project (saving, deleting, recording, Reconcile with a Git snapshot) on the store.
package features

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"

	gherkin "github.com/cucumber/gherkin/go/v42"
	messages "github.com/cucumber/messages/go/v34"
)

// Severity of a diagnostic; only SeverityError refuses a write.
type Severity string

// The severities, equal to the Severity enum of openapi/server.yaml.
const (
	SeverityError   Severity = "error"
	SeverityWarning Severity = "warning"
	SeverityInfo    Severity = "info"
)

// RuleParse is the rule id of syntax errors; it cannot be turned off.
const RuleParse = "parse"

// Diagnostic is one finding in a feature file, 1-based line and column.
type Diagnostic struct {
	Path     string
	Line     int
	Column   int
	Severity Severity
	Rule     string
	Message  string
}

// HasErrors reports whether any diagnostic has severity error.
func HasErrors(ds []Diagnostic) bool {
	for _, d := range ds {
		if d.Severity == SeverityError {
			return true
		}
	}
	return false
}

// Scenario is a scenario (or outline) of a parsed feature.
type Scenario struct {
	Name    string
	Line    int
	Tags    []string
	Outline bool
}

// Step is a step of a parsed feature, with outline placeholders left in place.
type Step struct {
	Keyword string
	Text    string
	Line    int
	Column  int
}

// Document is a parsed feature file.
type Document struct {
	Name        string
	Description string
	Tags        []string
	Scenarios   []Scenario
	Steps       []Step
	AST         *messages.GherkinDocument
}

var parseErrorText = regexp.MustCompile(`^\((\d+):(\d+)\): (.*)$`)

// Parse parses content; a syntax error gives nil and one diagnostic per error the parser met.
func Parse(content string) (*Document, []Diagnostic) {
	var seq int
	doc, err := gherkin.ParseGherkinDocument(strings.NewReader(content), func() string { seq++; return strconv.Itoa(seq) })
	if err != nil {
		return nil, parseDiagnostics(err)
	}
	return build(doc), nil
}

// parseDiagnostics turns the parser's error list ("(line:col): message" each) into diagnostics.
func parseDiagnostics(err error) []Diagnostic {
	var errs []error
	if v := reflect.ValueOf(err); v.Kind() == reflect.Slice {
		for i := 0; i < v.Len(); i++ {
			if e, ok := v.Index(i).Interface().(error); ok {
				errs = append(errs, e)
			}
		}
	} else {
		errs = []error{err}
	}
	var out []Diagnostic
	for _, e := range errs {
		d := Diagnostic{Line: 1, Column: 1, Severity: SeverityError, Rule: RuleParse, Message: e.Error()}
		if m := parseErrorText.FindStringSubmatch(e.Error()); m != nil {
			d.Line, _ = strconv.Atoi(m[1])
			d.Column, _ = strconv.Atoi(m[2])
			d.Message = m[3]
		}
		// The parser reports column 0 for errors at the end of the input.
		d.Line, d.Column = max(d.Line, 1), max(d.Column, 1)
		out = append(out, d)
	}
	return out
}

func build(ast *messages.GherkinDocument) *Document {
	d := &Document{AST: ast, Tags: []string{}, Scenarios: []Scenario{}, Steps: []Step{}}
	f := ast.Feature
	if f == nil {
		return d
	}
	d.Name, d.Description = f.Name, strings.TrimSpace(f.Description)
	d.Tags = tagNames(f.Tags)
	addSteps := func(steps []*messages.Step) {
		for _, s := range steps {
			d.Steps = append(d.Steps, Step{Keyword: strings.TrimSpace(s.Keyword), Text: s.Text, Line: int(s.Location.Line), Column: int(s.Location.Column)})
		}
	}
	addScenario := func(sc *messages.Scenario, inherited []string) {
		tags := append(append([]string{}, inherited...), tagNames(sc.Tags)...)
		d.Scenarios = append(d.Scenarios, Scenario{Name: sc.Name, Line: int(sc.Location.Line), Tags: tags, Outline: len(sc.Examples) > 0 || isOutline(sc)})
		addSteps(sc.Steps)
	}
	for _, c := range f.Children {
		switch {
		case c.Background != nil:
			addSteps(c.Background.Steps)
		case c.Scenario != nil:
			addScenario(c.Scenario, d.Tags)
		case c.Rule != nil:
			for _, rc := range c.Rule.Children {
				if rc.Background != nil {
					addSteps(rc.Background.Steps)
				}
				if rc.Scenario != nil {
					addScenario(rc.Scenario, append(append([]string{}, d.Tags...), tagNames(c.Rule.Tags)...))
				}
			}
		}
	}
	return d
}

func tagNames(tags []*messages.Tag) []string {
	out := make([]string, 0, len(tags))
	for _, t := range tags {
		out = append(out, t.Name)
	}
	return out
}

func isOutline(sc *messages.Scenario) bool {
	k := strings.ToLower(sc.Keyword)
	return strings.Contains(k, "outline") || strings.Contains(k, "template")
}

// ETag returns the entity tag of a content: a quoted prefix of its SHA-256.
func ETag(content string) string {
	sum := sha256.Sum256([]byte(content))
	return `"` + hex.EncodeToString(sum[:16]) + `"`
}

var segmentPattern = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9 ._-]{0,127}$`)

// CleanPath checks a feature path (relative, '/'-separated, ending in .feature, no empty, dot or
// hidden segments) and returns it; the error says what is wrong.
func CleanPath(p string) (string, error) {
	if p == "" || len(p) > 1024 {
		return "", fmt.Errorf("a feature path has 1 to 1024 characters")
	}
	if !strings.HasSuffix(p, ".feature") || p == ".feature" {
		return "", fmt.Errorf("a feature path ends in .feature")
	}
	if strings.HasPrefix(p, "/") || strings.Contains(p, "\\") {
		return "", fmt.Errorf("a feature path is relative to the project and uses / between folders")
	}
	for _, seg := range strings.Split(p, "/") {
		if !segmentPattern.MatchString(seg) {
			return "", fmt.Errorf("folder or file name %q: use letters, digits, space, '.', '_' or '-', not starting with '.', '-' or space", seg)
		}
	}
	if path.Clean(p) != p {
		return "", fmt.Errorf("a feature path has no empty, '.' or '..' segments")
	}
	return p, nil
}

// Module returns the folder of a feature path ("." at the root, as in a run's tree).
func Module(p string) string {
	if i := strings.LastIndex(p, "/"); i >= 0 {
		return p[:i]
	}
	return "." // the root, as in a run's tree (path.Dir)
}

// Sort orders diagnostics by path, line, column and rule.
func Sort(ds []Diagnostic) {
	sort.SliceStable(ds, func(i, j int) bool {
		a, b := ds[i], ds[j]
		if a.Path != b.Path {
			return a.Path < b.Path
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		if a.Column != b.Column {
			return a.Column < b.Column
		}
		return a.Rule < b.Rule
	})
}
