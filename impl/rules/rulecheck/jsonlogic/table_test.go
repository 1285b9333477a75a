package jsonlogic_test

import (
	"bufio"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sdods/sdods/impl/rules/rulecheck/jsonlogic"
)

var update = flag.Bool("update", false, "rewrite the golden outcomes of the case tables")

// Value pools the data records are built from. Strict imports must agree for every input, so
// the strict pools hold the awkward values (decimals that are not canonical, 1e21, strings
// beyond U+FFFF, "0", empty containers); --js-compat's documented costs exclude some of them,
// so its pools are the values where no cost applies (small integers, strings within the BMP).
var (
	strictNums = []string{`0`, `1`, `-1`, `2`, `0.1`, `0.2`, `0.3`, `1.5`, `-2.5`, `100`, `1e21`, `1e-7`, `123456789012345678`, `0.30000000000000004`, `5e-324`, `18`, `-0`, `16`, `5`, `10`, `0.5`}
	compatNums = []string{`1`, `-1`, `2`, `3`, `10`, `18`, `-7`, `42`}
	strictStrs = []string{`""`, `"a"`, `"abc"`, `"0"`, `"1"`, `" "`, `"A"`, `"b"`, `"😀"`, `"\uffff"`, `"é"`, `"ab"`, `"10"`, `"2"`, `"a😀b"`, `"null"`}
	compatStrs = []string{`""`, `"a"`, `"abc"`, `"0"`, `"1"`, `" "`, `"A"`, `"b"`, `"é"`, `"ab"`, `"10"`}
	strictArrs = []string{`[]`, `[1]`, `[1,2,3]`, `[0]`, `[2.5,-1]`, `[0.1,0.2]`, `[2,2]`}
	compatArrs = []string{`[]`, `[1]`, `[1,2,3]`, `[5]`, `[2,-1]`, `[2,2]`}
	wordArrs   = []string{`[]`, `["a"]`, `["a","b"]`, `["","x"]`, `["abc","😀"]`}
	objs       = []string{`{}`, `{"a":1}`, `{"a":{"b":null}}`, `{"01":"x","1":"y"}`}
	extras     = []string{`null`, `true`, `false`, `[]`, `{}`, `[1,[2]]`, `{"a":1}`, `[0]`, `[""]`, `["a"]`}
)

// records builds n data objects from the pools; every key is present with a value of its
// annotated type except u (anything, sometimes absent), z (absent or null) and a, c, e.
func records(compat bool, n int) []string {
	nums, strs, arrs := strictNums, strictStrs, strictArrs
	if compat {
		nums, strs, arrs = compatNums, compatStrs, compatArrs
	}
	anys := append(append(append(append([]string{}, nums...), strs...), extras...), arrs...)
	var out []string
	for i := 0; i < n; i++ {
		var b strings.Builder
		b.WriteString("{")
		add := func(k, v string) {
			if b.Len() > 1 {
				b.WriteString(",")
			}
			b.WriteString(`"` + k + `":` + v)
		}
		add("n", nums[i%len(nums)])
		add("m", nums[(i*7+3)%len(nums)])
		add("s", strs[i%len(strs)])
		add("t", strs[(i*5+2)%len(strs)])
		add("b", []string{"true", "false"}[i%2])
		add("items", arrs[i%len(arrs)])
		add("words", wordArrs[i%len(wordArrs)])
		add("obj", objs[i%len(objs)])
		if i%6 != 5 {
			add("u", anys[(i*11)%len(anys)])
			add("v", anys[(i*13+5)%len(anys)])
		}
		if i%3 == 0 {
			add("z", "null")
		}
		if i%4 != 3 {
			add("a", strs[(i*3)%len(strs)])
			add("c", anys[(i*17+1)%len(anys)])
		}
		if i%2 == 0 {
			add("e", `""`)
		}
		b.WriteString("}")
		out = append(out, b.String())
	}
	return out
}

type importCase struct {
	Logic json.RawMessage   `json:"logic"`
	Types map[string]string `json:"types,omitempty"`
	Want  string            `json:"want,omitempty"` // import, refuse, cost (refused in strict, imported by --js-compat)
	Note  string            `json:"note,omitempty"`
}

type exportCase struct {
	Expr      json.RawMessage   `json:"expr"`
	Types     map[string]string `json:"types,omitempty"`
	Functions map[string]any    `json:"functions,omitempty"`
	Want      string            `json:"want,omitempty"`
	Note      string            `json:"note,omitempty"`
}

func readLines[T any](t *testing.T, name string) []T {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []T
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var c T
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatalf("%s: %s: %v", name, sc.Text(), err)
		}
		out = append(out, c)
	}
	return out
}

// diffCheck is one comparison: the sdods expression (with functions) against JSON Logic on data.
type diffCheck struct {
	label     string
	logic     any
	expr      any
	functions map[string]any
	data      string
}

// differential runs every check through both engines and reports each disagreement.
func differential(t *testing.T, checks []diffCheck) {
	t.Helper()
	jc := make([]jsCase, len(checks))
	for i, c := range checks {
		jc[i] = jsCase{Logic: c.logic, Data: json.RawMessage(c.data)}
	}
	res := runJS(t, jc)
	bad := 0
	for i, c := range checks {
		js := jsCanonical(res[i])
		sd := sdodsEval(c.expr, c.functions, decode(t, c.data))
		if js != sd {
			bad++
			if bad <= 25 {
				t.Errorf("%s\n  json logic %s\n  sdods      %s\n  data       %s\n  json-logic-js: %s\n  sdods:         %s", c.label, mustJSON(c.logic), mustJSON(c.expr), c.data, js, sd)
			}
		}
	}
	if bad > 25 {
		t.Errorf("... and %d more disagreements", bad-25)
	}
}

// outcome is a golden line: what a conversion did with a table case.
type outcome struct {
	Input    json.RawMessage      `json:"input"`
	Strict   *jsonlogic.Converted `json:"strict"`
	JSCompat *jsonlogic.Converted `json:"jsCompat,omitempty"`
}

func golden(t *testing.T, name string, lines []outcome) {
	t.Helper()
	var b strings.Builder
	for _, l := range lines {
		j, err := json.Marshal(l)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(j)
		b.WriteString("\n")
	}
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update)", err)
	}
	if string(want) != b.String() {
		t.Errorf("%s differs from the conversions (run go test ./impl/rules/rulecheck/jsonlogic -update and review the diff)", path)
	}
}

// TestImportTable imports every case of the table in both modes, checks the strict outcome the
// table states, and compares each imported expression with json-logic-js on every data record
// that satisfies the case's annotations.
func TestImportTable(t *testing.T) {
	cases := readLines[importCase](t, "import_cases.jsonl")
	if len(cases) < 300 {
		t.Fatalf("the import table has %d cases, want at least 300", len(cases))
	}
	strictData, compatData := records(false, 40), records(true, 24)
	var checks []diffCheck
	var lines []outcome
	imported := 0
	for i, c := range cases {
		logic := decode(t, string(c.Logic))
		types := parseTypes(t, c.Types)
		strict := jsonlogic.Import(logic, jsonlogic.Options{Types: types})
		compat := jsonlogic.Import(logic, jsonlogic.Options{Types: types, JSCompat: true})
		lines = append(lines, outcome{Input: c.Logic, Strict: strict, JSCompat: compat})
		label := func(mode string) string { return "case " + itoa(i+1) + " (" + mode + "): " + string(c.Logic) }
		switch c.Want {
		case "import":
			if strict.Refused() {
				t.Errorf("%s: refused, want imported: %v", label("strict"), strict.Diagnostics)
			}
		case "refuse", "cost":
			if !strict.Refused() {
				t.Errorf("%s: imported as %s, want refused", label("strict"), mustJSON(strict.Expression))
			}
		}
		if c.Want == "cost" && compat.Refused() {
			t.Errorf("%s: refused, want imported with a cost: %v", label("js-compat"), compat.Diagnostics)
		}
		for _, conv := range []*jsonlogic.Converted{strict, compat} {
			for _, d := range conv.Diagnostics {
				if !resolves(logic, d.Pointer) {
					t.Errorf("%s: diagnostic pointer %q does not resolve in the input", label("any"), d.Pointer)
				}
			}
		}
		if !strict.Refused() {
			imported++
			for _, d := range strictData {
				if fits(decode(t, d), types, "") {
					checks = append(checks, diffCheck{label: label("strict"), logic: logic, expr: strict.Expression, functions: strict.Functions, data: d})
				}
			}
		}
		if !compat.Refused() {
			for _, d := range compatData {
				if fits(decode(t, d), types, "") {
					checks = append(checks, diffCheck{label: label("js-compat"), logic: logic, expr: compat.Expression, functions: compat.Functions, data: d})
				}
			}
		}
	}
	if imported < 150 {
		t.Errorf("only %d of %d cases import in strict mode", imported, len(cases))
	}
	t.Logf("%d cases, %d imported in strict mode, %d evaluations compared", len(cases), imported, len(checks))
	differential(t, checks)
	golden(t, "import_cases.golden.jsonl", lines)
}

// TestExportTable exports every case and compares json-logic-js on the export with the engine
// on the original; then imports the export back (export ∘ import) and compares again.
func TestExportTable(t *testing.T) {
	cases := readLines[exportCase](t, "export_cases.jsonl")
	data := records(false, 40)
	var checks []diffCheck
	var lines []outcome
	exported := 0
	for i, c := range cases {
		expr := decode(t, string(c.Expr))
		types := parseTypes(t, c.Types)
		var fns map[string]any
		if c.Functions != nil {
			fns = decode(t, mustJSON(c.Functions)).(map[string]any)
		}
		out := jsonlogic.Export(expr, fns, jsonlogic.Options{Types: types})
		lines = append(lines, outcome{Input: c.Expr, Strict: out})
		label := "export case " + itoa(i+1) + ": " + string(c.Expr)
		switch c.Want {
		case "export":
			if out.Refused() {
				t.Errorf("%s: refused, want exported: %v", label, out.Diagnostics)
			}
		case "refuse":
			if !out.Refused() {
				t.Errorf("%s: exported as %s, want refused", label, mustJSON(out.Expression))
			}
		}
		if out.Refused() {
			continue
		}
		exported++
		// Round trip: the export imported back, with the annotations carried over.
		back := jsonlogic.Import(out.Expression, jsonlogic.Options{Types: importTypes(types)})
		for _, d := range data {
			if !fits(decode(t, d), types, "data.") {
				continue
			}
			checks = append(checks, diffCheck{label: label, logic: out.Expression, expr: expr, functions: fns, data: d})
			if !back.Refused() {
				checks = append(checks, diffCheck{label: label + " (imported back)", logic: out.Expression, expr: back.Expression, functions: back.Functions, data: d})
			}
		}
	}
	t.Logf("%d cases, %d exported, %d evaluations compared", len(cases), exported, len(checks))
	differential(t, checks)
	golden(t, "export_cases.golden.jsonl", lines)
}

// importTypes turns Export's annotations (sdods paths under data) into Import's.
func importTypes(ts jsonlogic.Types) jsonlogic.Types {
	out := jsonlogic.Types{}
	for k, v := range ts {
		switch {
		case k == "data":
			out["$"] = v
		case strings.HasPrefix(k, "data."):
			out[strings.TrimPrefix(k, "data.")] = v
		}
	}
	return out
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

// resolves reports whether a JSON pointer names a node of v.
func resolves(v any, ptr string) bool {
	if ptr == "" {
		return true
	}
	for _, tok := range strings.Split(ptr[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch n := v.(type) {
		case map[string]any:
			next, ok := n[tok]
			if !ok {
				return false
			}
			v = next
		case []any:
			var i int
			if err := json.Unmarshal([]byte(tok), &i); err != nil || i < 0 || i >= len(n) {
				return false
			}
			v = n[i]
		default:
			return false
		}
	}
	return true
}
