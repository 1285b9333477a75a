package app_test

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/sdods/sdods/impl/server/app/apptest"
)

// docExample is a fenced block of a document under docs/.
type docExample struct {
	file string
	line int
	lang string
	text string
}

// docExamples extracts the fenced code blocks of docs/*.md and README.md.
func docExamples(t *testing.T) []docExample {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join("..", "..", "..", "docs", "*.md"))
	files = append(files, filepath.Join("..", "..", "..", "README.md"))
	var out []docExample
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var cur *docExample
		generated := false
		for i, l := range strings.Split(string(data), "\n") {
			trimmed := strings.TrimSpace(l)
			// The step catalog of steps.md is generated from impl/server/steplib, whose tests own it.
			if strings.HasPrefix(trimmed, "<!-- BEGIN GENERATED CATALOG") {
				generated = true
			} else if strings.HasPrefix(trimmed, "<!-- END GENERATED CATALOG") {
				generated = false
			}
			if generated {
				continue
			}
			switch {
			case cur == nil && strings.HasPrefix(trimmed, "```"):
				cur = &docExample{file: filepath.Base(f), line: i + 1, lang: strings.TrimPrefix(trimmed, "```")}
			case cur != nil && trimmed == "```":
				out = append(out, *cur)
				cur = nil
			case cur != nil:
				cur.text += l + "\n"
			}
		}
	}
	return out
}

// asFeature makes a Gherkin example a whole feature: steps alone get a scenario, scenarios a feature.
func asFeature(text string) string {
	if regexp.MustCompile(`(?m)^\s*Feature:`).MatchString(text) {
		return text
	}
	if !regexp.MustCompile(`(?m)^\s*(@\S+\s*)*(Scenario|Scenario Outline|Scenario Template|Example|Background|Rule):`).MatchString(text) {
		text = "Scenario: Example\n" + text
	}
	return "Feature: Example from the docs\n\n" + text
}

// TestDocsExamplesWork is issue 18 item 14: every Gherkin example in docs/ validates on the real
// server with the default lint rules (no error diagnostics), and every process name the docs use
// is one the server accepts — so the docs cannot drift from what the server takes again.
func TestDocsExamplesWork(t *testing.T) {
	s := apptest.Start(t)
	admin := s.Setup(t)
	project(t, admin, "http://127.0.0.1:9", nil)
	token := apptest.Token(t, admin, "features:read", "projects:write", "projects:read")
	auth := []string{"Authorization", "Bearer " + token}
	n := 0
	for _, ex := range docExamples(t) {
		if ex.lang != "gherkin" {
			continue
		}
		n++
		body, _ := json.Marshal(map[string]string{"path": "docs/example.feature", "content": asFeature(ex.text)})
		status, got, _ := s.Do(t, "POST", "/api/projects/shop/features/validate", "application/json", body, auth...)
		var res struct {
			Diagnostics []struct {
				Line     int
				Severity string
				Rule     string
				Message  string
			}
		}
		if status != http.StatusOK || json.Unmarshal(got, &res) != nil {
			t.Errorf("%s:%d: validate %d %s", ex.file, ex.line, status, got)
			continue
		}
		for _, d := range res.Diagnostics {
			if d.Severity == "error" {
				t.Errorf("%s:%d: the example is refused: %s: %s\n%s", ex.file, ex.line, d.Rule, d.Message, ex.text)
			}
		}
	}
	if n == 0 {
		t.Fatal("no Gherkin example found: is the extraction broken?")
	}
	// Process names in the prose ("I run the process \"…\"") are names a process may have.
	procRef := regexp.MustCompile("I run the process \"([^\"]+)\"")
	files, _ := filepath.Glob(filepath.Join("..", "..", "..", "docs", "*.md"))
	seen := map[string]bool{}
	for _, f := range files {
		data, _ := os.ReadFile(f)
		text := string(data) // the generated step catalog included: its examples name processes too
		for _, m := range procRef.FindAllStringSubmatch(text, -1) {
			if seen[m[1]] || strings.Contains(m[1], "<") { // "<name>" is a placeholder
				continue
			}
			seen[m[1]] = true
			body, _ := json.Marshal(map[string]string{"name": m[1], "content": "Given I wait 1 second\n"})
			if status, got, _ := s.Do(t, "POST", "/api/projects/shop/processes", "application/json", body, auth...); status != http.StatusCreated {
				t.Errorf("%s: the process name %q is refused: %d %s", filepath.Base(f), m[1], status, got)
			}
		}
	}
}
