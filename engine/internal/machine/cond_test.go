package machine

import (
	"strings"
	"testing"

	"github.com/sdods/sdods/engine/internal/jsonv"
	"github.com/sdods/sdods/engine/internal/syntax"
)

// condSource builds a condition from the fuzzer's bytes: and, or, not, the comparisons, matches,
// isEmpty, isDate and calls of an inlined blank, nested, on variables of every type.
func condSource(ops []byte) string {
	i := 0
	next := func() byte {
		if i >= len(ops) {
			return 0
		}
		i++
		return ops[i-1]
	}
	operands := []string{`{"var":"data.s"}`, `{"var":"data.n"}`, `{"var":"data.t"}`, `{"var":"missing"}`,
		`{"var":"value"}`, `{"var":"data.d"}`, `{"var":"data.list"}`, `{"op":"length","args":[{"op":"coalesce","args":[{"var":"value"},""]}]}`,
		`{"op":"yearsBetween","args":[{"var":"data.d"},"2026-11-26"]}`}
	consts := []string{`"x"`, `true`, `false`, `null`, `8`, `18`, `""`, `"2000-01-01"`}
	var gen func(d int) string
	gen = func(d int) string {
		o := next()
		if d > 4 {
			o %= 2
		}
		a := operands[int(next())%len(operands)]
		k := consts[int(next())%len(consts)]
		switch o % 14 {
		case 0:
			return `{"fn":"blank","args":[` + a + `]}`
		case 1:
			return `{"op":"==","args":[` + a + `,` + k + `]}`
		case 2:
			return `{"op":"!=","args":[` + k + `,` + a + `]}`
		case 3:
			return `{"op":"<","args":[` + a + `,` + k + `]}`
		case 4:
			return `{"op":">=","args":[` + a + `,` + a + `]}`
		case 5:
			return `{"op":"matches","args":[` + a + `,"^[a-z]+$"]}`
		case 6:
			return `{"op":"isDate","args":[` + a + `]}`
		case 7:
			return `{"op":"isEmpty","args":[` + a + `]}`
		case 8:
			return `{"op":"not","args":[` + gen(d+1) + `]}`
		case 9:
			return `{"op":"and","args":[` + gen(d+1) + `,` + gen(d+1) + `]}`
		case 10:
			return `{"op":"or","args":[` + gen(d+1) + `,` + gen(d+1) + `]}`
		case 11:
			return `{"op":"!=","args":[` + a + `,` + operands[int(next())%len(operands)] + `]}`
		case 12:
			// an operand that is not a condition: and/or read it through truth
			return `{"op":"and","args":[` + a + `,` + gen(d+1) + `]}`
		}
		return `{"op":"not","args":[{"op":"matches","args":[{"op":"coalesce","args":[` + a + `,""]},` + k + `]}]}`
	}
	return gen(0)
}

// FuzzConditionsMatchValues compiles a condition with every pass and without Conds: the tests
// (node.cond, Machine.Test) must give the boolean or the error the evals give, under every
// budget (sameUnderBudgets also runs Test on each program that is a condition); so must the
// condition compiled with value read as the path that holds its value (CompileAliasUses).
func FuzzConditionsMatchValues(f *testing.F) {
	f.Add([]byte{9, 8, 0, 4, 0, 5, 5, 0}, " ab ")
	f.Add([]byte{9, 1, 2, 1, 6, 5, 0, 3, 8, 0}, "2001-02-03")
	f.Add([]byte{10, 11, 4, 0, 0, 12, 1, 0, 3, 7, 4}, strings.Repeat("x", 130))
	f.Add([]byte{8, 8, 13, 4, 1}, "")
	f.Add([]byte{9, 3, 8, 4, 6, 5, 0}, "abc")
	blank, err := jsonv.Decode([]byte(`{"op":"isEmpty","args":[{"op":"trim","args":[{"op":"text","args":[{"op":"coalesce","args":[{"var":"v"},""]}]}]}]}`))
	if err != nil {
		f.Fatal(err)
	}
	defs := []FunctionDef{{Name: "blank", Params: []string{"v"}, Body: blank, Pointer: "/functions/0"}}
	compile := func(t *testing.T, src string, skip Passes) *Program {
		u, ds := NewUnit(Config{Functions: defs, Globals: testGlobals, Skip: skip})
		if len(ds) > 0 {
			t.Fatal(ds)
		}
		n, err := jsonv.Decode([]byte(src))
		if err != nil {
			t.Fatal(err)
		}
		p, ds := u.Compile(n, "/e")
		if len(ds) > 0 {
			t.Skip(src, ds) // an operand an operator refuses at load
		}
		return p
	}
	// byPath compiles src with value read as data.s (CompileAliasUses), which holds the same
	// value in the environments below
	byPath := func(t *testing.T, src string) *Program {
		u, ds := NewUnit(Config{Functions: defs, Globals: testGlobals, Varying: []string{"value"}})
		if len(ds) > 0 {
			t.Fatal(ds)
		}
		n, err := jsonv.Decode([]byte(src))
		if err != nil {
			t.Fatal(err)
		}
		p, _, aliased, ds := u.CompileAliasUses(syntax.Parse(n, "/e"), "value", "data", []string{"s"}, func(syntax.Info) bool { return true })
		if len(ds) > 0 {
			t.Skip(src, ds)
		}
		if !aliased {
			t.Fatalf("%s: not compiled by path", src)
		}
		return p
	}
	f.Fuzz(func(t *testing.T, ops []byte, s string) {
		if len(ops) > 40 {
			ops = ops[:40]
		}
		src := condSource(ops)
		env := map[string]any{"data": map[string]any{"s": s, "n": 2.5, "t": true, "d": s, "list": []any{s, 1.0}}, "value": s}
		all, without := compile(t, src, 0), compile(t, src, Conds)
		if without.IsCondition() {
			t.Fatalf("%s: a condition without the Conds pass", src)
		}
		aliased := byPath(t, src)
		sameUnderBudgets(t, src, all, without, env, 1, 40)
		sameUnderBudgets(t, src+" by path", aliased, without, env, 1, 40)
		env["value"], env["data"] = 3.0, map[string]any{"d": "2010-05-06", "s": 3.0}
		sameUnderBudgets(t, src, all, without, env, 1, 40)
		sameUnderBudgets(t, src+" by path", aliased, without, env, 1, 40)
		env["value"], env["data"] = nil, map[string]any{"t": false}
		sameUnderBudgets(t, src+" by path", aliased, without, env, 1, 40)
	})
}

// TestConditionsAreTests checks that the conditions of real rules are compiled as tests, so
// that the differential checks above exercise them.
func TestConditionsAreTests(t *testing.T) {
	for _, src := range []string{
		`{"op":"and","args":[{"op":"not","args":[{"op":"isEmpty","args":[{"var":"value"}]}]},{"op":"not","args":[{"op":"matches","args":[{"var":"value"},"^a$"]}]}]}`,
		`{"op":"<","args":[{"op":"length","args":[{"op":"coalesce","args":[{"var":"value"},""]}]},8]}`,
		`{"op":"!=","args":[{"var":"value"},{"var":"data.p"}]}`,
		`{"op":"!=","args":[{"var":"value"},true]}`,
		`{"op":"==","args":[{"var":"data.kind"},"business"]}`,
		`{"op":"!=","args":[{"var":"value"},null]}`,
		`{"op":"==","args":[{"op":"length","args":[{"var":"data.s"}]},8]}`,
		`{"op":"==","args":[{"var":"data.n"},8]}`,
		`{"op":"and","args":[{"op":"isDate","args":[{"var":"value"}]},{"op":"<","args":[{"op":"yearsBetween","args":[{"var":"value"},{"var":"ctx.today"}]},18]}]}`,
	} {
		p := compileWith(t, src, "/e", Config{Globals: testGlobals})
		if !p.IsCondition() {
			t.Errorf("%s is not compiled as a test", src)
		}
	}
}
