package machine

import (
	"fmt"
	"math/rand"
	"reflect"
	"strings"
	"testing"

	"github.com/sdods/sdods/engine/internal/diag"
	"github.com/sdods/sdods/engine/internal/jsonv"
)

// Inlined function calls must evaluate and charge exactly as calls do: random expressions
// calling a set of functions (nested calls, lambdas, errors inside bodies) are compiled with and
// without inlining and evaluated under many budgets; results, error codes, pointers and
// messages must agree.
func TestInliningMatchesCalls(t *testing.T) {
	funcs := []struct{ name, params, body string }{
		{"blank", `["v"]`, `{"op":"isEmpty","args":[{"op":"trim","args":[{"op":"text","args":[{"op":"coalesce","args":[{"var":"v"},""]}]}]}]}`},
		{"twice", `["x"]`, `{"op":"*","args":[{"var":"x"},2]}`},
		{"sumTwice", `["xs"]`, `{"op":"sum","args":[{"op":"map","args":[{"var":"xs"},{"fn":"twice","args":[{"var":"it"}]}]}]}`},
		{"pick", `["a","b"]`, `{"op":"if","args":[{"fn":"blank","args":[{"var":"a"}]},{"var":"b"},{"var":"a"}]}`},
		{"glob", `[]`, `{"op":"concat","args":[{"var":"data.s"},"!"]}`},
		{"bad", `["x"]`, `{"op":"+","args":[{"var":"x"},"s"]}`},
		// parameters read twice, through paths, and passed on to nested inlined calls
		{"field", `["o"]`, `{"op":"concat","args":[{"op":"text","args":[{"var":"o.k"}]},{"op":"text","args":[{"var":"o.k"}]}]}`},
		{"both", `["a","b"]`, `{"op":"==","args":[{"fn":"pick","args":[{"var":"b"},{"var":"a"}]},{"fn":"field","args":[{"var":"a"}]}]}`},
	}
	var defs []FunctionDef
	for i, f := range funcs {
		body, err := jsonv.Decode([]byte(f.body))
		if err != nil {
			t.Fatal(err)
		}
		var params []string
		for _, p := range strings.Split(strings.Trim(f.params, "[]"), ",") {
			if p != "" {
				params = append(params, strings.Trim(p, `"`))
			}
		}
		defs = append(defs, FunctionDef{Name: f.name, Params: params, Body: body, Pointer: fmt.Sprintf("/functions/%d", i)})
	}
	atoms := []string{`1`, `2.5`, `"a"`, `" "`, `null`, `true`, `[1,2,3]`, `[]`, `{"var":"data.s"}`, `{"var":"data.n"}`,
		`{"var":"data.list"}`, `{"var":"missing.x"}`, `{"var":"data"}`, `{"var":"data.obj"}`, `{"var":"data.list.1"}`}
	rng := rand.New(rand.NewSource(1))
	var gen func(d int) string
	gen = func(d int) string {
		if d > 3 || rng.Intn(4) == 0 {
			return atoms[rng.Intn(len(atoms))]
		}
		switch rng.Intn(15) {
		case 0:
			return `{"fn":"blank","args":[` + gen(d+1) + `]}`
		case 1:
			return `{"fn":"twice","args":[` + gen(d+1) + `]}`
		case 2:
			return `{"fn":"sumTwice","args":[` + gen(d+1) + `]}`
		case 3:
			return `{"fn":"pick","args":[` + gen(d+1) + `,` + gen(d+1) + `]}`
		case 4:
			return `{"fn":"glob","args":[]}`
		case 5:
			return `{"fn":"bad","args":[` + gen(d+1) + `]}`
		case 6:
			return `{"op":"map","args":[` + gen(d+1) + `,{"fn":"pick","args":[{"var":"it"},` + gen(d+1) + `]}]}`
		case 7:
			return `{"op":"and","args":[` + gen(d+1) + `,` + gen(d+1) + `]}`
		case 8:
			return `{"op":"if","args":[` + gen(d+1) + `,` + gen(d+1) + `,` + gen(d+1) + `]}`
		case 9:
			return `{"fn":"field","args":[` + gen(d+1) + `]}`
		case 10:
			return `{"fn":"both","args":[` + gen(d+1) + `,` + gen(d+1) + `]}`
		case 11:
			return `{"op":"map","args":[` + gen(d+1) + `,"e",{"fn":"both","args":[{"var":"e"},{"fn":"field","args":[{"var":"e"}]}]}]}`
		case 12:
			// an operator applied to a call, which a chain in the body extends
			return `{"op":"not","args":[` + gen(d+1) + `]}`
		case 13:
			return `{"op":"text","args":[` + gen(d+1) + `]}`
		}
		return `{"op":"==","args":[` + gen(d+1) + `,` + gen(d+1) + `]}`
	}
	env := map[string]any{"data": map[string]any{"s": "x", "n": 3.0, "list": []any{1.0, " ", nil},
		"obj": map[string]any{"k": "v"}}}
	var skip Passes
	compileAll := func(src string) *Program {
		u, ds := NewUnit(Config{Functions: defs, Skip: skip})
		if len(ds) > 0 {
			t.Fatal(ds)
		}
		n, err := jsonv.Decode([]byte(src))
		if err != nil {
			t.Fatal(err)
		}
		p, ds := u.Compile(n, "/e")
		if len(ds) > 0 {
			t.Fatal(src, ds)
		}
		return p
	}
	budgets := []int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 21, 34, 55, 89, 0}
	for i := 0; i < 3000; i++ {
		src := gen(0)
		skip = 0
		a := compileAll(src)
		skip = Inline
		b := compileAll(src)
		for _, budget := range budgets {
			va, ea := a.Eval(env, nil, budget)
			vb, eb := b.Eval(env, nil, budget)
			if !reflect.DeepEqual(va, vb) || describe(ea) != describe(eb) {
				t.Fatalf("%s with budget %d:\ninlined %v %s\ncalled  %v %s", src, budget, va, describe(ea), vb, describe(eb))
			}
		}
	}
}

func describe(err error) string {
	if err == nil {
		return ""
	}
	if d, ok := err.(*diag.Diagnostic); ok {
		return d.Code + " " + d.Pointer + " " + d.Message
	}
	return err.Error()
}
