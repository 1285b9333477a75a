package engine_test

import (
	"encoding/json"
	"testing"

	"github.com/sdods/sdods/engine"
)

// The four cases of antonmedv/golang-expression-evaluation-comparison, compiled outside the loop.

func benchEval(b *testing.B, src string, env map[string]any, opts ...engine.Option) {
	e, err := engine.CompileExpression(json.RawMessage(src), opts...)
	if err != nil {
		b.Fatal(err)
	}
	env, err = engine.PrepareEnv(env)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := e.EvaluatePrepared(env); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkBoolean(b *testing.B) {
	benchEval(b, `{"op":"and","args":[
		{"op":"or","args":[{"op":"==","args":[{"var":"data.Origin"},"MOW"]},{"op":"==","args":[{"var":"data.Country"},"RU"]}]},
		{"op":"or","args":[{"op":">=","args":[{"var":"data.Value"},100]},{"op":"==","args":[{"var":"data.Adults"},1]}]}]}`,
		map[string]any{"data": map[string]any{"Origin": "MOW", "Country": "RU", "Adults": 1, "Value": 100}})
}

func BenchmarkStartsWith(b *testing.B) {
	benchEval(b, `{"op":"startsWith","args":[{"var":"data.name"},"/groups/"]}`,
		map[string]any{"data": map[string]any{"name": "/groups/foo/bar"}})
}

func BenchmarkFunctionCall(b *testing.B) {
	benchEval(b, `{"op":"x-join","args":[{"var":"data.a"},{"var":"data.b"}]}`,
		map[string]any{"data": map[string]any{"a": "hello", "b": "world"}},
		engine.WithOperators(map[string]engine.Operator{"x-join": func(args []any) (any, error) {
			return args[0].(string) + args[1].(string), nil
		}}))
}

func BenchmarkMap100(b *testing.B) {
	arr := make([]any, 100)
	for i := range arr {
		arr[i] = float64(i)
	}
	benchEval(b, `{"op":"map","args":[{"var":"data.arr"},{"op":"*","args":[{"var":"it"},2]}]}`,
		map[string]any{"data": map[string]any{"arr": arr}})
}
