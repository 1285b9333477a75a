package steplib

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"github.com/sdods/sdods/impl/textclip"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// SchemaViolation is one place where an instance breaks a schema.
type SchemaViolation struct {
	// Path is where in the instance, as a JSONPath ("$.items[2].id").
	Path string
	// Keyword is the schema keyword that failed ("type", "required", ...).
	Keyword string
	Message string
}

func (v SchemaViolation) String() string { return v.Path + ": " + v.Message + " (" + v.Keyword + ")" }

// SchemaOptions are the choices a step makes about validation.
type SchemaOptions struct {
	// AssertFormat makes "format" an assertion in every draft. Without it, draft 2019-09 and
	// 2020-12 treat format as an annotation (as those drafts say); draft-07 and older assert it.
	AssertFormat bool
}

// schemaURL names the step's schema. Its scheme has no loader, so a $ref outside the schema fails
// compilation instead of reading a file or the network.
const schemaURL = "urn:sdods:step-schema"

// noLoader refuses every external reference; the draft metaschemas are built into the library.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("only references inside the schema are allowed, not %s", url)
}

var schemaPrinter = message.NewPrinter(language.English)

// ValidateJSONSchema validates a decoded instance against a decoded JSON Schema and returns every
// violation, formats not asserted (see ValidateJSONSchemaWith).
func ValidateJSONSchema(schema, instance any) ([]SchemaViolation, error) {
	return ValidateJSONSchemaWith(schema, instance, SchemaOptions{})
}

// ValidateJSONSchemaWith validates with santhosh-tekuri/jsonschema: the draft the schema declares
// in "$schema" (draft 4, 6, 7, 2019-09 or 2020-12), draft 2020-12 when it declares none.
// References must stay inside the schema. It refuses a schema that is not valid against its
// metaschema with an error naming the place and the rule.
func ValidateJSONSchemaWith(schema, instance any, opts SchemaOptions) ([]SchemaViolation, error) {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(noLoader{})
	if opts.AssertFormat {
		c.AssertFormat()
	}
	if err := c.AddResource(schemaURL, schema); err != nil {
		return nil, fmt.Errorf("schema: %v", err)
	}
	sch, err := c.Compile(schemaURL)
	if err != nil {
		return nil, schemaCompileError(err)
	}
	err = sch.Validate(instance)
	if err == nil {
		return nil, nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return nil, fmt.Errorf("schema: %v", err)
	}
	var out []SchemaViolation
	collectViolations(ve, &out)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

// collectViolations flattens the library's error tree into the failing keywords. It descends
// through wrappers (a subschema, $ref, allOf, if/then) to the keywords that failed, and reports
// anyOf, oneOf, not and contains as themselves: their branches' failures are not the instance's.
func collectViolations(e *jsonschema.ValidationError, out *[]SchemaViolation) {
	switch e.ErrorKind.(type) {
	case *kind.Schema, *kind.Group, *kind.Reference, *kind.AllOf:
		if len(e.Causes) > 0 {
			for _, c := range e.Causes {
				collectViolations(c, out)
			}
			return
		}
	}
	msg := e.ErrorKind.LocalizedString(schemaPrinter)
	switch k := e.ErrorKind.(type) {
	case *kind.AnyOf:
		msg = "matches none of the anyOf subschemas" + branchReasons(e)
	case *kind.OneOf:
		if len(k.Subschemas) == 0 {
			msg = "matches none of the oneOf subschemas" + branchReasons(e)
		} else {
			msg = fmt.Sprintf("matches more than one oneOf subschema (%d and %d)", k.Subschemas[0], k.Subschemas[1])
		}
	case *kind.Not:
		msg = "matches the subschema of \"not\""
	case *kind.FalseSchema:
		msg = "no value is allowed here"
	}
	*out = append(*out, SchemaViolation{
		Path:    instancePath(e.InstanceLocation),
		Keyword: violationKeyword(e),
		Message: textclip.Clip(strings.ReplaceAll(msg, schemaURL, ""), 300),
	})
}

// branchReasons says briefly why each branch of anyOf/oneOf failed.
func branchReasons(e *jsonschema.ValidationError) string {
	var parts []string
	for i, c := range e.Causes {
		var vs []SchemaViolation
		collectViolations(c, &vs)
		if len(vs) == 0 {
			continue
		}
		parts = append(parts, fmt.Sprintf("%d: %s", i, textclip.Clip(vs[0].String(), 80)))
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, "; ") + ")"
}

// violationKeyword names the failing keyword. A false subschema (additionalProperties: false,
// unevaluatedProperties: false, items: false) is named after the keyword that holds it.
func violationKeyword(e *jsonschema.ValidationError) string {
	if _, ok := e.ErrorKind.(*kind.FalseSchema); ok {
		_, frag, _ := strings.Cut(e.SchemaURL, "#")
		parts := strings.Split(frag, "/")
		for i := len(parts) - 1; i >= 0; i-- {
			p := parts[i]
			if p == "" || isDigits(p) {
				continue
			}
			if i > 0 && (parts[i-1] == "properties" || parts[i-1] == "patternProperties" || parts[i-1] == "$defs") {
				continue // a property's name, not a keyword
			}
			return p
		}
		return "false"
	}
	switch e.ErrorKind.(type) {
	case *kind.Not:
		return "not"
	case *kind.RefCycle:
		return "$ref"
	case *kind.Dependency:
		return "dependencies" // the library says "dependency"; the schema's keyword is plural
	}
	kw := e.ErrorKind.KeywordPath()
	if len(kw) == 0 {
		return "schema"
	}
	return kw[0]
}

func isDigits(s string) bool {
	_, err := strconv.Atoi(s)
	return err == nil
}

// instancePath renders an instance location as a JSONPath: $.items[2].id, $['odd key'].
func instancePath(loc []string) string {
	var b strings.Builder
	b.WriteString("$")
	for _, tok := range loc {
		switch {
		case isDigits(tok) && !strings.HasPrefix(tok, "-"):
			b.WriteString("[" + tok + "]")
		default:
			b.WriteString(pathStep(tok))
		}
	}
	return b.String()
}

func isPlainName(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= 0x80 || i > 0 && r >= '0' && r <= '9' {
			continue
		}
		return false
	}
	return true
}

// schemaCompileError turns a compile error into one line: where the schema is wrong and why.
func schemaCompileError(err error) error {
	var sve *jsonschema.SchemaValidationError
	if errors.As(err, &sve) {
		var ve *jsonschema.ValidationError
		if errors.As(sve.Err, &ve) {
			var vs []SchemaViolation
			collectViolations(ve, &vs)
			msgs := make([]string, 0, len(vs))
			for i, v := range vs {
				if i == 5 {
					msgs = append(msgs, fmt.Sprintf("and %d more", len(vs)-5))
					break
				}
				msgs = append(msgs, fmt.Sprintf("at %s: %s (%s)", strings.Replace(v.Path, "$", "schema", 1), v.Message, v.Keyword))
			}
			return fmt.Errorf("the JSON Schema is invalid: %s", strings.Join(msgs, "; "))
		}
	}
	msg := strings.ReplaceAll(err.Error(), schemaURL, "")
	return fmt.Errorf("the JSON Schema cannot be used: %s", textclip.Clip(msg, 500))
}
