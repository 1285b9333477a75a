package engine_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/sdods/sdods/engine"
)

func mustRuleSet(tb testing.TB, src []byte, opts ...engine.Option) *engine.RuleSet {
	tb.Helper()
	rs, err := engine.Compile(src, opts...)
	if err != nil {
		tb.Fatal(err)
	}
	return rs
}

func TestBadRequests(t *testing.T) {
	rs := mustRuleSet(t, doc(`"rules":[`+okRule+`]`))
	deep := strings.Repeat(`{"a":`, 65) + "1" + strings.Repeat("}", 65)
	ok64 := strings.Repeat(`{"a":`, 63) + "1" + strings.Repeat("}", 63)
	cases := []struct{ name, body, ptr, text string }{
		{"not JSON", `{`, "", "not valid JSON"},
		{"not an object", `[]`, "", "JSON object"},
		{"data missing", `{"ctx":{}}`, "", `"data"`},
		{"unknown member", `{"data":{},"extra":1}`, "/extra", "unknown member"},
		{"duplicate member", `{"data":{},"data":{}}`, "/data", "more than once"},
		{"data not an object", `{"data":[1]}`, "/data", "object or null"},
		{"ctx a string", `{"data":{},"ctx":"x"}`, "/ctx", "object or null"},
		{"data too deep", `{"data":{"x":` + deep + `}}`, "/data", "64"},
		{"actor too deep is checked first", `{"data":{"x":` + deep + `},"actor":{"x":` + deep + `}}`, "/actor", "64"},
		{"number beyond double range", `{"data":{"n":1e999}}`, "/data/n", "range"},
		{"duplicate inside data", `{"data":{"a":1,"a":2}}`, "/data/a", "more than once"},
		{"view not an object", `{"data":{},"view":"p"}`, "/view", "view"},
		{"view unknown member", `{"data":{},"view":{"tab":"x"}}`, "/view/tab", "unknown view member"},
		{"view member too long", `{"data":{},"view":{"page":"` + strings.Repeat("p", 257) + `"}}`, "/view/page", "256"},
		{"locale malformed", `{"data":{},"locale":"fr_CA"}`, "/locale", "language tag"},
		{"other ruleset", `{"ruleset":"other","data":{}}`, "/ruleset", "other"},
		// text that is not UTF-8 or escapes a lone surrogate is not JSON (spec/v1/README.md, Text)
		{"raw byte 0xFF", "{\"data\":{\"s\":\"a\xffb\"}}", "", "invalid UTF-8 at byte 15"},
		{"encoded surrogate", "{\"data\":{\"s\":\"\xed\xa0\x80\"}}", "", "invalid UTF-8"},
		{"overlong", "{\"data\":{\"s\":\"\xc0\xaf\"}}", "", "invalid UTF-8"},
		{"invalid member name", "{\"data\":{\"\xff\":1}}", "", "invalid UTF-8"},
		{"lone high surrogate escape", `{"data":{"s":"\ud800"}}`, "", `lone surrogate escape \ud800`},
		{"lone low surrogate escape", `{"data":{"s":"x\uDC00"}}`, "", `lone surrogate escape \udc00`},
		{"high escape then a letter escape", `{"data":{"s":"\ud800\u0041"}}`, "", "lone surrogate"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := rs.EvaluateJSON([]byte(tc.body))
			var d *engine.Diagnostic
			if !errors.As(err, &d) || d.Code != "BAD_REQUEST" || d.Pointer != tc.ptr || !strings.Contains(d.Message, tc.text) {
				t.Errorf("want BAD_REQUEST at %q mentioning %q, got %v", tc.ptr, tc.text, err)
			}
		})
	}
	if _, err := rs.EvaluateJSON([]byte(`{"data":{"x":` + ok64 + `},"original":null,"actor":null,"ctx":null,"view":null,"locale":null}`)); err != nil {
		t.Errorf("64 deep with null members: %v", err)
	}
	for _, body := range []string{`{"data":{"s":"\ud83d\ude00"}}`, `{"data":{"s":"\\ud800"}}`, "{\"data\":{\"s\":\"\xf0\x9f\x98\x80\"}}"} {
		if _, err := rs.EvaluateJSON([]byte(body)); err != nil {
			t.Errorf("%s: %v", body, err)
		}
	}
	if _, err := rs.Evaluate(&engine.Request{Data: map[string]any{"s": "a\xed\xa0\x80"}}); err == nil {
		t.Error("a Go string holding an encoded surrogate was accepted")
	}
	if _, err := rs.Evaluate(&engine.Request{Data: map[string]any{"f": func() {}}}); err == nil {
		t.Error("a Go value that is not JSON was accepted")
	}
	if _, err := rs.Evaluate(&engine.Request{Data: []any{}}); err == nil {
		t.Error("data that is an array was accepted")
	}
}

func TestFailClosedAndMissingOperators(t *testing.T) {
	src := doc(`"operators":{"x-luhn":{},"x-test-sum":{}},
		"functions":{"check":{"params":["v"],"body":{"op":"x-luhn","args":[{"var":"v"}]}}},
		"rules":[
		 {"id":"direct","code":"C","when":{"op":"x-test-sum","args":[1]},"message":"m"},
		 {"id":"through-function","code":"C","target":{"fields":["a"]},"when":{"op":"and","args":[false,{"fn":"check","args":[{"var":"value"}]}]},"message":"m"},
		 {"id":"error","code":"C","when":{"op":"<","args":[1,"x"]},"message":"m"},
		 {"id":"not-boolean","code":"C","when":1,"message":"m"}],
		"stateRules":[{"id":"s","when":true,"effects":[{"field":"a","hidden":true},{"field":"b","value":{"op":"+","args":[1,"x"]}}]},
		              {"id":"t","when":true,"effects":[{"field":"c","required":"yes"}]}]`)
	rs := mustRuleSet(t, src)
	if got := strings.Join(rs.MissingOperators(), ","); got != "x-luhn,x-test-sum" {
		t.Errorf("missing %s", got)
	}
	if got := strings.Join(rs.RequiredOperators(), ","); got != "x-luhn,x-test-sum" {
		t.Errorf("required %s", got)
	}
	res, err := rs.Evaluate(&engine.Request{Data: map[string]any{"a": "4111111111111111"}})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"direct OPERATOR_UNAVAILABLE", "through-function OPERATOR_UNAVAILABLE", "error EVALUATION_ERROR",
		"not-boolean EVALUATION_ERROR", "s EVALUATION_ERROR", "t EVALUATION_ERROR"}
	var got []string
	for _, f := range res.Findings {
		if f.Code != engine.RuleFailed || f.Severity != "error" {
			t.Errorf("finding %+v", f)
		}
		got = append(got, f.Rule+" "+f.Message[strings.LastIndex(f.Message, " ")+1:])
	}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("got  %v\nwant %v", got, want)
	}
	if len(res.States) != 0 {
		t.Errorf("a failed state rule applied effects: %v", res.States)
	}
	// With the operators registered, nothing fails.
	ops := map[string]engine.Operator{
		"x-luhn":     func([]any) (any, error) { return false, nil },
		"x-test-sum": func([]any) (any, error) { return nil, errors.New("boom") },
	}
	rs = mustRuleSet(t, src, engine.WithOperators(ops))
	if len(rs.MissingOperators()) != 0 {
		t.Errorf("missing %v", rs.MissingOperators())
	}
	res, _ = rs.Evaluate(&engine.Request{Data: map[string]any{}})
	if res.Findings[0].Rule != "direct" || !strings.HasSuffix(res.Findings[0].Message, "OPERATOR_FAILED") {
		t.Errorf("a failing operator: %+v", res.Findings[0])
	}
}

func TestConcurrentEvaluations(t *testing.T) {
	for _, f := range loadFixtures(t) {
		tc := f.golden.Tests[len(f.golden.Tests)-1]
		req, err := engine.ParseRequest(tc.Request)
		if err != nil {
			t.Fatal(err)
		}
		first, _ := f.rs.Evaluate(req)
		want := string(expectedOf(t, first))
		done := make(chan string, 8)
		for i := 0; i < 8; i++ {
			go func() {
				r, _ := f.rs.Evaluate(req)
				done <- string(expectedOf(t, r))
			}()
		}
		for i := 0; i < 8; i++ {
			if got := <-done; got != want {
				t.Errorf("%s: concurrent result differs", tc.ID)
			}
		}
	}
}

// TestStatesOrderAndOverride: states come out ordered by field path and property name (the order
// of the JSON), the later of two state rules setting one property wins, and a state rule whose
// effect fails sets nothing, not even the effects evaluated before the failure.
func TestStatesOrderAndOverride(t *testing.T) {
	src := doc(`"stateRules":[
		 {"id":"first","when":true,"effects":[{"field":"z.b","hidden":true,"required":true},{"field":"a","value":1}]},
		 {"id":"broken","when":true,"effects":[{"field":"m","hidden":false},{"field":"z.b","value":{"op":"+","args":[1,"x"]}}]},
		 {"id":"second","when":true,"effects":[{"field":"z.b","hidden":false},{"field":"\u00e9","readOnly":true}]},
		 {"id":"off","when":false,"effects":[{"field":"a","value":2}]}]`)
	res, err := mustRuleSet(t, src).Evaluate(&engine.Request{Data: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, st := range res.States {
		for _, p := range st.Props {
			got = append(got, fmt.Sprintf("%s.%s=%v", st.Field, p.Name, p.Value))
		}
	}
	want := "a.value=1|z.b.hidden=false|z.b.required=true|\u00e9.readOnly=true"
	if strings.Join(got, "|") != want {
		t.Errorf("states %v\nwant      %s", got, want)
	}
	if v, ok := res.States.Get("z.b", "hidden"); !ok || v != false {
		t.Errorf("Get: %v %v", v, ok)
	}
	if _, ok := res.States.Get("m", "hidden"); ok {
		t.Error("the failed rule's first effect was applied")
	}
	if m := res.States.Map(); len(m) != 3 || m["a"]["value"] != 1.0 {
		t.Errorf("Map: %v", m)
	}
	b, err := res.JSON()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "\"states\":{\"a\":{\"value\":1},\"z.b\":{\"hidden\":false,\"required\":true},\"\u00e9\":{\"readOnly\":true}}") {
		t.Errorf("JSON %s", b)
	}
}

// TestMalformedText checks that every entry point taking JSON text refuses text that is not
// UTF-8 or escapes a lone surrogate with its code for malformed JSON, never repairing it into
// U+FFFD (spec/v1/README.md, Text).
func TestMalformedText(t *testing.T) {
	bad := map[string]string{"byte 0xFF": "\"a\xffb\"", "encoded surrogate": "\"\xed\xa0\x80\"", "lone escape": `"\udfff"`}
	entries := []struct {
		name, code string
		load       func(s string) error
	}{
		{"ParseEnv", "BAD_REQUEST", func(s string) error { _, err := engine.ParseEnv([]byte(`{"a":` + s + `}`)); return err }},
		{"CompileExpression", "EXPRESSION_INVALID", func(s string) error { _, err := engine.CompileExpression([]byte(s)); return err }},
		{"FromBundle", "BUNDLE_INVALID", func(s string) error { _, err := engine.FromBundle([]byte(`{"formatVersion":` + s + `}`)); return err }},
		{"FromManifest", "BUNDLE_INVALID", func(s string) error { _, err := engine.FromManifest([]byte(`{"formatVersion":` + s + `}`)); return err }},
		{"Compile", "RULESET_INVALID", func(s string) error { _, err := engine.Compile([]byte(`{"ruleset":` + s + `}`)); return err }},
	}
	for _, e := range entries {
		for name, s := range bad {
			t.Run(e.name+"/"+name, func(t *testing.T) {
				err := e.load(s)
				code, ptr := "", "?"
				var d *engine.Diagnostic
				var list engine.Diagnostics
				switch {
				case errors.As(err, &d):
					code, ptr = d.Code, d.Pointer
				case errors.As(err, &list) && len(list) > 0:
					code, ptr = list[0].Code, list[0].Pointer
				}
				if code != e.code || ptr != "" {
					t.Errorf("want %s at \"\", got %v", e.code, err)
				}
			})
		}
	}
}
