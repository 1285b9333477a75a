package suitecmd

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/sdods/sdods/engine"
)

// versionPlace is one place that declares the release line: a file and a pattern whose first
// group is the version written there. Optional places are checked when the file exists (the
// runtimes of other languages declare it in their package manifests).
type versionPlace struct {
	file     string
	pattern  *regexp.Regexp
	pep440   bool // written in Python's form, 1.0.0a2
	optional bool
	all      bool // every match must agree, not only the first
}

var versionPlaces = []versionPlace{
	{file: "engine/expression.go", pattern: regexp.MustCompile(`const Version = "([^"]+)"`)},
	{file: "spec/v1/README.md", pattern: regexp.MustCompile(`Engine release line:\s*\*\*([^*]+)\*\*`)},
	{file: "spec/v1/README.md", pattern: regexp.MustCompile("release it implements \\(`([^`]+)`")},
	{file: "deploy/kubernetes/ruleserver.yaml", pattern: regexp.MustCompile(`image: sdods/ruleserver:(\S+)`), optional: true},
	{file: "conformance/protocol/protocol.json", pattern: regexp.MustCompile(`"result": \{"version": "([^"]+)"`), all: true},
	{file: "runtimes/ts/package.json", pattern: regexp.MustCompile(`"version":\s*"([^"]+)"`), optional: true},
	{file: "runtimes/ts/packages/rules/package.json", pattern: regexp.MustCompile(`"version":\s*"([^"]+)"`), optional: true},
	{file: "runtimes/ts/packages/rules/src/version.ts", pattern: regexp.MustCompile(`VERSION = "([^"]+)"`), optional: true},
	{file: "runtimes/ts/packages/rule-server/package.json", pattern: regexp.MustCompile(`"version":\s*"([^"]+)"`), optional: true},
	{file: "runtimes/ts/packages/rule-server/package.json", pattern: regexp.MustCompile(`"@sdods/rules":\s*"([^"]+)"`), optional: true},
	// the project's own <version>, the first after </modelVersion> (parent or dependency versions come later)
	{file: "runtimes/java/pom.xml", pattern: regexp.MustCompile(`(?s)</modelVersion>.*?<version>([^<]+)</version>`), optional: true},
	{file: "runtimes/java/src/main/java/dev/sdods/rules/RuleSet.java", pattern: regexp.MustCompile(`String VERSION = "([^"]+)"`), optional: true},
	{file: "runtimes/python/pyproject.toml", pattern: regexp.MustCompile(`(?m)^version\s*=\s*"([^"]+)"`), pep440: true, optional: true},
	{file: "runtimes/python/sdods_rules/__init__.py", pattern: regexp.MustCompile(`(?m)^__version__\s*=\s*"([^"]+)"`), pep440: true, optional: true},
}

// pep440 writes a SemVer pre-release in Python's form: 1.0.0-alpha.2 → 1.0.0a2.
func pep440(v string) string {
	r := strings.NewReplacer("-alpha.", "a", "-beta.", "b", "-rc.", "rc")
	return r.Replace(v)
}

// CheckVersions returns one line per place whose declared version differs from engine.Version
// (or that lost its declaration).
func CheckVersions(root string) ([]string, error) {
	var out []string
	for _, p := range versionPlaces {
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(p.file)))
		if errors.Is(err, os.ErrNotExist) && p.optional {
			continue
		}
		if err != nil {
			return nil, err
		}
		want := engine.Version
		if p.pep440 {
			want = pep440(want)
		}
		ms := p.pattern.FindAllStringSubmatch(string(b), -1)
		if len(ms) == 0 {
			out = append(out, fmt.Sprintf("version %s: no declaration matching %s", p.file, p.pattern))
			continue
		}
		if !p.all {
			ms = ms[:1]
		}
		for _, m := range ms {
			if m[1] != want {
				out = append(out, fmt.Sprintf("version %s declares %s, the engine %s", p.file, m[1], want))
			}
		}
	}
	return out, nil
}
