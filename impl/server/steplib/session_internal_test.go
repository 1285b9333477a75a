package steplib

import (
	"context"
	"strings"
	"testing"
	"time"
)

func TestRunRecoversPanics(t *testing.T) {
	s := NewSession(Config{})
	c := &call{def: Definition{ID: "test.panic"}, rep: nopReporter{}}
	err := s.run(context.Background(), func(context.Context, *Session, *call) error { panic("boom") }, c)
	if err == nil || !strings.Contains(err.Error(), "step test.panic panicked: boom") {
		t.Fatalf("error %v", err)
	}
}

func TestRunAbandonsAStuckStep(t *testing.T) {
	s := NewSession(Config{})
	c := &call{def: Definition{ID: "test.stuck"}, rep: nopReporter{}}
	ctx, cancel := context.WithCancel(context.Background())
	release := make(chan struct{})
	defer close(release)
	time.AfterFunc(100*time.Millisecond, cancel)
	start := time.Now()
	err := s.run(ctx, func(context.Context, *Session, *call) error { <-release; return nil }, c)
	// The one-second bound of cancellation is checked by the runner's tests; this one only
	// checks that a stuck implementation is abandoned.
	if err == nil || !strings.Contains(err.Error(), "cancelled") || time.Since(start) > 5*time.Second {
		t.Fatalf("error %v after %s", err, time.Since(start))
	}
}

func TestStepTimeout(t *testing.T) {
	s := NewSession(Config{StepTimeout: 100 * time.Millisecond})
	out := s.Execute(context.Background(), Step{Text: "I wait 5 seconds"}, nil)
	if out.Status != StatusFailed || !strings.Contains(out.Error, "step timed out after 100ms") {
		t.Fatalf("%+v", out)
	}
}

func TestExecuteChecksArguments(t *testing.T) {
	s := NewSession(Config{})
	tests := []struct {
		step Step
		want string
	}{
		{Step{Text: `I log "x"`, DocString: &DocString{Content: "y"}}, "takes no docstring"},
		{Step{Text: `I log "x"`, DataTable: [][]string{{"a"}}}, "takes no data table"},
		{Step{Text: `I set the headers:`}, "needs a data table"},
		{Step{Text: `the response status is 200`}, "no request was sent yet"},
		{Step{Text: `I open "http://127.0.0.1:1/x"`}, "no browser configured"},
		{Step{Text: `I send a GET request to "/x"`}, "there is no base URL"},
		{Step{Text: `I send a FETCH request to "http://127.0.0.1:1/x"`}, `unknown HTTP method "FETCH"`},
		{Step{Text: `I use an account from the users pool`}, "no users pool"},
		{Step{Text: `I run the process "x"`}, "no processes"},
		{Step{Text: `the base URL is "relative"`}, "not an absolute http or https URL"},
		{Step{Text: `the base URL is "file://localhost/etc"`}, "not an absolute http or https URL"},
		{Step{Text: `I send a GET request to "file://localhost/etc/passwd"`}, "not an absolute http or https URL"},
		{Step{Text: `I open "file://localhost/etc/passwd"`}, "not an absolute http or https URL"},
		{Step{Text: `I open "view-source:http://example.com/"`}, "not an absolute http or https URL"},
		{Step{Text: `I send a GET request to "http://127.0.0.1:1/x"`}, "egress policy refuses 127.0.0.1:1"},
	}
	for _, tt := range tests {
		t.Run(tt.step.Text, func(t *testing.T) {
			out := s.Execute(context.Background(), tt.step, nil)
			if out.Status != StatusFailed || !strings.Contains(out.Error, tt.want) {
				t.Fatalf("%+v, want an error containing %q", out, tt.want)
			}
		})
	}
}

func TestEveryDefinitionIsImplemented(t *testing.T) {
	for _, d := range Definitions() {
		if !Implemented(d.ID) {
			t.Errorf("%s has no implementation", d.ID)
		}
	}
	for id := range implementations() {
		if len(Match(exampleText(t, id))) == 0 {
			t.Errorf("implementation %s has no definition", id)
		}
	}
}

func exampleText(t *testing.T, id string) string {
	for _, d := range Definitions() {
		if d.ID == id {
			line, _, _ := strings.Cut(d.Examples[0], "\n")
			_, text, _ := strings.Cut(line, " ")
			return text
		}
	}
	t.Errorf("no definition %s", id)
	return ""
}
