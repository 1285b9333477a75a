package bench

import (
	"encoding/json"
	"testing"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/vm"
	"github.com/google/cel-go/cel"
	"github.com/sdods/sdods/engine"
)

// engineRunner is one engine of the comparison: prepare compiles a case and returns a function
// that evaluates it once (for TestSameResults); bench times it. Each bench function writes its
// own loop around the engine's own call, so no indirection is timed.
type engineRunner struct {
	name    string
	prepare func(tb testing.TB, c benchCase) func() (any, error)
	bench   func(b *testing.B, c benchCase)
}

// engines in the order of the table; expr, the target, comes first so that benchstat compares
// the others with it.
var engines = []engineRunner{
	{"expr", prepareExpr, benchExpr},
	{"sdods", prepareSdods, benchSdods},
	{"sdods-checked", prepareSdods, benchSdodsChecked},
	{"cel-go", prepareCel, benchCel},
}

// reportCPU reports the process CPU time per operation since start as cpu-ns/op. On a shared
// machine wall time (ns/op) includes the time other processes hold the CPU; CPU time does not
// (it does include the garbage collector's work on other threads).
func reportCPU(b *testing.B, start int64) {
	if start == 0 {
		return
	}
	b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
}

// --- sdods ---

func compileSdods(tb testing.TB, c benchCase) *engine.Expression {
	tb.Helper()
	e, err := engine.CompileExpression(json.RawMessage(c.sdods), engine.WithOperators(map[string]engine.Operator{
		"x-join": func(args []any) (any, error) { return join(args[0].(string), args[1].(string)), nil },
	}))
	if err != nil {
		tb.Fatal(err)
	}
	return e
}

// prepareSdods evaluates through Evaluate, which checks the environment first.
func prepareSdods(tb testing.TB, c benchCase) func() (any, error) {
	e := compileSdods(tb, c)
	env := c.env()
	return func() (any, error) { return e.Evaluate(env) }
}

// benchSdods times EvaluatePrepared: the environment is checked and converted once by
// PrepareEnv, as the rule layer does once per request before evaluating every expression of a
// ruleset against it. benchSdodsChecked times Evaluate, checks included.
func benchSdods(b *testing.B, c benchCase) {
	e := compileSdods(b, c)
	env, err := engine.PrepareEnv(c.env())
	if err != nil {
		b.Fatal(err)
	}
	out, err := e.EvaluatePrepared(env)
	if err != nil {
		b.Fatal(err)
	}
	checkResult(b, "sdods", c, out)
	b.ReportAllocs()
	b.ResetTimer()
	cpu := cpuTime()
	for n := 0; n < b.N; n++ {
		out, err = e.EvaluatePrepared(env)
	}
	b.StopTimer()
	reportCPU(b, cpu)
	if err != nil {
		b.Fatal(err)
	}
	checkResult(b, "sdods", c, out)
}

// --- expr ---

func compileExpr(tb testing.TB, c benchCase, env map[string]any) *vm.Program {
	tb.Helper()
	opts := []expr.Option{expr.Env(env)}
	if c.name == "Func" {
		// as in the peer suite, join is compiled without an environment
		opts = []expr.Option{expr.Function("join", func(params ...any) (any, error) {
			return join(params[0].(string), params[1].(string)), nil
		})}
	}
	p, err := expr.Compile(c.expr, opts...)
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

func prepareExpr(tb testing.TB, c benchCase) func() (any, error) {
	env := c.env()
	p := compileExpr(tb, c, env)
	return func() (any, error) { return expr.Run(p, env) }
}

func benchExpr(b *testing.B, c benchCase) {
	env := c.env()
	p := compileExpr(b, c, env)
	var runEnv any = env
	if c.name == "Func" {
		runEnv = nil
	}
	out, err := expr.Run(p, runEnv)
	if err != nil {
		b.Fatal(err)
	}
	checkResult(b, "expr", c, out)
	b.ReportAllocs()
	b.ResetTimer()
	cpu := cpuTime()
	for n := 0; n < b.N; n++ {
		out, err = expr.Run(p, runEnv)
	}
	b.StopTimer()
	reportCPU(b, cpu)
	if err != nil {
		b.Fatal(err)
	}
	checkResult(b, "expr", c, out)
}

// --- cel-go ---

func compileCel(tb testing.TB, c benchCase) cel.Program {
	tb.Helper()
	env, err := cel.NewEnv(c.celVars...)
	if err != nil {
		tb.Fatal(err)
	}
	parsed, iss := env.Parse(c.cel)
	if iss != nil && iss.Err() != nil {
		tb.Fatalf("parse error: %s", iss.Err())
	}
	checked, iss := env.Check(parsed)
	if iss != nil && iss.Err() != nil {
		tb.Fatalf("type-check error: %s", iss.Err())
	}
	prg, err := env.Program(checked)
	if err != nil {
		tb.Fatal(err)
	}
	return prg
}

func prepareCel(tb testing.TB, c benchCase) func() (any, error) {
	prg := compileCel(tb, c)
	env := c.env()
	return func() (any, error) {
		out, _, err := prg.Eval(env)
		return out, err
	}
}

func benchCel(b *testing.B, c benchCase) {
	prg := compileCel(b, c)
	env := c.env()
	out, _, err := prg.Eval(env)
	if err != nil {
		b.Fatal(err)
	}
	checkResult(b, "cel-go", c, out)
	b.ReportAllocs()
	b.ResetTimer()
	cpu := cpuTime()
	for n := 0; n < b.N; n++ {
		out, _, err = prg.Eval(env)
	}
	b.StopTimer()
	reportCPU(b, cpu)
	if err != nil {
		b.Fatal(err)
	}
	checkResult(b, "cel-go", c, out)
}

// benchSdodsChecked times Evaluate, which checks and converts the environment on every call
// (depth, numbers, UTF-8; the Map case's []int becomes a new []any of numbers each time).
func benchSdodsChecked(b *testing.B, c benchCase) {
	e := compileSdods(b, c)
	env := c.env()
	out, err := e.Evaluate(env)
	if err != nil {
		b.Fatal(err)
	}
	checkResult(b, "sdods", c, out)
	b.ReportAllocs()
	b.ResetTimer()
	cpu := cpuTime()
	for n := 0; n < b.N; n++ {
		out, err = e.Evaluate(env)
	}
	b.StopTimer()
	reportCPU(b, cpu)
	if err != nil {
		b.Fatal(err)
	}
	checkResult(b, "sdods", c, out)
}
