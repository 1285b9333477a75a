// Package ruleset reads the ruleset document (spec/v1/ruleset.md) from a decoded JSON tree into a
// model, checks everything that is not an expression, and writes the model back as the resolved
// ruleset: every default filled in, the form the checksum covers and the manifests carry.
// Expressions stay JSON trees here; package rules parses them (package syntax) and compiles them
// (package machine).
package ruleset

import "github.com/sdods/sdods/engine/internal/jsonv"

// DocumentKey is the top-level member of a ruleset document.
const DocumentKey = "ruleset"

// Scope levels, broadest first. Levels from Page on are location levels.
const (
	Project   = "project"
	Module    = "module"
	Page      = "page"
	Screen    = "screen"
	Section   = "section"
	Component = "component"
)

// Levels lists the scope levels, broadest first.
var Levels = []string{Project, Module, Page, Screen, Section, Component}

// Channels a ruleset is compiled for.
const (
	Server = "server"
	Client = "client"
)

// Severities of findings.
var Severities = []string{"error", "warning", "info"}

// StateProps are the state properties a state rule effect may set.
var StateProps = []string{"hidden", "disabled", "required", "readOnly", "value"}

// Bases are the JSON kinds a semantic type may be based on.
var Bases = []string{"string", "number", "integer", "boolean", "date", "datetime", "object", "array"}

// Ruleset is one ruleset document, defaults resolved, in document order.
type Ruleset struct {
	ID, Version, DefaultLocale, Description string
	Types                                   []*Type
	Entities                                []*Entity
	Functions                               []*Function
	Operators                               []*Operator
	Rules                                   []*Rule
	StateRules                              []*StateRule
	Locales                                 []*Catalog
	Ptr                                     string // pointer of the ruleset object
}

// Type is a semantic data type.
type Type struct {
	Name, Base, Description, Ptr string
}

// Entity binds fields of one record (or of every element of a list when Many) to types.
type Entity struct {
	Name, Path, Description string
	Many                    bool
	Fields                  []*FieldType
	Ptr                     string
}

// FieldType binds Field (a path inside the entity) to Type.
type FieldType struct {
	Field, Type, Ptr string
}

// Function is a function definition.
type Function struct {
	Name   string
	Params []string
	// ParamAt: the index in the written params array of each of Params (non-strings are dropped)
	ParamAt []int
	Body    *jsonv.Node // nil when missing
	Ptr     string
	Raw     *jsonv.Node // the definition as written, for diagnostics of its members
	// Malformed: reported FUNCTION_INVALID while read (calls to it are not checked against it)
	Malformed bool
}

// Operator is a custom operator declaration.
type Operator struct {
	Name, Description, Ptr string
}

// Location names a place of the user interface; empty members name nothing.
type Location struct {
	Page, Screen, Section, Component string
}

// Get returns the member of the location level.
func (l Location) Get(level string) string {
	switch level {
	case Page:
		return l.Page
	case Screen:
		return l.Screen
	case Section:
		return l.Section
	case Component:
		return l.Component
	}
	return ""
}

// Target is what a rule is about: a location and either fields or a semantic type.
type Target struct {
	Location
	Fields []string
	Type   string
}

// Param is a named expression (a message parameter or a state effect).
type Param struct {
	Name string
	Expr *jsonv.Node
	Ptr  string
}

// Rule raises a finding when its condition is true.
type Rule struct {
	ID, Description, Scope, Severity, Code string
	Channels                               []string
	Target                                 Target
	When                                   *jsonv.Node
	Key, KeyPtr                            string
	Params                                 []Param // sorted by name
	Ptr                                    string
}

// StateRule sets state properties of fields when its condition is true, all or none.
type StateRule struct {
	ID, Description, Scope string
	Channels               []string
	Target                 Target
	When                   *jsonv.Node
	Effects                []*Effect
	Ptr                    string
}

// Effect sets properties of one field.
type Effect struct {
	Field string
	Props []Param // in StateProps order
	Ptr   string
}

// Catalog is the messages of one locale.
type Catalog struct {
	Tag      string
	Messages []*Message
	Ptr      string
}

// Message is one template of a catalog.
type Message struct {
	Key, Template, Ptr string
}

// HasChannel reports whether channels lists ch.
func HasChannel(channels []string, ch string) bool {
	for _, c := range channels {
		if c == ch {
			return true
		}
	}
	return false
}
