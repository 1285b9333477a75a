package engine_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/sdods/sdods/engine"
	"github.com/sdods/sdods/engine/testops"
)

// fuzzFunctions are available to fuzzed expressions, so calls are exercised too.
const fuzzFunctions = `{"double":{"params":["n"],"body":{"op":"*","args":[{"var":"n"},2]}},"pair":{"params":["x"],"body":[{"var":"x"},{"var":"x"}]},"pair2":{"params":["x"],"body":{"fn":"pair","args":[{"fn":"pair","args":[{"var":"x"}]}]}}}`

const fuzzEnv = `{"data":{"a":1,"s":"héllo","l":[1,2.5,"x",null,[3]],"o":{"k":"v"},"d":"2024-02-29"},"ctx":{"p":"^h"},"original":null}`

func fuzzCompiler(tb testing.TB) *engine.Compiler {
	c, err := engine.NewCompiler(
		engine.WithFunctionsJSON("/functions", json.RawMessage(fuzzFunctions)),
		engine.WithOperators(testops.Operators()),
		engine.WithDeclaredOperators("x-absent"),
		engine.WithBudget(200_000),
	)
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

func seedCases(f *testing.F, withEnv bool) {
	for _, cs := range loadCases(f) {
		for _, c := range cs {
			if len(c.Functions) > 0 {
				continue
			}
			env := string(c.Env)
			if env == "" {
				env = fuzzEnv
			}
			if len(env) > 4096 {
				continue
			}
			if withEnv {
				f.Add(string(c.Expr), env)
			} else {
				f.Add(string(c.Expr), "")
			}
		}
	}
}

// check evaluates e and fails on anything that is not a clean result or a diagnostic other
// than INTERNAL (which would be a recovered panic).
func check(t *testing.T, e *engine.Expression, env map[string]any) {
	v, err := e.Evaluate(env)
	if err != nil {
		d := firstDiagnostic(err)
		if d == nil || d.Code == "INTERNAL" || d.Code == "" || d.Message == "" {
			t.Fatalf("evaluation error without a proper diagnostic: %#v", err)
		}
		return
	}
	if _, err := engine.MarshalValue(v); err != nil {
		t.Fatalf("result does not marshal: %v", err)
	}
}

func FuzzCompile(f *testing.F) {
	seedCases(f, false)
	c := fuzzCompiler(f)
	env, err := engine.ParseEnv([]byte(fuzzEnv))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, src, _ string) {
		// a watchdog: an input that runs unbounded crashes the worker, and the fuzzer records it
		timer := time.AfterFunc(10*time.Second, func() { panic(fmt.Sprintf("hung on %q", src)) })
		defer timer.Stop()
		e, err := c.Compile(json.RawMessage(src), "")
		if err != nil {
			var list engine.Diagnostics
			if !asDiagnostics(err, &list) || len(list) == 0 {
				t.Fatalf("load error is not Diagnostics: %#v", err)
			}
			for _, d := range list {
				if d.Code == "" || d.Message == "" || d.Code == "INTERNAL" {
					t.Fatalf("bad diagnostic %#v", d)
				}
			}
			return
		}
		check(t, e, env)
	})
}

func FuzzEvaluate(f *testing.F) {
	seedCases(f, true)
	c := fuzzCompiler(f)
	f.Fuzz(func(t *testing.T, src, envText string) {
		timer := time.AfterFunc(10*time.Second, func() { panic(fmt.Sprintf("hung on %q with %q", src, envText)) })
		defer timer.Stop()
		e, err := c.Compile(json.RawMessage(src), "")
		if err != nil {
			return
		}
		env, err := engine.ParseEnv([]byte(envText))
		if err != nil {
			if codeOf(err) != "BAD_REQUEST" {
				t.Fatalf("env refusal is not BAD_REQUEST: %v", err)
			}
			return
		}
		check(t, e, env)
	})
}

func asDiagnostics(err error, list *engine.Diagnostics) bool {
	l, ok := err.(engine.Diagnostics)
	if ok {
		*list = l
	}
	return ok
}
