package engine_test

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/sdods/sdods/engine"
	"github.com/sdods/sdods/engine/testops"
)

func mustCompile(tb testing.TB, src string, opts ...engine.Option) *engine.Expression {
	tb.Helper()
	e, err := engine.CompileExpression(json.RawMessage(src), opts...)
	if err != nil {
		tb.Fatalf("compile %s: %v", src, err)
	}
	return e
}

func codeOf(err error) string {
	if d := firstDiagnostic(err); d != nil {
		return d.Code
	}
	return ""
}

func TestLoadReportsEveryProblem(t *testing.T) {
	src := `{"op":"and","args":[{"op":"nope","args":[]},{"bad":1},{"op":"+","args":[1]},{"var":""},{"op":"matches","args":["a","\\s"]},1e999,{"op":"x-y","args":[]}]}`
	_, err := engine.CompileExpression(json.RawMessage(src))
	var list engine.Diagnostics
	if !errors.As(err, &list) {
		t.Fatalf("want Diagnostics, got %v", err)
	}
	var got []string
	for _, d := range list {
		got = append(got, d.Code+" "+d.Pointer)
	}
	want := []string{
		"OPERATOR_UNKNOWN /args/0/op",
		"EXPRESSION_INVALID /args/1",
		"OPERATOR_ARITY /args/2/args",
		"VARIABLE_INVALID /args/3/var",
		"PATTERN_NOT_PORTABLE /args/4/args/1",
		"NUMBER_OUT_OF_RANGE /args/5",
		"OPERATOR_UNDECLARED /args/6/op",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// Problems of the functions do not stop the check of the expression, and calls to a malformed
// definition are not checked against it (expressions.md §5).
func TestCompileExpressionWithBrokenFunctions(t *testing.T) {
	cases := []struct {
		name, fns, expr string
		want            []string
	}{
		{"expression checked too", `{"f":{"params":[],"body":1,"x":1}}`, `{"op":"nope","args":[]}`,
			[]string{"FUNCTION_INVALID /functions/f/x", "OPERATOR_UNKNOWN /op"}},
		{"not an object still defines f", `{"f":3}`, `{"fn":"f","args":[1]}`,
			[]string{"FUNCTION_INVALID /functions/f"}},
		{"bad parameter name: no arity check", `{"f":{"params":["a.b"],"body":1}}`, `{"fn":"f","args":[]}`,
			[]string{"FUNCTION_INVALID /functions/f/params/0"}},
		{"missing body: no arity check", `{"f":{"params":["a"]}}`, `{"fn":"f","args":[]}`,
			[]string{"FUNCTION_INVALID /functions/f"}},
		{"well-formed beside: arity checked", `{"f":{"params":[],"body":1},"g":[]}`, `{"op":"+","args":[{"fn":"f","args":[1]},{"fn":"g","args":[]},{"fn":"h","args":[]}]}`,
			[]string{"FUNCTION_ARITY /args/0/args", "FUNCTION_UNKNOWN /args/2/fn", "FUNCTION_INVALID /functions/g"}},
		{"params missing: at the definition, no arity check", `{"f":{"body":1}}`, `{"fn":"f","args":[1]}`,
			[]string{"FUNCTION_INVALID /functions/f"}},
		{"body twice: at the second occurrence", `{"f":{"params":[],"body":1,"body":2}}`, `{"fn":"f","args":[]}`,
			[]string{"FUNCTION_INVALID /functions/f/body"}},
		{"params twice: at /params, not a parameter", `{"f":{"params":["a"],"params":["a"],"body":{"var":"a"}}}`, `{"fn":"f","args":[1,2]}`,
			[]string{"FUNCTION_INVALID /functions/f/params"}},
		{"a parameter after one that is not a string: where it is written", `{"f":{"params":["p",1,""],"body":1}}`, `1`,
			[]string{"FUNCTION_INVALID /functions/f/params/1", "FUNCTION_INVALID /functions/f/params/2"}},
		{"a call to a malformed definition is an edge", `{"f":{"params":[],"body":{"fn":"f","args":[1]},"x":1}}`, `1`,
			[]string{"FUNCTION_RECURSIVE /functions/f", "FUNCTION_INVALID /functions/f/x"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := engine.CompileExpression(json.RawMessage(c.expr), engine.WithFunctionsJSON("/functions", json.RawMessage(c.fns)))
			var list engine.Diagnostics
			if !errors.As(err, &list) {
				t.Fatalf("want Diagnostics, got %v", err)
			}
			var got []string
			for _, d := range list {
				got = append(got, d.Code+" "+d.Pointer)
			}
			if strings.Join(got, "\n") != strings.Join(c.want, "\n") {
				t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(c.want, "\n"))
			}
		})
	}
}

func TestMalformedJSON(t *testing.T) {
	for _, src := range []string{``, `{`, `{"var":"a"} x`, `[1,]`, `{"var":"a","var":"b"}`} {
		_, err := engine.CompileExpression(json.RawMessage(src))
		if codeOf(err) != "EXPRESSION_INVALID" {
			t.Errorf("%q: got %v, want EXPRESSION_INVALID", src, err)
		}
	}
}

func TestFunctionsRedefined(t *testing.T) {
	_, err := engine.NewCompiler(engine.WithFunctions("/functions",
		engine.Function{Name: "f", Body: json.RawMessage(`1`)},
		engine.Function{Name: "f", Body: json.RawMessage(`2`)}))
	if d := firstDiagnostic(err); d == nil || d.Code != "FUNCTION_REDEFINED" || d.Pointer != "/functions/1" {
		t.Fatalf("got %v", err)
	}
	_, err = engine.NewCompiler(engine.WithFunctionsJSON("/functions", json.RawMessage(`{"f":{"params":[],"body":1},"f":{"params":[],"body":2}}`)))
	if d := firstDiagnostic(err); d == nil || d.Code != "FUNCTION_REDEFINED" || d.Pointer != "/functions/f" {
		t.Fatalf("got %v", err)
	}
}

func TestFunctionCallChainDepth(t *testing.T) {
	var fns []engine.Function
	for i := 0; i < 40; i++ {
		body := `1`
		if i > 0 {
			body = `{"fn":"f` + itoa(i-1) + `","args":[]}`
		}
		fns = append(fns, engine.Function{Name: "f" + itoa(i), Body: json.RawMessage(body)})
	}
	_, err := engine.NewCompiler(engine.WithFunctions("/functions", fns...))
	if d := firstDiagnostic(err); d == nil || d.Code != "EXPRESSION_TOO_DEEP" || d.Pointer != "/functions/32" {
		t.Fatalf("got %v", err)
	}
	if _, err := engine.NewCompiler(engine.WithFunctions("/functions", fns[:32]...)); err != nil {
		t.Fatalf("a chain of 32 calls must load: %v", err)
	}
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

func TestBudget(t *testing.T) {
	// f_k(x) calls f_{k-1} twice: 2^40 calls without a budget.
	var fns []engine.Function
	fns = append(fns, engine.Function{Name: "f0", Params: []string{"x"}, Body: json.RawMessage(`[{"var":"x"},{"var":"x"}]`)})
	for i := 1; i <= 30; i++ {
		prev := "f" + itoa(i-1)
		fns = append(fns, engine.Function{Name: "f" + itoa(i), Params: []string{"x"},
			Body: json.RawMessage(`{"fn":"` + prev + `","args":[{"fn":"` + prev + `","args":[{"var":"x"}]}]}`)})
	}
	c, err := engine.NewCompiler(engine.WithFunctions("/functions", fns...), engine.WithBudget(1_000_000))
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]string{
		"exponential calls":         `{"fn":"f30","args":[1]}`,
		"shared structure compared": `{"op":"==","args":[{"fn":"f12","args":[1]},{"fn":"f12","args":[1]}]}`,
		"nested iteration":          `{"op":"map","args":[{"var":"data.l"},"a",{"op":"map","args":[{"var":"data.l"},"b",{"op":"map","args":[{"var":"data.l"},"c",1]}]}]}`,
	}
	l := make([]any, 1000)
	env := map[string]any{"data": map[string]any{"l": l}}
	for name, src := range cases {
		t.Run(name, func(t *testing.T) {
			e, err := c.Compile(json.RawMessage(src), "")
			if err != nil {
				t.Fatal(err)
			}
			_, err = e.Evaluate(env)
			if codeOf(err) != "EVALUATION_LIMIT" {
				t.Fatalf("got %v, want EVALUATION_LIMIT", err)
			}
		})
	}
	// the same work fits a larger budget when it is small enough
	e := mustCompile(t, `{"op":"length","args":[{"op":"map","args":[{"var":"data.l"},1]}]}`, engine.WithBudget(100))
	if _, err := e.Evaluate(env); codeOf(err) != "EVALUATION_LIMIT" {
		t.Fatalf("budget 100: got %v", err)
	}
	e = mustCompile(t, `{"op":"length","args":[{"op":"map","args":[{"var":"data.l"},1]}]}`)
	if v, err := e.Evaluate(env); err != nil || v != 1000.0 {
		t.Fatalf("default budget: got %v, %v", v, err)
	}
}

func TestCustomOperators(t *testing.T) {
	ops := testops.Operators()
	ops["x-panic"] = func([]any) (any, error) { panic("boom") }
	ops["x-nan"] = func([]any) (any, error) { return math.NaN(), nil }
	ops["x-int"] = func([]any) (any, error) { return 7, nil }
	c, err := engine.NewCompiler(engine.WithOperators(ops), engine.WithDeclaredOperators("x-absent"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ src, want, code string }{
		{`{"op":"x-panic","args":[]}`, "", "OPERATOR_FAILED"},
		{`{"op":"x-nan","args":[]}`, "", "OPERATOR_FAILED"},
		{`{"op":"x-int","args":[]}`, "7", ""},
		{`{"op":"x-absent","args":[]}`, "", "OPERATOR_UNAVAILABLE"},
		{`{"op":"x-luhn","args":["4111111111111111"]}`, "true", ""},
	}
	for _, tt := range tests {
		e, err := c.Compile(json.RawMessage(tt.src), "")
		if err != nil {
			t.Fatal(err)
		}
		v, err := e.Evaluate(nil)
		if codeOf(err) != tt.code {
			t.Errorf("%s: got %v, want code %q", tt.src, err, tt.code)
			continue
		}
		if tt.code == "" {
			b, _ := engine.MarshalValue(v)
			if string(b) != tt.want {
				t.Errorf("%s: got %s, want %s", tt.src, b, tt.want)
			}
		}
	}
	e, _ := c.Compile(json.RawMessage(`[{"op":"x-absent","args":[]},{"op":"x-luhn","args":["1"]}]`), "")
	if got := strings.Join(e.MissingOperators(), ","); got != "x-absent" {
		t.Errorf("MissingOperators = %s", got)
	}
	if got := strings.Join(e.CustomOperators(), ","); got != "x-absent,x-luhn" {
		t.Errorf("CustomOperators = %s", got)
	}
}

func TestPrepareEnv(t *testing.T) {
	e := mustCompile(t, `{"op":"+","args":[{"var":"data.a"},{"var":"data.b"},{"var":"data.c.0"}]}`)
	v, err := e.Evaluate(map[string]any{"data": map[string]any{"a": json.Number("1.5"), "b": 2, "c": []int{3}}})
	if err != nil || v != 6.5 {
		t.Fatalf("got %v, %v", v, err)
	}
	bad := []map[string]any{
		{"data": math.NaN()},
		{"data": map[string]any{"x": math.Inf(1)}},
		{"data": json.Number("1e400")},
		{"data": struct{}{}},
		{"data": "\xff"},
	}
	for _, env := range bad {
		if _, err := e.Evaluate(env); codeOf(err) != "BAD_REQUEST" {
			t.Errorf("%v: got %v, want BAD_REQUEST", env, err)
		}
	}
	// a cyclic Go value is refused by the depth check, not followed forever
	cyc := map[string]any{}
	cyc["self"] = cyc
	if err := engine.CheckDepth(map[string]any{"data": cyc}); codeOf(err) != "BAD_REQUEST" {
		t.Errorf("cyclic env: got %v", err)
	}
	if err := engine.CheckDepth(map[string]any{"data": 1}); err != nil {
		t.Errorf("CheckDepth of a scalar: %v", err)
	}
}

func TestConcurrentEvaluation(t *testing.T) {
	e := mustCompile(t, `{"op":"map","args":[{"var":"data.l"},{"op":"matches","args":[{"op":"text","args":[{"var":"it"}]},{"var":"ctx.p"}]}]}`)
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			p := "^[0-9]+$"
			if g%2 == 1 {
				p = "^1"
			}
			for i := 0; i < 200; i++ {
				v, err := e.Evaluate(map[string]any{"data": map[string]any{"l": []any{1.0, 12.0, 2.5}}, "ctx": map[string]any{"p": p}})
				if err != nil {
					t.Error(err)
					return
				}
				b, _ := engine.MarshalValue(v)
				want := `[true,true,false]`
				if g%2 == 1 {
					want = `[true,true,false]`
				}
				if string(b) != want && g%2 == 0 {
					t.Errorf("got %s", b)
					return
				}
			}
		}(g)
	}
	wg.Wait()
}

func TestMarshalValue(t *testing.T) {
	v := map[string]any{"b": []any{1.0, 0.1 + 0.2, "é\"\n<"}, "a": nil, "c": true}
	b, err := engine.MarshalValue(v)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"a":null,"b":[1,0.3,"é\"\n<"],"c":true}`; string(b) != want {
		t.Fatalf("got %s, want %s", b, want)
	}
	if _, err := engine.MarshalValue(math.MaxFloat64); err == nil {
		t.Fatal("MaxFloat64 must not leave the engine")
	}
}

func TestCoreOperatorCount(t *testing.T) {
	if n := len(engine.CoreOperators()); n != 45 {
		t.Fatalf("len(CoreOperators()) = %d, want 45", n)
	}
}
