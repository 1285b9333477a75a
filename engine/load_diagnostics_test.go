package engine_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/sdods/sdods/engine"
)

// loadDiagnosticsGolden holds, for each case of TestLoadDiagnosticsGolden, the diagnostics of its
// load (codes, pointers, messages, in order), recorded before the checks of names, arity and
// scopes moved from the compiler into the analysis pass; -update rewrites it.
var loadDiagnosticsGolden = filepath.Join("testdata", "load_diagnostics.json")

// multiErrorLoad is a ruleset (its members, see doc) or an expression with functions, which fails to
// load with several diagnostics.
type multiErrorLoad struct {
	name    string
	members string // ruleset members: the case loads a ruleset
	fns     string // with expr: the functions of CompileExpression, at /functions
	expr    string
}

// multiErrorLoads have several problems each: several at one pointer, in nested scopes, under a
// shadowed name, in functions that call unknown operators, and problems the loader does not look
// at (the body of an iteration whose name is refused).
var multiErrorLoads = []multiErrorLoad{
	{name: "unknown operator, its arguments checked too",
		expr: `{"op":"nope","args":[{"op":"nope","args":[]},{"fn":"f","args":[]},{"op":"x-u","args":[]}]}`},
	{name: "wrong arity, its arguments checked too",
		expr: `{"op":"not","args":[{"op":"nope","args":[1]},{"op":"upper","args":[]},{"op":"if","args":[1,2]}]}`},
	{name: "if with an even count, nested",
		expr: `{"op":"if","args":[true,{"op":"if","args":[1,2,3,4]},{"op":"between","args":[1]},{"op":"-","args":[]}]}`},
	{name: "iteration name refused: the body is not looked at",
		expr: `{"op":"map","args":[{"op":"nope","args":[]},"a.b",{"op":"nope2","args":[]}]}`},
	{name: "iteration names of every kind",
		expr: `[{"op":"filter","args":[[],"",1]},{"op":"some","args":[[],1,{"fn":"g","args":[]}]},{"op":"all","args":[[],{"var":"x"},1]},{"op":"map","args":[[],null,1]},{"op":"map","args":[[],{"op":"literal","args":["x"]},1]}]`},
	{name: "iteration of the wrong arity binds nothing",
		expr: `{"op":"map","args":[[1],"x",{"var":"x"},{"op":"nope","args":[]}]}`},
	{name: "shadowing: nested iterations with the same name",
		expr: `{"op":"map","args":[{"var":"data.l"},"x",{"op":"filter","args":[{"var":"x"},"x",{"op":"+","args":[{"var":"x"},{"op":"x-y","args":[]},{"op":"nope","args":[]}]}]}]}`},
	{name: "default name shadowed and refused inside",
		expr: `{"op":"some","args":[[{"op":"nope","args":[]}],{"op":"all","args":[{"var":"it"},"it.x",{"op":"nope","args":[]}]}]}`},
	{name: "literal problems and a bad node at one pointer",
		expr: `[{"op":"literal","args":[{"a":1,"a":2,"b":1e999}]},{"op":"literal","args":[1,2]},{"var":1},{"op":"+","op":"-","args":[]},{"var":"a..b"},1e999]`},
	{name: "patterns written as literals",
		expr: `[{"op":"matches","args":["a","("]},{"op":"matches","args":[{"op":"nope","args":[]},{"op":"literal","args":["[z-a]"]}]},{"op":"matches","args":["a",{"op":"concat","args":["("]}]}]`},
	{name: "custom operators undeclared after their arguments",
		expr: `{"op":"x-a","args":[{"op":"x-b","args":[{"op":"nope","args":[]}]},{"fn":"nofn","args":[{"op":"x-a","args":[]}]}]}`},
	{name: "calls: unknown, arity, arguments first",
		fns:  `{"f":{"params":["a"],"body":{"var":"a"}}}`,
		expr: `[{"fn":"f","args":[]},{"fn":"f","args":[{"op":"nope","args":[]},2]},{"fn":"g","args":[{"fn":"h","args":[]}]}]`},
	{name: "functions calling unknown operators and functions",
		fns:  `{"f":{"params":["a","b"],"body":{"op":"nope","args":[{"fn":"g","args":[{"var":"a"}]},{"op":"x-z","args":[]}]}},"g":{"params":["x"],"body":{"op":"map","args":[{"var":"x"},"x",{"fn":"k","args":[]}]}}}`,
		expr: `{"fn":"f","args":[1,{"op":"upper","args":[1,2]}]}`},
	{name: "function problems beside body problems",
		fns:  `{"f":{"params":["a","a",""],"body":{"op":"nope","args":[{"var":"a"}]}},"g":{"params":[],"body":{"fn":"f","args":[1]}},"h":{"params":["p"],"body":{"fn":"h","args":[{"op":"nope","args":[]}]}}}`,
		expr: `{"fn":"h","args":[]}`},
	{name: "cycles with problems in their bodies",
		fns:  `{"a":{"params":[],"body":{"op":"+","args":[{"fn":"b","args":[]},{"op":"nope","args":[]}]}},"b":{"params":[],"body":{"fn":"a","args":[1]}},"c":{"params":[],"body":{"fn":"a","args":[]}}}`,
		expr: `{"fn":"c","args":[1]}`},
	{name: "ruleset: several errors at the same pointers",
		members: `"operators":{"x-ok":{}},"functions":{"f":{"params":["v"],"body":{"op":"and","args":[{"op":"x-no","args":[{"var":"v"}]},{"op":"nope","args":[]}]}},"g":{"params":["a","a"],"body":{"op":"map","args":[{"var":"a"},"a.b",{"op":"bad","args":[]}]}}},` +
			`"rules":[{"id":"r1","code":"C","when":{"op":"nope","args":[{"op":"nope","args":[]},{"fn":"f","args":[]},{"fn":"g","args":[1,2]},{"op":"x-ok","args":[1]}]},"message":{"key":"m","params":{"p":{"op":"upper","args":[]},"q":{"fn":"zz","args":[{"op":"x-no","args":[]}]}}}},` +
			`{"id":"r2","code":"C","when":{"op":"some","args":[{"var":"data.l"},"it",{"op":"some","args":[{"var":"it"},"",{"op":"nope","args":[]}]}]},"message":"m"}],` +
			`"stateRules":[{"id":"s1","when":{"op":"matches","args":["a","("]},"effects":[{"field":"a","hidden":{"op":"nope","args":[{"op":"x-no","args":[]}]},"value":{"op":"literal","args":[{"a":1,"a":2}]}}]}]`},
	{name: "ruleset: nested scopes and shadowing in rules and functions",
		members: `"functions":{"inner":{"params":["it"],"body":{"op":"filter","args":[{"var":"it"},{"op":"map","args":[{"var":"it"},"it",{"op":"x-q","args":[{"var":"it"}]}]}]}},"outer":{"params":["l"],"body":{"fn":"inner","args":[{"var":"l"},{"var":"l"}]}}},` +
			`"rules":[{"id":"r1","code":"C","when":{"op":"all","args":[{"var":"data.l"},"row",{"op":"some","args":[{"var":"row.items"},"row",{"op":"==","args":[{"var":"row"},{"fn":"outer","args":[]},{"op":"x-q","args":[]}]}]}]},"message":"m"}]`},
	{name: "ruleset: broken functions and rules that call them",
		members: `"functions":{"f":{"params":["a"],"body":{"fn":"g","args":[]}},"g":{"params":[],"body":{"fn":"f","args":[{"op":"nope","args":[]}]}},"h":{"params":["p","q"]},"":{"params":[],"body":1}},` +
			`"rules":[{"id":"r1","code":"C","when":{"op":"or","args":[{"fn":"f","args":[]},{"fn":"h","args":[]},{"fn":"g","args":[1]},{"fn":"none","args":[]}]},"message":"m"}]`},
	{name: "several problems at one pointer",
		fns:  `{"f":{"params":["","",".","."],"body":{"op":"literal","args":[{"b":1,"a":1,"b":2,"a":2,"b":3}]}},"f":{"params":[],"body":{"op":"nope","args":[]}},"g":{"params":["a"],"body":{"fn":"g","args":[{"fn":"g","args":[{"var":"a"}]}]}}}`,
		expr: `[{"op":"literal","args":[{"x":[1e999,{"y":1,"y":2}],"x":2,"x":3}]},{"fn":"g","args":[{"fn":"f","args":[1]}]}]`},
	{name: "ruleset: functions named twice and problems at the definition",
		members: `"functions":{"f":{"params":["a"],"body":{"fn":"f","args":[{"var":"a"}]}},"f":{"params":["b"],"body":{"op":"nope","args":[]}},"g":{"params":["",""]}},` +
			`"rules":[{"id":"r1","code":"C","when":{"op":"literal","args":[{"k":1,"k":2,"j":1,"j":2}]},"message":"m"}]`},
}

func TestLoadDiagnosticsGolden(t *testing.T) {
	got := map[string]engine.Diagnostics{}
	for _, c := range multiErrorLoads {
		var err error
		switch {
		case c.members != "":
			_, err = engine.Compile(doc(c.members))
		case c.fns != "":
			_, err = engine.CompileExpression(json.RawMessage(c.expr), engine.WithFunctionsJSON("/functions", json.RawMessage(c.fns)))
		default:
			_, err = engine.CompileExpression(json.RawMessage(c.expr))
		}
		var list engine.Diagnostics
		if !errors.As(err, &list) || len(list) < 2 {
			t.Errorf("%s: want several diagnostics, got %v", c.name, err)
		}
		got[c.name] = list
	}
	b, err := json.MarshalIndent(got, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	b = append(b, '\n')
	if *update {
		if err := os.WriteFile(loadDiagnosticsGolden, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(loadDiagnosticsGolden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b, want) {
		var old map[string]engine.Diagnostics
		if err := json.Unmarshal(want, &old); err != nil {
			t.Fatal(err)
		}
		for _, c := range multiErrorLoads {
			g, _ := json.MarshalIndent(got[c.name], "", "  ")
			w, _ := json.MarshalIndent(old[c.name], "", "  ")
			if !bytes.Equal(g, w) {
				t.Errorf("%s: got\n%s\nwant\n%s", c.name, g, w)
			}
		}
		t.Error("diagnostics differ from " + loadDiagnosticsGolden)
	}
}
