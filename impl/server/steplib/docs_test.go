package steplib_test

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/sdods/sdods/impl/server/steplib"
)

var update = flag.Bool("update", false, "rewrite the generated catalog in docs/steps.md")

const (
	docPath       = "../../../docs/steps.md"
	beginMark     = "<!-- BEGIN GENERATED CATALOG: go test ./impl/server/steplib -run TestStepsDoc -update -->"
	endMark       = "<!-- END GENERATED CATALOG -->"
	categoryOrder = "http browser data process"
)

// TestStepsDoc keeps the catalog section of docs/steps.md equal to Definitions(); -update
// rewrites it and leaves the hand-written rest of the page alone.
func TestStepsDoc(t *testing.T) {
	raw, err := os.ReadFile(docPath)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	b, e := strings.Index(doc, beginMark), strings.Index(doc, endMark)
	if b < 0 || e < b {
		t.Fatalf("%s lacks the markers %q … %q", docPath, beginMark, endMark)
	}
	want := doc[:b+len(beginMark)] + "\n" + catalogMarkdown() + doc[e:]
	if want == doc {
		return
	}
	if *update {
		if err := os.WriteFile(docPath, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("%s is out of date: run go test ./impl/server/steplib -run TestStepsDoc -update", docPath)
}

var categoryTitles = map[string]string{"http": "HTTP", "browser": "Browser", "data": "Data and accounts", "process": "Flow"}

func catalogMarkdown() string {
	defs := steplib.Definitions()
	var b strings.Builder
	b.WriteString("## Catalog\n\n")
	fmt.Fprintf(&b, "%d built-in steps.\n\n", len(defs))
	b.WriteString("| ID | Step |\n|---|---|\n")
	for _, cat := range strings.Fields(categoryOrder) {
		for _, d := range defs {
			if d.Category == cat {
				fmt.Fprintf(&b, "| [`%s`](#%s) | %s `%s` |\n", d.ID, anchor(d.ID), d.Keyword, cell(d.Pattern))
			}
		}
	}
	for _, cat := range strings.Fields(categoryOrder) {
		fmt.Fprintf(&b, "\n### %s\n", categoryTitles[cat])
		for _, d := range defs {
			if d.Category != cat {
				continue
			}
			fmt.Fprintf(&b, "\n#### %s\n\n%s `%s`\n\n%s\n", d.ID, d.Keyword, d.Pattern, d.Description)
			if len(d.Parameters) > 0 {
				b.WriteString("\n| Parameter | Type | Description |\n|---|---|---|\n")
				for _, p := range d.Parameters {
					fmt.Fprintf(&b, "| %s | %s | %s |\n", p.Name, p.Type, cell(p.Description))
				}
			}
			b.WriteString("\n```gherkin\n")
			for _, ex := range d.Examples {
				b.WriteString(ex + "\n")
			}
			b.WriteString("```\n")
		}
	}
	return b.String()
}

func anchor(id string) string { return strings.ReplaceAll(strings.ToLower(id), ".", "") }

func cell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
