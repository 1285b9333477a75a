package machine

import (
	"strings"
	"testing"

	"github.com/sdods/sdods/engine/internal/jsonv"
)

// FuzzChainsMatchTheirParts builds a nest of one-value operators and calls of an inlined
// function (blank) from the fuzzer's bytes, on a variable whose value the fuzzer writes, and
// compiles it with every pass and with Fuse, Inline and Share left out: the chain (its string
// plan, its value on null, an inlined call's charge as its first) must evaluate and charge
// exactly as the operators one by one, under every budget.
func FuzzChainsMatchTheirParts(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3}, " \t ab ")
	f.Add([]byte{5, 0, 5}, "")
	f.Add([]byte{4, 6, 0, 7}, strings.Repeat("x", 130))
	f.Add([]byte{9, 5, 0}, "  ")
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
			t.Skip(src, ds) // an operand a nest may not have (a literal where a list is needed)
		}
		return p
	}
	f.Fuzz(func(t *testing.T, ops []byte, s string) {
		if len(ops) > 12 {
			ops = ops[:12]
		}
		bases := []string{`{"var":"data.s"}`, `{"var":"data.n"}`, `{"var":"data.t"}`, `{"var":"missing"}`, `{"var":"value"}`}
		src := bases[0]
		if len(ops) > 0 {
			src = bases[int(ops[0])%len(bases)]
			ops = ops[1:]
		}
		for _, o := range ops {
			switch o % 10 {
			case 0:
				src = `{"fn":"blank","args":[` + src + `]}`
			case 1:
				src = `{"op":"trim","args":[` + src + `]}`
			case 2:
				src = `{"op":"text","args":[` + src + `]}`
			case 3:
				src = `{"op":"isEmpty","args":[` + src + `]}`
			case 4:
				src = `{"op":"coalesce","args":[` + src + `,""]}`
			case 5:
				src = `{"op":"not","args":[` + src + `]}`
			case 6:
				src = `{"op":"coalesce","args":[` + src + `,null,"  x "]}`
			case 7:
				src = `{"op":"upper","args":[` + src + `]}`
			case 8:
				src = `{"op":"and","args":[` + src + `,` + src + `]}`
			default:
				src = `{"op":"coalesce","args":[` + src + `,true]}`
			}
		}
		env := map[string]any{"data": map[string]any{"s": s, "n": 2.5, "t": true}, "value": s}
		all, parts := compile(t, src, 0), compile(t, src, Fuse|Inline|Share)
		sameUnderBudgets(t, src, all, parts, env, 1, 40)
	})
}
