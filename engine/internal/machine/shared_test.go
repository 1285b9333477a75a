package machine

import (
	"fmt"
	"math"
	"math/rand"
	"reflect"
	"testing"

	"github.com/sdods/sdods/engine/internal/jsonv"
)

// Shared subexpressions must evaluate and charge exactly as evaluating them again does: random
// expressions built from a few repeated parts (function calls and list operations over stable
// roots, a varying root, locals, custom operators, errors) are compiled into one unit with and
// without sharing, and run one after the other, twice, in one evaluation under many budgets,
// the varying root changing between runs; every result, error code, pointer and message must
// agree.
func TestSharingMatchesEvaluation(t *testing.T) {
	funcs := []struct{ name, params, body string }{
		{"total", `["xs"]`, `{"op":"coalesce","args":[{"op":"sum","args":[{"op":"map","args":[{"var":"xs"},{"op":"*","args":[{"var":"it.p"},{"var":"it.q"}]}]}]},0]}`},
		{"big", `[]`, `{"op":">","args":[{"fn":"total","args":[{"var":"data.items"}]},5]}`},
		{"val", `[]`, `{"op":"concat","args":[{"op":"text","args":[{"var":"value"}]},"!"]}`},
		{"host", `["x"]`, `{"op":"x-id","args":[{"var":"x"}]}`},
		{"bad", `["x"]`, `{"op":"+","args":[{"var":"x"},"s"]}`},
		{"deep", `[]`, `{"fn":"big","args":[]}`},
	}
	var defs []FunctionDef
	for i, f := range funcs {
		body, err := jsonv.Decode([]byte(f.body))
		if err != nil {
			t.Fatal(err)
		}
		params := []string{}
		if p, err := jsonv.Decode([]byte(f.params)); err == nil {
			for _, it := range p.Items {
				params = append(params, it.Text)
			}
		}
		defs = append(defs, FunctionDef{Name: f.name, Params: params, Body: body, Pointer: fmt.Sprintf("/functions/%d", i)})
	}
	parts := []string{
		`{"fn":"total","args":[{"var":"data.items"}]}`,
		`{"fn":"total","args":[{"var":"value"}]}`,
		`{"fn":"big","args":[]}`,
		`{"fn":"deep","args":[]}`,
		`{"fn":"val","args":[]}`,
		`{"fn":"host","args":[{"var":"data.n"}]}`,
		`{"fn":"bad","args":[{"var":"data.n"}]}`,
		`{"fn":"bad","args":["s"]}`,
		`{"op":"filter","args":[{"var":"data.items"},{"op":">","args":[{"var":"it.q"},1]}]}`,
		`{"op":"map","args":[{"var":"data.items"},"e",{"op":"some","args":[{"var":"data.items"},{"op":"==","args":[{"var":"it"},{"var":"e"}]}]}]}`,
		`{"op":"length","args":[{"op":"filter","args":[{"var":"data.items"},{"op":">","args":[{"var":"it.p"},1]}]}]}`,
		`{"op":"map","args":[{"var":"data.items"},{"op":"+","args":[{"var":"it.p"},"s"]}]}`,
		`{"op":"all","args":[{"var":"data.list"},{"op":"==","args":[{"var":"it"},{"var":"value"}]}]}`,
		`{"var":"data.n"}`, `{"var":"value"}`, `1`, `"s"`, `null`, `[1,2]`,
	}
	rng := rand.New(rand.NewSource(2))
	var gen func(d int) string
	gen = func(d int) string {
		if d > 2 || rng.Intn(3) == 0 {
			return parts[rng.Intn(len(parts))]
		}
		switch rng.Intn(6) {
		case 0:
			return `{"op":"and","args":[` + gen(d+1) + `,` + gen(d+1) + `]}`
		case 1:
			return `{"op":"if","args":[` + gen(d+1) + `,` + gen(d+1) + `,` + gen(d+1) + `]}`
		case 2:
			return `{"op":"map","args":[` + gen(d+1) + `,` + gen(d+1) + `]}`
		case 3:
			return `{"op":"coalesce","args":[` + gen(d+1) + `,` + gen(d+1) + `]}`
		case 4:
			return `[` + gen(d+1) + `,` + gen(d+1) + `]`
		}
		return `{"op":"==","args":[` + gen(d+1) + `,` + gen(d+1) + `]}`
	}
	data := map[string]any{"n": 3.0, "list": []any{1.0, "s", nil},
		"items": []any{map[string]any{"p": 2.0, "q": 3.0}, map[string]any{"p": 1.0, "q": 1.0}, map[string]any{"p": 4.0, "q": 2.0}}}
	values := []any{[]any{map[string]any{"p": 5.0, "q": 1.0}}, "s", 1.0, nil}
	// a host operator need not be a function of its arguments: this one counts its calls
	calls := 0.0
	ops := map[string]Operator{"x-id": func(args []any) (any, error) { calls++; return []any{args[0], calls}, nil }}
	var skip Passes
	compileAll := func(srcs []string) []*Program {
		u, ds := NewUnit(Config{Operators: []string{"x-id"}, Functions: defs, Globals: []string{"data", "value"}, Varying: []string{"value"}, Skip: skip})
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
	run := func(progs []*Program, budget int64) []outcome {
		var m Machine
		calls = 0
		globals := []any{data, nil}
		m.Begin(globals, ops, budget)
		if budget%2 == 1 {
			m.rt.run = math.MaxUint32 - 2 // the generations of runs wrap around
		}
		var out []outcome
		for pass := 0; pass < 2; pass++ { // each program runs again with another value
			for i, p := range progs {
				globals[1] = values[(i+pass)%len(values)]
				v, err := m.Run(p)
				out = append(out, outcome{v, describe(err)})
			}
		}
		m.End()
		return out
	}
	budgets := []int64{1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144, 0}
	for i := 0; i < 1500; i++ {
		srcs := make([]string, 1+rng.Intn(5))
		for j := range srcs {
			srcs[j] = gen(0)
		}
		skip = 0
		a := compileAll(srcs)
		skip = Share
		b := compileAll(srcs)
		for _, budget := range budgets {
			if ra, rb := run(a, budget), run(b, budget); !reflect.DeepEqual(ra, rb) {
				t.Fatalf("%v with budget %d:\nshared    %v\nevaluated %v", srcs, budget, ra, rb)
			}
		}
	}
}
