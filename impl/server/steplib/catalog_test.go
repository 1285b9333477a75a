package steplib_test

import (
	"sort"
	"strings"
	"testing"

	"github.com/sdods/sdods/impl/server/steplib"
)

var (
	categories = map[string]bool{"http": true, "browser": true, "data": true, "process": true}
	keywords   = map[string]bool{"Given": true, "When": true, "Then": true, "*": true}
	paramTypes = map[string]bool{"string": true, "int": true, "float": true, "selector": true, "url": true, "json": true, "docstring": true, "datatable": true}
)

// TestCatalogWellFormed checks every declaration: unique IDs, known categories, keywords and
// parameter types, compiling patterns, one Param per pattern parameter, and examples that match
// their own definition and no other.
func TestCatalogWellFormed(t *testing.T) {
	defs := steplib.Definitions()
	if len(defs) == 0 {
		t.Fatal("no definitions")
	}
	if !sort.SliceIsSorted(defs, func(i, j int) bool { return defs[i].ID < defs[j].ID }) {
		t.Fatal("Definitions() is not sorted by ID")
	}
	seen := map[string]bool{}
	for _, d := range defs {
		t.Run(d.ID, func(t *testing.T) {
			if seen[d.ID] {
				t.Fatalf("duplicate ID")
			}
			seen[d.ID] = true
			if !strings.HasPrefix(d.ID, d.Category+".") {
				t.Errorf("ID %q does not start with its category %q", d.ID, d.Category)
			}
			if !categories[d.Category] || !keywords[d.Keyword] {
				t.Errorf("category %q or keyword %q unknown", d.Category, d.Keyword)
			}
			if d.Description == "" || len(d.Examples) == 0 {
				t.Errorf("needs a description and an example")
			}
			e, err := steplib.CompileExpression(d.Pattern)
			if err != nil {
				t.Fatal(err)
			}
			inPattern := 0
			for _, p := range d.Parameters {
				if !paramTypes[p.Type] {
					t.Errorf("parameter %q has unknown type %q", p.Name, p.Type)
				}
				if p.Name == "" || p.Description == "" {
					t.Errorf("parameter %+v needs a name and a description", p)
				}
				if p.Type != "docstring" && p.Type != "datatable" {
					inPattern++
				}
			}
			if n := len(e.ParameterTypes()); n != inPattern {
				t.Errorf("pattern has %d parameters, Parameters declares %d", n, inPattern)
			}
			for _, ex := range d.Examples {
				line, _, _ := strings.Cut(ex, "\n")
				kw, text, ok := strings.Cut(line, " ")
				if !ok || !(keywords[kw] || kw == "And" || kw == "But") {
					t.Errorf("example %q does not start with a keyword", ex)
					continue
				}
				got := steplib.Match(text)
				if len(got) != 1 || got[0].ID != d.ID {
					ids := []string{}
					for _, g := range got {
						ids = append(ids, g.ID)
					}
					t.Errorf("example %q matches %v, want only %s", text, ids, d.ID)
				}
			}
		})
	}
}

func TestMatch(t *testing.T) {
	tests := []struct {
		text string
		want []string
	}{
		{`I send a GET request to "/users"`, []string{"http.request"}},
		{`  I send a GET request to "/users"  `, []string{"http.request"}},
		{`I send a GET request to /users`, nil},
		{`the response status is 200`, []string{"http.status"}},
		{`I do something nobody defined`, nil},
		{`I should see "a" in "#b"`, []string{"browser.see_text_in"}},
		{`I should see "a"`, []string{"browser.see_text"}},
		{`I wait for ".x"`, []string{"browser.wait_for"}},
		{`I wait 1 second`, []string{"process.wait"}},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			var got []string
			for _, d := range steplib.Match(tt.text) {
				got = append(got, d.ID)
			}
			if strings.Join(got, ",") != strings.Join(tt.want, ",") {
				t.Fatalf("Match(%q) = %v, want %v", tt.text, got, tt.want)
			}
		})
	}
}

func TestDefinitionsReturnsCopies(t *testing.T) {
	a := steplib.Definitions()
	a[0].ID = "changed"
	if len(a[0].Parameters) > 0 {
		a[0].Parameters[0].Name = "changed"
	}
	b := steplib.Definitions()
	if b[0].ID == "changed" || (len(b[0].Parameters) > 0 && b[0].Parameters[0].Name == "changed") {
		t.Fatal("Definitions() shares its storage with callers")
	}
}
