package compile

import (
	"testing"

	"github.com/sdods/sdods/engine/internal/jsonv"
)

// A memoized path is read once per evaluation and never across evaluations: a machine reused
// for another environment, or another unit, sees that environment's values; a varying root is
// never memoized.
func TestPathsAreMemoizedPerEvaluation(t *testing.T) {
	u, ds := NewUnit(Config{Globals: []string{"data", "value"}, Varying: []string{"value"}})
	if len(ds) > 0 {
		t.Fatal(ds)
	}
	if u.Path("value", []string{"a"}) != nil {
		t.Fatal("a varying root got a memoized path")
	}
	n, _ := jsonv.Decode([]byte(`{"op":"concat","args":[{"var":"data.a.b"},{"var":"data.a.b"},{"op":"text","args":[{"var":"value.x"}]},{"var":"data.l.1"}]}`))
	p, ds := u.Compile(n, "")
	if len(ds) > 0 {
		t.Fatal(ds)
	}
	var m Machine
	for i, tc := range []struct {
		data, value any
		want        string
	}{
		{map[string]any{"a": map[string]any{"b": "x"}, "l": []any{"0", "1"}}, map[string]any{"x": "v"}, "xxv1"},
		{map[string]any{"a": map[string]any{"b": "y"}, "l": []any{"0", "2"}}, map[string]any{"x": "w"}, "yyw2"},
		{map[string]any{"a": "not an object", "l": []any{"0", "3"}}, map[string]any{"x": "z"}, ""},
	} {
		globals := []any{tc.data, nil}
		m.Begin(globals, nil, 0)
		for run, value := range []any{tc.value, map[string]any{"x": "again"}} {
			globals[1] = value // a varying root changes between runs of one evaluation
			got, err := m.Run(p)
			want := tc.want
			if run == 1 && want != "" {
				want = want[:2] + "again" + want[3:]
			}
			if tc.want == "" {
				if got != nil || err != nil {
					t.Errorf("case %d: got %v %v, want null", i, got, err)
				}
				continue
			}
			if err != nil || got != want {
				t.Errorf("case %d: got %v %v, want %q", i, got, err, want)
			}
		}
		m.End()
	}
}
