package rulescmd_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sdods/sdods/engine"
	"github.com/sdods/sdods/impl/rules/rulescmd"
)

const fixtures = "../../../conformance/fixtures"

func run(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	m := &rulescmd.Main{Args: args, Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb}
	code := m.Run(context.Background())
	return code, out.String(), errb.String()
}

func TestVersion(t *testing.T) {
	code, out, _ := run(t, "", "version")
	if code != 0 || !strings.Contains(out, engine.Version) {
		t.Fatalf("version: %d %q", code, out)
	}
}

func TestManifestAndEvaluate(t *testing.T) {
	bundle := filepath.Join(fixtures, "signup", "signup.bundle.json")
	source := filepath.Join(fixtures, "signup", "signup.yaml")
	_, fromBundle, _ := run(t, "", "manifest", "-channel", "client", bundle)
	code, fromSource, stderr := run(t, "", "manifest", source)
	if code != 0 || fromBundle != fromSource || !strings.Contains(fromSource, `"channel": "client"`) {
		t.Fatalf("manifest: %d %s", code, stderr)
	}
	manifest := filepath.Join(t.TempDir(), "client.json")
	if err := os.WriteFile(manifest, []byte(fromSource), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, file := range []string{bundle, source, manifest} {
		code, out, stderr := run(t, `{"data": {"account": {"email": ""}}}`, "evaluate", file, "-")
		if code != 0 {
			t.Fatalf("evaluate %s: %d %s", file, code, stderr)
		}
		var res struct {
			Findings []struct{ Code string } `json:"findings"`
		}
		if err := json.Unmarshal([]byte(out), &res); err != nil || len(res.Findings) == 0 {
			t.Fatalf("evaluate %s: %v %s", file, err, out)
		}
	}
	if code, _, stderr := run(t, `{"data": []}`, "evaluate", bundle, "-"); code != 1 || !strings.Contains(stderr, "BAD_REQUEST") {
		t.Fatalf("bad request: %d %s", code, stderr)
	}
	if code, _, stderr := run(t, "", "manifest", "-channel", "server", manifest); code != 1 || !strings.Contains(stderr, "CHANNEL_UNAVAILABLE") {
		t.Fatalf("channel: %d %s", code, stderr)
	}
}

func TestCheckAndCompile(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "r.json")
	if err := os.WriteFile(src, []byte(`{"ruleset":{"id":"r","version":"1","defaultLocale":"en"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out, stderr := run(t, "", "check", src); code != 0 {
		t.Fatalf("check: %d %s %s", code, out, stderr)
	}
	if code, _, stderr := run(t, "", "compile", src); code != 0 {
		t.Fatalf("compile: %d %s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "r.bundle.json")); err != nil {
		t.Fatal(err)
	}
	if code, _, _ := run(t, "", "nope"); code != 2 {
		t.Fatalf("unknown command: exit %d", code)
	}
}

func TestEngine(t *testing.T) {
	code, out, _ := run(t, "{\"id\":1,\"cmd\":\"version\"}\n\n{\"id\":2,\"cmd\":\"expression\",\"expression\":{\"op\":\"x-luhn\",\"args\":[\"79927398713\"]},\"operators\":[\"x-luhn\"]}\n", "engine")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) != 2 || !strings.Contains(lines[1], `"value":true`) {
		t.Fatalf("engine: %d %q", code, out)
	}
}

// TestYAMLWarnings: manifest and evaluate read a YAML source with lint findings by YAML 1.2 and
// warn on standard error; --strict refuses it (spec/v1/ruleset.md §7).
func TestYAMLWarnings(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "p.yaml")
	if err := os.WriteFile(src, []byte(`ruleset:
  id: p
  version: "1"
  defaultLocale: en
  rules:
    - id: r
      code: OFF
      scope: project
      target: {page: p}
      when: {op: "==", args: [{var: data.answer}, no]}
      message: m
  locales:
    en: {m: "M"}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	req := filepath.Join(dir, "req.json")
	if err := os.WriteFile(req, []byte(`{"data":{"answer":"no"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := run(t, "", "evaluate", src, req)
	if code != 0 || !strings.Contains(out, `"code":"OFF"`) || !strings.Contains(stderr, "warning: "+src+":10:51: YAML_NOT_PORTABLE") {
		t.Errorf("evaluate: %d %s %s", code, out, stderr)
	}
	if code, out, stderr := run(t, "", "manifest", src); code != 0 || !strings.Contains(out, `"no"`) || !strings.Contains(stderr, "YAML_NOT_PORTABLE") {
		t.Errorf("manifest: %d %s %s", code, out, stderr)
	}
	for _, cmd := range [][]string{{"evaluate", "--strict", src, req}, {"manifest", "--strict", src}} {
		if code, out, stderr := run(t, "", cmd...); code != 1 || out != "" || !strings.Contains(stderr, "YAML_NOT_PORTABLE") {
			t.Errorf("%v: %d %s %s", cmd, code, out, stderr)
		}
	}
}
