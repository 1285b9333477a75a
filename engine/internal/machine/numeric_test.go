package machine

import (
	"fmt"
	"math/rand"
	"reflect"
	"strings"
	"testing"

	"github.com/sdods/sdods/engine/internal/jsonv"
	"github.com/sdods/sdods/engine/internal/value"
)

// Numbers carried unboxed (numeric.go) must evaluate and charge exactly as the boxed operators
// do: random expressions of arithmetic, comparisons, rounding, min, max, sums of maps,
// conditionals and function calls (inlined with parameters stored unboxed, called, remembered
// within the evaluation and within a run) over numbers, nulls and values of every other type are
// compiled with the unboxed paths and with the general operators they stand for, and run one
// after the other in one evaluation under many budgets; every result, error code, pointer and
// message must agree.
func TestUnboxedMatchesBoxed(t *testing.T) {
	funcs := []struct{ name, params, body string }{
		{"half", `["x"]`, `{"op":"/","args":[{"var":"x"},2]}`},
		{"ratio", `["a","b"]`, `{"op":"if","args":[{"op":"or","args":[{"op":"==","args":[{"var":"b"},null]},{"op":"==","args":[{"var":"b"},0]}]},null,{"op":"/","args":[{"var":"a"},{"var":"b"}]}]}`},
		{"debt", `["d"]`, `{"fn":"ratio","args":[{"op":"+","args":[{"op":"coalesce","args":[{"var":"d.x"},0]},{"op":"coalesce","args":[{"fn":"ratio","args":[{"var":"data.i"},{"var":"data.f"}]},0]}]},{"var":"data.neg"}]}`},
		// a parameter read boxed, unboxed, as text, compared, through a path and passed on
		{"both", `["p"]`, `[{"var":"p"},{"op":"*","args":[{"var":"p"},2]},{"op":"text","args":[{"var":"p"}]},{"op":"==","args":[{"var":"p"},0.5]},{"var":"p.k"},{"fn":"half","args":[{"var":"p"}]},{"op":"<","args":[{"var":"p"},{"var":"p"}]}]`},
		// a call inside a body is a call, not inlined
		{"outer", `["p"]`, `{"op":"+","args":[{"fn":"half","args":[{"var":"p"}]},{"fn":"half","args":[{"op":"*","args":[{"var":"p"},3]}]}]}`},
		// too large to inline
		{"large", `["x"]`, `{"op":"round","args":[{"op":"+","args":[{"op":"*","args":[{"var":"x"},1.5]},{"op":"-","args":[{"op":"/","args":[{"var":"x"},3]},{"op":"mod","args":[{"var":"x"},0.7]}]},{"op":"*","args":[{"var":"x"},{"var":"x"}]},{"op":"abs","args":[{"var":"x"}]},{"op":"max","args":[{"var":"x"},0.25,{"op":"-","args":[{"var":"x"}]}]}]},2]}`},
		{"total", `["xs"]`, `{"op":"coalesce","args":[{"op":"sum","args":[{"op":"map","args":[{"var":"xs"},{"op":"*","args":[{"var":"it.p"},{"var":"it.q"}]}]}]},0]}`},
	}
	var defs []FunctionDef
	for i, f := range funcs {
		body, err := jsonv.Decode([]byte(f.body))
		if err != nil {
			t.Fatal(f.name, err)
		}
		var params []string
		for _, p := range strings.Split(strings.Trim(f.params, "[]"), ",") {
			params = append(params, strings.Trim(p, `"`))
		}
		defs = append(defs, FunctionDef{Name: f.name, Params: params, Body: body, Pointer: fmt.Sprintf("/functions/%d", i)})
	}
	atoms := []string{`3`, `0.1`, `-2.5`, `0`, `1e300`, `null`, `"s"`, `true`, `[1,2.5]`,
		`{"var":"data.i"}`, `{"var":"data.f"}`, `{"var":"data.big"}`, `{"var":"data.neg"}`, `{"var":"data.zero"}`,
		`{"var":"data.s"}`, `{"var":"data.t"}`, `{"var":"data.missing"}`, `{"var":"data.l"}`, `{"var":"data.ln"}`,
		`{"var":"data.ls"}`, `{"var":"data.o"}`, `{"var":"data.items"}`, `{"var":"data.many"}`, `{"var":"value"}`}
	lists := []string{`{"var":"data.l"}`, `{"var":"data.ln"}`, `{"var":"data.ls"}`, `{"var":"data.many"}`,
		`{"var":"data.items"}`, `{"var":"data.missing"}`, `{"var":"data.s"}`, `[]`, `[1,{"var":"data.f"}]`}
	mapBodies := []string{`{"op":"*","args":[{"var":"it"},1.5]}`, `{"op":"*","args":[{"var":"it.p"},{"var":"it.q"}]}`,
		`{"var":"it"}`, `{"fn":"half","args":[{"var":"it"}]}`, `{"op":"if","args":[{"var":"data.t"},{"var":"it"},"s"]}`}
	rng := rand.New(rand.NewSource(3))
	pick := func(xs []string) string { return xs[rng.Intn(len(xs))] }
	binOps := []string{"+", "-", "*", "/", "mod", "<", "<=", ">", ">=", "==", "!=", "min", "max", "round", "coalesce"}
	var gen func(d int) string
	gen = func(d int) string {
		if d > 3 || rng.Intn(4) == 0 {
			return pick(atoms)
		}
		op := func(name string, args ...string) string {
			return `{"op":"` + name + `","args":[` + strings.Join(args, ",") + `]}`
		}
		fn := func(name string, args ...string) string {
			return `{"fn":"` + name + `","args":[` + strings.Join(args, ",") + `]}`
		}
		switch rng.Intn(16) {
		case 0, 1, 2, 3, 4:
			return op(pick(binOps), gen(d+1), gen(d+1))
		case 5:
			return op(pick(binOps[:5]), gen(d+1), pick([]string{`2`, `0.05`, `100`, `0`, `null`}))
		case 6:
			return op(pick([]string{"min", "max"}), gen(d+1), gen(d+1), gen(d+1))
		case 7:
			return op(pick([]string{"min", "max", "abs", "round", "sum"}), gen(d+1))
		case 8:
			return op("sum", op("map", pick(lists), pick(append(mapBodies, op("+", `{"var":"it"}`, gen(d+1))))))
		case 9:
			return op("sum", `[`+gen(d+1)+`,`+gen(d+1)+`]`)
		case 10:
			return op("if", gen(d+1), gen(d+1), gen(d+1))
		case 11:
			return op(pick([]string{"<", ">", "==", "!="}), gen(d+1), pick([]string{`0.4`, `10`, `0`}))
		case 12:
			return fn(pick([]string{"half", "both", "outer", "large"}), gen(d+1))
		case 13:
			return fn(pick([]string{"ratio"}), gen(d+1), gen(d+1))
		case 14:
			return fn(pick([]string{"debt", "total"}), pick([]string{`{"var":"data"}`, `{"var":"data.items"}`, gen(d + 1)}))
		}
		if rng.Intn(2) == 0 {
			// a map also summed elsewhere
			return op("map", pick(lists), pick(mapBodies))
		}
		return `[` + gen(d+1) + `,` + op("text", gen(d+1)) + `]`
	}
	many := make([]any, 20)
	for i := range many {
		many[i] = float64(i) / 4
	}
	data := map[string]any{"i": 3.0, "f": 0.1, "big": 1e300, "neg": -2.5, "zero": 0.0, "s": "s", "t": true,
		"l": []any{1.0, 2.5, 3.0}, "ln": []any{1.0, nil}, "ls": []any{1.0, "x", nil}, "o": map[string]any{"k": 1.0},
		"many": many, "x": 7.0, "y": 1200.0, "z": 36.0,
		"items": []any{map[string]any{"p": 2.5, "q": 3.0}, map[string]any{"p": 0.1, "q": 7.0}}}
	values := []any{0.7, nil, "s", 12.0}
	reference := map[string]builder{
		"+": strict(opAdd), "-": strict(opSub), "*": strict(opMul),
		"<": binary(cmpOp(cmpTests[cmpLT])), "<=": binary(cmpOp(cmpTests[cmpLE])),
		">": binary(cmpOp(cmpTests[cmpGT])), ">=": binary(cmpOp(cmpTests[cmpGE])),
		"==": deep(func(ptr string, a, b any) (any, error) { return value.Equal(a, b), nil }),
		"!=": deep(func(ptr string, a, b any) (any, error) { return !value.Equal(a, b), nil }),
	}
	compileAll := func(srcs []string, unboxed bool) []*Program {
		cfg := Config{Functions: defs, Globals: []string{"data", "value"}, Varying: []string{"value"}}
		if !unboxed {
			cfg.Skip, cfg.builders = Unbox, reference
		}
		u, ds := NewUnit(cfg)
		if len(ds) > 0 {
			t.Fatal(ds)
		}
		out := compileEach(t, u, srcs)
		return out
	}
	type outcome struct {
		v   any
		err string
	}
	var m Machine // one machine for every evaluation: nothing of one may be seen by the next
	run := func(progs []*Program, budget int64) []outcome {
		globals := []any{data, nil}
		m.Begin(globals, nil, budget)
		var out []outcome
		for pass := 0; pass < 2; pass++ {
			for i, p := range progs {
				globals[1] = values[(i+pass)%len(values)]
				v, err := m.Run(p)
				out = append(out, outcome{v, describe(err)})
			}
		}
		m.End()
		return out
	}
	budgets := []int64{1, 2, 3, 4, 5, 6, 8, 10, 13, 17, 21, 28, 34, 45, 55, 70, 89, 144, 0}
	for i := 0; i < 4000; i++ {
		srcs := make([]string, 1+rng.Intn(4))
		for j := range srcs {
			srcs[j] = gen(0)
		}
		if rng.Intn(2) == 0 {
			srcs = append(srcs, srcs[0]) // the same subexpressions in another expression
		}
		a := compileAll(srcs, true)
		b := compileAll(srcs, false)
		for _, budget := range budgets {
			if ra, rb := run(a, budget), run(b, budget); !reflect.DeepEqual(ra, rb) {
				t.Fatalf("%v with budget %d:\nunboxed %v\nboxed   %v", srcs, budget, ra, rb)
			}
		}
	}
}

// A number an inlined call stores unboxed, or a remembered subexpression keeps unboxed, is boxed
// once for the readers that need it boxed, and not at all for the others: the unboxed paths
// exist to save these allocations.
func TestUnboxedNumbersAllocateOnlyWhereTheyLeave(t *testing.T) {
	defs := []FunctionDef{}
	for i, f := range []struct{ name, params, body string }{
		{"ratio", `["a","b"]`, `{"op":"if","args":[{"op":"==","args":[{"var":"b"},0]},null,{"op":"/","args":[{"var":"a"},{"var":"b"}]}]}`},
		{"debt", `["d"]`, `{"fn":"ratio","args":[{"op":"+","args":[{"var":"d.x"},{"fn":"ratio","args":[{"var":"d.y"},{"var":"d.z"}]}]},{"var":"d.w"}]}`},
	} {
		body, err := jsonv.Decode([]byte(f.body))
		if err != nil {
			t.Fatal(err)
		}
		defs = append(defs, FunctionDef{Name: f.name, Params: strings.Split(f.params[2:len(f.params)-2], `","`), Body: body,
			Pointer: fmt.Sprintf("/functions/%d", i)})
	}
	u, ds := NewUnit(Config{Functions: defs, Globals: []string{"data"}})
	if len(ds) > 0 {
		t.Fatal(ds)
	}
	compile := func(src string) *Program {
		n, err := jsonv.Decode([]byte(src))
		if err != nil {
			t.Fatal(err)
		}
		p, ds := u.Compile(n, "/e")
		if len(ds) > 0 {
			t.Fatal(ds)
		}
		return p
	}
	progs := []*Program{
		compile(`{"op":">","args":[{"fn":"debt","args":[{"var":"data"}]},0.4]}`),
		compile(`{"op":"<","args":[{"op":"*","args":[{"fn":"debt","args":[{"var":"data"}]},100]},33.3]}`),
		compile(`{"op":">","args":[{"op":"max","args":[{"op":"-","args":[{"var":"data.y"},{"op":"*","args":[{"var":"data.x"},0.07]}]},0]},10]}`),
		compile(`{"op":">","args":[{"op":"sum","args":[{"op":"map","args":[{"var":"data.items"},{"op":"*","args":[{"var":"it"},1.1]}]}]},10]}`),
	}
	data := map[string]any{"x": 7.3, "y": 1200.5, "z": 36.0, "w": 2900.1, "items": []any{1.5, 2.25, 3.75}}
	var m Machine
	globals := []any{data}
	evaluate := func() {
		m.Begin(globals, nil, 0)
		for _, p := range progs {
			if _, err := m.Run(p); err != nil {
				t.Fatal(err)
			}
		}
		m.End()
	}
	evaluate()
	if n := testing.AllocsPerRun(100, evaluate); n != 0 {
		t.Fatalf("%v allocations per evaluation, want none", n)
	}
	// readers that need the number boxed (results) box it once
	debt := compile(`{"fn":"debt","args":[{"var":"data"}]}`)
	progs = append(progs, debt, debt)
	if n := testing.AllocsPerRun(100, evaluate); n != 1 {
		t.Fatalf("%v allocations per evaluation, want 1", n)
	}
}
