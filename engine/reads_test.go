package engine_test

import (
	"encoding/json"
	"testing"

	"github.com/sdods/sdods/engine"
)

// The engine sets value and field only for rules whose expressions may read them, directly or
// through functions; every other rule and state rule must still see them as null.
func TestValueAndFieldScope(t *testing.T) {
	rs := mustRuleSet(t, []byte(`{"ruleset":{"id":"t","version":"1","defaultLocale":"en",
		"locales":{"en":{"m":"{f}|{v}"}},
		"functions":{"fld":{"params":[],"body":{"var":"field"}},"val":{"params":["x"],"body":{"fn":"fld2","args":[{"var":"x"}]}},
			"fld2":{"params":["y"],"body":[{"var":"y"},{"var":"value"}]}},
		"rules":[
			{"id":"a","code":"A","target":{"fields":["x"]},"when":true,"message":{"key":"m","params":{"f":{"fn":"fld","args":[]},"v":{"fn":"val","args":[1]}}}},
			{"id":"b","code":"B","target":{"fields":["x"]},"when":true,"message":{"key":"m","params":{"f":"-","v":"-"}}},
			{"id":"c","code":"C","when":true,"message":{"key":"m","params":{"f":{"var":"field"},"v":{"var":"value"}}}},
			{"id":"d","code":"D","when":true,"message":{"key":"m","params":{"f":{"fn":"fld","args":[]},"v":{"fn":"val","args":[2]}}}}],
		"stateRules":[{"id":"s","when":true,"effects":[{"field":"x","value":[{"var":"value"},{"var":"field"}]}]}]}}`))
	res, err := rs.Evaluate(&engine.Request{Data: map[string]any{"x": "X"}})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(res)
	var got struct {
		Findings []struct{ Rule, Message string }
		States   map[string]map[string]any
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"a": `x|[1,"X"]`, "b": "-|-", "c": "|", "d": "|[2,null]"}
	if len(got.Findings) != len(want) {
		t.Fatalf("findings: %s", b)
	}
	for _, f := range got.Findings {
		if f.Message != want[f.Rule] {
			t.Errorf("rule %s: message %q, want %q", f.Rule, f.Message, want[f.Rule])
		}
	}
	if v, _ := json.Marshal(got.States["x"]["value"]); string(v) != "[null,null]" {
		t.Errorf("state value %s, want [null,null]", v)
	}
}
