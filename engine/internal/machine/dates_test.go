package machine

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/sdods/sdods/engine/internal/jsonv"
)

// Date operators read the date of a path, of a varying root or of a literal once per evaluation
// (see runtime.knownDate): they must answer, fail and charge as the operators reading every
// argument afresh do, for programs run one after the other in one evaluation while the varying
// root changes, across evaluations of one machine, under every budget, with dates, date-times,
// invalid dates, other strings and other values, and the same string read through a path and a
// varying root.
func TestDatesReadOnceMatchTheOperators(t *testing.T) {
	defs := []FunctionDef{{Name: "age", Params: []string{"x"},
		Body: decode(t, `{"op":"yearsBetween","args":[{"var":"x"},{"var":"ctx.today"}]}`), Pointer: "/f"}}
	exprs := []string{
		`{"op":"isDate","args":[{"var":"value"}]}`,
		`{"op":"not","args":[{"op":"isDate","args":[{"var":"value"}]}]}`,
		`{"op":"isDate","args":[{"var":"data.d"}]}`,
		`{"op":"isDate","args":[{"var":"data.s"}]}`,
		`{"op":"daysBetween","args":[{"var":"ctx.today"},{"var":"value"}]}`,
		`{"op":"daysBetween","args":[{"var":"value"},{"var":"ctx.today"}]}`,
		`{"op":">","args":[{"op":"daysBetween","args":[{"var":"ctx.today"},{"var":"value"}]},0]}`,
		`{"op":"*","args":[{"op":"yearsBetween","args":[{"var":"value"},{"var":"ctx.today"}]},1.5]}`,
		`{"op":"yearsBetween","args":[{"var":"value"},{"var":"ctx.today"}]}`,
		`{"op":"yearsBetween","args":[{"var":"data.d"},{"var":"value"}]}`,
		`{"op":"daysBetween","args":[{"var":"value"},"2024-02-29"]}`,
		`{"op":"daysBetween","args":["2024-02-29",{"var":"data.d"}]}`,
		`{"op":"yearsBetween","args":[{"var":"value"},"2024-02-30"]}`,
		`{"op":"daysBetween","args":[{"var":"value"},{"var":"value"}]}`,
		`{"op":"daysBetween","args":[{"var":"data.d"},{"op":"coalesce","args":[{"var":"value"},"2000-01-01"]}]}`,
		`{"op":"dateAdd","args":[{"var":"value"},30,"days"]}`,
		`{"op":"dateAdd","args":[{"var":"data.d"},1,"months"]}`,
		`{"op":"dateAdd","args":[{"var":"value"},{"var":"data.n"},{"var":"data.unit"}]}`,
		`{"op":"dateAdd","args":[{"var":"ctx.today"},-1,"years"]}`,
		`{"op":"dateAdd","args":[{"var":"value"},1e7,"days"]}`,
		`{"fn":"age","args":[{"var":"data.d"}]}`,
		`{"fn":"age","args":[{"var":"value"}]}`,
		`{"op":"some","args":[{"var":"data.list"},{"op":"isDate","args":[{"var":"it"}]}]}`,
		`{"op":"map","args":[{"var":"data.list"},{"op":"daysBetween","args":[{"var":"it"},{"var":"ctx.today"}]}]}`,
	}
	compileUnit := func(builders map[string]builder) (*Unit, []*Program) {
		u, ds := NewUnit(Config{Functions: defs, Globals: []string{"data", "ctx", "value"}, Varying: []string{"value"}, builders: builders})
		if len(ds) > 0 {
			t.Fatal(ds)
		}
		progs := compileEach(t, u, exprs)
		return u, progs
	}
	fastUnit, fast := compileUnit(nil)
	_, general := compileUnit(map[string]builder{"isDate": unary(opIsDate), "yearsBetween": binary(opYearsBetween),
		"daysBetween": binary(opDaysBetween), "dateAdd": strict(opDateAdd)})
	dPath := fastUnit.Path("data", []string{"d"})

	datas := []map[string]any{
		{"d": "2000-02-29", "s": "not a date", "n": 3.0, "unit": "months", "list": []any{"2024-01-01", "x", "2023-12-31", 1.0}},
		{"d": "2024-02-29T23:00:00-02:00", "s": "2024-02-30", "n": 1.5, "unit": "days", "list": []any{}},
		{"d": "9999-12-31", "s": "", "n": -2.0, "unit": "years", "list": nil},
		{"d": 20240229.0, "n": 40.0, "unit": "weeks"},
	}
	todays := []any{"2025-06-15", "2024-02-28", "2025-06-15T00:30:00+01:00", "2025-02-30", nil, 7.0}
	values := []any{"2024-02-29", "2023-02-28", "2025-06-15", "1999-12-31", "0001-01-01", "2024-13-01", "2024-02-29T10:00:00Z",
		"abc", "abcdefghij", "", nil, 5.0, true, []any{}, strings.Clone("2025-06-15"), "data.d"}
	var mf, mg Machine
	for budget := int64(0); budget <= 14; budget++ {
		for _, data := range datas {
			for _, today := range todays {
				env := []any{data, map[string]any{"today": today}, nil}
				gf, gg := append([]any(nil), env...), append([]any(nil), env...)
				mf.Begin(gf, nil, budget)
				mg.Begin(gg, nil, budget)
				for _, v := range values {
					if v == "data.d" { // the value of a path, as a host binds a field it read
						v = mf.Value(dPath)
					}
					gf[2], gg[2] = v, v
					for i := range exprs {
						vf, ef := mf.Run(fast[i])
						vg, eg := mg.Run(general[i])
						if !reflect.DeepEqual(vf, vg) || describe(ef) != describe(eg) {
							t.Fatalf("%s with value %#v, data %v, today %#v, budget %d:\nread once %v %s\noperator  %v %s",
								exprs[i], v, data, today, budget, vf, describe(ef), vg, describe(eg))
						}
					}
				}
				mf.End()
				mg.End()
				for i, e := range mf.rt.memo {
					if e != (memoEntry{}) {
						t.Fatalf("memo entry %d holds %v after End", i, e)
					}
				}
			}
		}
	}
}

// compileEach compiles each source into u, the i-th at pointer /e/i.
func compileEach(t *testing.T, u *Unit, srcs []string) []*Program {
	t.Helper()
	out := make([]*Program, len(srcs))
	for i, src := range srcs {
		p, ds := u.Compile(decode(t, src), fmt.Sprint("/e/", i))
		if len(ds) > 0 {
			t.Fatal(src, ds)
		}
		out[i] = p
	}
	return out
}

func decode(t *testing.T, src string) *jsonv.Node {
	t.Helper()
	n, err := jsonv.Decode([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return n
}
