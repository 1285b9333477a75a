package app

import (
	"github.com/sdods/sdods/impl/server/features"
	"github.com/sdods/sdods/impl/server/steplib"
)

// stepLibrary adapts the built-in step library to what features (lint, the steps catalog) needs.
type stepLibrary struct{}

// Match returns the ids of the built-in definitions text matches.
func (stepLibrary) Match(text string) []string {
	var ids []string
	for _, d := range steplib.Match(text) {
		ids = append(ids, d.ID)
	}
	return ids
}

// Definitions returns the built-in definitions in the catalog's form.
func (stepLibrary) Definitions() []features.StepDef {
	defs := steplib.Definitions()
	out := make([]features.StepDef, 0, len(defs))
	for _, d := range defs {
		kw := d.Keyword
		if kw == "*" {
			kw = "Any"
		}
		sd := features.StepDef{ID: d.ID, Source: "builtin", Category: d.Category, Keyword: kw, Pattern: d.Pattern,
			Description: d.Description, Examples: d.Examples}
		for _, p := range d.Parameters {
			sd.Parameters = append(sd.Parameters, features.StepParam{Name: p.Name, Type: p.Type, Description: p.Description})
		}
		out = append(out, sd)
	}
	return out
}
