package machine

import (
	"fmt"
	"strings"
	"testing"

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
	operands = append(operands, `{"var":"missing"}`, `"s"`, `"`+long+`"`, `1`, `2`, `true`, `false`, `null`, `[1,"s"]`,
		`{"op":"literal","args":[{"a":1}]}`, `{"op":"+","args":[{"var":"data.s"},1]}`)
	for _, op := range []string{"==", "!="} {
		negate := op == "!="
		reference := Config{Globals: testGlobals, builders: map[string]builder{
			op: deep(func(ptr string, a, b any) (any, error) { return value.Equal(a, b) != negate, nil })}}
		for _, a := range operands {
			for _, b := range operands {
				src := `{"op":"` + op + `","args":[` + a + `,` + b + `]}`
				fast := compileAt(t, src, "/e")
				slow := compileWith(t, src, "/e", reference)
				sameUnderBudgets(t, src, fast, slow, env, 1, 12)
			}
		}
	}
}

// and and or of two arguments (short2) must evaluate and charge exactly as buildShort's loop.
func TestShortPairMatchesTheLoop(t *testing.T) {
	env := map[string]any{"data": map[string]any{"yes": true, "no": false, "null": nil, "s": "s", "n": 1.0}}
	atoms := []string{`true`, `false`, `null`, `"s"`, `{"var":"data.yes"}`, `{"var":"data.no"}`, `{"var":"data.null"}`,
		`{"var":"data.s"}`, `{"op":"+","args":[{"var":"data.s"},1]}`, `{"op":">","args":[{"var":"data.n"},0]}`,
		`{"op":"not","args":[{"var":"data.no"}]}`}
	var exprs []string
	for _, op := range []string{"and", "or"} {
		for _, a := range atoms {
			for _, b := range atoms {
				exprs = append(exprs, `{"op":"`+op+`","args":[`+a+`,`+b+`]}`)
			}
		}
	}
	for _, src := range exprs {
		fast := compileTest(t, src)
		loop := compileSkipping(t, src, "", ShortPair)
		sameUnderBudgets(t, src, fast, loop, env, 1, 6)
	}
}

// Comparisons with a constant number (compareConst) must evaluate and charge exactly as
// compare's general node, under every budget.
func TestCompareConstMatchesCompare(t *testing.T) {
	long := strings.Repeat("x", 200)
	env := map[string]any{"data": map[string]any{"s": "s", "long": long, "one": 1.0, "two": 2.0, "neg": -3.5,
		"yes": true, "null": nil, "list": []any{1.0, "s"}, "obj": map[string]any{"a": 1.0}}}
	var operands []string
	for k := range env["data"].(map[string]any) {
		operands = append(operands, fmt.Sprintf(`{"var":"data.%s"}`, k))
	}
	operands = append(operands, `{"var":"missing"}`, `{"op":"+","args":[{"var":"data.s"},1]}`,
		`{"op":"+","args":[{"var":"data.one"},1]}`)
	for _, op := range []string{"<", "<=", ">", ">="} {
		for _, a := range operands {
			for _, k := range []string{"0", "1", "2", "-3.5", "1e300"} {
				src := `{"op":"` + op + `","args":[` + a + `,` + k + `]}`
				fast := compileTest(t, src)
				general := compileSkipping(t, src, "", CompareConst)
				sameUnderBudgets(t, src, fast, general, env, 1, 8)
			}
		}
	}
}

// in and contains with a constant list of scalars or a constant string item (buildContains),
// alone and under not, must evaluate and charge exactly as deep does, under every budget.
func TestContainsMatchesDeep(t *testing.T) {
	long := strings.Repeat("x", 200)
	env := map[string]any{"data": map[string]any{"s": "s", "long": long, "one": 1.0, "two": 2.0, "yes": true,
		"no": false, "null": nil, "list": []any{1.0, "s", nil}, "strs": []any{"a", "admin", long},
		"obj": map[string]any{"a": 1.0}}}
	var variables []string
	for k := range env["data"].(map[string]any) {
		variables = append(variables, fmt.Sprintf(`{"var":"data.%s"}`, k))
	}
	variables = append(variables, `{"var":"missing"}`, `{"op":"+","args":[{"var":"data.s"},1]}`)
	var many []string
	for i := 0; i < 20; i++ {
		many = append(many, fmt.Sprintf(`"c%d"`, i))
	}
	lists := []string{`[12, 24, 36, 1]`, `["a", "s", "admin"]`, `[1, "s", true, null]`, `[false]`, `[]`,
		`[` + strings.Join(many, ",") + `, "s"]`, `["` + long + `"]`, `[1, [1]]`}
	items := []string{`"s"`, `"admin"`, `"` + long + `"`, `1`, `null`}
	for _, v := range variables {
		var srcs []string
		for _, l := range lists {
			srcs = append(srcs, `{"op":"in","args":[`+v+`,`+l+`]}`, `{"op":"contains","args":[`+l+`,`+v+`]}`)
		}
		for _, it := range items {
			srcs = append(srcs, `{"op":"in","args":[`+it+`,`+v+`]}`, `{"op":"contains","args":[`+v+`,`+it+`]}`)
		}
		for _, src := range srcs {
			srcs = append(srcs, `{"op":"not","args":[`+src+`]}`)
		}
		for _, src := range srcs {
			fast := compileTest(t, src)
			general := compileSkipping(t, src, "", Contain)
			sameUnderBudgets(t, src, fast, general, env, 1, 30)
		}
	}
}
