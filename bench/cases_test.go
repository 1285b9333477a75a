package bench

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
)

// benchCase is one case of the comparison.
type benchCase struct {
	name string
	// env builds the input afresh: every engine gets an equal, unshared copy.
	env func() map[string]any
	// want is the expected result in JSON.
	want string

	sdods string // the expression as sdods JSON
	expr  string // the expression in expr's language
	cel   string // the expression in CEL
	// celVars declares the CEL variables (CEL is statically typed).
	celVars []cel.EnvOption
}

// join is the custom function of the "func" case: the host concatenates two strings.
func join(a, b string) string { return a + b }

// createParams is the input of the boolean case.
func createParams() map[string]any {
	return map[string]any{"Origin": "MOW", "Country": "RU", "Adults": 1, "Value": 100}
}

// createRange returns the integers from..to, as a Go host would hold them.
func createRange(from, to int) []int {
	out := make([]int, to-from+1)
	for i := range out {
		out[i] = i + from
	}
	return out
}

func mapWant() string {
	out := make([]int, 100)
	for i := range out {
		out[i] = 2 * (i + 1)
	}
	b, _ := json.Marshal(out)
	return string(b)
}

var cases = []benchCase{
	{
		name: "Boolean",
		env:  createParams,
		want: `true`,
		sdods: `{"op":"and","args":[
			{"op":"or","args":[{"op":"==","args":[{"var":"Origin"},"MOW"]},{"op":"==","args":[{"var":"Country"},"RU"]}]},
			{"op":"or","args":[{"op":">=","args":[{"var":"Value"},100]},{"op":"==","args":[{"var":"Adults"},1]}]}]}`,
		expr: `(Origin == "MOW" || Country == "RU") && (Value >= 100 || Adults == 1)`,
		cel:  `(Origin == "MOW" || Country == "RU") && (Value >= 100 || Adults == 1)`,
		celVars: []cel.EnvOption{
			cel.Variable("Origin", cel.StringType),
			cel.Variable("Country", cel.StringType),
			cel.Variable("Value", cel.IntType),
			cel.Variable("Adults", cel.IntType),
		},
	},
	{
		name:  "StartsWith",
		env:   func() map[string]any { return map[string]any{"name": "/groups/foo/bar", "group": "foo"} },
		want:  `true`,
		sdods: `{"op":"startsWith","args":[{"var":"name"},{"op":"concat","args":["/groups/",{"var":"group"}]}]}`,
		expr:  `name startsWith "/groups/" + group`,
		cel:   `name.startsWith("/groups/" + group)`,
		celVars: []cel.EnvOption{
			cel.Variable("name", cel.StringType),
			cel.Variable("group", cel.StringType),
		},
	},
	{
		name:  "Func",
		env:   func() map[string]any { return map[string]any{} },
		want:  `"hello, world"`,
		sdods: `{"op":"x-join","args":["hello",", world"]}`,
		expr:  `join("hello", ", world")`,
		cel:   `join("hello", ", world")`,
		celVars: []cel.EnvOption{
			cel.Function("join",
				cel.Overload("join_string_string",
					[]*cel.Type{cel.StringType, cel.StringType},
					cel.StringType,
					cel.BinaryBinding(func(lhs, rhs ref.Val) ref.Val {
						return types.String(join(lhs.Value().(string), rhs.Value().(string)))
					}))),
		},
	},
	{
		name:  "Map",
		env:   func() map[string]any { return map[string]any{"array": createRange(1, 100)} },
		want:  mapWant(),
		sdods: `{"op":"map","args":[{"var":"array"},{"op":"*","args":[{"var":"it"},2]}]}`,
		expr:  `map(array, # * 2)`,
		cel:   `array.map(x, x * 2)`,
		celVars: []cel.EnvOption{
			cel.Variable("array", cel.ListType(cel.IntType)),
		},
	},
}

// asJSON writes a result of any of the three engines as JSON, so results compare as text.
func asJSON(v any) (string, error) {
	if rv, ok := v.(ref.Val); ok {
		native, err := rv.ConvertToNative(reflect.TypeOf((*any)(nil)).Elem())
		if err != nil {
			// lists convert to a slice type, not to any
			native, err = rv.ConvertToNative(reflect.TypeOf([]any(nil)))
			if err != nil {
				return "", err
			}
		}
		v = native
	}
	b, err := json.Marshal(v)
	return string(b), err
}

func checkResult(tb testing.TB, engine string, c benchCase, got any) {
	tb.Helper()
	s, err := asJSON(got)
	if err != nil {
		tb.Fatalf("%s %s: result %v: %v", c.name, engine, got, err)
	}
	if s != c.want {
		tb.Fatalf("%s %s: got %s, want %s", c.name, engine, s, c.want)
	}
}

// TestSameResults runs every case once in every engine and compares the results.
func TestSameResults(t *testing.T) {
	for _, c := range cases {
		for _, e := range engines {
			t.Run(c.name+"/"+e.name, func(t *testing.T) {
				run := e.prepare(t, c)
				got, err := run()
				if err != nil {
					t.Fatal(err)
				}
				checkResult(t, e.name, c, got)
			})
		}
	}
}

// Benchmark runs every case in every engine. The names are case=NAME/engine=NAME so that
// benchstat can lay them out as a table: benchstat -row /case -col /engine.
func Benchmark(b *testing.B) {
	for _, c := range cases {
		for _, e := range engines {
			b.Run(fmt.Sprintf("case=%s/engine=%s", c.name, e.name), func(b *testing.B) { e.bench(b, c) })
		}
	}
}
