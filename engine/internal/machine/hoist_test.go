package machine

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/sdods/sdods/engine/internal/jsonv"
)

// Hoisted reads must evaluate and charge exactly as reads in place: random expressions with
// nested iterations reading paths under the bindings of enclosing ones (and under parameters of
// inlined and called functions) are compiled with and without hoisting and evaluated under
// many budgets.
func TestHoistedReadsMatchReadsInPlace(t *testing.T) {
	funcs := []struct{ name, params, body string }{
		// inlined: iterations reading paths under a parameter (an alias or a stored argument)
		{"has", `["xs","v"]`, `{"op":"some","args":[{"var":"xs"},"e",{"op":"==","args":[{"var":"e.k"},{"var":"v.k"}]}]}`},
		{"deep", `["v"]`, `{"op":"filter","args":[{"var":"data.xs"},"e",{"op":"!=","args":[{"var":"e.o.k"},{"var":"v.o.k"}]}]}`},
		// called: too large to inline, so the body runs in a frame of its own
		{"big", `["xs","v"]`, `{"op":"map","args":[{"var":"xs"},"e",{"op":"if","args":[{"op":"==","args":[{"var":"e.n"},{"var":"v.n"}]},` +
			`{"op":"concat","args":[{"op":"text","args":[{"var":"v.k"}]},{"op":"text","args":[{"var":"e.k"}]},{"op":"text","args":[{"var":"v.o.k"}]},"a","b","c","d","e","f","g","h","i","j","k","l","m","n"]},` +
			`{"op":"all","args":[{"var":"data.ys"},"f",{"op":"or","args":[{"op":"==","args":[{"var":"f"},{"var":"v.n"}]},{"op":"==","args":[{"var":"f"},{"var":"e.n"}]},{"op":"==","args":[{"var":"f"},{"var":"v.items.1"}]},` +
			`{"op":"==","args":[{"var":"f"},{"var":"e.items.0"}]},{"op":"==","args":[{"var":"f"},1]},{"op":"==","args":[{"var":"f"},2]},{"op":"==","args":[{"var":"f"},3]}]}]}]}]}`},
		{"twice", `["x"]`, `{"op":"+","args":[{"var":"x"},{"var":"x"}]}`},
	}
	var defs []FunctionDef
	for i, f := range funcs {
		body, err := jsonv.Decode([]byte(f.body))
		if err != nil {
			t.Fatal(f.name, err)
		}
		var params []string
		for _, p := range strings.Split(strings.Trim(f.params, "[]"), ",") {
			if p != "" {
				params = append(params, strings.Trim(p, `"`))
			}
		}
		defs = append(defs, FunctionDef{Name: f.name, Params: params, Body: body, Pointer: fmt.Sprintf("/functions/%d", i)})
	}
	iters := []string{"some", "all", "filter", "map"}
	paths := []string{"", ".k", ".n", ".o", ".o.k", ".items", ".items.0", ".items.1.k", ".0", ".missing.k"}
	rng := rand.New(rand.NewSource(2))
	var gen func(d int, bound []string) string
	list := func(d int, bound []string) string {
		switch rng.Intn(4) {
		case 0:
			return `{"var":"data.ys"}`
		case 1:
			if len(bound) > 0 {
				return `{"var":"` + bound[rng.Intn(len(bound))] + `.items"}`
			}
		case 2:
			return `{"op":"coalesce","args":[` + gen(d+1, bound) + `,[]]}`
		}
		return `{"var":"data.xs"}`
	}
	gen = func(d int, bound []string) string {
		if d > 4 || rng.Intn(5) == 0 {
			if len(bound) > 0 && rng.Intn(3) > 0 {
				return `{"var":"` + bound[rng.Intn(len(bound))] + paths[rng.Intn(len(paths))] + `"}`
			}
			return []string{`1`, `"a"`, `null`, `true`, `{"var":"data.xs"}`, `{"var":"data.xs.0.k"}`, `[]`}[rng.Intn(7)]
		}
		switch rng.Intn(12) {
		case 0, 1, 2:
			name := fmt.Sprintf("v%d", d)
			if rng.Intn(4) == 0 && len(bound) > 0 {
				name = bound[0] // shadows
			}
			inner := append(append([]string(nil), bound...), name)
			return `{"op":"` + iters[rng.Intn(len(iters))] + `","args":[` + list(d, bound) + `,"` + name + `",` + gen(d+1, inner) + `]}`
		case 3:
			return `{"op":"and","args":[` + gen(d+1, bound) + `,` + gen(d+1, bound) + `]}`
		case 4:
			return `{"op":"==","args":[` + gen(d+1, bound) + `,` + gen(d+1, bound) + `]}`
		case 5:
			return `{"op":"length","args":[` + gen(d+1, bound) + `]}`
		case 6:
			return `{"fn":"has","args":[` + list(d, bound) + `,` + gen(d+1, bound) + `]}`
		case 7:
			return `{"fn":"deep","args":[` + gen(d+1, bound) + `]}`
		case 8:
			return `{"fn":"big","args":[` + list(d, bound) + `,` + gen(d+1, bound) + `]}`
		case 9:
			return `{"op":"+","args":[` + gen(d+1, bound) + `,` + gen(d+1, bound) + `]}`
		case 10:
			return `{"fn":"twice","args":[` + gen(d+1, bound) + `]}`
		}
		return `{"op":"if","args":[` + gen(d+1, bound) + `,` + gen(d+1, bound) + `,` + gen(d+1, bound) + `]}`
	}
	el := func(k string, n float64, items ...any) map[string]any {
		return map[string]any{"k": k, "n": n, "o": map[string]any{"k": k + k}, "items": items}
	}
	env := map[string]any{"data": map[string]any{
		"xs": []any{el("a", 1, 1.0, 2.0), el("b", 2, el("c", 3)), nil, "s", 2.0, el("a", 3), []any{1.0}},
		"ys": []any{1.0, 2.0, el("a", 1, 3.0)},
	}}
	var skip Passes
	compileAll := func(src string) *Program {
		u, ds := NewUnit(Config{Functions: defs, Skip: skip})
		if len(ds) > 0 {
			t.Fatal(ds)
		}
		n, err := jsonv.Decode([]byte(src))
		if err != nil {
			t.Fatal(src, err)
		}
		p, ds := u.Compile(n, "/e")
		if len(ds) > 0 {
			t.Fatal(src, ds)
		}
		return p
	}
	for i := 0; i < 2000; i++ {
		src := gen(0, nil)
		skip = 0
		a := compileAll(src)
		skip = Hoist
		b := compileAll(src)
		_, err := b.Eval(env, nil, 0)
		last := int64(300)
		if err != nil {
			last = 60
		}
		sameUnderBudgets(t, src, a, b, env, 1, last)
		sameUnderBudgets(t, src, a, b, env, 0, 0)
	}
}
