package compile

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/sdods/sdods/engine/internal/jsonv"
	"github.com/sdods/sdods/engine/internal/value"
)

// The equality builders take direct paths (a constant operand, two strings, two numbers); each
// must evaluate and charge exactly as deep(value.Equal) does, under every budget.
func TestEqualityMatchesDeepEqual(t *testing.T) {
	long := strings.Repeat("x", 200)
	env := map[string]any{"data": map[string]any{"s": "s", "t": "t", "long": long, "long2": long + "y", "one": 1.0,
		"two": 2.0, "yes": true, "no": false, "null": nil, "list": []any{1.0, "s"}, "obj": map[string]any{"a": 1.0}}}
	var operands []string
	for k := range env["data"].(map[string]any) {
		operands = append(operands, fmt.Sprintf(`{"var":"data.%s"}`, k))
	}
	operands = append(operands, `{"var":"missing"}`, `"s"`, `"`+long+`"`, `1`, `2`, `true`, `null`, `[1,"s"]`,
		`{"op":"literal","args":[{"a":1}]}`, `{"op":"+","args":[{"var":"data.s"},1]}`)
	compileWith := func(src string) *Program {
		u, ds := NewUnit(Config{})
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
	saved := map[string]spec{"==": coreOperators["=="], "!=": coreOperators["!="]}
	defer func() {
		coreOperators["=="], coreOperators["!="] = saved["=="], saved["!="]
	}()
	for _, op := range []string{"==", "!="} {
		negate := op == "!="
		reference := spec{2, 2, deep(func(ptr string, a, b any) (any, error) { return value.Equal(a, b) != negate, nil })}
		for _, a := range operands {
			for _, b := range operands {
				src := `{"op":"` + op + `","args":[` + a + `,` + b + `]}`
				coreOperators[op] = saved[op]
				fast := compileWith(src)
				coreOperators[op] = reference
				slow := compileWith(src)
				for budget := int64(1); budget <= 12; budget++ {
					vf, ef := fast.Eval(env, nil, budget)
					vs, es := slow.Eval(env, nil, budget)
					if !reflect.DeepEqual(vf, vs) || describe(ef) != describe(es) {
						t.Fatalf("%s with budget %d:\nfast %v %s\ndeep %v %s", src, budget, vf, describe(ef), vs, describe(es))
					}
				}
			}
		}
	}
}
