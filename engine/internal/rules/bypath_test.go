package rules

import (
	"testing"

	"github.com/sdods/sdods/engine/internal/jsonv"
	"github.com/sdods/sdods/engine/internal/ruleset"
)

// byPathRuleset has rules on one field whose conditions may and may not read value by the
// field's path: reading value itself, reading field too, calling a function whose body reads
// value, on a type bound to one record, on no field, and a condition that is not a test.
var byPathRuleset = `{"ruleset": {"id": "b", "version": "1", "defaultLocale": "en",
  "types": {"T": {"base": "string"}},
  "entities": {"one": {"fieldTypes": {"a": "T"}}},
  "functions": {"val": {"params": [], "body": {"var": "value"}}},
  "rules": [
    {"id": "eq", "target": {"fields": ["f.x"]}, "code": "EQ", "when": {"op": "==", "args": [{"var": "value"}, "a"]}, "message": "m1"},
    {"id": "field", "target": {"fields": ["f.x"]}, "code": "FIELD", "when": {"op": "==", "args": [{"var": "field"}, "f.x"]}, "message": "m2"},
    {"id": "fn", "target": {"fields": ["f.x"]}, "code": "FN", "when": {"op": "==", "args": [{"fn": "val", "args": []}, "a"]}, "message": "m2"},
    {"id": "typ", "target": {"type": "T"}, "code": "TYP", "when": {"op": "!=", "args": [{"var": "value"}, null]}, "message": "m1"},
    {"id": "none", "code": "NONE", "when": {"op": "==", "args": [{"var": "data.f.x"}, "a"]}, "message": "none"},
    {"id": "fail", "target": {"fields": ["f.x"]}, "code": "FAIL", "when": {"op": "<", "args": [{"var": "value"}, 1]}, "message": "x"},
    {"id": "value", "target": {"fields": ["f.x"]}, "code": "VALUE", "when": {"op": "coalesce", "args": [{"var": "value"}, false]}, "message": "x"}
  ],
  "locales": {"en": {"m1": "{value} at {field}", "m2": "{value}", "none": "none", "x": "x"}}
}}`

// TestRulesByPath checks which rules are compiled by path, and that every rule gives its finding
// (with the field's value in its message) or its failure, under every budget.
func TestRulesByPath(t *testing.T) {
	n, err := jsonv.Decode([]byte(byPathRuleset))
	if err != nil {
		t.Fatal(err)
	}
	rs, ds := ruleset.Parse(n)
	if len(ds) > 0 {
		t.Fatal(ds)
	}
	p, ds := Compile(rs, Ref{}, nil, 0)
	if len(ds) > 0 {
		t.Fatal(ds)
	}
	wantByPath := map[string]bool{"eq": true, "field": false, "fn": false, "typ": true, "none": false, "fail": true, "value": false}
	for _, ru := range p.rules {
		if ru.byPath != wantByPath[ru.id] {
			t.Errorf("rule %s: byPath %v, want %v", ru.id, ru.byPath, wantByPath[ru.id])
		}
		if (ru.id == "none") != ru.noField {
			t.Errorf("rule %s: noField %v", ru.id, ru.noField)
		}
	}
	res := p.Evaluate(&Request{Data: map[string]any{"f": map[string]any{"x": "a"}, "one": map[string]any{"a": "q"}}})
	got := map[string]string{}
	for _, f := range res.Findings {
		got[f.Rule] = f.Code + " " + f.Field + " " + f.Message
	}
	want := map[string]string{"eq": "EQ f.x a at f.x", "field": "FIELD f.x a", "fn": "FN f.x a", "typ": "TYP one.a q at one.a",
		"none": "NONE  none", "fail": "RULE_FAILED f.x ", "value": "RULE_FAILED f.x "}
	for id, w := range want {
		if g := got[id]; len(g) < len(w) || g[:len(w)] != w {
			t.Errorf("rule %s: finding %q, want %q...", id, g, w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("findings %v, want %v", got, want)
	}
}
