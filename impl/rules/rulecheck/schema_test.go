package rulecheck_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/sdods/sdods/impl/rules/rulecheck"
	"github.com/sdods/sdods/impl/rules/yamlrules"
	"github.com/sdods/sdods/impl/server/steplib"
)

func readJSON(t *testing.T, path string) any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return v
}

// TestFixturesMatchSchemas validates every fixture source against spec/v1/ruleset.schema.json,
// its bundle against bundle.schema.json and each manifest against manifest.schema.json.
func TestFixturesMatchSchemas(t *testing.T) {
	spec := "../../../spec/v1"
	rulesetSchema := readJSON(t, filepath.Join(spec, "ruleset.schema.json"))
	bundleSchema := readJSON(t, filepath.Join(spec, "bundle.schema.json"))
	manifestSchema := readJSON(t, filepath.Join(spec, "manifest.schema.json"))
	srcs, _ := filepath.Glob(filepath.Join(fixtures, "*", "*.yaml"))
	for _, src := range srcs {
		b, _ := os.ReadFile(src)
		doc, problems := yamlrules.ReadYAML(b)
		if problems != nil {
			t.Fatal(problems)
		}
		var v any
		if err := json.Unmarshal(doc.JSON, &v); err != nil {
			t.Fatal(err)
		}
		check(t, src, rulesetSchema, v)
		bundle := readJSON(t, filepath.Join(filepath.Dir(src), rulecheck.BundleName(src)))
		check(t, src+" bundle", bundleSchema, bundle)
		for _, ch := range []string{"server", "client"} {
			check(t, src+" "+ch+" manifest", manifestSchema, bundle.(map[string]any)[ch])
		}
	}
	// The schema refuses what the engine refuses structurally.
	check := func(v string) int {
		var inst any
		_ = json.Unmarshal([]byte(v), &inst)
		vs, err := steplib.ValidateJSONSchema(rulesetSchema, inst)
		if err != nil {
			t.Fatal(err)
		}
		return len(vs)
	}
	for _, bad := range []string{
		`{"ruleset":{"id":"x","version":"1"}}`,
		`{"ruleset":{"id":"x","version":"1","defaultLocale":"en","rules":[{"id":"r","code":"RULE_FAILED","when":true,"message":"m"}]}}`,
		`{"ruleset":{"id":"x","version":"1","defaultLocale":"en","extra":1}}`,
		`{"ruleset":{"id":"x","version":"1","defaultLocale":"en","rules":[{"id":"r","code":"C","when":true,"message":"m","scope":"galaxy"}]}}`,
	} {
		if check(bad) == 0 {
			t.Errorf("schema accepts %s", bad)
		}
	}
}

func check(t *testing.T, what string, schema, v any) {
	t.Helper()
	vs, err := steplib.ValidateJSONSchema(schema, v)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	for _, x := range vs {
		t.Errorf("%s: %s", what, x)
	}
}
