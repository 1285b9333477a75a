package machine

import (
	"reflect"
	"testing"

	"github.com/sdods/sdods/engine/internal/jsonv"
)

// A memoized path is read once per evaluation and never across evaluations: a machine reused
// for another environment, or another unit, sees that environment's values; a varying root is
// never memoized.
func TestPathsAreMemoizedPerEvaluation(t *testing.T) {
	u, ds := NewUnit(Config{Globals: []string{"data", "value"}, Varying: []string{"value"}})
	if len(ds) > 0 {
		t.Fatal(ds)
	}
	if u.Path("value", []string{"a"}) != nil {
		t.Fatal("a varying root got a memoized path")
	}
	n, _ := jsonv.Decode([]byte(`{"op":"concat","args":[{"var":"data.a.b"},{"var":"data.a.b"},{"op":"text","args":[{"var":"value.x"}]},{"var":"data.l.1"}]}`))
	p, ds := u.Compile(n, "")
	if len(ds) > 0 {
		t.Fatal(ds)
	}
	var m Machine
	for i, tc := range []struct {
		data, value any
		want        string
	}{
		{map[string]any{"a": map[string]any{"b": "x"}, "l": []any{"0", "1"}}, map[string]any{"x": "v"}, "xxv1"},
		{map[string]any{"a": map[string]any{"b": "y"}, "l": []any{"0", "2"}}, map[string]any{"x": "w"}, "yyw2"},
		{map[string]any{"a": "not an object", "l": []any{"0", "3"}}, map[string]any{"x": "z"}, ""},
	} {
		globals := []any{tc.data, nil}
		m.Begin(globals, nil, 0)
		for run, value := range []any{tc.value, map[string]any{"x": "again"}} {
			globals[1] = value // a varying root changes between runs of one evaluation
			got, err := m.Run(p)
			want := tc.want
			if run == 1 && want != "" {
				want = want[:2] + "again" + want[3:]
			}
			if tc.want == "" {
				if got != nil || err != nil {
					t.Errorf("case %d: got %v %v, want null", i, got, err)
				}
				continue
			}
			if err != nil || got != want {
				t.Errorf("case %d: got %v %v, want %q", i, got, err, want)
			}
		}
		m.End()
	}
}

// Operators read a variable argument through a reader (a root, or a memoized path read before in
// the evaluation) rather than its node: they must answer, fail and charge as with the node, for
// roots, paths, missing and varying paths, parameters of inlined functions and locals, for
// programs run one after the other in one evaluation while the varying root changes, under
// every budget.
func TestReadersMatchTheirNodes(t *testing.T) {
	defs := []FunctionDef{{Name: "big", Params: []string{"x"},
		Body: decode(t, `{"op":">","args":[{"var":"x.n"},10]}`), Pointer: "/f"}}
	var exprs []string
	for _, v := range []string{`{"var":"value"}`, `{"var":"data"}`, `{"var":"data.n"}`, `{"var":"data.s"}`, `{"var":"data.o.s"}`,
		`{"var":"data.missing.s"}`, `{"var":"value.s"}`, `{"var":"data.l.0"}`, `{"var":"ctx.today"}`, `{"var":"missing"}`} {
		exprs = append(exprs,
			`{"op":"==","args":[`+v+`,"ab"]}`, `{"op":"!=","args":[`+v+`,null]}`, `{"op":"==","args":[null,`+v+`]}`,
			`{"op":"<","args":[`+v+`,12]}`, `{"op":">=","args":[`+v+`,-1]}`,
			`{"op":"in","args":[`+v+`,[12,"ab",null]]}`, `{"op":"contains","args":[["x","2024-02-29"],`+v+`]}`,
			`{"op":"isDate","args":[`+v+`]}`, `{"op":"daysBetween","args":[`+v+`,{"var":"ctx.today"}]}`,
			`{"op":"yearsBetween","args":["2000-01-01",`+v+`]}`)
	}
	exprs = append(exprs, `{"fn":"big","args":[{"var":"data"}]}`, `{"fn":"big","args":[{"var":"value"}]}`,
		`{"op":"some","args":[{"var":"data.l"},{"op":"==","args":[{"var":"it"},"ab"]}]}`,
		`{"op":"some","args":[{"var":"data.l"},{"op":"<","args":[{"var":"it"},12]}]}`)
	compileUnit := func(read bool) []*Program {
		var skip Passes
		if !read {
			skip = Readers
		}
		u, ds := NewUnit(Config{Functions: defs, Globals: []string{"data", "ctx", "value"}, Varying: []string{"value"}, Skip: skip})
		if len(ds) > 0 {
			t.Fatal(ds)
		}
		progs := compileEach(t, u, exprs)
		return progs
	}
	read, nodes := compileUnit(true), compileUnit(false)
	datas := []any{
		map[string]any{"n": 11.0, "s": "ab", "o": map[string]any{"s": "2024-02-29"}, "l": []any{"ab", 3.0}},
		map[string]any{"n": "ab", "s": nil, "o": []any{1.0}, "l": []any{}},
		"ab", nil,
	}
	values := []any{"ab", 12.0, nil, "2024-02-29", map[string]any{"s": "ab", "n": 40.0}, []any{1.0}, true}
	var mr, mn Machine
	for budget := int64(1); budget <= 8; budget++ {
		for _, data := range datas {
			env := []any{data, map[string]any{"today": "2025-06-15"}, nil}
			gr, gn := append([]any(nil), env...), append([]any(nil), env...)
			mr.Begin(gr, nil, budget)
			mn.Begin(gn, nil, budget)
			for _, v := range values {
				gr[2], gn[2] = v, v
				for i := range exprs {
					vr, er := mr.Run(read[i])
					vn, en := mn.Run(nodes[i])
					if !reflect.DeepEqual(vr, vn) || describe(er) != describe(en) {
						t.Fatalf("%s with value %#v, data %#v, budget %d:\nreader %v %s\nnode   %v %s",
							exprs[i], v, data, budget, vr, describe(er), vn, describe(en))
					}
				}
			}
			mr.End()
			mn.End()
		}
	}
}

// An argument of an inlined call that reads a root's path is an alias in the body: the reads
// Unit.Reads reports are the body's, not the argument's (a parameter read only through paths
// under it leaves its path unread whole), and a path read whole elsewhere stays whole.
func TestReadsOfInlinedArguments(t *testing.T) {
	def := func(name, param, body string) FunctionDef {
		n, err := jsonv.Decode([]byte(body))
		if err != nil {
			t.Fatal(err)
		}
		return FunctionDef{Name: name, Params: []string{param}, Body: n, Pointer: "/functions/" + name}
	}
	defs := []FunctionDef{
		def("inner", "o", `{"var":"o.k"}`),
		def("outer", "d", `{"fn":"inner","args":[{"var":"d.a"}]}`),
		def("same", "o", `{"var":"o"}`),
	}
	for _, tc := range []struct {
		expr string
		want map[string]bool // path → read whole
	}{
		{`{"fn":"inner","args":[{"var":"data.a"}]}`, map[string]bool{"a": false, "a.k": true}},
		{`{"fn":"outer","args":[{"var":"data"}]}`, map[string]bool{"a": false, "a.k": true}},
		{`{"fn":"same","args":[{"var":"data.a"}]}`, map[string]bool{"a": true}},
		{`{"op":"==","args":[{"fn":"inner","args":[{"var":"data.a"}]},{"var":"data.a"}]}`, map[string]bool{"a": true, "a.k": true}},
		{`{"op":"==","args":[{"fn":"inner","args":[{"var":"data.a.b"}]},{"fn":"same","args":[{"var":"data.a.c"}]}]}`,
			map[string]bool{"a": false, "a.b": false, "a.b.k": true, "a.c": true}},
	} {
		u, ds := NewUnit(Config{Globals: []string{"data"}, Functions: defs})
		if len(ds) > 0 {
			t.Fatal(ds)
		}
		n, _ := jsonv.Decode([]byte(tc.expr))
		if _, ds := u.Compile(n, ""); len(ds) > 0 {
			t.Fatal(ds)
		}
		whole, reads := u.Reads("data")
		got := map[string]bool{}
		var walk func(prefix string, rs []*Read)
		walk = func(prefix string, rs []*Read) {
			for _, r := range rs {
				got[prefix+r.Key] = r.Whole
				walk(prefix+r.Key+".", r.Kids)
			}
		}
		walk("", reads)
		if whole || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: whole %v, reads %v, want %v", tc.expr, whole, got, tc.want)
		}
	}
}
