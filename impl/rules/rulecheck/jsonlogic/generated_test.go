package jsonlogic_test

import (
	"encoding/json"
	"math/rand"
	"os"
	"strconv"
	"testing"

	"github.com/sdods/sdods/impl/rules/rulecheck/jsonlogic"
)

// gen builds random JSON Logic expressions over the data records' keys.
type gen struct{ r *rand.Rand }

var (
	genOps    = []string{"==", "!=", "===", "!==", "<", "<=", ">", ">=", "in", "+", "-", "*", "/", "%", "min", "max", "cat", "merge", "and", "or", "if", "!", "!!", "substr", "missing", "missing_some", "map", "filter", "all", "none", "some", "var", "log"}
	genVars   = []string{"n", "m", "s", "t", "b", "items", "words", "obj", "u", "v", "z", "a", "c", "e", "obj.a", "items.0", "u.0", "u.length", "obj.a.b", ""}
	genLits   = []string{`0`, `1`, `-1`, `2`, `0.1`, `0.5`, `18`, `1e21`, `""`, `"a"`, `"0"`, `"abc"`, `"😀"`, `"2"`, `" 1e1 "`, `"0x10"`, `"Infinity"`, `null`, `true`, `false`, `[]`, `[1,2]`, `["a"]`, `{}`}
	genAnnots = map[string]string{"n": "number", "m": "number", "s": "string", "t": "string", "b": "boolean", "items": "array", "items.*": "number", "words": "array", "words.*": "string", "obj": "object"}
)

func (g *gen) leaf(inBody bool) any {
	if g.r.Intn(2) == 0 {
		var v any
		_ = json.Unmarshal([]byte(genLits[g.r.Intn(len(genLits))]), &v)
		return v
	}
	if inBody {
		return map[string]any{"var": []string{"", "", "a", "0"}[g.r.Intn(4)]}
	}
	return map[string]any{"var": genVars[g.r.Intn(len(genVars))]}
}

func (g *gen) expr(depth int, inBody bool) any {
	if depth == 0 || g.r.Intn(4) == 0 {
		return g.leaf(inBody)
	}
	name := genOps[g.r.Intn(len(genOps))]
	args := func(n int) []any {
		out := make([]any, n)
		for i := range out {
			out[i] = g.expr(depth-1, inBody)
		}
		return out
	}
	var a []any
	switch name {
	case "map", "filter", "all", "none", "some":
		arr := []any{map[string]any{"var": []string{"items", "words", "u", "z"}[g.r.Intn(4)]}, []any{1, 0, 2}, []any{}}[g.r.Intn(3)]
		a = []any{arr, g.expr(depth-1, true)}
	case "var":
		return g.leaf(inBody)
	case "missing":
		a = []any{"a", "s", "z", "e"}[:1+g.r.Intn(4)]
	case "missing_some":
		a = []any{1 + g.r.Intn(2), []any{"a", "z", "e"}}
	case "substr":
		a = []any{g.expr(depth-1, inBody), g.r.Intn(5) - 2}
		if g.r.Intn(2) == 0 {
			a = append(a, g.r.Intn(3))
		}
	case "!", "!!", "log":
		a = args(1)
	case "if":
		a = args(1 + g.r.Intn(4))
	case "and", "or", "cat", "merge", "min", "max", "+", "*":
		a = args(1 + g.r.Intn(3))
	case "<", "<=":
		a = args(2 + g.r.Intn(2))
	default:
		a = args(2)
	}
	return map[string]any{name: a}
}

// TestGenerated compares thousands of seeded random expressions: each import (strict and
// --js-compat) against json-logic-js on data records, and each strict import exported back to
// JSON Logic (import ∘ export) against the same.
func TestGenerated(t *testing.T) {
	const n = 3000
	g := &gen{r: rand.New(rand.NewSource(seed(20261126)))}
	strictData, compatData := records(false, 40), records(true, 24)
	types := parseTypes(t, genAnnots)
	exportTypes := jsonlogic.Types{}
	for k, v := range types {
		exportTypes["data."+k] = v
	}
	var checks []diffCheck
	imported, exported := 0, 0
	for i := 0; i < n; i++ {
		logic := decode(t, mustJSON(g.expr(3, false)))
		label := "generated " + itoa(i) + ": " + mustJSON(logic)
		strict := jsonlogic.Import(logic, jsonlogic.Options{Types: types})
		compat := jsonlogic.Import(logic, jsonlogic.Options{Types: types, JSCompat: true})
		pick := func(pool []string) []string {
			var out []string
			for len(out) < 3 {
				d := pool[g.r.Intn(len(pool))]
				if fits(decode(t, d), types, "") {
					out = append(out, d)
				}
			}
			return out
		}
		if !strict.Refused() {
			imported++
			back := jsonlogic.Export(strict.Expression, strict.Functions, jsonlogic.Options{Types: exportTypes})
			if !back.Refused() {
				exported++
			}
			for _, d := range pick(strictData) {
				checks = append(checks, diffCheck{label: label + " (strict)", logic: logic, expr: strict.Expression, functions: strict.Functions, data: d})
				if !back.Refused() {
					checks = append(checks, diffCheck{label: label + " (exported back as " + mustJSON(back.Expression) + ")", logic: back.Expression, expr: strict.Expression, data: d})
				}
			}
		}
		if !compat.Refused() {
			for _, d := range pick(compatData) {
				checks = append(checks, diffCheck{label: label + " (js-compat)", logic: logic, expr: compat.Expression, functions: compat.Functions, data: d})
			}
		}
	}
	t.Logf("%d generated, %d imported in strict mode, %d of those exported back, %d evaluations compared", n, imported, exported, len(checks))
	if imported < n/10 {
		t.Errorf("only %d of %d generated expressions import: the generator no longer exercises the importer", imported, n)
	}
	differential(t, checks)
}

var (
	sdOps  = []string{"==", "!=", "<", "<=", ">", ">=", "between", "and", "or", "not", "if", "coalesce", "min", "max", "concat", "contains", "in", "map", "filter", "some", "all", "literal", "+", "length", "typeOf"}
	sdVars = []string{"data.n", "data.m", "data.s", "data.t", "data.b", "data.items", "data.words", "data.obj", "data.u", "data.v", "data.z", "data.obj.a", "data.items.0", "data"}
)

func (g *gen) sdLeaf(elem string) any {
	if g.r.Intn(2) == 0 {
		var v any
		_ = json.Unmarshal([]byte(genLits[g.r.Intn(len(genLits)-2)]), &v) // no [] or {} lists of lists
		if _, isList := v.([]any); isList {
			return map[string]any{"op": "literal", "args": []any{v}}
		}
		return v
	}
	if elem != "" {
		return map[string]any{"var": elem}
	}
	return map[string]any{"var": sdVars[g.r.Intn(len(sdVars))]}
}

func (g *gen) sdExpr(depth int, elem string) any {
	if depth == 0 || g.r.Intn(4) == 0 {
		return g.sdLeaf(elem)
	}
	name := sdOps[g.r.Intn(len(sdOps))]
	args := func(n int) []any {
		out := make([]any, n)
		for i := range out {
			out[i] = g.sdExpr(depth-1, elem)
		}
		return out
	}
	var a []any
	switch name {
	case "map", "filter", "some", "all":
		arr := []string{"data.items", "data.words", "data.z"}[g.r.Intn(3)]
		if elem != "" {
			arr = elem
		}
		a = []any{map[string]any{"var": arr}, g.sdExpr(depth-1, "it")}
	case "literal":
		a = []any{[]any{"a", 1, nil}}
	case "not", "length", "typeOf":
		a = args(1)
	case "if":
		a = args(3 + 2*g.r.Intn(2))
	case "between":
		a = args(3)
	case "and", "or", "coalesce", "min", "max", "concat":
		a = args(1 + g.r.Intn(3))
	default:
		a = args(2)
	}
	return map[string]any{"op": name, "args": a}
}

// TestGeneratedExport exports thousands of seeded random sdods expressions (Export refuses those
// the engine does not load) and compares json-logic-js on each export with the engine on the original, then
// imports each export back (export ∘ import) and compares again.
func TestGeneratedExport(t *testing.T) {
	const n = 3000
	g := &gen{r: rand.New(rand.NewSource(seed(26113020)))}
	data := records(false, 40)
	types := jsonlogic.Types{}
	for k, v := range parseTypes(t, genAnnots) {
		types["data."+k] = v
	}
	var checks []diffCheck
	exported, back := 0, 0
	for i := 0; i < n; i++ {
		expr := decode(t, mustJSON(g.sdExpr(3, "")))
		out := jsonlogic.Export(expr, nil, jsonlogic.Options{Types: types})
		if out.Refused() {
			continue
		}
		exported++
		label := "generated export " + itoa(i) + ": " + mustJSON(expr)
		again := jsonlogic.Import(out.Expression, jsonlogic.Options{Types: importTypes(types)})
		if !again.Refused() {
			back++
		}
		for k := 0; k < 3; k++ {
			d := data[g.r.Intn(len(data))]
			checks = append(checks, diffCheck{label: label, logic: out.Expression, expr: expr, data: d})
			if !again.Refused() {
				checks = append(checks, diffCheck{label: label + " (imported back as " + mustJSON(again.Expression) + ")", logic: out.Expression, expr: again.Expression, functions: again.Functions, data: d})
			}
		}
	}
	t.Logf("%d generated, %d exported, %d of those imported back, %d evaluations compared", n, exported, back, len(checks))
	if exported < n/10 {
		t.Errorf("only %d of %d generated expressions export", exported, n)
	}
	differential(t, checks)
}

// seed is the generator's seed: fixed, so that a failure reproduces, unless JSONLOGIC_SEED asks
// for another one (to explore: JSONLOGIC_SEED=7 go test ./impl/rules/rulecheck/jsonlogic).
func seed(fixed int64) int64 {
	if s, err := strconv.ParseInt(os.Getenv("JSONLOGIC_SEED"), 10, 64); err == nil {
		return s
	}
	return fixed
}
