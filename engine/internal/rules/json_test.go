package rules

import (
	"bytes"
	"testing"
)

// TestResultJSON checks the hand-written encoder against AppendJSON of Value.
func TestResultJSON(t *testing.T) {
	results := []*Result{
		{Findings: []Finding{}},
		{
			Ruleset: Ref{ID: "r\"1", Version: "1.0", Checksum: "sha256:ab"},
			Findings: []Finding{
				{Code: "A", Severity: "error", Message: "m\n\u00e9\x01", Field: "a.b", Rule: "r1",
					Location: Location{Page: "p", Screen: "s", Section: "x", Component: "c"}},
				{Code: "B", Severity: "info", Message: "", Rule: "r2", Location: Location{Section: "x"}},
				{Code: "C", Severity: "warning", Message: "x", Rule: "r3"},
			},
			// by hand, out of order: the encoder orders them
			States: States{
				{Field: "b", Props: []Property{{"visible", true}, {"value", map[string]any{"z": 1.5, "a": []any{nil, "s", 1e21}}}}},
				{Field: "a.\U0001F600", Props: []Property{{"required", false}}},
				{Field: "a.\uFFFD", Props: []Property{{"readonly", true}, {"value", 0.1}}},
				{Field: "a"},
			},
		},
		{
			Findings: []Finding{},
			// as evaluations make them: the later of two changes of one property wins
			States: buildStates([]change{{"b", "visible", true}, {"a.\U0001F600", "required", false},
				{"a.\uFFFD", "value", 0.1}, {"b", "visible", false}, {"a.\uFFFD", "readonly", true}}),
		},
	}
	for _, r := range results {
		want, err := AppendJSON(nil, r.Value())
		if err != nil {
			t.Fatal(err)
		}
		got, err := r.JSON()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("got\n%s\nwant\n%s", got, want)
		}
	}
	if v, _ := results[2].States.Get("b", "visible"); v != false {
		t.Fatalf("the later change wins: got %v", v)
	}
	bad := &Result{Findings: []Finding{}, States: States{{Field: "a", Props: []Property{{"value", 1.7976931348623157e308}}}}}
	if _, err := bad.JSON(); err == nil {
		t.Fatal("a number beyond range after rounding is refused")
	}
}
