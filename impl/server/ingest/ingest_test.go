package ingest_test

import (
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	messages "github.com/cucumber/messages/go/v34"

	"github.com/sdods/sdods/impl/server/ingest"
)

func mustRead(tb testing.TB, name string) []byte {
	tb.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

type want struct {
	name, status string
	attempts     int
}

func check(t *testing.T, r ingest.Result, f ingest.Format, ws []want) {
	t.Helper()
	if r.Format != f || len(r.Scenarios) != len(ws) {
		t.Fatalf("format %s, %d scenarios: %+v", r.Format, len(r.Scenarios), r.Scenarios)
	}
	keys := map[string]bool{}
	for i, w := range ws {
		sc := r.Scenarios[i]
		if sc.Name != w.name || sc.Status != w.status || sc.Attempts != w.attempts {
			t.Errorf("scenario %d: %s %s ×%d, want %+v", i, sc.Name, sc.Status, sc.Attempts, w)
		}
		if keys[sc.Key] {
			t.Errorf("key %q repeated", sc.Key)
		}
		keys[sc.Key] = true
	}
}

func TestParse(t *testing.T) {
	t.Run("surefire with flaky and rerun elements", func(t *testing.T) {
		r, err := ingest.Parse(mustRead(t, "surefire.xml"), "")
		if err != nil {
			t.Fatal(err)
		}
		check(t, r, ingest.JUnit, []want{{"addsItem", "passed", 1}, {"removesItem", "passed", 2}, {"checksOut", "failed", 3}, {"paysLater", "skipped", 1}})
		co := r.Scenarios[2]
		if co.Error == nil || co.Error.Message != "timeout after 500 ms" || co.Error.Type != "java.util.concurrent.TimeoutException" ||
			!strings.Contains(co.Error.Stack, "CartTest.java:40") || co.FeaturePath != "com.example.CartTest" || co.Duration.Milliseconds() != 750 {
			t.Fatalf("failed case %+v", co)
		}
		if len(co.Steps) != 1 || len(co.Steps[0].Attachments) != 1 || string(co.Steps[0].Attachments[0].Data) != "checkout log line" {
			t.Fatalf("steps %+v", co.Steps)
		}
	})
	t.Run("ant testsuites", func(t *testing.T) {
		r, err := ingest.Parse(mustRead(t, "ant.xml"), ingest.JUnit)
		if err != nil {
			t.Fatal(err)
		}
		check(t, r, ingest.JUnit, []want{{"testOk", "passed", 1}, {"testBroken", "failed", 1}})
		if r.Scenarios[0].Module != "org.shop.LoginTest" || r.StartedAt == nil || r.StartedAt.Hour() != 10 {
			t.Fatalf("module %q, started %v", r.Scenarios[0].Module, r.StartedAt)
		}
	})
	t.Run("latin-1", func(t *testing.T) {
		r, err := ingest.Parse([]byte("<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?>\n<testsuite name=\"s\"><testcase name=\"caf\xe9\"/></testsuite>"), "")
		if err != nil || len(r.Scenarios) != 1 || r.Scenarios[0].Name != "café" {
			t.Fatalf("%v %+v", err, r.Scenarios)
		}
		_, err = ingest.Parse([]byte("<?xml version=\"1.0\" encoding=\"EBCDIC\"?>\n<testsuite/>"), "")
		if err == nil || !strings.Contains(err.Error(), "UTF-8") {
			t.Fatalf("unsupported encoding: %v", err)
		}
	})
	t.Run("cucumber json with backgrounds and outlines", func(t *testing.T) {
		r, err := ingest.Parse(mustRead(t, "cucumber.json"), "")
		if err != nil {
			t.Fatal(err)
		}
		check(t, r, ingest.CucumberJSON, []want{{"Pays by card", "failed", 1}, {"Pays later", "undefined", 1}, {"Totals", "passed", 1}})
		card := r.Scenarios[0]
		if len(card.Steps) != 3 || card.Error == nil || card.Error.Message != "card declined" || card.Module != "features/cart" ||
			card.Tags[0] != "@smoke" || len(card.Steps[1].Attachments) != 1 || card.Steps[1].Attachments[0].MediaType != "image/png" {
			t.Fatalf("card %+v", card)
		}
		if later := r.Scenarios[1]; len(later.Steps) != 2 || later.Steps[0].Text != "a cart" {
			t.Fatalf("the background was not prepended: %+v", later.Steps)
		}
		if tot := r.Scenarios[2]; tot.ExampleRow == nil || *tot.ExampleRow != 1 {
			t.Fatalf("outline row %+v", tot.ExampleRow)
		}
	})
	t.Run("cucumber messages with a retry", func(t *testing.T) {
		r, err := ingest.Parse(messagesDoc(t), "")
		if err != nil {
			t.Fatal(err)
		}
		check(t, r, ingest.CucumberMessages, []want{{"Logs in", "passed", 2}, {"Logs out", "failed", 1}})
		in := r.Scenarios[0]
		if in.Line != 3 || in.FeatureName != "Login" || in.Steps[0].Keyword != "Given " || in.Steps[0].Line != 4 || in.Tags[0] != "@auth" {
			t.Fatalf("logs in %+v", in)
		}
		out := r.Scenarios[1]
		if out.Error == nil || out.Error.Message != "still logged in" || len(out.Steps[0].Attachments) != 1 || string(out.Steps[0].Attachments[0].Data) != "hello" {
			t.Fatalf("logs out %+v", out)
		}
	})
}

func messagesDoc(t *testing.T) []byte {
	loc := func(l int64) *messages.Location { return &messages.Location{Line: l} }
	envs := []messages.Envelope{
		{GherkinDocument: &messages.GherkinDocument{Uri: "features/login.feature", Feature: &messages.Feature{Name: "Login", Keyword: "Feature", Children: []*messages.FeatureChild{
			{Scenario: &messages.Scenario{Id: "s1", Name: "Logs in", Keyword: "Scenario", Location: loc(3), Steps: []*messages.Step{{Id: "st1", Keyword: "Given ", Text: "I log in", Location: loc(4)}}}},
			{Scenario: &messages.Scenario{Id: "s2", Name: "Logs out", Keyword: "Scenario", Location: loc(6), Steps: []*messages.Step{{Id: "st2", Keyword: "When ", Text: "I log out", Location: loc(7)}}}},
		}}}},
		{Pickle: &messages.Pickle{Id: "p1", Uri: "features/login.feature", Name: "Logs in", AstNodeIds: []string{"s1"}, Tags: []*messages.PickleTag{{Name: "@auth"}},
			Steps: []*messages.PickleStep{{Id: "ps1", Text: "I log in", AstNodeIds: []string{"st1"}}}}},
		{Pickle: &messages.Pickle{Id: "p2", Uri: "features/login.feature", Name: "Logs out", AstNodeIds: []string{"s2"},
			Steps: []*messages.PickleStep{{Id: "ps2", Text: "I log out", AstNodeIds: []string{"st2"}}}}},
		{TestCase: &messages.TestCase{Id: "tc1", PickleId: "p1", TestSteps: []*messages.TestStep{{Id: "ts1", PickleStepId: "ps1"}}}},
		{TestCase: &messages.TestCase{Id: "tc2", PickleId: "p2", TestSteps: []*messages.TestStep{{Id: "ts2", PickleStepId: "ps2"}}}},
		{TestCaseStarted: &messages.TestCaseStarted{Id: "a1", TestCaseId: "tc1", Attempt: 0, Timestamp: &messages.Timestamp{Seconds: 1700000000}}},
		{TestStepFinished: &messages.TestStepFinished{TestCaseStartedId: "a1", TestStepId: "ts1", TestStepResult: &messages.TestStepResult{Status: "FAILED", Message: "flaky", Duration: &messages.Duration{Nanos: 5e6}}}},
		{TestCaseFinished: &messages.TestCaseFinished{TestCaseStartedId: "a1", WillBeRetried: true}},
		{TestCaseStarted: &messages.TestCaseStarted{Id: "a2", TestCaseId: "tc1", Attempt: 1}},
		{TestStepFinished: &messages.TestStepFinished{TestCaseStartedId: "a2", TestStepId: "ts1", TestStepResult: &messages.TestStepResult{Status: "PASSED", Duration: &messages.Duration{Nanos: 3e6}}}},
		{TestCaseFinished: &messages.TestCaseFinished{TestCaseStartedId: "a2"}},
		{TestCaseStarted: &messages.TestCaseStarted{Id: "a3", TestCaseId: "tc2"}},
		{Attachment: &messages.Attachment{TestCaseStartedId: "a3", TestStepId: "ts2", Body: "aGVsbG8=", ContentEncoding: "BASE64", MediaType: "text/plain"}},
		{TestStepFinished: &messages.TestStepFinished{TestCaseStartedId: "a3", TestStepId: "ts2", TestStepResult: &messages.TestStepResult{Status: "FAILED", Message: "still logged in\n  at logout"}}},
		{TestCaseFinished: &messages.TestCaseFinished{TestCaseStartedId: "a3"}},
	}
	var b strings.Builder
	for _, e := range envs {
		line, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	return []byte(b.String())
}

func TestMalformedDocumentsNameTheLine(t *testing.T) {
	for name, tc := range map[string]struct {
		doc  string
		line int
		text string
	}{
		"xml syntax":        {"<testsuite name=\"a\">\n<testcase name=\"x\">\n</testsuite>", 3, "malformed XML"},
		"wrong root":        {"<?xml version=\"1.0\"?>\n<report/>", 2, "<report>"},
		"testcase no name":  {"<testsuite name=\"a\">\n  <testcase classname=\"c\"/>\n</testsuite>", 2, "name attribute"},
		"bad time":          {"<testsuite name=\"a\">\n<testcase name=\"t\" time=\"soon\"/>\n</testsuite>", 2, "time attribute"},
		"json syntax":       {"[\n {\"uri\": \"a.feature\",\n  \"elements\": [}\n]", 3, "malformed JSON"},
		"json type":         {"[\n {\"uri\": \"a.feature\", \"elements\": [{\"line\": \"three\"}]}\n]", 2, "elements.line"},
		"feature no uri":    {"[\n {\"uri\": \"a.feature\"},\n {\"elements\": []}\n]", 3, "feature [1]"},
		"ndjson line":       {"{\"meta\": {}}\n{\"pickle\": {\"id\": \"p\"}}\n{oops}\n", 3, "malformed JSON"},
		"ndjson unknown id": {"{\"testCaseStarted\": {\"id\": \"a\", \"testCaseId\": \"nope\"}}\n", 1, "testCaseStarted"},
		"not a document":    {"\n\nhello", 3, "not JUnit XML"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := ingest.Parse([]byte(tc.doc), "")
			var e *ingest.Error
			if !errors.As(err, &e) || e.Line != tc.line || !strings.Contains(e.Error(), tc.text) {
				t.Fatalf("got %v (line %d), want line %d mentioning %q", err, lineOf(e), tc.line, tc.text)
			}
		})
	}
}

func lineOf(e *ingest.Error) int {
	if e == nil {
		return -1
	}
	return e.Line
}

func FuzzParse(f *testing.F) {
	for _, n := range []string{"surefire.xml", "ant.xml", "cucumber.json"} {
		f.Add(mustRead(f, n))
	}
	f.Add([]byte("{\"pickle\": {\"id\": \"p\", \"uri\": \"a\"}}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _ = ingest.Parse(data, "")
	})
}
