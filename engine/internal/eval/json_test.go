package eval

import (
	"bytes"
	"testing"
)

// TestResultJSON checks the hand-written encoder against AppendJSON of Value.
func TestResultJSON(t *testing.T) {
	results := []*Result{
		{Findings: []Finding{}, States: map[string]map[string]any{}},
		{
			Ruleset: Ref{ID: "r\"1", Version: "1.0", Checksum: "sha256:ab"},
			Findings: []Finding{
				{Code: "A", Severity: "error", Message: "m\n\u00e9\x01", Field: "a.b", Rule: "r1",
					Location: Location{Page: "p", Screen: "s", Section: "x", Component: "c"}},
				{Code: "B", Severity: "info", Message: "", Rule: "r2", Location: Location{Section: "x"}},
				{Code: "C", Severity: "warning", Message: "x", Rule: "r3"},
			},
			States: map[string]map[string]any{
				"b":            {"visible": true, "value": map[string]any{"z": 1.5, "a": []any{nil, "s", 1e21}}},
				"a.\U0001F600": {"required": false},
				"a.\uFFFD":     {"readonly": true, "value": 0.1},
				"a":            {},
			},
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
	bad := &Result{Findings: []Finding{}, States: map[string]map[string]any{"a": {"value": 1.7976931348623157e308}}}
	if _, err := bad.JSON(); err == nil {
		t.Fatal("a number beyond range after rounding is refused")
	}
}
