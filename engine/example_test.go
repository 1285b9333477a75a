package engine_test

import (
	"encoding/json"
	"fmt"

	"github.com/sdods/sdods/engine"
	"github.com/sdods/sdods/engine/testops"
)

func ExampleCompileExpression() {
	e, err := engine.CompileExpression(json.RawMessage(`{"op":"and","args":[
		{"op":">=","args":[{"op":"yearsBetween","args":[{"var":"data.birthDate"},{"var":"ctx.today"}]},18]},
		{"op":"matches","args":[{"var":"data.email"},"^[^@]+@[^@]+$"]}]}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	v, err := e.Evaluate(map[string]any{
		"data": map[string]any{"birthDate": "2000-02-29", "email": "a@example.org"},
		"ctx":  map[string]any{"today": "2018-02-28"},
	})
	fmt.Println(v, err)
	// Output: false <nil>
}

func ExampleNewCompiler() {
	c, err := engine.NewCompiler(
		engine.WithFunctionsJSON("/functions", json.RawMessage(`{"net":{"params":["gross","rate"],"body":{"op":"round","args":[{"op":"/","args":[{"var":"gross"},{"op":"+","args":[1,{"var":"rate"}]}]},2]}}}`)),
		engine.WithOperators(testops.Operators()),
	)
	if err != nil {
		fmt.Println(err)
		return
	}
	e, _ := c.Compile(json.RawMessage(`[{"fn":"net","args":[119,0.19]},{"op":"x-luhn","args":["79927398713"]}]`), "")
	v, err := e.Evaluate(nil)
	out, _ := engine.MarshalValue(v)
	fmt.Println(string(out), err)
	// Output: [100,true] <nil>
}

func ExampleCompileExpression_diagnostics() {
	_, err := engine.CompileExpression(json.RawMessage(`{"op":"if","args":[{"var":"data.x"},{"bad":1},{"op":"matches","args":["a","(a+)+"]}]}`))
	for _, d := range err.(engine.Diagnostics) {
		fmt.Println(d.Code, d.Pointer)
	}
	// Output:
	// EXPRESSION_INVALID /args/1
	// PATTERN_NOT_PORTABLE /args/2/args/1
}
