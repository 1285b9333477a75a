package tracing_test

import (
	"reflect"
	"testing"

	"github.com/sdods/sdods/impl/server/steplib"
	"github.com/sdods/sdods/impl/server/tracing"
)

func step(text, status string, ms int64, opts ...func(*steplib.TraceStep)) steplib.TraceStep {
	s := steplib.TraceStep{Keyword: "When ", Text: text, Status: status, DurationMs: ms}
	for _, o := range opts {
		o(&s)
	}
	return s
}

func req(method, url string, status int) func(*steplib.TraceStep) {
	return func(s *steplib.TraceStep) {
		s.Network = append(s.Network, &steplib.TraceRequest{Method: method, URL: url, Status: status})
	}
}

func failedReq(method, url string) func(*steplib.TraceStep) {
	return func(s *steplib.TraceStep) {
		s.Network = append(s.Network, &steplib.TraceRequest{Method: method, URL: url, Failure: "net::ERR_CONNECTION_REFUSED"})
	}
}

func console(level, text string) func(*steplib.TraceStep) {
	return func(s *steplib.TraceStep) {
		s.Console = append(s.Console, steplib.TraceConsole{Level: level, Text: text})
	}
}

func target(sel, html string) func(*steplib.TraceStep) {
	return func(s *steplib.TraceStep) { s.Target = &steplib.TraceTarget{Selector: sel, HTML: html} }
}

func manifest(steps ...steplib.TraceStep) steplib.TraceManifest {
	return steplib.TraceManifest{Version: 1, Attempt: 1, Steps: steps}
}

func TestDiff(t *testing.T) {
	cases := []struct {
		name      string
		cur, base steplib.TraceManifest
		first     int
		check     func(t *testing.T, d []tracing.StepDiff)
	}{
		{
			name:  "identical traces differ nowhere",
			cur:   manifest(step("I open \"/\"", "passed", 100, req("GET", "http://a/", 200), target("#go", "<button id=\"go\">Go</button>"))),
			base:  manifest(step("I open \"/\"", "passed", 120, req("GET", "http://a/", 200), target("#go", "<button id=\"go\">Go</button>"))),
			first: -1,
		},
		{
			name:  "a small timing change is noise",
			cur:   manifest(step("a", "passed", 300)),
			base:  manifest(step("a", "passed", 100)),
			first: -1,
		},
		{
			name:  "a slower step beyond both thresholds",
			cur:   manifest(step("a", "passed", 1500)),
			base:  manifest(step("a", "passed", 400)),
			first: 0,
			check: func(t *testing.T, d []tracing.StepDiff) {
				if !d[0].TimingChanged || *d[0].DurationMs != 1500 || *d[0].BaselineDurationMs != 400 {
					t.Errorf("timing: %+v", d[0])
				}
			},
		},
		{
			name: "network added, removed and status changed; the query is ignored",
			cur: manifest(step("a", "passed", 10,
				req("GET", "http://a/api/items?t=2", 500), req("POST", "http://a/api/new", 201), failedReq("GET", "http://a/img.png"))),
			base: manifest(step("a", "passed", 10,
				req("GET", "http://a/api/items?t=1", 200), req("GET", "http://a/api/old", 200), req("GET", "http://a/img.png", 200))),
			first: 0,
			check: func(t *testing.T, d []tracing.StepDiff) {
				want := []tracing.NetworkDiff{
					{Change: "status", Method: "GET", URL: "http://a/api/items", Status: 500, BaselineStatus: 200},
					{Change: "added", Method: "POST", URL: "http://a/api/new", Status: 201},
					{Change: "status", Method: "GET", URL: "http://a/img.png", Status: 0, BaselineStatus: 200},
					{Change: "removed", Method: "GET", URL: "http://a/api/old", BaselineStatus: 200},
				}
				if !reflect.DeepEqual(d[0].Network, want) {
					t.Errorf("network:\n got %+v\nwant %+v", d[0].Network, want)
				}
			},
		},
		{
			name:  "a repeated call once more is added",
			cur:   manifest(step("a", "passed", 10, req("GET", "http://a/x", 200), req("GET", "http://a/x", 200))),
			base:  manifest(step("a", "passed", 10, req("GET", "http://a/x", 200))),
			first: 0,
			check: func(t *testing.T, d []tracing.StepDiff) {
				if len(d[0].Network) != 1 || d[0].Network[0].Change != "added" {
					t.Errorf("network: %+v", d[0].Network)
				}
			},
		},
		{
			name: "console errors compared, other levels not",
			cur: manifest(step("a", "passed", 10, console("log", "hello 2"), console("error", "boom"), console("exception", "TypeError: x"),
				console("error", "same"))),
			base:  manifest(step("a", "passed", 10, console("log", "hello 1"), console("error", "same"), console("error", "gone"))),
			first: 0,
			check: func(t *testing.T, d []tracing.StepDiff) {
				if !reflect.DeepEqual(d[0].ConsoleAdded, []string{"boom", "TypeError: x"}) || !reflect.DeepEqual(d[0].ConsoleRemoved, []string{"gone"}) {
					t.Errorf("console: +%q -%q", d[0].ConsoleAdded, d[0].ConsoleRemoved)
				}
			},
		},
		{
			name: "the acted-on element changed, whitespace aside",
			cur:  manifest(step("open", "passed", 10), step("click", "failed", 10000, target("#go", ""))),
			base: manifest(step("open", "passed", 10), step("click", "passed", 50,
				target("#go", "<button id=\"go\">Go</button>"))),
			first: 1,
			check: func(t *testing.T, d []tracing.StepDiff) {
				dom := d[1].DOM
				if dom == nil || dom.Selector != "#go" || dom.HTML != "" || dom.BaselineHTML != "<button id=\"go\">Go</button>" {
					t.Errorf("dom: %+v", dom)
				}
				if d[1].Status != "failed" || d[1].BaselineStatus != "passed" || !d[1].TimingChanged {
					t.Errorf("step 1: %+v", d[1])
				}
			},
		},
		{
			name:  "same element HTML up to whitespace is no difference",
			cur:   manifest(step("click", "passed", 10, target("#go", "<button  id=\"go\">Go</button>"))),
			base:  manifest(step("click", "passed", 10, target("#go", "<button id=\"go\">Go</button>\n"))),
			first: -1,
		},
		{
			name:  "steps on one side only, and a changed text",
			cur:   manifest(step("a", "passed", 10), step("b2", "failed", 10)),
			base:  manifest(step("a", "passed", 10), step("b", "passed", 10), step("c", "passed", 10)),
			first: 1,
			check: func(t *testing.T, d []tracing.StepDiff) {
				if len(d) != 3 {
					t.Fatalf("%d steps", len(d))
				}
				if d[1].Text != "When b2" || d[1].BaselineText != "When b" {
					t.Errorf("texts: %q %q", d[1].Text, d[1].BaselineText)
				}
				if d[2].Text != "When c" || d[2].Status != "" || d[2].BaselineStatus != "passed" || d[2].DurationMs != nil || !d[2].Differs {
					t.Errorf("baseline-only step: %+v", d[2])
				}
			},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d, first := tracing.Diff(c.cur, c.base)
			if first != c.first {
				t.Errorf("first difference %d, want %d (%+v)", first, c.first, d)
			}
			if c.check != nil {
				c.check(t, d)
			}
		})
	}
}
