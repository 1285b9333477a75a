package jsonlogic_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/sdods/sdods/engine"
	"github.com/sdods/sdods/impl/rules/rulecheck/jsonlogic"
)

// jsDir holds json-logic-js: package.json and package-lock.json are committed, node_modules is
// installed by npm ci on first use (and ignored by git).
var jsDir = filepath.Join("testdata", "js")

var npmOnce sync.Once

func needJS(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		t.Fatalf("node is required for the differential test against json-logic-js: %v", err)
	}
	npmOnce.Do(func() {
		if _, err := os.Stat(filepath.Join(jsDir, "node_modules", "json-logic-js")); err == nil {
			return
		}
		cmd := exec.Command("npm", "ci", "--no-audit", "--no-fund", "--loglevel=error")
		cmd.Dir = jsDir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("npm ci in %s: %v\n%s", jsDir, err, out)
		}
	})
	if _, err := os.Stat(filepath.Join(jsDir, "node_modules", "json-logic-js")); err != nil {
		t.Fatalf("json-logic-js is not installed in %s", jsDir)
	}
}

// jsCase is one evaluation by json-logic-js.
type jsCase struct {
	Logic any `json:"logic"`
	Data  any `json:"data"`
}

// jsResult is json-logic-js's answer: a value (Ok), undefined, or an exception.
type jsResult struct {
	Ok        json.RawMessage `json:"ok"`
	Undefined bool            `json:"undefined"`
	Error     string          `json:"error"`
	NonFinite bool            `json:"nonfinite"`
}

// runJS evaluates every case in one node process.
func runJS(t *testing.T, cases []jsCase) []jsResult {
	t.Helper()
	needJS(t)
	var in bytes.Buffer
	enc := json.NewEncoder(&in)
	for _, c := range cases {
		if err := enc.Encode(c); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("node", "run.js")
	cmd.Dir = jsDir
	cmd.Stdin = &in
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node run.js: %v\n%s", err, stderr.String())
	}
	var res []jsResult
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for sc.Scan() {
		var r jsResult
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("node output %q: %v", sc.Text(), err)
		}
		res = append(res, r)
	}
	if len(res) != len(cases) {
		t.Fatalf("node answered %d of %d cases", len(res), len(cases))
	}
	return res
}

// jsCanonical is json-logic-js's value as sdods writes it (numbers with 15 significant
// digits), or a description of what sdods cannot produce.
func jsCanonical(r jsResult) string {
	switch {
	case r.Error != "":
		return "js error: " + r.Error
	case r.Undefined:
		return "js undefined"
	case r.NonFinite:
		return "js non-finite number"
	}
	var v any
	if err := json.Unmarshal(r.Ok, &v); err != nil {
		return "js bad json: " + err.Error()
	}
	b, err := engine.MarshalValue(v)
	if err != nil {
		return "js value sdods cannot write: " + err.Error()
	}
	return string(b)
}

// sdodsEval compiles and evaluates an sdods expression with data as the root "data".
func sdodsEval(expr any, functions map[string]any, data any) string {
	raw, err := json.Marshal(expr)
	if err != nil {
		return "marshal: " + err.Error()
	}
	var opts []engine.Option
	if len(functions) > 0 {
		fr, _ := json.Marshal(functions)
		opts = append(opts, engine.WithFunctionsJSON("/functions", fr))
	}
	e, err := engine.CompileExpression(raw, opts...)
	if err != nil {
		return "sdods load error: " + err.Error()
	}
	v, err := e.Evaluate(map[string]any{"data": data})
	if err != nil {
		return "sdods error: " + err.Error()
	}
	b, err := engine.MarshalValue(v)
	if err != nil {
		return "sdods write: " + err.Error()
	}
	return string(b)
}

func decode(t testing.TB, s string) any {
	t.Helper()
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatalf("decode %s: %v", s, err)
	}
	return v
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("<%v>", err)
	}
	return string(b)
}

// satisfies reports whether data agrees with the annotation t of path (segments, "*" for every
// element); a missing value is null.
func satisfies(v any, path []string, t jsonlogic.Type) bool {
	if len(path) == 0 {
		return t&typeOf(v) != 0
	}
	if path[0] == "*" {
		arr, ok := v.([]any)
		if !ok {
			return true
		}
		for _, el := range arr {
			if !satisfies(el, path[1:], t) {
				return false
			}
		}
		return true
	}
	var next any
	if m, ok := v.(map[string]any); ok {
		next = m[path[0]]
	}
	return satisfies(next, path[1:], t)
}

func typeOf(v any) jsonlogic.Type {
	switch v.(type) {
	case nil:
		return jsonlogic.Null
	case bool:
		return jsonlogic.Bool
	case json.Number, float64:
		return jsonlogic.Number
	case string:
		return jsonlogic.String
	case []any:
		return jsonlogic.Array
	}
	return jsonlogic.Object
}

// fits reports whether data satisfies every annotation; prefix is stripped from the keys
// ("data." for Export's sdods paths).
func fits(data any, types jsonlogic.Types, prefix string) bool {
	for k, t := range types {
		k = strings.TrimPrefix(k, prefix)
		var path []string
		if k != "$" && k != strings.TrimSuffix(prefix, ".") {
			path = strings.Split(k, ".")
		}
		if !satisfies(data, path, t) {
			return false
		}
	}
	return true
}

func parseTypes(t testing.TB, m map[string]string) jsonlogic.Types {
	ts := jsonlogic.Types{}
	for k, v := range m {
		ty, err := jsonlogic.ParseType(v)
		if err != nil {
			t.Fatal(err)
		}
		ts[k] = ty
	}
	return ts
}
