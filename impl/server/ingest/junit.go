package ingest

import (
	"encoding/xml"
	"errors"
	"io"
	"regexp"
	"strconv"
	"strings"
	"time"
)

type junitProblem struct {
	Message    string `xml:"message,attr"`
	Type       string `xml:"type,attr"`
	Text       string `xml:",chardata"`
	StackTrace string `xml:"stackTrace"`
}

type junitCase struct {
	Name      string         `xml:"name,attr"`
	Classname string         `xml:"classname,attr"`
	Time      string         `xml:"time,attr"`
	Line      string         `xml:"line,attr"`
	File      string         `xml:"file,attr"`
	Failures  []junitProblem `xml:"failure"`
	Errors    []junitProblem `xml:"error"`
	Skipped   *junitProblem  `xml:"skipped"`
	// Surefire: a test that passed on a rerun lists the failed attempts as flakyFailure or
	// flakyError; one that failed every attempt lists the reruns as rerunFailure or rerunError.
	FlakyFailures []junitProblem `xml:"flakyFailure"`
	FlakyErrors   []junitProblem `xml:"flakyError"`
	RerunFailures []junitProblem `xml:"rerunFailure"`
	RerunErrors   []junitProblem `xml:"rerunError"`
	SystemOut     []string       `xml:"system-out"`
	SystemErr     []string       `xml:"system-err"`
}

type junitSuite struct {
	name string
}

// parseJUnit reads <testsuites> or a single <testsuite> (suites may nest, as Ant writes them).
// A test suite is a module, a test class (classname) a feature, a test case a scenario with one step.
// Each test case is emitted as soon as it is read.
func parseJUnit(r io.Reader, res *Summary, emit func(Scenario) error) error {
	d := xml.NewDecoder(r)
	d.Strict = true
	d.CharsetReader = charsetReader
	var (
		stack []junitSuite
		root  = true
	)
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return xmlError(d, err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			line, _ := d.InputPos()
			name := t.Name.Local
			if root {
				root = false
				if name != "testsuites" && name != "testsuite" {
					return &Error{Line: line, Element: "<" + name + ">", Message: "the root element is not <testsuites> or <testsuite>"}
				}
			}
			switch name {
			case "testsuites":
			case "testsuite":
				s := junitSuite{name: attr(t, "name")}
				if s.name == "" && len(stack) > 0 {
					s.name = stack[len(stack)-1].name
				}
				if pkg := attr(t, "package"); pkg != "" && !strings.HasPrefix(s.name, pkg) {
					s.name = pkg + "." + s.name
				}
				if ts := attr(t, "timestamp"); ts != "" && res.StartedAt == nil {
					if at, ok := parseTimestamp(ts); ok {
						res.StartedAt = &at
					}
				}
				stack = append(stack, s)
			case "testcase":
				if len(stack) == 0 {
					return &Error{Line: line, Element: "<testcase>", Message: "a test case outside <testsuite>"}
				}
				var c junitCase
				if err := d.DecodeElement(&c, &t); err != nil {
					return xmlError(d, err)
				}
				sc, err := junitScenario(c, stack[len(stack)-1], line)
				if err != nil {
					return err
				}
				if err := emit(sc); err != nil {
					return err
				}
			default:
				if err := d.Skip(); err != nil {
					return xmlError(d, err)
				}
			}
		case xml.EndElement:
			if t.Name.Local == "testsuite" && len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
		}
	}
	if root {
		return &Error{Line: 1, Message: "the document has no <testsuites> or <testsuite> element"}
	}
	return nil
}

func xmlError(d *xml.Decoder, err error) error {
	var syn *xml.SyntaxError
	if errors.As(err, &syn) {
		return &Error{Line: syn.Line, Message: "malformed XML: " + syn.Msg}
	}
	line, _ := d.InputPos()
	return &Error{Line: line, Message: "malformed XML: " + err.Error()}
}

func attr(t xml.StartElement, name string) string {
	for _, a := range t.Attr {
		if a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}

func parseTimestamp(s string) (time.Time, bool) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02T15:04:05"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), true
		}
	}
	return time.Time{}, false
}

func junitScenario(c junitCase, suite junitSuite, line int) (Scenario, error) {
	el := "<testcase name=\"" + truncate(c.Name, 200) + "\">"
	if c.Name == "" {
		return Scenario{}, &Error{Line: line, Element: "<testcase>", Message: "the name attribute is missing"}
	}
	var dur time.Duration
	if c.Time != "" {
		secs, err := parseSeconds(c.Time)
		var ok bool
		if err == nil {
			dur, ok = clampDuration(secs)
		}
		if !ok {
			return Scenario{}, &Error{Line: line, Element: el, Message: "the time attribute " + strconv.Quote(truncate(c.Time, 60)) + " is not a number of seconds"}
		}
	}
	class := c.Classname
	if class == "" {
		class = suite.name
	}
	module := suite.name
	if module == "" {
		module = class
	}
	sc := Scenario{Key: "junit:" + module + "\x1f" + class + "\x1f" + c.Name, Module: module, FeaturePath: class, FeatureName: class,
		Name: c.Name, Status: "passed", Attempts: 1, Duration: dur, Tags: []string{}}
	if n, err := strconv.Atoi(c.Line); err == nil {
		sc.Line = n
	}
	st := Step{Keyword: "Test ", Text: c.Name, Line: sc.Line, Duration: &dur}
	problems := append(append([]junitProblem{}, c.Failures...), c.Errors...)
	switch {
	case len(problems) > 0:
		sc.Status = "failed"
		sc.Attempts += len(c.RerunFailures) + len(c.RerunErrors)
		sc.Error = problemError(problems[0])
	case c.Skipped != nil:
		sc.Status = "skipped"
		if msg := skipReason(c.Skipped.Message + "\n" + c.Skipped.Text); msg != "" {
			st.Error = &StepError{Message: msg}
		}
	default:
		sc.Attempts += len(c.FlakyFailures) + len(c.FlakyErrors)
	}
	st.Status, st.Error = sc.Status, firstNonNil(sc.Error, st.Error)
	for i, out := range c.SystemOut {
		if strings.TrimSpace(out) != "" {
			st.Attachments = append(st.Attachments, Attachment{Name: numbered("system-out", i) + ".txt", MediaType: "text/plain", Data: []byte(out)})
		}
	}
	for i, out := range c.SystemErr {
		if strings.TrimSpace(out) != "" {
			st.Attachments = append(st.Attachments, Attachment{Name: numbered("system-err", i) + ".txt", MediaType: "text/plain", Data: []byte(out)})
		}
	}
	sc.Steps = []Step{st}
	return sc, nil
}

func numbered(base string, i int) string {
	if i == 0 {
		return base
	}
	return base + "-" + strconv.Itoa(i+1)
}

func firstNonNil(a, b *StepError) *StepError {
	if a != nil {
		return a
	}
	return b
}

func problemError(p junitProblem) *StepError {
	stack := strings.TrimSpace(p.Text)
	if stack == "" {
		stack = strings.TrimSpace(p.StackTrace)
	}
	msg := strings.TrimSpace(p.Message)
	if msg == "" {
		msg = firstLine(stack)
	}
	if msg == "" {
		msg = "failed"
	}
	return &StepError{Message: msg, Type: p.Type, Stack: stack}
}

// charsetReader decodes the encodings besides UTF-8 that JUnit writers declare: Latin-1 (and its
// ASCII subset), whose bytes are the first 256 code points.
func charsetReader(label string, in io.Reader) (io.Reader, error) {
	switch strings.ToLower(strings.TrimSpace(label)) {
	case "utf8":
		return in, nil
	case "iso-8859-1", "iso8859-1", "latin1", "latin-1", "l1", "us-ascii", "ascii":
		b, err := io.ReadAll(in)
		if err != nil {
			return nil, err
		}
		r := make([]rune, len(b))
		for i, c := range b {
			r[i] = rune(c)
		}
		return strings.NewReader(string(r)), nil
	}
	return nil, errors.New("the encoding " + strconv.Quote(label) + " is not supported; write the document in UTF-8")
}

// goTestFrame matches the lines go test prints around a test's own output.
var goTestFrame = regexp.MustCompile(`^\s*(=== (RUN|PAUSE|CONT|NAME)|--- (SKIP|PASS|FAIL)):? `)

// goTestLocation is the file:line prefix go test puts before what t.Skip and t.Log print.
var goTestLocation = regexp.MustCompile(`^\s*[\w./-]+\.go:\d+: `)

// skipReason is why a test was skipped: the first line of the skip message that is not go test's
// framing (gotestsum writes the test's whole output, "=== RUN …", as the message), without the
// file:line prefix t.Skip adds.
func skipReason(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.TrimSpace(l) == "" || goTestFrame.MatchString(l) {
			continue
		}
		return strings.TrimSpace(goTestLocation.ReplaceAllString(l, ""))
	}
	return ""
}
