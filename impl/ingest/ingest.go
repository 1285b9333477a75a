// Package ingest reads test results produced by other tools — JUnit XML (Ant and Surefire
// variants), Cucumber JSON and Cucumber Messages NDJSON — into the scenario tree of a run:
// module → feature → scenario → steps. It does no I/O; a malformed document is an *Error that
// names its line and element.
package ingest

import (
	"bytes"
	"fmt"
	"path"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Format is a kind of result document.
type Format string

// The formats Parse reads.
const (
	JUnit            Format = "junit"
	CucumberJSON     Format = "cucumber-json"
	CucumberMessages Format = "cucumber-messages"
)

// Result is what a document says: its scenarios in document order.
type Result struct {
	Format    Format
	Scenarios []Scenario
	// StartedAt is when the results were produced, when the document says so.
	StartedAt *time.Time
}

// Scenario is one test case (JUnit) or one pickle (Cucumber).
type Scenario struct {
	// Key identifies the scenario within the run: ingesting it again replaces it.
	Key         string
	Module      string
	FeaturePath string
	FeatureName string
	Name        string
	Line        int
	Tags        []string
	ExampleRow  *int
	// Status is one of passed, failed, skipped, pending, undefined, ambiguous, unknown.
	Status   string
	Error    *StepError
	Attempts int
	Duration time.Duration
	Steps    []Step
}

// Step is one step of a scenario (a JUnit test case has one).
type Step struct {
	Keyword     string
	Text        string
	Line        int
	Status      string
	Duration    *time.Duration
	Error       *StepError
	DocString   *string
	DataTable   [][]string
	Attachments []Attachment
}

// StepError is why a step failed.
type StepError struct {
	Message string
	Type    string
	Stack   string
}

// Attachment is a file a step produced (screenshot, log, output).
type Attachment struct {
	Name      string
	MediaType string
	Data      []byte
}

// Error is a malformed document: its line (1-based; 0 when unknown) and the element or member
// at fault.
type Error struct {
	Line    int
	Element string
	Message string
}

func (e *Error) Error() string {
	var b strings.Builder
	if e.Line > 0 {
		fmt.Fprintf(&b, "line %d: ", e.Line)
	}
	if e.Element != "" {
		b.WriteString(e.Element + ": ")
	}
	b.WriteString(e.Message)
	return b.String()
}

// Detect tells the format of data from its first significant character.
func Detect(data []byte) (Format, error) {
	trimmed := bytes.TrimLeft(bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")), " \t\r\n")
	if len(trimmed) == 0 {
		return "", &Error{Line: 1, Message: "the document is empty"}
	}
	switch trimmed[0] {
	case '<':
		return JUnit, nil
	case '[':
		return CucumberJSON, nil
	case '{':
		return CucumberMessages, nil
	}
	return "", &Error{Line: lineAt(data, len(data)-len(trimmed)), Message: "not JUnit XML (<testsuites>/<testsuite>), Cucumber JSON (an array of features) or Cucumber Messages (one JSON envelope per line)"}
}

// Parse reads data in format f; an empty f detects it.
func Parse(data []byte, f Format) (Result, error) {
	if f == "" {
		var err error
		if f, err = Detect(data); err != nil {
			return Result{}, err
		}
	}
	var (
		r   Result
		err error
	)
	switch f {
	case JUnit:
		r, err = parseJUnit(data)
	case CucumberJSON:
		r, err = parseCucumberJSON(data)
	case CucumberMessages:
		r, err = parseMessages(data)
	default:
		return Result{}, &Error{Message: "unknown format " + string(f)}
	}
	if err != nil {
		return Result{}, err
	}
	r.Format = f
	escapeResult(&r)
	uniqueKeys(r.Scenarios)
	return r, nil
}

// uniqueKeys suffixes repeated keys (#2, #3, …) so that every scenario of a document stays.
func uniqueKeys(sc []Scenario) {
	seen := map[string]int{}
	for i := range sc {
		seen[sc[i].Key]++
		if n := seen[sc[i].Key]; n > 1 {
			sc[i].Key += "#" + strconv.Itoa(n)
		}
	}
}

func lineAt(data []byte, offset int) int {
	if offset > len(data) {
		offset = len(data)
	}
	if offset < 0 {
		offset = 0
	}
	return bytes.Count(data[:offset], []byte("\n")) + 1
}

// rank orders result statuses from best to worst, as Cucumber does.
var rank = map[string]int{"unknown": 0, "passed": 1, "skipped": 2, "pending": 3, "undefined": 4, "ambiguous": 5, "failed": 6}

// worst returns the scenario status of its step statuses: the worst of them; passed when none.
func worst(statuses []string) string {
	out := "passed"
	if len(statuses) == 0 {
		return out
	}
	out = statuses[0]
	for _, s := range statuses[1:] {
		if rank[s] > rank[out] {
			out = s
		}
	}
	if out == "unknown" {
		return "passed"
	}
	return out
}

func normStatus(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	if _, ok := rank[s]; ok {
		return s
	}
	return "unknown"
}

func moduleOf(p string) string { return path.Dir(strings.Trim(p, "/")) }

// firstLine is the message of an error given only as text.
func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return strings.TrimSpace(s)
}

// escapeText returns test output as text PostgreSQL can store and a reader can tell apart from
// the real thing: a NUL character becomes the six characters \u0000 and a byte that is not UTF-8
// becomes \xNN (docs/runs.md). Test output is kept, never refused for what a test printed.
func escapeText(s string) string {
	if utf8.ValidString(s) && strings.IndexByte(s, 0) < 0 {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02X`, s[i])
		case r == 0:
			b.WriteString(`\u0000`)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// escapeResult applies escapeText to every text of r.
func escapeResult(r *Result) {
	e := func(p *string) { *p = escapeText(*p) }
	ee := func(err *StepError) {
		if err != nil {
			e(&err.Message)
			e(&err.Type)
			e(&err.Stack)
		}
	}
	for i := range r.Scenarios {
		sc := &r.Scenarios[i]
		for _, p := range []*string{&sc.Key, &sc.Module, &sc.FeaturePath, &sc.FeatureName, &sc.Name, &sc.Status} {
			e(p)
		}
		for j := range sc.Tags {
			e(&sc.Tags[j])
		}
		ee(sc.Error)
		for j := range sc.Steps {
			st := &sc.Steps[j]
			e(&st.Keyword)
			e(&st.Text)
			e(&st.Status)
			ee(st.Error)
			if st.DocString != nil {
				e(st.DocString)
			}
			for _, row := range st.DataTable {
				for k := range row {
					e(&row[k])
				}
			}
			for k := range st.Attachments {
				e(&st.Attachments[k].Name)
				e(&st.Attachments[k].MediaType)
			}
		}
	}
}
