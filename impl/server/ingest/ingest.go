// Package ingest reads test results produced by other tools — JUnit XML (Ant and Surefire
// variants), Cucumber JSON and Cucumber Messages NDJSON — into the scenario tree of a run:
// module → feature → scenario → steps. It does no I/O; a malformed document is an *Error that
// names its line and element.
package ingest

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"path"
	"regexp"
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
	// Errors are what went wrong outside any scenario: a failed hook of the whole run (BeforeAll,
	// AfterAll), an exception of the test run itself. Any of them fails the run.
	Errors []string
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

// Parse reads data in format f; an empty f detects it. It is Stream collecting the scenarios.
func Parse(data []byte, f Format) (Result, error) {
	var scenarios []Scenario
	sum, err := Stream(bytes.NewReader(data), f, func(sc Scenario, index int, again bool) error {
		if again {
			scenarios[index] = sc
			return nil
		}
		scenarios = append(scenarios, sc)
		return nil
	})
	if err != nil {
		return Result{}, err
	}
	return Result{Format: sum.Format, Scenarios: scenarios, StartedAt: sum.StartedAt, Errors: sum.Errors}, nil
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
// A step whose status is missing or unknown (status null) does not pass: a scenario otherwise
// passed is unknown, since nobody said it passed.
func worst(statuses []string) string {
	out := "passed"
	unknown := false
	for _, s := range statuses {
		if s == "unknown" {
			unknown = true
			continue
		}
		if rank[s] > rank[out] {
			out = s
		}
	}
	if unknown && out == "passed" {
		return "unknown"
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

// Bounds of the texts of a result (docs/reports.md): names are indexed and shown in lists, so they
// are short; messages, stacks and step arguments may be long but not unbounded. A longer text is
// cut on a character boundary and ends in a marker saying how much was dropped.
const (
	MaxNameBytes    = 1024
	MaxMessageBytes = 16 << 10
	MaxTextBytes    = 64 << 10
)

// truncate cuts s to at most n bytes including the marker "… [truncated N bytes]".
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	marker := fmt.Sprintf("… [truncated %d bytes]", len(s)) // an upper bound of the dropped bytes keeps the length fixed
	cut := n - len(marker)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf("… [truncated %d bytes]", len(s)-cut)
}

// boundKey keeps a long key unique: its head and a digest of the whole.
func boundKey(k string) string {
	if len(k) <= MaxNameBytes {
		return k
	}
	sum := sha256.Sum256([]byte(k))
	cut := MaxNameBytes - 20
	for cut > 0 && !utf8.RuneStart(k[cut]) {
		cut--
	}
	return k[:cut] + "…" + hex.EncodeToString(sum[:8])
}

// normalizeErrors escapes the run's errors (escapeText) and bounds their length.
func normalizeErrors(errs []string) {
	for i := range errs {
		errs[i] = truncate(escapeText(errs[i]), MaxMessageBytes)
	}
}

// normalizeScenario escapes every text of a scenario (escapeText) and bounds its length.
func normalizeScenario(sc *Scenario) {
	e := func(p *string, n int) { *p = truncate(escapeText(*p), n) }
	ee := func(err *StepError) {
		if err != nil {
			e(&err.Message, MaxMessageBytes)
			e(&err.Type, MaxNameBytes)
			e(&err.Stack, MaxTextBytes)
		}
	}
	{
		sc.Key = boundKey(escapeText(sc.Key))
		for _, p := range []*string{&sc.Module, &sc.FeaturePath, &sc.FeatureName, &sc.Name, &sc.Status} {
			e(p, MaxNameBytes)
		}
		for j := range sc.Tags {
			e(&sc.Tags[j], MaxNameBytes)
		}
		ee(sc.Error)
		for j := range sc.Steps {
			st := &sc.Steps[j]
			e(&st.Keyword, MaxNameBytes)
			e(&st.Text, MaxMessageBytes)
			e(&st.Status, MaxNameBytes)
			ee(st.Error)
			if st.DocString != nil {
				e(st.DocString, MaxTextBytes)
			}
			for _, row := range st.DataTable {
				for k := range row {
					e(&row[k], MaxMessageBytes)
				}
			}
			for k := range st.Attachments {
				e(&st.Attachments[k].Name, MaxNameBytes)
				e(&st.Attachments[k].MediaType, MaxNameBytes)
			}
		}
	}
}

// MaxDuration is the longest duration a result keeps (docs/reports.md): a longer one, which no
// test takes, is stored as MaxDuration, so that sums stay far from overflowing.
const MaxDuration = 366 * 24 * time.Hour

// clampDuration turns a duration in seconds into one that can be stored: negative → 0, longer
// than MaxDuration → MaxDuration. NaN and infinities are not durations (ok false).
func clampDuration(secs float64) (d time.Duration, ok bool) {
	switch {
	case math.IsNaN(secs) || math.IsInf(secs, 0):
		return 0, false
	case secs <= 0:
		return 0, true
	case secs >= MaxDuration.Seconds():
		return MaxDuration, true
	}
	return time.Duration(secs * float64(time.Second)), true
}

// AddDuration returns a+b, at most MaxDuration.
func AddDuration(a, b time.Duration) time.Duration {
	if a >= MaxDuration-b {
		return MaxDuration
	}
	return a + b
}

var thousands = regexp.MustCompile(`^[0-9]{1,3}(,[0-9]{3})+(\.[0-9]*)?$`)

// parseSeconds reads a JUnit time attribute: a decimal number of seconds with '.' as the decimal
// point; ',' groups thousands when it does (Surefire writes "1,234.5"), and is otherwise a
// decimal comma ("0,5" is half a second).
func parseSeconds(s string) (float64, error) {
	s = strings.TrimSpace(s)
	switch {
	case thousands.MatchString(s):
		s = strings.ReplaceAll(s, ",", "")
	case strings.Count(s, ",") == 1 && !strings.Contains(s, "."):
		s = strings.Replace(s, ",", ".", 1)
	}
	// Only plain decimal numbers: ParseFloat would also take "NaN", "Inf" and hexadecimal.
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c == '.' || c == 'e' || c == 'E' || c == '-' || c == '+') {
			return 0, fmt.Errorf("not a number")
		}
	}
	return strconv.ParseFloat(s, 64)
}
