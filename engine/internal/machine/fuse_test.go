package machine

import (
	"testing"
)

// length(filter(...)) counts without building the list: results, errors and budget charges
// must be those of length over the filter's list, for lists of every kind, bodies that fail or
// are not booleans, null and non-list arguments, under every budget up to the one it needs.
func TestLengthOfFilterMatchesItsParts(t *testing.T) {
	lists := []string{`[]`, `[1,2,3,4]`, `[1,"a",null,true]`, `null`, `"not a list"`, `{"var":"data.l"}`, `{"var":"data.missing"}`}
	bodies := []string{`{"op":">","args":[{"var":"it"},2]}`, `{"op":"==","args":[{"var":"x"},"a"]}`, `true`, `{"var":"it"}`,
		`{"op":"<","args":[{"var":"it"},"s"]}`, `{"op":"!=","args":[{"var":"it"},null]}`}
	env := map[string]any{"data": map[string]any{"l": []any{1.0, 5.0, 7.0, nil}}}
	for _, l := range lists {
		for _, b := range bodies {
			src := `{"op":"length","args":[{"op":"filter","args":[` + l + `,` + b + `]}]}`
			if b == bodies[1] {
				src = `{"op":"length","args":[{"op":"filter","args":[` + l + `,"x",` + b + `]}]}`
			}
			var progs [2]*Program
			for i, skip := range []Passes{0, Fuse} {
				progs[i] = compileSkipping(t, src, "", skip)
			}
			sameUnderBudgets(t, src, progs[0], progs[1], env, 1, 40)
		}
	}
}
