package machine

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/sdods/sdods/engine/internal/date"
	"github.com/sdods/sdods/engine/internal/num"
	"github.com/sdods/sdods/engine/internal/syntax"
)

// trimSpace must remove exactly what strings.Trim with the six ASCII white space characters
// removes: every string of up to three bytes over an alphabet of spaces, their neighbours, other
// white space and the bytes of multi-byte sequences, and longer ones around text.
func TestTrimSpaceMatchesStringsTrim(t *testing.T) {
	const cutset = "\t\n\v\f\r "
	alphabet := []string{"", "\t", "\n", "\v", "\f", "\r", " ", "\x08", "\x0e", "\x1f", "!", "a", "\u00a0", "\u2003", "\x85", "\xa0", "é", "\xff"}
	check := func(s string) {
		t.Helper()
		if got, want := trimSpace(s), strings.Trim(s, cutset); got != want {
			t.Fatalf("trimSpace(%q) = %q, want %q", s, got, want)
		}
	}
	for _, a := range alphabet {
		for _, b := range alphabet {
			for _, c := range alphabet {
				check(a + b + c)
				check(a + b + " x y " + c + b)
			}
		}
	}
	for c := range 256 {
		check(string(rune(c)))
		check(string([]byte{byte(c)}) + "mid" + string([]byte{byte(c)}))
	}
}

// yearsBetween, daysBetween and isDate read two dates without building date.Values: they must
// answer, and fail, as reading both arguments through Parse does, for every pair of arguments
// from dates around leap days and year ends, invalid dates, date-times, other strings and
// non-strings.
func TestPlainDatesMatchParsing(t *testing.T) {
	args := []any{"2000-02-29", "2001-02-28", "2001-03-01", "2004-02-29", "1999-12-31", "2000-01-01", "2025-06-15",
		"2025-06-01", "0001-01-01", "9999-12-31", "2023-02-29", "2024-13-01", "0000-12-31", "2024-1-01x", "２０２４-01",
		"2024-02-29T12:00:00Z", "2024-02-28T23:30:00-01:00", "", "abcdefghij", nil, 1.0, true, []any{}}
	general := map[string]func(ptr string, a, b any) (any, error){
		"yearsBetween": func(ptr string, a, b any) (any, error) {
			x, y, ok, err := twoDates(ptr, "yearsBetween", a, b)
			if err != nil || !ok {
				return nil, err
			}
			return float64(date.YearsBetween(x, y)), nil
		},
		"daysBetween": func(ptr string, a, b any) (any, error) {
			x, y, ok, err := twoDates(ptr, "daysBetween", a, b)
			if err != nil || !ok {
				return nil, err
			}
			return float64(date.DaysBetween(x, y)), nil
		},
	}
	fast := map[string]func(ptr string, a, b any) (any, error){"yearsBetween": opYearsBetween, "daysBetween": opDaysBetween}
	for name, op := range fast {
		for _, a := range args {
			for _, b := range args {
				v, err := op("/p", a, b)
				gv, gerr := general[name]("/p", a, b)
				if !reflect.DeepEqual(v, gv) || describe(err) != describe(gerr) {
					t.Fatalf("%s(%v, %v) = %v %s, reading through Parse %v %s", name, a, b, v, describe(err), gv, describe(gerr))
				}
			}
		}
	}
	for _, a := range args {
		s, ok := a.(string)
		_, perr := date.Parse(s)
		if v, _ := opIsDate("/p", a); v != (ok && perr == nil) {
			t.Fatalf("isDate(%v) = %v", a, v)
		}
	}
}

// between, round and substring read their arguments into an array on the stack: they must
// evaluate, fail and charge as strict does, for arguments of every type (long strings, failing
// arguments) under every budget up to the one they need.
func TestStrictDirectMatchesStrict(t *testing.T) {
	long := `"` + strings.Repeat("é", 70) + `"`
	atoms := []string{`1`, `-2.5`, `3`, `"a"`, `"b"`, long, `null`, `true`, `[1,2]`, `{"var":"data.n"}`, `{"var":"data.s"}`,
		`{"op":"+","args":[1,"x"]}`}
	cases := map[string]int{"between": 3, "round": 2, "substring": 3}
	env := map[string]any{"data": map[string]any{"n": 2.0, "s": "hello"}}
	reference := Config{Globals: testGlobals, builders: map[string]builder{"between": strict(opBetween),
		"round": strict(opRound), "substring": strict(opSubstring)}}
	for name, max := range cases {
		for i := 0; i < 400; i++ {
			n := max
			if i%2 == 1 {
				n = syntax.CoreOperators[name].Min
			}
			args := ""
			for k := range n {
				if k > 0 {
					args += ","
				}
				args += atoms[(i*7+k*5+i/len(atoms))%len(atoms)]
			}
			src := `{"op":"` + name + `","args":[` + args + `]}`
			direct, general := compileAt(t, src, "/e"), compileWith(t, src, "/e", reference)
			sameUnderBudgets(t, src, direct, general, env, 0, 12)
		}
	}
}

// order's messages name the argument the operand must be like: the texts made once must be the
// ones built from the argument's number.
func TestLikeArgumentTexts(t *testing.T) {
	for i := range 3 {
		if got, want := likeArgument[0][i], "a number like argument "+itoa(i+1); got != want {
			t.Fatalf("%q, want %q", got, want)
		}
		if got, want := likeArgument[1][i], "a string like argument "+itoa(i+1); got != want {
			t.Fatalf("%q, want %q", got, want)
		}
	}
	_, err := order("/p", "between", 1.0, "x", 1, 0)
	if want := "EVALUATION_ERROR /p between: argument 1 must be a number like argument 2, got string"; describe(err) != want {
		t.Fatalf("%s, want %s", describe(err), want)
	}
}

// and and or of two conditions skip the loop: and(a, b) must evaluate, fail and charge as
// and(a, b, true), which loops (the constant true is neither charged nor changes the result),
// and or(a, b) as or(a, b, false), for conditions of every kind under every budget.
func TestTwoConditionsMatchTheLoop(t *testing.T) {
	conds := []string{`true`, `false`, `null`, `1`, `"s"`, `{"var":"d.t"}`, `{"var":"d.f"}`, `{"var":"d.n"}`, `{"var":"d.s"}`,
		`{"op":"==","args":[{"var":"d.s"},"s"]}`, `{"op":"<","args":[{"var":"d.n"},"x"]}`, `{"op":"not","args":[{"var":"d.n"}]}`}
	env := map[string]any{"d": map[string]any{"t": true, "f": false, "n": 1.0, "s": "s"}}
	for _, op := range []string{"and", "or"} {
		neutral := `true`
		if op == "or" {
			neutral = `false`
		}
		for _, a := range conds {
			for _, b := range conds {
				var progs [2]*Program
				for k, src := range []string{`{"op":"` + op + `","args":[` + a + `,` + b + `]}`,
					`{"op":"` + op + `","args":[` + a + `,` + b + `,` + neutral + `]}`} {
					progs[k] = compileAt(t, src, "/e")
				}
				sameUnderBudgets(t, fmt.Sprintf("%s(%s, %s)", op, a, b), progs[0], progs[1], env, 0, 8)
			}
		}
	}
}

// / and mod read two numbers directly: they must answer and fail as reading them through
// numbers does.
func TestDivisionOfTwoNumbersMatchesNumbers(t *testing.T) {
	viaNumbers := func(op string, f func(x, y float64) (float64, bool)) func(ptr string, a, b any) (any, error) {
		return func(ptr string, a, b any) (any, error) {
			var buf [16]float64
			xs, ok, err := numbers(buf[:0], ptr, op, []any{a, b})
			if err != nil || !ok || xs[1] == 0 {
				return nil, err
			}
			return numberOutF(ptr)(f(xs[0], xs[1]))
		}
	}
	vals := []any{0.0, 1.0, -1.0, 3.0, 7.5, -2.25, 1e308, -1e308, 1e-300, nil, "3", true, []any{}}
	for _, c := range []struct {
		op         string
		fast, slow func(ptr string, a, b any) (any, error)
	}{{"/", opDiv, viaNumbers("/", num.Div)}, {"mod", opMod, viaNumbers("mod", num.Mod)}} {
		for _, a := range vals {
			for _, b := range vals {
				v, err := c.fast("/p", a, b)
				sv, serr := c.slow("/p", a, b)
				if !reflect.DeepEqual(v, sv) || describe(err) != describe(serr) {
					t.Fatalf("%s(%v, %v) = %v %s, through numbers %v %s", c.op, a, b, v, describe(err), sv, describe(serr))
				}
			}
		}
	}
}

// if(c, a, b) skips the loop: it must evaluate, fail and charge as if(c, a, false, null, b),
// which loops (the constant false is neither charged nor chosen), under every budget, with b
// at its own pointer.
func TestIfOfThreeMatchesTheLoop(t *testing.T) {
	exprs := []string{`true`, `false`, `null`, `1`, `"s"`, `{"var":"d.t"}`, `{"var":"d.n"}`, `{"op":"<","args":[{"var":"d.n"},"x"]}`,
		`{"op":"+","args":[{"var":"d.n"},2]}`, `{"op":"not","args":[{"var":"d.t"}]}`}
	env := map[string]any{"d": map[string]any{"t": true, "n": 1.0}}
	for _, c := range exprs {
		for _, a := range exprs {
			for _, b := range exprs[3:] {
				var progs [2]*Program
				for k, src := range []string{`{"op":"if","args":[` + c + `,` + a + `,` + b + `]}`,
					`{"op":"if","args":[` + c + `,` + a + `,false,null,` + b + `]}`} {
					progs[k] = compileAt(t, src, "/e")
				}
				for budget := int64(0); budget <= 8; budget++ {
					va, ea := progs[0].Eval(env, nil, budget)
					vb, eb := progs[1].Eval(env, nil, budget)
					// the else branch is argument 4 of the loop's if
					if db := strings.Replace(describe(eb), "/e/args/4", "/e/args/2", 1); !reflect.DeepEqual(va, vb) || describe(ea) != db {
						t.Fatalf("if(%s, %s, %s), budget %d:\nthree %v %s\nloop  %v %s", c, a, b, budget, va, describe(ea), vb, db)
					}
				}
			}
		}
	}
}

// in and contains charge a constant operand's weight computed once: they must evaluate, fail
// and charge as with the same operand computed at each evaluation (coalesce(missing, c), which
// charges nothing), for constant lists, long strings and scalars on either side, under every
// budget up to the one they need.
func TestConstantOperandOfInMatchesAComputedOne(t *testing.T) {
	long := `"` + strings.Repeat("x", 130) + `"`
	consts := []string{`["CH","DE","FR"]`, `[1,[2,3],{"op":"literal","args":[{"a":[1,2]}]}]`, `[]`, `"CH"`, long, `1`, `null`, `true`}
	others := []string{`{"var":"d.c"}`, `{"var":"d.l"}`, `{"var":"d.long"}`, `{"var":"d.n"}`, `{"var":"d.none"}`, `{"op":"+","args":[1,"x"]}`}
	env := map[string]any{"d": map[string]any{"c": "CH", "l": []any{"CH", 2.0, []any{2.0, 3.0}}, "long": strings.Repeat("x", 200), "n": 1.0}}
	for _, op := range []string{"in", "contains"} {
		for _, k := range consts {
			computed := `{"op":"coalesce","args":[{"var":"missing"},` + k + `]}`
			for _, o := range others {
				for _, kFirst := range []bool{false, true} {
					args := func(k string) string {
						if kFirst {
							return k + `,` + o
						}
						return o + `,` + k
					}
					var progs [2]*Program
					for i, src := range []string{`{"op":"` + op + `","args":[` + args(k) + `]}`, `{"op":"` + op + `","args":[` + args(computed) + `]}`} {
						progs[i] = compileAt(t, src, "/e")
					}
					sameUnderBudgets(t, fmt.Sprintf("%s(%s)", op, args(k)), progs[0], progs[1], env, 0, 16)
				}
			}
		}
	}
}
