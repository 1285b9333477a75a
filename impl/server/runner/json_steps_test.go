package runner_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/sdods/sdods/impl/server/runner"
	"github.com/sdods/sdods/impl/server/steplib"
)

// jsonAPI answers fixed JSON documents by path, the responses the JSON steps check.
func jsonAPI(t *testing.T) string {
	t.Helper()
	docs := map[string]string{
		// Breaks each schema of schemaCases once.
		"/bad": `{"card": "4111", "tags": ["a", "b"], "n_total": "12", "kind": "paid", "extra": true, "email": "not-an-email"}`,
		// Satisfies every schema of schemaCases.
		"/good":  `{"card": "4111", "cvv": "123", "tags": ["a", 1], "n_total": 12, "kind": "paid", "price": 3, "email": "ada@example.test"}`,
		"/store": `{"items": [{"id": 1, "name": "pen", "price": 2, "tags": ["office"]}, {"id": 2, "name": "ink", "price": 15, "tags": ["office", "refill"]}, {"id": 3, "name": "pad", "price": 4, "tags": []}], "owner": {"id": 9, "address": {"id": 10}}, "user-id": 7}`,
	}
	var many strings.Builder
	many.WriteString("[")
	for i := range 100 {
		if i > 0 {
			many.WriteString(",")
		}
		fmt.Fprintf(&many, `{"id": "%d"}`, i)
	}
	many.WriteString("]")
	docs["/many"] = many.String()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d, ok := docs[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(d))
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// schemaCases are the keywords the hand-written validator ignored (issue 19): each must fail the
// step on /bad, naming the place and the keyword, and pass on /good.
var schemaCases = []struct{ name, schema, want string }{
	{"dependentRequired", `{"dependentRequired": {"card": ["cvv"]}}`, "$: properties 'cvv' required, if 'card' exists (dependentRequired)"},
	{"contains", `{"properties": {"tags": {"contains": {"type": "integer"}}}}`, "$.tags: no items match contains schema (contains)"},
	{"patternProperties", `{"patternProperties": {"^n_": {"type": "number"}}}`, "$.n_total: got string, want number (type)"},
	{"if then", `{"if": {"properties": {"kind": {"const": "paid"}}, "required": ["kind"]}, "then": {"required": ["price"]}}`, "$: missing property 'price' (required)"},
	{"unevaluatedProperties", `{"allOf": [{"properties": {"card": {}, "cvv": {}, "tags": {}}}], "properties": {"n_total": {}, "kind": {}, "price": {}, "email": {}}, "unevaluatedProperties": false}`, "$.extra: no value is allowed here (unevaluatedProperties)"},
}

func TestJSONSchemaStepThroughARun(t *testing.T) {
	base := jsonAPI(t)
	var f strings.Builder
	f.WriteString("Feature: JSON Schema\n")
	scenario := func(name, path, step, schema string) {
		fmt.Fprintf(&f, "\n  Scenario: %s\n    When I send a GET request to %q\n    Then the response status is 200\n    And %s\n      \"\"\"json\n      %s\n      \"\"\"\n", name, path, step, schema)
	}
	for _, c := range schemaCases {
		scenario(c.name+" rejects", "/bad", "the response JSON matches the schema:", c.schema)
		scenario(c.name+" accepts", "/good", "the response JSON matches the schema:", c.schema)
	}
	const email = `{"properties": {"email": {"type": "string", "format": "email"}}}`
	scenario("format is an annotation", "/bad", "the response JSON matches the schema:", email)
	scenario("format asserted on request", "/bad", "the response JSON matches the schema, checking formats:", email)
	scenario("a valid format passes", "/good", "the response JSON matches the schema, checking formats:", email)
	// The draft a schema declares applies: draft-07 asserts formats, and reads "dependencies".
	scenario("a declared draft-07 applies", "/bad", "the response JSON matches the schema:",
		`{"$schema": "http://json-schema.org/draft-07/schema#", "properties": {"email": {"format": "email"}}, "dependencies": {"card": ["cvv"]}}`)
	scenario("many violations", "/many", "the response JSON matches the schema:", `{"items": {"properties": {"id": {"type": "integer"}}}}`)
	scenario("a file reference is refused", "/good", "the response JSON matches the schema:", `{"$ref": "file:///etc/hostname"}`)

	res := mustRun(t, runner.New(runner.Config{Egress: loopback(t)}), runner.Run{
		ID: "schema", Project: "demo",
		Features:    map[string]string{"schema.feature": f.String()},
		Environment: runner.Environment{BaseURL: base},
	}, &recorder{})

	failsWith := func(name string, want ...string) {
		t.Helper()
		s := scenarioNamed(t, res, name)
		last := s.Steps[len(s.Steps)-1]
		if s.Status != steplib.StatusFailed || last.Status != steplib.StatusFailed {
			t.Errorf("%s", describe(s))
			return
		}
		for _, w := range want {
			if !strings.Contains(last.Error, w) {
				t.Errorf("%s: error %q lacks %q", name, last.Error, w)
			}
		}
	}
	passes := func(name string) {
		t.Helper()
		if s := scenarioNamed(t, res, name); s.Status != steplib.StatusPassed {
			t.Errorf("%s", describe(s))
		}
	}
	for _, c := range schemaCases {
		failsWith(c.name+" rejects", "does not match the schema (1 violation(s))", c.want)
		passes(c.name + " accepts")
	}
	passes("format is an annotation")
	failsWith("format asserted on request", "$.email: 'not-an-email' is not valid email")
	passes("a valid format passes")
	failsWith("a declared draft-07 applies", "(2 violation(s))", "$.email: 'not-an-email' is not valid email", "(dependencies)")
	failsWith("many violations", "(100 violation(s))", "$[0].id: got string, want integer (type)", "… and 80 more")
	if e := scenarioNamed(t, res, "many violations").Steps[2].Error; len(e) > 4000 {
		t.Errorf("a failure with 100 violations is %d bytes long", len(e))
	}
	failsWith("a file reference is refused", "only references inside the schema are allowed")
}

func TestJSONPathStepsThroughARun(t *testing.T) {
	base := jsonAPI(t)
	const feature = `Feature: JSONPath

  Background:
    When I send a GET request to "/store"
    Then the response status is 200

  Scenario: Simple forms keep working
    Then the response JSON at "$.items[0].name" is "pen"
    And the response JSON at "items[1].price" is "15"
    And the response JSON at "$['owner']['address'].id" is "10"
    And the response JSON at "$.user-id" is "7"
    And the response JSON at "$.items[-1].id" is "3"
    And the response JSON at "$.items[*].id" is "[1, 2, 3]"

  Scenario: Filters
    Then the response JSON at "$.items[?(@.id==2)].name" is "[\"ink\"]"
    And the response JSON at "$.items[?@.id==2].name" contains "ink"
    And the response JSON at "$.items[?@.price < 10].name" is "[\"pen\", \"pad\"]"
    And the response JSON at "$.items[?length(@.tags) == 0]" has 1 item
    And the response JSON at "$.items[?match(@.name, 'p.*')].id" is "[1, 3]"
    And I store the response JSON at "$.items[?@.name=='ink'].id" as "inkIds"
    And the variable "inkIds" is "[2]"

  Scenario: Recursive descent
    Then the response JSON at "$..id" is "[1, 2, 3, 9, 10]"
    And the response JSON at "$.owner..id" has 2 items

  Scenario: Slices
    Then the response JSON at "$.items[0:2].name" is "[\"pen\", \"ink\"]"
    And the response JSON at "$.items[::-1].id" is "[3, 2, 1]"
    And the response JSON at "$.items[1:].tags[-1]" contains "refill"

  Scenario: An empty filter result does not exist
    Then the response JSON at "$.items[?@.id==42]" exists

  Scenario: A missing member names the place
    Then the response JSON at "$.owner.name" is "x"

  Scenario: A syntax error is reported
    Then the response JSON at "$.items[?@.id==]" exists
`
	res := mustRun(t, runner.New(runner.Config{Egress: loopback(t)}), runner.Run{
		ID: "paths", Project: "demo",
		Features:    map[string]string{"paths.feature": feature},
		Environment: runner.Environment{BaseURL: base},
	}, &recorder{})
	for _, name := range []string{"Simple forms keep working", "Filters", "Recursive descent", "Slices"} {
		if s := scenarioNamed(t, res, name); s.Status != steplib.StatusPassed {
			t.Errorf("%s", describe(s))
		}
	}
	for name, want := range map[string]string{
		"An empty filter result does not exist": "selects nothing",
		"A missing member names the place":      `$.owner has no member "name" (members: address, id)`,
		"A syntax error is reported":            `JSONPath "$.items[?@.id==]"`,
	} {
		s := scenarioNamed(t, res, name)
		if last := s.Steps[len(s.Steps)-1]; s.Status != steplib.StatusFailed || !strings.Contains(last.Error, want) {
			t.Errorf("%s: want a failure with %q\n%s", name, want, describe(s))
		}
	}
}
