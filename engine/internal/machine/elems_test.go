package machine

import (
	"fmt"
	"math/rand"
	"reflect"
	"strings"
	"testing"
)

// Element paths must read exactly what reads in place do: random expressions with nested
// iterations over memoized lists reading paths under their variables (and under variables of
// enclosing iterations, hoisted or not) are compiled into one unit with and without element
// paths, with some paths also read by a host through Machine.Elem as a typed field is, and run
// one after the other, twice, in one evaluation under many budgets.
func TestElementPathsMatchReads(t *testing.T) {
	iters := []string{"some", "all", "filter", "map"}
	lists := []string{`{"var":"data.xs"}`, `{"var":"data.ys"}`, `{"var":"data.xs.0.items"}`, `{"var":"data.obj"}`, `{"var":"data.none"}`}
	paths := []string{".k", ".k", ".n", ".o", ".o.k", ".items", ".items.0", ".items.1.k", ".0", ".missing.k", ""}
	rng := rand.New(rand.NewSource(3))
	var gen func(d int, bound []string) string
	gen = func(d int, bound []string) string {
		if d > 4 || rng.Intn(5) == 0 {
			if len(bound) > 0 && rng.Intn(4) > 0 {
				return `{"var":"` + bound[rng.Intn(len(bound))] + paths[rng.Intn(len(paths))] + `"}`
			}
			return []string{`1`, `"a"`, `null`, `{"var":"data.xs.1.k"}`, `[]`}[rng.Intn(5)]
		}
		k := rng.Intn(9)
		switch k {
		case 0, 1, 2, 8:
			name := fmt.Sprintf("v%d", d)
			if rng.Intn(4) == 0 && len(bound) > 0 {
				name = bound[0] // shadows
			}
			list := lists[rng.Intn(len(lists))]
			if len(bound) > 0 && rng.Intn(4) == 0 {
				list = `{"var":"` + bound[rng.Intn(len(bound))] + `.items"}`
			}
			inner := append(append([]string(nil), bound...), name)
			if k == 8 { // filter counted for its length
				return `{"op":">","args":[{"op":"length","args":[{"op":"filter","args":[` + list + `,"` + name + `",` + gen(d+1, inner) + `]}]},1]}`
			}
			return `{"op":"` + iters[rng.Intn(len(iters))] + `","args":[` + list + `,"` + name + `",` + gen(d+1, inner) + `]}`
		case 3:
			return `{"op":"and","args":[` + gen(d+1, bound) + `,` + gen(d+1, bound) + `]}`
		case 4:
			return `{"op":"==","args":[` + gen(d+1, bound) + `,` + gen(d+1, bound) + `]}`
		case 5:
			return `{"op":"length","args":[` + gen(d+1, bound) + `]}`
		case 6:
			return `{"op":"+","args":[` + gen(d+1, bound) + `,` + gen(d+1, bound) + `]}`
		}
		return `{"op":"if","args":[` + gen(d+1, bound) + `,` + gen(d+1, bound) + `,` + gen(d+1, bound) + `]}`
	}
	el := func(k string, n float64, items ...any) map[string]any {
		return map[string]any{"k": k, "n": n, "o": map[string]any{"k": k + k}, "items": items}
	}
	data := map[string]any{
		"xs":  []any{el("a", 1, 1.0, el("z", 0)), el("b", 2, el("c", 3)), nil, "s", 2.0, el("a", 3), []any{1.0}, el("b", 1)},
		"ys":  []any{1.0, el("a", 1, 3.0)},
		"obj": map[string]any{"k": "v"},
	}
	// paths a host reads as typed fields are: under the elements of data.xs
	typed := [][]string{{"k"}, {"o", "k"}, {"items", "0"}}
	var skip Passes
	compileAll := func(srcs []string) (*Unit, []*Program, []*Elem) {
		u, ds := NewUnit(Config{Globals: []string{"data"}, Skip: skip})
		if len(ds) > 0 {
			t.Fatal(ds)
		}
		var es []*Elem
		for _, segs := range typed {
			es = append(es, u.Elem(u.Path("data", []string{"xs"}), segs))
		}
		out := compileEach(t, u, srcs)
		return u, out, es
	}
	type outcome struct {
		v   any
		err string
	}
	var m Machine
	run := func(u *Unit, progs []*Program, es []*Elem, budget int64) []outcome {
		m.Begin([]any{data}, nil, budget)
		if budget%2 == 0 {
			m.Value(u.Path("data", []string{"xs"})) // as the host reads a list of typed fields
		}
		var out []outcome
		xs := data["xs"].([]any)
		for pass := 0; pass < 2; pass++ {
			for k, p := range progs {
				if k == pass { // as a rule on a typed field between the others
					for j, e := range es {
						for i, x := range xs {
							got, want := m.Elem(e, i, x), lookupSegs(x, typed[j])
							if !reflect.DeepEqual(got, want) {
								t.Fatalf("element %d of %v: %v, want %v", i, typed[j], got, want)
							}
						}
					}
				}
				v, err := p.Eval(map[string]any{"data": data}, nil, budget) // a machine of its own
				out = append(out, outcome{v, describe(err)})
				v, err = m.Run(p)
				out = append(out, outcome{v, describe(err)})
			}
		}
		m.End()
		for _, v := range m.rt.arena[:cap(m.rt.arena)] {
			if v != nil {
				t.Fatal("End left a kept value:", v)
			}
		}
		return out
	}
	budgets := []int64{1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144, 233, 0}
	for i := 0; i < 1500; i++ {
		srcs := make([]string, 1+rng.Intn(4))
		for j := range srcs {
			srcs[j] = gen(0, nil)
		}
		skip = 0
		if i%3 == 0 {
			skip = Hoist
		}
		ua, a, ea := compileAll(srcs)
		skip |= ElemPaths
		ub, b, eb := compileAll(srcs)
		for _, budget := range budgets {
			if ra, rb := run(ua, a, ea, budget), run(ub, b, eb, budget); !reflect.DeepEqual(ra, rb) {
				t.Fatalf("%v with budget %d:\nelement paths %v\nreads         %v", strings.Join(srcs, "\n"), budget, ra, rb)
			}
		}
	}
}

func lookupSegs(v any, segs []string) any {
	ss := make([]segment, len(segs))
	for i, s := range segs {
		ss[i] = segment{key: s, index: asIndex(s)}
	}
	return walkPath(v, ss)
}

// An element path is kept once it has more than one reader, and its kept values are those of
// the evaluation: a machine that begins another one without End reads the new values.
func TestElementPathsKeptPerEvaluation(t *testing.T) {
	u, ds := NewUnit(Config{Globals: []string{"data"}})
	if len(ds) > 0 {
		t.Fatal(ds)
	}
	list := u.Path("data", []string{"xs"})
	e := u.Elem(list, []string{"a", "b"})
	if e.Shared() || e.parent.Shared() {
		t.Fatal("one reader: not kept")
	}
	if u.Elem(list, []string{"a", "b"}) != e || !e.Shared() || e.parent.Shared() {
		t.Fatal("two readers of a.b: a.b kept, a not")
	}
	var m Machine
	for round := 0; round < 3; round++ {
		xs := []any{map[string]any{"a": map[string]any{"b": round}}, nil, map[string]any{"a": []any{1.0}}}
		m.Begin([]any{map[string]any{"xs": xs}}, nil, 0)
		_ = m.Value(list)
		for k := 0; k < 2; k++ {
			for i := len(xs) - 1; i >= 0; i-- {
				if got, want := m.Elem(e, i, xs[i]), lookupSegs(xs[i], []string{"a", "b"}); !reflect.DeepEqual(got, want) {
					t.Fatalf("round %d element %d: %v, want %v", round, i, got, want)
				}
			}
		}
		if round == 1 {
			m.End()
		}
	}
}
