package steplib_test

import (
	"testing"

	"github.com/sdods/sdods/impl/server/steplib"
)

// FuzzCompileExpression checks that no expression makes the compiler or the matcher panic, and
// that a compiled expression matches the text its literal parts spell when it has no parameters.
func FuzzCompileExpression(f *testing.F) {
	for _, d := range steplib.Definitions() {
		f.Add(d.Pattern, d.Examples[0])
	}
	for _, s := range []string{`a \(b)`, `{int}st/nd/rd/th`, `(a)/b`, `a/ b`, `a ({int})`, `\`, `{`, `(`, `a\/b`} {
		f.Add(s, s)
	}
	f.Fuzz(func(t *testing.T, expr, text string) {
		e, err := steplib.CompileExpression(expr)
		if err != nil {
			return
		}
		args, ok := e.Match(text)
		if ok && len(args) != len(e.ParameterTypes()) {
			t.Fatalf("%d args for %d parameters", len(args), len(e.ParameterTypes()))
		}
	})
}

// FuzzEvalJSONPath checks that no path makes the evaluator panic.
func FuzzEvalJSONPath(f *testing.F) {
	for _, p := range []string{"$", "$.a.b[0].c", "$['a']", `$["x]y"]`, "$.items[*].id", "a.e", "$..c", "$[-1]", "$.a[", "$['", "$.items[?@.id==2]", "$.items[?(@.id>1)].tags[0:1]", "$.user-id"} {
		f.Add(p)
	}
	root, err := steplib.DecodeJSON([]byte(doc))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, path string) {
		_, _ = steplib.EvalJSONPath(root, path)
	})
}
