package engine_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/sdods/sdods/engine"
)

// TestResultKinds: what a rule's condition, a message parameter and a state effect do with a
// result of every kind. The engine takes shortcuts for booleans, null and strings (no canonical
// form to compute, no interface comparison); this table is what the general path gave.
func TestResultKinds(t *testing.T) {
	data := map[string]any{"t": true, "f": false, "n": nil, "z": 0.0, "x": 1.5, "s": "str", "e": "",
		"a": []any{1.0, "b"}, "o": map[string]any{"k": 1.0}}
	cases := []struct{ expr, rule, param, hidden, value string }{
		{`{"var":"data.t"}`, "C", "true", "true", "true"},
		{`{"var":"data.f"}`, "-", "false", "false", "false"},
		{`{"var":"data.n"}`, "-", "", "EVALUATION_ERROR", "null"},
		{`{"var":"data.missing"}`, "-", "", "EVALUATION_ERROR", "null"},
		{`{"var":"data.z"}`, "EVALUATION_ERROR", "0", "EVALUATION_ERROR", "0"},
		{`{"var":"data.x"}`, "EVALUATION_ERROR", "1.5", "EVALUATION_ERROR", "1.5"},
		{`{"op":"*","args":[-1,0]}`, "EVALUATION_ERROR", "0", "EVALUATION_ERROR", "0"},
		{`{"op":"+","args":[0.1,0.2]}`, "EVALUATION_ERROR", "0.3", "EVALUATION_ERROR", "0.3"},
		{`{"var":"data.s"}`, "EVALUATION_ERROR", "str", "EVALUATION_ERROR", "str"},
		{`{"var":"data.e"}`, "EVALUATION_ERROR", "", "EVALUATION_ERROR", ""},
		{`{"var":"data.a"}`, "EVALUATION_ERROR", `[1,"b"]`, "EVALUATION_ERROR", "[1 b]"},
		{`{"var":"data.o"}`, "EVALUATION_ERROR", `{"k":1}`, "EVALUATION_ERROR", "map[k:1]"},
		{`{"op":"<","args":[1,"x"]}`, "EVALUATION_ERROR", "EVALUATION_ERROR", "EVALUATION_ERROR", "EVALUATION_ERROR"},
	}
	for _, tc := range cases {
		src := []byte(`{"ruleset":{"id":"t","version":"1","defaultLocale":"en","locales":{"en":{"m":"msg","p":"<{p}>"}},"rules":[
			{"id":"when","code":"C","when":` + tc.expr + `,"message":"m"},
			{"id":"param","code":"P","when":true,"message":{"key":"p","params":{"p":` + tc.expr + `}}}],
			"stateRules":[{"id":"hidden","when":true,"effects":[{"field":"h","hidden":` + tc.expr + `}]},
			              {"id":"value","when":true,"effects":[{"field":"v","value":` + tc.expr + `}]},
			              {"id":"cond","when":` + tc.expr + `,"effects":[{"field":"c","hidden":true}]}]}}`)
		res, err := mustRuleSet(t, src).Evaluate(&engine.Request{Data: data})
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{"when": "-", "param": "-", "hidden": "-", "value": "-", "cond": "-"}
		for _, f := range res.Findings {
			switch {
			case f.Code == engine.RuleFailed:
				got[f.Rule] = f.Message[strings.LastIndex(f.Message, " ")+1:]
			case f.Rule == "param":
				got[f.Rule] = strings.TrimSuffix(strings.TrimPrefix(f.Message, "<"), ">")
			default:
				got[f.Rule] = f.Code
			}
		}
		for _, st := range res.States {
			for _, p := range st.Props {
				rule := map[string]string{"h": "hidden", "v": "value", "c": "cond"}[st.Field]
				got[rule] = fmt.Sprint(p.Value)
				if p.Value == nil {
					got[rule] = "null"
				}
			}
		}
		cond := "-"
		if tc.rule == "C" {
			cond = "true"
		} else if tc.rule != "-" {
			cond = tc.rule
		}
		want := map[string]string{"when": tc.rule, "param": tc.param, "hidden": tc.hidden, "value": tc.value, "cond": cond}
		for k, w := range want {
			if got[k] != w {
				t.Errorf("%s: %s gives %q, want %q", tc.expr, k, got[k], w)
			}
		}
	}
}

// TestManyStates: states over more slots than fit in one word of the set-slot bits (and more set
// slots than the stack buffer reading them holds) come out in order, the later rule winning, in a
// fresh result and in a reused one.
func TestManyStates(t *testing.T) {
	var rules []string
	want := map[string]map[string]any{}
	for r := 0; r < 3; r++ {
		var effects []string
		for f := r; f < 150; f += r + 1 {
			field := fmt.Sprintf("f%03d", 149-f)
			hidden := (f+r)%2 == 0
			effects = append(effects, fmt.Sprintf(`{"field":%q,"hidden":%v,"value":%d}`, field, hidden, r))
			if want[field] == nil {
				want[field] = map[string]any{}
			}
			want[field]["hidden"], want[field]["value"] = hidden, float64(r)
		}
		rules = append(rules, fmt.Sprintf(`{"id":"s%d","when":true,"effects":[%s]}`, r, strings.Join(effects, ",")))
	}
	rules = append(rules, `{"id":"off","when":false,"effects":[{"field":"f000","required":true}]}`)
	rs := mustRuleSet(t, doc(`"stateRules":[`+strings.Join(rules, ",")+`]`))
	var reused engine.Result
	for round := 0; round < 2; round++ {
		fresh, err := rs.Evaluate(&engine.Request{Data: map[string]any{}})
		if err != nil {
			t.Fatal(err)
		}
		if err := rs.EvaluateInto(&reused, "", &engine.Request{Data: map[string]any{}}); err != nil {
			t.Fatal(err)
		}
		for _, res := range []*engine.Result{fresh, &reused} {
			if len(res.States) != len(want) {
				t.Fatalf("%d fields, want %d", len(res.States), len(want))
			}
			for i, st := range res.States {
				if i > 0 && res.States[i-1].Field >= st.Field {
					t.Fatalf("fields out of order: %s after %s", st.Field, res.States[i-1].Field)
				}
				if len(st.Props) != 2 || st.Props[0].Name != "hidden" || st.Props[1].Name != "value" ||
					st.Props[0].Value != want[st.Field]["hidden"] || st.Props[1].Value != want[st.Field]["value"] {
					t.Fatalf("%s: %+v, want %v", st.Field, st.Props, want[st.Field])
				}
			}
		}
	}
}

// TestParsedRequestRechecked: a request ParseRequest returned is not checked again while it holds
// what ParseRequest put in it; any root, the view or the locale replaced (even by a map of another
// type sharing the same storage) makes the evaluation check it again.
func TestParsedRequestRechecked(t *testing.T) {
	type object map[string]any
	rs := mustRuleSet(t, doc(`"rules":[`+okRule+`]`))
	bad := map[string]any{"f": func() {}}
	cases := []struct {
		name   string
		change func(*engine.Request)
		ok     bool
	}{
		{"unchanged", func(*engine.Request) {}, true},
		{"same data", func(r *engine.Request) { r.Data = r.Data.(map[string]any) }, true},
		{"data replaced", func(r *engine.Request) { r.Data = bad }, false},
		{"data as another map type", func(r *engine.Request) { r.Data = object(r.Data.(map[string]any)) }, false},
		{"data an array", func(r *engine.Request) { r.Data = []any{} }, false},
		{"original replaced", func(r *engine.Request) { r.Original = bad }, false},
		{"actor replaced", func(r *engine.Request) { r.Actor = bad }, false},
		{"ctx replaced", func(r *engine.Request) { r.Ctx = bad }, false},
		{"ctx nil", func(r *engine.Request) { r.Ctx = nil }, true},
		{"view replaced", func(r *engine.Request) { r.View = &engine.View{Page: strings.Repeat("p", 257)} }, false},
		{"view changed", func(r *engine.Request) { r.View.Page = strings.Repeat("p", 257) }, false},
		{"locale replaced", func(r *engine.Request) { r.Locale = "fr_CA" }, false},
	}
	for _, tc := range cases {
		req, err := engine.ParseRequest([]byte(`{"data":{"a":1},"original":{},"actor":{"id":"u"},"ctx":{"n":1},"view":{"page":"p"},"locale":"en"}`))
		if err != nil {
			t.Fatal(err)
		}
		tc.change(req)
		_, err = rs.Evaluate(req)
		if (err == nil) != tc.ok {
			t.Errorf("%s: error %v", tc.name, err)
		}
	}
}

// TestListBindings: fields bound through a list entity read each element as a variable path
// does (members of objects, elements of arrays, null for anything else), the one-member paths
// without the general lookup.
func TestListBindings(t *testing.T) {
	src := []byte(`{"ruleset":{"id":"t","version":"1","defaultLocale":"en","locales":{"en":{"m":"{field}={value}"}},
		"types":{"T":{"base":"string"},"U":{"base":"string"},"V":{"base":"string"}},
		"entities":{"item":{"path":"items","many":true,"fieldTypes":{"a":"T","b.c":"U","0":"V"}}},
		"rules":[{"id":"t","code":"T","target":{"type":"T"},"when":{"op":"!=","args":[{"var":"value"},null]},"message":"m"},
		         {"id":"u","code":"U","target":{"type":"U"},"when":{"op":"!=","args":[{"var":"value"},null]},"message":"m"},
		         {"id":"v","code":"V","target":{"type":"V"},"when":{"op":"!=","args":[{"var":"value"},null]},"message":"m"}]}}`)
	items := []any{map[string]any{"a": "x", "0": "zero"}, []any{"e0", "e1"}, "s", nil, map[string]any{"a": nil},
		map[string]any{"b": map[string]any{"c": "y"}}, map[string]any{"b": []any{"no"}}, map[string]any{"a": []any{1.0}}}
	res, err := mustRuleSet(t, src).Evaluate(&engine.Request{Data: map[string]any{"items": items}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range res.Findings {
		got = append(got, f.Rule+":"+f.Message)
	}
	want := "t:items.0.a=x|t:items.7.a=[1]|u:items.5.b.c=y|v:items.0.0=zero|v:items.1.0=e0"
	if strings.Join(got, "|") != want {
		t.Errorf("got  %s\nwant %s", strings.Join(got, "|"), want)
	}
}
