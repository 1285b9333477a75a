package engine_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/sdods/sdods/engine"
	"github.com/sdods/sdods/engine/testops"
)

// exprCase is one data-driven case of testdata/expressions/*.json. Exactly one of Result and
// Error is expected; Pointer, when set, is the expected pointer of the (first) diagnostic.
type exprCase struct {
	Name      string          `json:"name"`
	Op        string          `json:"op"`
	Expr      json.RawMessage `json:"expr"`
	Env       json.RawMessage `json:"env"`
	Result    json.RawMessage `json:"result"`
	Error     string          `json:"error"`
	Pointer   *string         `json:"pointer"`
	Functions json.RawMessage `json:"functions"`
	Operators []string        `json:"operators"` // declared custom operators
	Supplied  *[]string       `json:"supplied"`  // supplied by the host; default: every declared one testops has
}

func loadCases(tb testing.TB) map[string][]exprCase {
	tb.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "expressions", "*.json"))
	if err != nil || len(files) == 0 {
		tb.Fatalf("no case files: %v", err)
	}
	out := map[string][]exprCase{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		var cs []exprCase
		if err := dec.Decode(&cs); err != nil {
			tb.Fatalf("%s: %v", f, err)
		}
		out[strings.TrimSuffix(filepath.Base(f), ".json")] = cs
	}
	return out
}

func (c exprCase) options() []engine.Option {
	var opts []engine.Option
	if len(c.Functions) > 0 {
		opts = append(opts, engine.WithFunctionsJSON("/functions", c.Functions))
	}
	opts = append(opts, engine.WithDeclaredOperators(c.Operators...))
	all := testops.Operators()
	supplied := map[string]engine.Operator{}
	if c.Supplied != nil {
		for _, name := range *c.Supplied {
			supplied[name] = all[name]
		}
	} else {
		for _, name := range c.Operators {
			if op := all[name]; op != nil {
				supplied[name] = op
			}
		}
	}
	return append(opts, engine.WithOperators(supplied))
}

// run compiles and evaluates the case, returning the canonical result text or the error.
func (c exprCase) run() (string, error) {
	e, err := engine.CompileExpression(c.Expr, c.options()...)
	if err != nil {
		return "", err
	}
	env := map[string]any{}
	if len(c.Env) > 0 {
		if env, err = engine.ParseEnv(c.Env); err != nil {
			return "", err
		}
	}
	v, err := e.Evaluate(env)
	if err != nil {
		return "", err
	}
	b, err := engine.MarshalValue(v)
	return string(b), err
}

func canonicalJSON(tb testing.TB, raw json.RawMessage) string {
	tb.Helper()
	env, err := engine.ParseEnv([]byte(`{"v":` + string(raw) + `}`))
	if err != nil {
		tb.Fatalf("expected value %s: %v", raw, err)
	}
	b, err := engine.MarshalValue(env["v"])
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}

func firstDiagnostic(err error) *engine.Diagnostic {
	var list engine.Diagnostics
	if errors.As(err, &list) && len(list) > 0 {
		return list[0]
	}
	var d *engine.Diagnostic
	if errors.As(err, &d) {
		return d
	}
	return nil
}

func TestExpressionCases(t *testing.T) {
	for file, cs := range loadCases(t) {
		for _, c := range cs {
			c := c
			t.Run(file+"/"+c.Name, func(t *testing.T) {
				got, err := c.run()
				if c.Error != "" {
					d := firstDiagnostic(err)
					if d == nil {
						t.Fatalf("got result %s (err %v), want error %s", got, err, c.Error)
					}
					if d.Code != c.Error {
						t.Fatalf("got error %v, want code %s", err, c.Error)
					}
					if c.Pointer != nil && d.Pointer != *c.Pointer {
						t.Fatalf("got pointer %q (%v), want %q", d.Pointer, err, *c.Pointer)
					}
					return
				}
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				if want := canonicalJSON(t, c.Result); got != want {
					t.Fatalf("got %s, want %s", got, want)
				}
			})
		}
	}
}

// TestEveryOperatorHasCases keeps the table tests complete: each of the 45 core operators has at
// least three cases, and every case names an operator that exists.
func TestEveryOperatorHasCases(t *testing.T) {
	ops := engine.CoreOperators()
	if len(ops) != 45 {
		t.Fatalf("core profile has %d operators, want 45", len(ops))
	}
	count := map[string]int{}
	names := map[string]bool{}
	for file, cs := range loadCases(t) {
		for _, c := range cs {
			key := file + "/" + c.Name
			if names[key] {
				t.Errorf("duplicate case name %s", key)
			}
			names[key] = true
			if (len(c.Result) == 0) == (c.Error == "") {
				t.Errorf("%s: exactly one of result and error", key)
			}
			if c.Op != "" {
				count[c.Op]++
			}
		}
	}
	known := map[string]bool{}
	for _, op := range ops {
		known[op] = true
		if count[op] < 3 {
			t.Errorf("operator %s has %d cases, want at least 3", op, count[op])
		}
	}
	var extra []string
	for op := range count {
		if !known[op] && !strings.HasPrefix(op, "x-") {
			extra = append(extra, op)
		}
	}
	sort.Strings(extra)
	if len(extra) > 0 {
		t.Errorf("cases name unknown operators %v", extra)
	}
}
