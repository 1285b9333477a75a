package engine_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/sdods/sdods/engine"
)

// pathsRuleset reads request paths in each way the decoder of EvaluateJSONInto tells apart: a
// path's value (data.a.b, data.s), a path under a list index (data.list.0.x, data.list.00.y),
// an object read whole and paths under it (data.obj, data.obj.k), a field of a type binding
// over a list (data.items), a root read whole (ctx), a root read only through a path
// (actor.roles), a root read not at all (original), and paths read through the parameters of
// inlined functions (data.fo.k, not data.fo).
var pathsRuleset = doc(`"types":{"T":{"base":"string"}},
 "functions":{"inner":{"params":["o"],"body":{"var":"o.k"}},"outer":{"params":["d"],"body":{"fn":"inner","args":[{"var":"d.fo"}]}}},
 "entities":{"items":{"many":true,"fieldTypes":{"name":"T"}}},
 "rules":[
  {"id":"b","code":"B","when":{"op":"!=","args":[{"var":"data.a.b"},null]},"message":{"key":"m","params":{"v":{"var":"data.a.b"}}}},
  {"id":"s","code":"S","target":{"fields":["s"]},"when":{"op":"isEmpty","args":[{"var":"value"}]},"message":"m"},
  {"id":"l","code":"L","when":{"op":"==","args":[{"var":"data.list.0.x"},{"var":"data.list.00.y"}]},"message":"m"},
  {"id":"o","code":"O","when":{"op":"==","args":[{"var":"data.obj"},{"var":"data.obj.k"}]},"message":{"key":"m","params":{"o":{"var":"data.obj.k"}}}},
  {"id":"n","code":"N","target":{"type":"T"},"when":{"op":"==","args":[{"var":"value"},"bad"]},"message":"m"},
  {"id":"c","code":"C","when":{"op":"!=","args":[{"var":"ctx"},null]},"message":{"key":"m","params":{"c":{"var":"ctx"}}}},
  {"id":"r","code":"R","when":{"op":"contains","args":[{"var":"actor.roles"},"admin"]},"message":"m"},
  {"id":"f","code":"F","when":{"op":"==","args":[{"fn":"outer","args":[{"var":"data"}]},"x"]},"message":"m"}
 ],
 "stateRules":[{"id":"st","when":true,"effects":[{"field":"a.b","value":{"var":"data.a.b"}},{"field":"obj","value":{"var":"data.obj"}}]}]`)

// requestBodies are valid and invalid requests for pathsRuleset, with every kind of problem both
// where the rules read and where they do not.
func requestBodies() []string {
	deep := strings.Repeat(`{"a":`, 65) + "1" + strings.Repeat("}", 65)
	ok63 := strings.Repeat(`{"a":`, 62) + "1" + strings.Repeat("}", 62)
	deepList := strings.Repeat(`[`, 64) + strings.Repeat(`]`, 64)
	many := `{` + strings.Repeat(`"k":1,`, 0)
	for i := 0; i < 40; i++ {
		many += `"m` + strings.Repeat("x", i) + `":1,`
	}
	many += `"z":2}`
	bodies := []string{
		`{"data":{}}`,
		`{"data":null}`,
		`{"data":{"a":{"b":"x"},"s":"","list":[{"x":1,"y":1}],"obj":{"k":"v"},"items":[{"name":"bad"},{"name":"ok"}]},"ctx":{"t":1},"actor":{"roles":["admin"]},"original":{"q":[1,2]}}`,
		`{"data":{"fo":{"z":[1,{"k":"y"}],"k":"x"}}}`,
		`{"data":{"fo":{"k":["x"]}}}`,
		`{"data":{"fo":["x"]}}`,
		`{"data":{"fo":{"k":"x","k":"x"}}}`,
		"  {\n  \"data\" : {\n    \"a\" : { \"b\" : 12.5e3 } ,\n        \"s\":\"\\u00e9t\\u00e9\"},\t\"ctx\":null\r\n}  ",
		`{"data":{"a":"scalar","list":{"0":{"x":1},"00":{"y":1}},"obj":[1]}}`,
		`{"data":{"a":[{"b":1}],"list":[[1]],"obj":null,"s":null}}`,
		`{"data":{"a":{"b":{"deep":[1,{"x":true}]}},"list":[{"x":null,"y":null},2]}}`,
		`{"data":{"items":[],"unread":{"x":[1,2,{"y":"z"}],"w":"\ud83d\ude00"}},"actor":{"id":"u"}}`,
		`{"data":{"items":"nope","obj":{"k":{"kk":[]}}},"view":{"page":"p"},"locale":"fr-CA","ruleset":"t"}`,
		`{"data":{"x":` + ok63 + `},"original":{"x":` + ok63 + `},"actor":null,"ctx":null,"view":null,"locale":null}`,
		`{"data":{"unread":` + many + `,"a":` + many + `}}`,
		`{"data":{"obj":{"k":-0},"a":{"b":-0.0}}}`,
		`{"data":{"a":{"b":1e308}},"original":{"n":-1e-320}}`,
		// refused: where the rules read, and where they do not
		`{"data":{"a":{"b":1,"b":2}}}`,
		`{"data":{"unread":{"b":1,"b":2}}}`,
		`{"data":{"unread":{"b":1,"\u0062":2}}}`,
		`{"data":{"a":{"b":1,"\u0062":2}}}`,
		`{"data":{"a":{"b":1},"q":1,"s":"","a":{"b":2}}}`,
		`{"data":{"q":1,"a":{"b":1},"q":2}}`,
		`{"data":{"a":{"b":1e999}}}`,
		`{"data":{"unread":[1e999]}}`,
		`{"data":{"a":{"b":"\ud800"}}}`,
		`{"data":{"unread":"\udc00"}}`,
		"{\"data\":{\"a\":{\"b\":\"\xff\"}}}",
		"{\"data\":{\"unread\":\"\xed\xa0\x80\"}}",
		"{\"data\":{\"\xff\":1}}",
		`{"data":{"a":` + deep + `}}`,
		`{"data":{"unread":` + deep + `}}`,
		`{"data":{"list":` + deepList + `}}`,
		`{"original":{"x":` + deep + `},"data":{}}`,
		`{"data":{"a":{"b":01}}}`,
		`{"data":{"unread":[1,]}}`,
		`{"data":{"unread":tru}}`,
		`{"data":{"a":{"b":"x"}},"data":{}}`,
		`{"data":{},"extra":1}`,
		`{"data":[1]}`,
		`{"data":{},"ctx":"x"}`,
		`{"data":{},"actor":[]}`,
		`{"data":{},"view":{"tab":"x"}}`,
		`{"data":{},"locale":"fr_CA"}`,
		`{"ruleset":"other","data":{}}`,
		`{"data":{}} x`,
		`{"data":{"a":{"b":1}}`,
		`{"ctx":{}}`,
		``,
	}
	return bodies
}

// evaluateBoth answers body through ParseRequest and EvaluateInto, and through
// EvaluateJSONInto: the result as canonical JSON, or the error.
func evaluateBoth(t *testing.T, rs *engine.RuleSet, channel string, body []byte) (slow, fast string) {
	t.Helper()
	answer := func(res *engine.Result, err error) string {
		if err != nil {
			return "error: " + err.Error()
		}
		out, err := res.JSON()
		if err != nil {
			t.Fatal(err)
		}
		return string(out)
	}
	var res engine.Result
	req, err := engine.ParseRequest(body)
	if err == nil {
		err = rs.EvaluateInto(&res, channel, req)
	}
	slow = answer(&res, err)
	var res2 engine.Result
	fast = answer(&res2, rs.EvaluateJSONInto(&res2, channel, body))
	return slow, fast
}

// TestEvaluateJSONInto: decoding a request straight into what the rules read answers every body,
// valid or not, exactly as ParseRequest followed by EvaluateInto.
func TestEvaluateJSONInto(t *testing.T) {
	rs := mustRuleSet(t, pathsRuleset)
	refused, findings := 0, 0
	for _, body := range requestBodies() {
		for _, ch := range []string{"", engine.ChannelClient, "nope"} {
			slow, fast := evaluateBoth(t, rs, ch, []byte(body))
			if slow != fast {
				t.Errorf("%s (channel %q):\nParseRequest+EvaluateInto %s\nEvaluateJSONInto          %s", body, ch, slow, fast)
			}
			if ch == "" && strings.HasPrefix(slow, "error: ") {
				refused++
			}
			if ch == "" && strings.Contains(slow, `"code":`) {
				findings++
			}
		}
	}
	if refused < 25 || findings < 8 {
		t.Errorf("%d bodies refused, %d with findings: the table lost its bad or its good requests", refused, findings)
	}
	// a result reused across requests keeps nothing of the previous one
	var res engine.Result
	for _, body := range requestBodies() {
		slow, _ := evaluateBoth(t, rs, "", []byte(body))
		err := rs.EvaluateJSONInto(&res, "", []byte(body))
		if err != nil {
			if slow != "error: "+err.Error() {
				t.Errorf("%s: reused result: %v, want %s", body, err, slow)
			}
			continue
		}
		if out, _ := res.JSON(); !bytes.Equal(out, []byte(slow)) {
			t.Errorf("%s: reused result\n%s\nwant\n%s", body, out, slow)
		}
	}
	// the body is read in place: nothing of it is kept, so the caller may reuse its buffer
	for _, body := range requestBodies() {
		buf := []byte(body)
		var res engine.Result
		if rs.EvaluateJSONInto(&res, "", buf) != nil {
			continue
		}
		before, _ := res.JSON()
		for i := range buf {
			buf[i] = 'X'
		}
		if after, _ := res.JSON(); !bytes.Equal(after, before) {
			t.Errorf("%s: the result changed with the body's buffer:\n%s\nwas\n%s", body, after, before)
		}
	}
}

// FuzzEvaluateJSONInto compares EvaluateJSONInto with ParseRequest and EvaluateInto on any body.
func FuzzEvaluateJSONInto(f *testing.F) {
	for _, body := range requestBodies() {
		f.Add([]byte(body))
	}
	rs, err := engine.Compile(pathsRuleset)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		if slow, fast := evaluateBoth(t, rs, "", body); slow != fast {
			t.Fatalf("%q:\nParseRequest+EvaluateInto %s\nEvaluateJSONInto          %s", body, slow, fast)
		}
	})
}

// TestDecodedValuesDoNotOutliveTheRequest: EvaluateJSONInto decodes each request into storage it
// reuses for the next one, its strings parts of the body, so what leaves an evaluation must be
// copies: the states' values of a result kept by the caller, and the arguments a host's operator
// kept, stay as they were while other requests are evaluated and the bodies overwritten. An
// operator given only scalars keeps the reuse on; one given objects and lists turns it off after
// the first (the copies would cost too much), and must see the same either way.
func TestDecodedValuesDoNotOutliveTheRequest(t *testing.T) {
	for _, args := range []string{
		`{"var":"data.s"},{"var":"data.n"},{"var":"data.obj.k"},{"op":"coalesce","args":[{"var":"data.obj.in.x.1"},""]}`,
		`{"var":"data.obj"},{"var":"data.s"},{"var":"data.list"},{"var":"data.n"}`,
	} {
		var kept [][]any // the arguments x-keep was given, as it was given them
		var seen []string
		keep := func(args []any) (any, error) {
			kept = append(kept, args)
			out, _ := json.Marshal(args)
			seen = append(seen, string(out))
			return args[0], nil
		}
		rs := mustRuleSet(t, doc(`"operators":{"x-keep":{}},
 "rules":[{"id":"k","code":"K","when":{"op":"==","args":[{"op":"x-keep","args":[`+args+`]},null]},"message":"m"}],
 "stateRules":[{"id":"st","when":true,"effects":[{"field":"obj","value":{"var":"data.obj"}},{"field":"s","value":{"var":"data.s"}},
  {"field":"list","value":{"var":"data.list"}},{"field":"n","value":{"var":"data.n"}},{"field":"k","value":{"op":"x-keep","args":[`+args+`]}}]}]`),
			engine.WithOperators(map[string]engine.Operator{"x-keep": keep}))
		var results []*engine.Result
		var want []string
		for i := 0; i < 40; i++ {
			body := fmt.Sprintf(`{"data":{"obj":{"k":"v%d","n":%d,"in":{"x":[%d,"y%d"]}},"s":"s%d","n":%d.5,"list":[{"a":"a%d"},[%d],"l%d"]}}`, i, i, i, i, i, i, i, i, i)
			slow, _ := evaluateBoth(t, rs, "", []byte(body))
			res := &engine.Result{}
			buf := []byte(body)
			if err := rs.EvaluateJSONInto(res, "", buf); err != nil {
				t.Fatal(err)
			}
			for i := range buf {
				buf[i] = 'X'
			}
			if out, _ := res.JSON(); string(out) != slow || !strings.Contains(slow, fmt.Sprintf(`{"a":"a%d"}`, i)) {
				t.Fatalf("%s: request %d:\n%s\nwant\n%s", args, i, out, slow)
			}
			results, want = append(results, res), append(want, slow)
		}
		runtime.GC()
		for i, res := range results {
			if out, _ := res.JSON(); string(out) != want[i] {
				t.Errorf("%s: request %d: the result changed with later requests:\n%s\nwas\n%s", args, i, out, want[i])
			}
		}
		for i, args := range kept {
			if out, _ := json.Marshal(args); string(out) != seen[i] {
				t.Errorf("%s: call %d: the arguments x-keep kept changed with later requests:\n%s\nwere\n%s", args, i, out, seen[i])
			}
		}
		// (evaluateBoth calls it four times per request: twice on each path)
		if len(kept) != 240 || !strings.Contains(seen[239], `"s39"`) {
			t.Errorf("%s: x-keep called %d times, last with %s", args, len(kept), seen[len(seen)-1])
		}
	}
}
