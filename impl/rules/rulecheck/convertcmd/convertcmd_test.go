package convertcmd_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/sdods/sdods/engine"
	"github.com/sdods/sdods/impl/rules/rulecheck"
	"github.com/sdods/sdods/impl/rules/rulecheck/convertcmd"
)

// runIn runs rulecheck as cmd/rulecheck wires it, with stdin as standard input.
func runIn(stdin string, args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	conv := &convertcmd.Main{Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb}
	m := &rulecheck.Main{Args: args, Stdout: &out, Stderr: &errb, Convert: conv.Run}
	return m.Run(context.Background()), out.String(), errb.String()
}

func run(args ...string) (int, string, string) { return runIn("", args...) }

func evalExpr(t *testing.T, expr json.RawMessage, functions json.RawMessage, data string) string {
	t.Helper()
	var opts []engine.Option
	if functions != nil {
		opts = append(opts, engine.WithFunctionsJSON("/functions", functions))
	}
	e, err := engine.CompileExpression(expr, opts...)
	if err != nil {
		t.Fatalf("compile %s: %v", expr, err)
	}
	env, err := engine.ParseEnv([]byte(`{"data":` + data + `}`))
	if err != nil {
		t.Fatal(err)
	}
	v, err := e.Evaluate(env)
	if err != nil {
		t.Fatalf("evaluate: %v", err)
	}
	b, _ := engine.MarshalValue(v)
	return string(b)
}

// TestJSONLogicImportCommand imports from a YAML file, a JSON file and standard input: the
// output is an sdods expression the engine evaluates; a refusal exits 1 with every diagnostic
// at file:line:column and pointer.
func TestJSONLogicImportCommand(t *testing.T) {
	dir := t.TempDir()
	ok := filepath.Join(dir, "adult.yaml")
	os.WriteFile(ok, []byte("and:\n  - \">=\": [{var: age}, 18]\n  - \"!!\": {var: name}\n"), 0o644)
	code, out, errOut := run("jsonlogic", "import", "--type", "age=number", ok)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if got := evalExpr(t, json.RawMessage(out), nil, `{"age":20,"name":"0"}`); got != "true" {
		t.Errorf("imported %s evaluates to %s", out, got)
	}
	if got := evalExpr(t, json.RawMessage(out), nil, `{"age":20,"name":[]}`); got != "false" {
		t.Errorf("imported %s with name [] evaluates to %s ([] is falsy in JSON Logic)", out, got)
	}

	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte("{\"and\": [\n  {\"==\": [{\"var\": \"a\"}, 1]},\n  {\"reduce\": [[1], {\"var\": \"current\"}, 0]}\n]}\n"), 0o644)
	code, out, errOut = run("jsonlogic", "import", bad)
	if code != 1 || out != "" {
		t.Fatalf("exit %d, stdout %q", code, out)
	}
	for _, want := range []string{
		bad + ":2:4: NOT_FAITHFUL at /and/0/==: == between values of different types uses JavaScript's loose equality",
		bad + ":3:4: OPERATION_UNKNOWN at /and/1/reduce: sdods has no fold",
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}

	code, out, _ = run("jsonlogic", "import", "--json", bad)
	var rep struct {
		Expression  any `json:"expression"`
		Diagnostics []struct {
			Code, Pointer string
			Line, Column  int
		} `json:"diagnostics"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != 1 {
		t.Fatalf("exit %d, --json output %q: %v", code, out, err)
	}
	if rep.Expression != nil || len(rep.Diagnostics) != 2 || rep.Diagnostics[1].Line != 3 || rep.Diagnostics[1].Pointer != "/and/1/reduce" {
		t.Errorf("--json report %+v", rep)
	}

	// Standard input, --js-compat: the functions come with the expression, and -o writes a file.
	dst := filepath.Join(dir, "out.json")
	code, _, errOut = runIn(`{"or": [{"var": "x"}, {"+": [{"var": "n"}, 1]}]}`, "jsonlogic", "import", "--js-compat", "--type", "n=number", "-o", dst)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(errOut, "JS_COMPAT_COST") {
		t.Errorf("the cost of + is not reported: %s", errOut)
	}
	var withFns struct {
		Expression json.RawMessage `json:"expression"`
		Functions  json.RawMessage `json:"functions"`
	}
	b, _ := os.ReadFile(dst)
	if err := json.Unmarshal(b, &withFns); err != nil || withFns.Functions == nil {
		t.Fatalf("-o output %s: %v", b, err)
	}
	if got := evalExpr(t, withFns.Expression, withFns.Functions, `{"x":0,"n":41}`); got != "42" {
		t.Errorf("js-compat import evaluates to %s", got)
	}
}

// TestJSONLogicExportCommand exports an sdods expression with functions and annotations.
func TestJSONLogicExportCommand(t *testing.T) {
	dir := t.TempDir()
	fns := filepath.Join(dir, "fns.json")
	os.WriteFile(fns, []byte(`{"adult": {"params": ["a"], "body": {"op": ">=", "args": [{"var": "a"}, 18]}}}`), 0o644)
	code, out, errOut := runIn(`{"op": "and", "args": [{"fn": "adult", "args": [{"var": "data.age"}]}, {"op": "==", "args": [{"var": "data.country"}, "CH"]}]}`,
		"jsonlogic", "export", "--functions", fns, "--type", "data.age=number")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var got any
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	var want any
	json.Unmarshal([]byte(`{"and":[{">=":[{"var":"age"},18]},{"===":[{"var":"country"},"CH"]}]}`), &want)
	if !reflect.DeepEqual(got, want) || !strings.Contains(out, `">="`) {
		t.Errorf("export %s", out)
	}
	code, _, errOut = runIn(`{"op": "+", "args": [0.1, 0.2]}`, "jsonlogic", "export")
	if code != 1 || !strings.Contains(errOut, "<stdin>:1:1: NOT_FAITHFUL at /: + computes in decimal") {
		t.Errorf("exit %d: %s", code, errOut)
	}
	code, _, errOut = runIn(`{"cat": ["ok \\ud800", "\ud800"]}`, "jsonlogic", "import")
	if code != 1 || !strings.Contains(errOut, "<stdin>:1:25: INPUT_INVALID: a lone surrogate") || strings.Count(errOut, "\n") != 1 {
		t.Errorf("lone surrogate: exit %d: %s", code, errOut)
	}
	if code, _, _ := run("jsonlogic", "convert"); code != 2 {
		t.Errorf("unknown direction: exit %d", code)
	}
}

// TestDeriveCommand derives a schema of the server's API as YAML and JSON; both load as
// rulesets without problems; --strict fails on the lossiness report; re-deriving gives the same
// codes, and a schema that gains a member gains only that member's codes.
func TestDeriveCommand(t *testing.T) {
	dir := t.TempDir()
	yml, jsn, skel := filepath.Join(dir, "project.yaml"), filepath.Join(dir, "project.json"), filepath.Join(dir, "catalog.json")
	code, _, errOut := run("derive", "--openapi", "../../../../openapi/server.yaml", "--schema", "ProjectCreate", "-o", yml, "--catalog-skeleton", skel)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(errOut, "lossy at #/components/schemas/ProjectCreate/additionalProperties") {
		t.Errorf("no lossiness report: %s", errOut)
	}
	if code, _, errOut := run("derive", "--openapi", "../../../../openapi/server.yaml", "--schema", "ProjectCreate", "--format", "json", "-o", jsn); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, f := range []string{yml, jsn} {
		rs, problems, _, err := rulecheck.Load(f, true)
		if err != nil || len(problems) > 0 {
			t.Fatalf("%s: %v %v", f, err, problems)
		}
		res, err := rs.Evaluate(&engine.Request{Data: map[string]any{"name": "", "slug": "Bad Slug", "workspaceSlug": "ws"}})
		if err != nil {
			t.Fatal(err)
		}
		var codes []string
		for _, fd := range res.Findings {
			codes = append(codes, fd.Code)
		}
		sort.Strings(codes)
		if strings.Join(codes, " ") != "PROJECTCREATE_NAME_MINLENGTH PROJECTCREATE_SLUG_PATTERN" {
			t.Errorf("%s: findings %v", f, codes)
		}
	}
	var catalog map[string]string
	b, _ := os.ReadFile(skel)
	if err := json.Unmarshal(b, &catalog); err != nil || catalog["PROJECTCREATE_NAME_MAXLENGTH"] != "name must be at most 100 characters" {
		t.Errorf("catalog skeleton %s: %v", b, err)
	}
	if code, _, errOut := run("derive", "--openapi", "../../../../openapi/server.yaml", "--schema", "ProjectCreate", "--strict"); code != 1 || !strings.Contains(errOut, "(--strict)") {
		t.Errorf("--strict with a lossy schema: exit %d: %s", code, errOut)
	}
	if code, _, _ := run("derive", "--openapi", "../../../../openapi/server.yaml", "--schema", "NoSuchSchema"); code != 1 {
		t.Errorf("unknown schema: exit %d", code)
	}

	// Stable codes.
	src, err := os.ReadFile("../derive/testdata/features-3.0.yaml")
	if err != nil {
		t.Fatal(err)
	}
	changed := strings.Replace(string(src), "        gift: {type: boolean}\n", "        gift: {type: boolean}\n        giftNote: {type: string, maxLength: 50}\n", 1)
	if changed == string(src) {
		t.Fatal("the fixture changed shape")
	}
	a, b2 := filepath.Join(dir, "a.yaml"), filepath.Join(dir, "b.yaml")
	os.WriteFile(a, src, 0o644)
	os.WriteFile(b2, []byte(changed), 0o644)
	codesOf := func(file string) map[string]bool {
		_, out, errOut := run("derive", "--openapi", file, "--schema", "Order", "--json")
		var res struct{ Rules []struct{ Code string } }
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatalf("%v: %s", err, errOut)
		}
		set := map[string]bool{}
		for _, r := range res.Rules {
			set[r.Code] = true
		}
		return set
	}
	before, again, after := codesOf(a), codesOf(a), codesOf(b2)
	if len(before) != len(again) {
		t.Errorf("re-deriving changed the codes")
	}
	for c := range before {
		if !again[c] || !after[c] {
			t.Errorf("code %s lost on re-derive or after adding a member", c)
		}
	}
	var added []string
	for c := range after {
		if !before[c] {
			added = append(added, c)
		}
	}
	sort.Strings(added)
	if strings.Join(added, " ") != "ORDER_GIFTNOTE_MAXLENGTH ORDER_GIFTNOTE_TYPE" {
		t.Errorf("adding giftNote added the codes %v", added)
	}
}
