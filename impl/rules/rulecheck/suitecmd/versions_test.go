package suitecmd_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sdods/sdods/impl/rules/rulecheck/suitecmd"
)

// TestCheckVersionsCoversPython copies the places that declare the release line into a scratch
// tree and makes each Python declaration disagree in turn: the check must name that file.
func TestCheckVersionsCoversPython(t *testing.T) {
	root := filepath.Join("..", "..", "..", "..")
	files := []string{
		"engine/expression.go",
		"spec/v1/README.md",
		"conformance/protocol/protocol.json",
		"runtimes/python/pyproject.toml",
		"runtimes/python/sdods_rules/__init__.py",
	}
	for _, tc := range []struct {
		file, from, to string
	}{
		{"", "", ""},
		{"runtimes/python/pyproject.toml", `version = "1.0.0a2"`, `version = "1.0.0a1"`},
		{"runtimes/python/sdods_rules/__init__.py", `__version__ = "1.0.0a2"`, `__version__ = "1.0.0b2"`},
		{"runtimes/python/sdods_rules/__init__.py", `__version__ = "1.0.0a2"`, `# no declaration`},
	} {
		dir := t.TempDir()
		for _, f := range files {
			b, err := os.ReadFile(filepath.Join(root, f))
			if err != nil {
				t.Fatal(err)
			}
			if f == tc.file {
				if !strings.Contains(string(b), tc.from) {
					t.Fatalf("%s does not contain %q", f, tc.from)
				}
				b = []byte(strings.Replace(string(b), tc.from, tc.to, 1))
			}
			if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, f)), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		got, err := suitecmd.CheckVersions(dir)
		if err != nil {
			t.Fatal(err)
		}
		if tc.file == "" {
			if len(got) != 0 {
				t.Errorf("all agree, yet: %v", got)
			}
			continue
		}
		if len(got) != 1 || !strings.Contains(got[0], tc.file) {
			t.Errorf("%s changed to %q: got %v", tc.file, tc.to, got)
		}
	}
}
