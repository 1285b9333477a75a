package machine

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/sdods/sdods/engine/internal/diag"
	"github.com/sdods/sdods/engine/internal/jsonv"
)

func compileTest(t *testing.T, src string, ops ...string) *Program {
	t.Helper()
	return compileAt(t, src, "", ops...)
}

// testGlobals are the roots with a global index in the units of compileAt, so that
// sameUnderBudgets can bind an environment by index too.
var testGlobals = []string{"data", "missing", "value", "ctx", "xs"}

// compileAt compiles src at pointer ptr in a unit that declares the custom operators ops.
func compileAt(t *testing.T, src, ptr string, ops ...string) *Program {
	t.Helper()
	return compileSkipping(t, src, ptr, 0, ops...)
}

// compileSkipping is compileAt without the optimisation passes skip.
func compileSkipping(t *testing.T, src, ptr string, skip Passes, ops ...string) *Program {
	t.Helper()
	return compileWith(t, src, ptr, Config{Operators: ops, Globals: testGlobals, Skip: skip})
}

// compileWith compiles src at pointer ptr in a unit of cfg.
func compileWith(t *testing.T, src, ptr string, cfg Config) *Program {
	t.Helper()
	u, ds := NewUnit(cfg)
	if len(ds) > 0 {
		t.Fatal(ds)
	}
	n, err := jsonv.Decode([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	p, ds := u.Compile(n, ptr)
	if len(ds) > 0 {
		t.Fatal(src, ds)
	}
	return p
}

// sameUnderBudgets fails unless a and b evaluate src (named by what) against env to the same
// value, or to the same error code, pointer and message, under every budget from first to last:
// the check of every fast path against the general one it stands for. Each is evaluated with
// the roots looked up by name (Program.Eval) and, when they are all testGlobals, bound by index
// (Machine.Begin).
func sameUnderBudgets(t *testing.T, what string, a, b *Program, env map[string]any, first, last int64) {
	t.Helper()
	globals := make([]any, len(testGlobals))
	for i, name := range testGlobals {
		globals[i] = env[name]
	}
	byIndex := true
	for name := range env {
		byIndex = byIndex && slices.Contains(testGlobals, name)
	}
	run := func(p *Program, budget int64) (any, error) {
		var m Machine
		m.Begin(globals, nil, budget)
		defer m.End()
		return m.Run(p)
	}
	for budget := first; budget <= last; budget++ {
		va, ea := a.Eval(env, nil, budget)
		vb, eb := b.Eval(env, nil, budget)
		if !reflect.DeepEqual(va, vb) || describe(ea) != describe(eb) {
			t.Fatalf("%s, budget %d:\nfast    %v %s\ngeneral %v %s", what, budget, va, describe(ea), vb, describe(eb))
		}
		for _, p := range []*Program{a, b} {
			if p.IsCondition() {
				// Test gives Run's boolean or error, roots by name and by index
				var m Machine
				m.begin(nil, env, nil, budget)
				tb, te := m.Test(p)
				m.End()
				if describe(te) != describe(ea) || te == nil && va != tb {
					t.Fatalf("%s, budget %d: Test gives %v %s, Run %v %s", what, budget, tb, describe(te), va, describe(ea))
				}
				if byIndex {
					m.Begin(globals, nil, budget)
					tb, te = m.Test(p)
					m.End()
					if describe(te) != describe(ea) || te == nil && va != tb {
						t.Fatalf("%s, budget %d, roots by index: Test gives %v %s, Run %v %s", what, budget, tb, describe(te), va, describe(ea))
					}
				}
			}
			if !byIndex {
				break
			}
			if v, e := run(p, budget); !reflect.DeepEqual(v, va) || describe(e) != describe(ea) {
				t.Fatalf("%s, budget %d, roots by index:\n%v %s\nby name: %v %s", what, budget, v, describe(e), va, describe(ea))
			}
		}
	}
}

// Argument lists are cut from shared blocks: a host that keeps its arguments, or appends to
// them, must see exactly what it would with lists of its own, across calls and evaluations.
func TestArgListsAreNeverReused(t *testing.T) {
	var kept [][]any
	ops := map[string]Operator{
		"x-keep": func(args []any) (any, error) {
			kept = append(kept, args)
			grown := append(args, "appended") // must not land in a later list
			_ = grown
			return len(args), nil
		},
	}
	p := compileTest(t, `{"op":"map","args":[{"var":"xs"},{"op":"x-keep","args":[{"var":"it"},{"op":"x-keep","args":[{"var":"it"}]},"c"]}]}`, "x-keep")
	for round := 0; round < 5; round++ {
		xs := make([]any, 50)
		for i := range xs {
			xs[i] = fmt.Sprint(round, "-", i)
		}
		if _, err := p.Eval(map[string]any{"xs": xs}, ops, 0); err != nil {
			t.Fatal(err)
		}
	}
	if len(kept) != 500 {
		t.Fatalf("%d calls", len(kept))
	}
	for k, args := range kept {
		round, i := k/100, (k%100)/2
		want := fmt.Sprint(round, "-", i)
		if k%2 == 0 { // the inner call comes first
			if len(args) != 1 || args[0] != want {
				t.Fatalf("call %d kept %v, want [%s]", k, args, want)
			}
			continue
		}
		if len(args) != 3 || args[0] != want || args[1] != 1.0 || args[2] != "c" {
			t.Fatalf("call %d kept %v, want [%s 1 c]", k, args, want)
		}
	}
}

// Locals are cleared once per evaluation, by End, not after each Run: programs that read locals
// must see only what they wrote (programs of many and of few slots, one after the other), and
// nothing of the evaluation stays reachable from the machine after End.
func TestLocalsAreClearedByEnd(t *testing.T) {
	small := compileTest(t, `{"op":"map","args":[{"var":"xs"},{"op":"concat","args":[{"var":"it"},"!"]}]}`)
	var maps []string
	for i := 0; i < 20; i++ { // more slots than the machine's own locals
		maps = append(maps, fmt.Sprintf(`{"op":"map","args":[{"var":"xs"},"v%d",{"var":"v%d"}]}`, i, i))
	}
	big := compileTest(t, "["+strings.Join(maps, ",")+"]")
	var m Machine
	for round := 0; round < 3; round++ {
		xs := []any{fmt.Sprint("a", round), fmt.Sprint("b", round)}
		m.Begin(nil, nil, 0)
		m.rt.env = map[string]any{"xs": xs}
		for _, p := range []*Program{small, big, small} {
			v, err := m.Run(p)
			if err != nil {
				t.Fatal(err)
			}
			if p == small {
				if got := fmt.Sprint(v); got != fmt.Sprintf("[%s! %s!]", xs[0], xs[1]) {
					t.Fatalf("round %d: %s", round, got)
				}
			}
		}
		m.End()
		for i, v := range m.fr.locals {
			if v != nil {
				t.Fatalf("round %d: local %d holds %v after End", round, i, v)
			}
		}
		for i, v := range m.locals {
			if v != nil {
				t.Fatalf("round %d: own local %d holds %v after End", round, i, v)
			}
		}
	}
}

// A machine whose user reads only codes (CodesOnly) fails exactly where and with the code a
// full one does, for every way a custom operator fails; its diagnostic is made once per site,
// so that failing again costs nothing.
func TestCodesOnlyCustomFailures(t *testing.T) {
	ops := map[string]Operator{
		"x-err":   func([]any) (any, error) { return nil, fmt.Errorf("no %d", 1) },
		"x-panic": func([]any) (any, error) { panic("boom") },
		"x-nan":   func([]any) (any, error) { return func() {}, nil },
		"x-deep": func([]any) (any, error) {
			var v any = 1.0
			for i := 0; i < 200; i++ {
				v = []any{v}
			}
			return v, nil
		},
		"x-ok": func(args []any) (any, error) { return args[0], nil },
	}
	names := []string{"x-err", "x-panic", "x-nan", "x-deep", "x-ok", "x-gone"}
	for _, src := range []string{
		`{"op":"x-err","args":[1]}`,
		`{"op":"x-err","args":[{"var":"a"}]}`,
		`{"op":"if","args":[{"var":"a"},{"op":"x-panic","args":[]},0]}`,
		`{"op":"x-nan","args":["s"]}`,
		`{"op":"x-deep","args":[{"var":"a"}]}`,
		`{"op":"x-gone","args":[{"var":"a"}]}`,
		`{"op":"x-gone","args":[2]}`,
		`{"op":"+","args":[{"op":"x-ok","args":[{"var":"a"}]},1]}`,
	} {
		p := compileAt(t, src, "/r", names...)
		env := map[string]any{"a": true}
		for budget := int64(1); budget <= 8; budget++ {
			want, wantErr := p.Eval(env, ops, budget)
			var m Machine
			m.begin(nil, env, ops, budget)
			m.CodesOnly(true)
			got, err := m.Run(p)
			again, err2 := m.Run(p)
			m.End()
			if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(again, want) {
				t.Fatalf("%s, budget %d: %v, %v, want %v", src, budget, got, again, want)
			}
			if (err == nil) != (wantErr == nil) {
				t.Fatalf("%s, budget %d: %v, want %v", src, budget, err, wantErr)
			}
			if err == nil {
				continue
			}
			d, w := err.(*diag.Diagnostic), wantErr.(*diag.Diagnostic)
			if d.Code != w.Code || d.Pointer != w.Pointer {
				t.Fatalf("%s, budget %d: %v, want %v", src, budget, d, w)
			}
			if custom := d.Code == diag.OperatorFailed || d.Code == diag.OperatorUnavailable; custom && err2 != err {
				t.Fatalf("%s, budget %d: %v then %v, want one diagnostic per site", src, budget, err, err2)
			}
		}
	}
	// a full machine keeps the details
	p := compileAt(t, `{"op":"x-err","args":[1]}`, "/r", names...)
	if _, err := p.Eval(nil, ops, 0); err.Error() != `OPERATOR_FAILED at /r: custom operator "x-err" failed: no 1` {
		t.Fatal(err)
	}
}
