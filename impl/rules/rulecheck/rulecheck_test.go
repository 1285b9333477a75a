package rulecheck_test

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sdods/sdods/impl/rules/rulecheck"
)

var update = flag.Bool("update", false, "rewrite the fixture bundles")

const fixtures = "../../../conformance/fixtures"

// TestFixtureBundles compiles every fixture source twice: the bundles are byte-identical to each
// other and to the committed NAME.bundle.json.
func TestFixtureBundles(t *testing.T) {
	srcs, _ := filepath.Glob(filepath.Join(fixtures, "*", "*.yaml"))
	if len(srcs) != 5 {
		t.Fatalf("%d fixture sources, want 5", len(srcs))
	}
	for _, src := range srcs {
		rs, problems, warnings, err := rulecheck.Load(src, true)
		if err != nil || len(problems) > 0 || len(warnings) > 0 {
			t.Fatalf("%s: %v %v %v", src, err, problems, warnings)
		}
		a, _ := rs.Bundle()
		rs2, _, _, _ := rulecheck.Load(src, false)
		b, _ := rs2.Bundle()
		if !bytes.Equal(a, b) {
			t.Errorf("%s: two compiles differ", src)
		}
		dst := filepath.Join(filepath.Dir(src), rulecheck.BundleName(src))
		if *update {
			if err := rulecheck.WriteAtomic(dst, a); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(dst)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, want) {
			t.Errorf("%s: compiled bundle differs from %s (run with -update)", src, dst)
		}
	}
}

func run(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	m := &rulecheck.Main{Args: args, Stdout: &out, Stderr: &errb}
	return m.Run(context.Background()), out.String(), errb.String()
}

func TestCheck(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte(`ruleset:
  id: bad
  version: "1"
  defaultLocale: en
  types: {Email: {}}
  entities:
    customer:
      fieldTypes: {email: Emial, phone: Email}
  rules:
    - id: r
      code: C
      scope: galaxy
      when: {op: "==", args: [{var: data.flag}, yes]}
      message: m
  locales:
    en: {m: "{x}"}
`), 0o644)
	code, out, _ := run("check", bad)
	if code != 1 {
		t.Errorf("exit %d", code)
	}
	for _, want := range []string{
		"bad.yaml:8:20: TYPE_UNKNOWN at /ruleset/entities/customer/fieldTypes/email",
		"bad.yaml:12:7: SCOPE_INVALID at /ruleset/rules/0/scope",
		"bad.yaml:13:49: YAML_NOT_PORTABLE at /ruleset/rules/0/when/args/1",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
	code, out, _ = run("check", filepath.Join(fixtures, "signup", "signup.yaml"))
	if code != 0 || out != "" {
		t.Errorf("fixture: exit %d\n%s", code, out)
	}
	if code, _, _ := run("frobnicate"); code != 2 {
		t.Errorf("unknown command: exit %d", code)
	}
}

func TestCompile(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(fixtures, "loan", "loan.yaml")
	code, out, errs := run("compile", "-o", dir, src)
	if code != 0 {
		t.Fatalf("exit %d: %s %s", code, out, errs)
	}
	got, err := os.ReadFile(filepath.Join(dir, "loan.bundle.json"))
	if err != nil {
		t.Fatal(err)
	}
	want, _ := os.ReadFile(filepath.Join(fixtures, "loan", "loan.bundle.json"))
	if !bytes.Equal(got, want) {
		t.Error("compiled bundle differs from the fixture")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("temporary files left behind: %v", entries)
	}
	bad := filepath.Join(dir, "x.json")
	os.WriteFile(bad, []byte(`{"ruleset": {"id": "x"}}`), 0o644)
	if code, out, _ := run("compile", bad); code != 1 || !strings.Contains(out, "x.json:1:2: RULESET_INVALID at /ruleset: the ruleset lacks the required member \"version\"") {
		t.Errorf("exit %d\n%s", code, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "x.bundle.json")); err == nil {
		t.Error("a bundle was written for a broken ruleset")
	}
}

// TestYAMLPortability checks the one behaviour of every command on a YAML source whose scalars
// YAML 1.1 reads differently (spec/v1/ruleset.md §7): the source is read by YAML 1.2 and
// compiles, with warnings on standard error; check reports the findings as problems; --strict
// refuses the source.
func TestYAMLPortability(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "p.yaml")
	os.WriteFile(src, []byte(`ruleset:
  id: p
  version: "1"
  defaultLocale: en
  rules:
    - id: r
      code: C
      scope: project
      target: {page: p}
      when: {op: "==", args: [{var: data.answer}, no]}
      message: m
  locales:
    en: {m: "M"}
`), 0o644)
	finding := "p.yaml:10:51: YAML_NOT_PORTABLE at /ruleset/rules/0/when/args/1"
	code, out, errs := run("check", src)
	if code != 1 || !strings.Contains(out, finding) {
		t.Errorf("check: exit %d\n%s%s", code, out, errs)
	}
	code, out, errs = run("compile", "-o", dir, src)
	if code != 0 || !strings.Contains(errs, "warning: "+src+":10:51: YAML_NOT_PORTABLE") || !strings.Contains(out, "p.bundle.json") {
		t.Errorf("compile: exit %d\n%s%s", code, out, errs)
	}
	b, err := os.ReadFile(filepath.Join(dir, "p.bundle.json"))
	if err != nil || !bytes.Contains(b, []byte(`"no"`)) {
		t.Errorf("the bundle does not compare with the string \"no\" (YAML 1.2): %v", err)
	}
	os.Remove(filepath.Join(dir, "p.bundle.json"))
	code, out, _ = run("compile", "--strict", "-o", dir, src)
	if code != 1 || !strings.Contains(out, finding) {
		t.Errorf("compile --strict: exit %d\n%s", code, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "p.bundle.json")); err == nil {
		t.Error("compile --strict wrote a bundle")
	}
}
