package syntax

import (
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/sdods/sdods/engine/internal/diag"
	"github.com/sdods/sdods/engine/internal/jsonv"
)

func parseText(t *testing.T, src, ptr string) *Expr {
	t.Helper()
	n, err := jsonv.Decode([]byte(src))
	if err != nil {
		t.Fatalf("%s: %v", src, err)
	}
	return Parse(n, ptr)
}

func TestParseForms(t *testing.T) {
	e := parseText(t, `{"op": "and", "args": [{"var": "data.a.0"}, [1, "x", null, true], {"fn": "f", "args": []}, {"op": "literal", "args": [{"k": [1]}]}]}`, "/when")
	if e.Kind != Op || e.Text != "and" || e.Ptr != "/when" || len(e.Args) != 4 {
		t.Fatalf("root %+v", e)
	}
	v := e.Args[0]
	if v.Kind != Var || v.Root != "data" || !reflect.DeepEqual(v.Segs, []string{"a", "0"}) || v.Ptr != "/when/args/0" {
		t.Errorf("var %+v", v)
	}
	l := e.Args[1]
	if l.Kind != List || l.Args[0].Kind != Number || l.Args[0].Num != 1 || l.Args[1].Kind != String || l.Args[2].Kind != Null || l.Args[3].Kind != Bool || l.Args[3].Ptr != "/when/args/1/3" {
		t.Errorf("list %+v", l)
	}
	if c := e.Args[2]; c.Kind != Call || c.Text != "f" || len(c.Args) != 0 {
		t.Errorf("call %+v", c)
	}
	lit := e.Args[3]
	if !lit.IsLiteral() || !reflect.DeepEqual(lit.Args[0].Value, map[string]any{"k": []any{1.0}}) || lit.Args[0].Ptr != "/when/args/3/args/0" {
		t.Errorf("literal %+v", lit.Args[0])
	}
	// Size counts the JSON values written: the and object, "and", its array, then
	// var (2), the list (5), the call (3) and the literal (3 + 3 values of data)
	if got := Size(e); got != 3+2+5+3+6 {
		t.Errorf("size %d", got)
	}
}

// Every problem of the JSON form is a Bad node with the diagnostic the compiler reports.
func TestParseProblems(t *testing.T) {
	deep := strings.Repeat(`[`, MaxDepth) + `1` + strings.Repeat(`]`, MaxDepth)
	cases := []struct {
		src  string
		want *diag.Diagnostic
	}{
		{`{"var": 1}`, diag.MemberType("/var", "var", "a string path")},
		{`{"var": "a..b"}`, diag.BadVariable("/var", "a..b", "a path is one or more non-empty segments separated by '.'")},
		{`{"op": 1, "args": []}`, diag.MemberType("/op", "op", "a string")},
		{`{"fn": "f", "args": {}}`, diag.MemberType("/args", "args", "an array")},
		{`{"op": "+", "op": "-"}`, diag.DuplicateMember("", "op")},
		{`{"args": [], "x": 1}`, diag.NotAnExpression("", []string{"args", "x"})},
		{`1e999`, diag.LiteralOutOfRange("", "1e999")},
		{deep, diag.TooDeep(strings.Repeat("/0", MaxDepth), MaxDepth)},
	}
	for _, c := range cases {
		e := parseText(t, c.src, "")
		for e.Kind == List {
			e = e.Args[0]
		}
		if e.Kind != Bad || len(e.Errs) != 1 || *e.Errs[0] != *c.want {
			t.Errorf("%.40s: got %+v, want %+v", c.src, e, c.want)
		}
	}
	// the problems of a literal's data are all kept, on its Data node
	e := parseText(t, `{"op": "literal", "args": [{"a": 1e999, "b": [2e999]}]}`, "")
	d := e.Args[0]
	if d.Kind != Data || len(d.Errs) != 2 || d.Errs[0].Pointer != "/args/0/a" || d.Errs[1].Pointer != "/args/0/b/0" {
		t.Errorf("data %+v", d)
	}
	// literal with other than one argument: the arguments are expressions (the compiler
	// reports the arity and their problems)
	e = parseText(t, `{"op": "literal", "args": [{"a": 1}, 2]}`, "")
	if e.Args[0].Kind != Bad {
		t.Errorf("arity: %+v", e.Args[0])
	}
}

func TestKey(t *testing.T) {
	key := func(src string) string {
		var b strings.Builder
		Key(&b, parseText(t, src, "/x"))
		return b.String()
	}
	same := [][2]string{
		{`{"op": "+", "args": [{"var": "a"}, 1]}`, `{"args": [{"var": "a"}, 1], "op": "+"}`},
		{`{"op": "literal", "args": [{"a": 1}]}`, `{"op": "literal", "args": [{"a": 1}]}`},
	}
	for _, s := range same {
		if key(s[0]) != key(s[1]) {
			t.Errorf("%s and %s differ", s[0], s[1])
		}
	}
	differ := [][2]string{
		{`{"op": "+", "args": [1, 2]}`, `{"fn": "+", "args": [1, 2]}`},
		{`{"op": "+", "args": [1.0]}`, `{"op": "+", "args": [1]}`},
		{`{"var": "a"}`, `"a"`},
		{`[1, [2]]`, `[[1], 2]`},
		{`{"op": "literal", "args": [[1]]}`, `{"op": "literal", "args": [[1.0]]}`},
	}
	for _, s := range differ {
		if key(s[0]) == key(s[1]) {
			t.Errorf("%s and %s agree", s[0], s[1])
		}
	}
}

func def(t *testing.T, name string, params []string, body string) Def {
	ptr := "/functions/" + name
	return Def{Name: name, Params: params, Body: parseText(t, body, ptr+"/body"), Ptr: ptr}
}

func TestAnalyze(t *testing.T) {
	a := Analyze([]Def{
		// reads data, its parameter (not a root), and value through g
		def(t, "f", []string{"x"}, `{"op": "+", "args": [{"var": "x.y"}, {"var": "data.n"}, {"fn": "g", "args": []}]}`),
		def(t, "g", nil, `{"op": "map", "args": [{"var": "ctx.list"}, "value", {"op": "x-b", "args": [{"var": "value"}, {"var": "field"}]}]}`),
		// arity mismatch: not an edge; unknown: not an edge; literal data: not read
		def(t, "h", []string{"p"}, `[{"fn": "f", "args": []}, {"fn": "nope", "args": []}, {"op": "literal", "args": [{"var": "actor"}]}, {"op": "x-a", "args": []}]`),
		// a refused iteration name: the body is not looked at
		def(t, "k", nil, `{"op": "some", "args": [{"var": "data.l"}, "a.b", {"fn": "f", "args": [{"var": "original"}]}]}`),
		{Name: "m", Ptr: "/functions/m", Malformed: true},
		def(t, "n", nil, `{"fn": "m", "args": [1, 2, 3]}`), // a malformed definition: an edge
	}, []string{"x-b"})
	if a.Cyclic {
		t.Fatal("cyclic")
	}
	// h's problems (in the order found), and m's missing body
	wantDiags := []string{"FUNCTION_ARITY /functions/h/body/0/args", "FUNCTION_UNKNOWN /functions/h/body/1/fn",
		"OPERATOR_UNDECLARED /functions/h/body/3/op", "EXPRESSION_INVALID /functions/k/body/args/1"}
	if got := codes(a.Diags); !reflect.DeepEqual(got, append([]string{"FUNCTION_INVALID /functions/m"}, wantDiags...)) {
		t.Errorf("diagnostics %v", got)
	}
	want := map[string]Info{
		"f": {Calls: []string{"g"}, Custom: []string{"x-b"}, Roots: []string{"ctx", "data", "field"}},
		"g": {Custom: []string{"x-b"}, Roots: []string{"ctx", "field"}},
		"h": {Custom: []string{"x-a"}},
		"k": {Roots: []string{"data"}},
		"m": {},
		"n": {Calls: []string{"m"}},
	}
	for name, w := range want {
		got, ok := a.Function(name)
		if !ok || !sameInfo(got, w) {
			t.Errorf("%s: got %+v, want %+v", name, got, w)
		}
	}
	in := a.Expr(parseText(t, `{"op": "all", "args": [{"var": "data.xs"}, {"fn": "f", "args": [{"var": "it"}]}]}`, "/when"))
	if !sameInfo(in, Info{Calls: []string{"f"}, Custom: []string{"x-b"}, Roots: []string{"ctx", "data", "field"}}) || !in.Reads("field") || in.Reads("value") {
		t.Errorf("expr %+v", in)
	}
}

func sameInfo(a, b Info) bool {
	return len(a.Calls) == len(b.Calls) && len(a.Custom) == len(b.Custom) && len(a.Roots) == len(b.Roots) &&
		(len(a.Calls) == 0 || reflect.DeepEqual(a.Calls, b.Calls)) &&
		(len(a.Custom) == 0 || reflect.DeepEqual(a.Custom, b.Custom)) &&
		(len(a.Roots) == 0 || reflect.DeepEqual(a.Roots, b.Roots))
}

func TestAnalyzeCyclesAndDepth(t *testing.T) {
	a := Analyze([]Def{
		def(t, "a", nil, `{"fn": "b", "args": [{"fn": "c", "args": []}]}`), // calls c, then b
		def(t, "b", []string{"x"}, `{"fn": "a", "args": []}`),
		def(t, "c", nil, `1`),
	}, nil)
	if !a.Cyclic || len(a.Diags) != 2 {
		t.Fatalf("%v %v", a.Cyclic, a.Diags)
	}
	if a.Diags[0].Pointer != "/functions/a" || !strings.Contains(a.Diags[0].Message, "a -> b -> a") {
		t.Errorf("%+v", a.Diags[0])
	}
	var defs []Def
	for i := 0; i <= MaxCallDepth; i++ {
		body := `1`
		if i < MaxCallDepth {
			body = `{"fn": "f` + itoa(i+1) + `", "args": []}`
		}
		defs = append(defs, def(t, "f"+itoa(i), nil, body))
	}
	a = Analyze(defs, nil)
	if a.Cyclic || len(a.Diags) != 1 || a.Diags[0].Pointer != "/functions/f0" {
		t.Errorf("depth: %v", a.Diags)
	}
}

func itoa(i int) string { return diag.Index("", i)[1:] }

func codes(ds diag.List) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.Code + " " + d.Pointer
	}
	return out
}

// The checks of names, arity and scopes, in the order the tree is walked: an unknown operator or
// a wrong count before the arguments, an undeclared custom operator and a call after them, an
// iteration's name after its list (its body not looked at when the name is refused), patterns
// written as literals after the arguments, parser problems where they are met.
func TestAnalyzeChecks(t *testing.T) {
	a := Analyze([]Def{def(t, "f", []string{"p"}, `{"var": "p"}`)}, []string{"x-ok"})
	cases := []struct {
		src  string
		want []string
	}{
		{`{"op": "nope", "args": [{"op": "x-no", "args": []}, {"op": "x-ok", "args": []}]}`,
			[]string{"OPERATOR_UNKNOWN /op", "OPERATOR_UNDECLARED /args/0/op"}},
		{`{"op": "x-no", "args": [{"op": "upper", "args": []}]}`, []string{"OPERATOR_ARITY /args/0/args", "OPERATOR_UNDECLARED /op"}},
		{`{"op": "if", "args": [1, {"fn": "g", "args": []}]}`, []string{"OPERATOR_ARITY /args", "FUNCTION_UNKNOWN /args/1/fn"}},
		{`{"op": "if", "args": [1, 2, 3, 4, 5]}`, nil},
		{`{"fn": "f", "args": [{"fn": "f", "args": []}, 2]}`, []string{"FUNCTION_ARITY /args/0/args", "FUNCTION_ARITY /args"}},
		{`{"op": "map", "args": [{"op": "nope", "args": []}, "a.b", {"op": "nope", "args": []}]}`,
			[]string{"OPERATOR_UNKNOWN /args/0/op", "EXPRESSION_INVALID /args/1"}},
		{`{"op": "some", "args": [[], "x", {"op": "all", "args": [{"var": "x"}, "x", {"op": "x-no", "args": [{"var": "x"}]}]}]}`,
			[]string{"OPERATOR_UNDECLARED /args/2/args/2/op"}},
		{`{"op": "matches", "args": [{"op": "nope", "args": []}, "("]}`, []string{"OPERATOR_UNKNOWN /args/0/op", "PATTERN_NOT_PORTABLE /args/1"}},
		{`{"op": "matches", "args": ["a", {"op": "concat", "args": ["("]}]}`, nil}, // checked when evaluated
		{`[{"op": "literal", "args": [{"a": 1, "a": 2, "b": 1e999}]}, {"var": 1}]`,
			[]string{"EXPRESSION_INVALID /0/args/0", "NUMBER_OUT_OF_RANGE /0/args/0/b", "EXPRESSION_INVALID /1/var"}},
	}
	for _, c := range cases {
		if got := codes(a.Expr(parseText(t, c.src, "")).Diags); !reflect.DeepEqual(got, append([]string{}, c.want...)) {
			t.Errorf("%s: got %v, want %v", c.src, got, c.want)
		}
	}
	if a.Pattern("(") != nil || a.Pattern("a") != nil {
		t.Error("a pattern kept that was refused or never written")
	}
	a.Expr(parseText(t, `{"op": "matches", "args": ["s", {"op": "literal", "args": ["a+"]}]}`, ""))
	if a.Pattern("a+") == nil {
		t.Error("a portable literal pattern is not kept compiled")
	}
}

// Definitions: a name defined twice or empty, parameters that are not distinct names and a
// missing body are reported at the definition, in that order, before the problems of the bodies;
// the later definitions of a name are not analysed.
func TestAnalyzeDefinitions(t *testing.T) {
	a := Analyze([]Def{
		{Name: "f", Params: []string{"", "", "a"}, ParamAt: []int{0, 2, 3}, Ptr: "/functions/f"},
		def(t, "f", nil, `{"op": "nope", "args": []}`),
		def(t, "", nil, `1`),
		def(t, "g", []string{"x"}, `{"fn": "f", "args": []}`),
	}, nil)
	want := []string{"FUNCTION_INVALID /functions/f/params/0", "FUNCTION_INVALID /functions/f/params/2",
		"FUNCTION_INVALID /functions/f/params/2", "FUNCTION_INVALID /functions/f", "FUNCTION_REDEFINED /functions/f",
		"FUNCTION_INVALID /functions/"}
	if got := codes(a.Diags); !reflect.DeepEqual(got, want) {
		t.Errorf("got %v\nwant %v", got, want)
	}
	defs := a.Defs()
	if len(defs) != 2 || defs[0].Name != "f" || !defs[0].Malformed || defs[1].Name != "g" || defs[1].Malformed {
		t.Errorf("defs %+v", defs)
	}
	if in, _ := a.Function("g"); !reflect.DeepEqual(in.Calls, []string{"f"}) { // a malformed definition: an edge
		t.Errorf("g calls %v", in.Calls)
	}
}

// Expressions of one unit may be analysed concurrently (the compiler compiles them so): the
// patterns kept compiled are shared.
func TestAnalyzeConcurrently(t *testing.T) {
	a := Analyze(nil, nil)
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				src := `{"op": "matches", "args": ["s", "a` + itoa(i%5) + `+"]}`
				if in := a.Expr(parseText(t, src, "")); len(in.Diags) != 0 || a.Pattern("a"+itoa(i%5)+"+") == nil {
					t.Errorf("%s: %v", src, in.Diags)
				}
			}
		}(g)
	}
	wg.Wait()
}
