package mcp

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// schemaSet turns OpenAPI 3.0 schemas into JSON Schema (2020-12) for tool input and output
// schemas: component references become $defs, nullable becomes a null type, OpenAPI-only keywords
// are dropped.

type schemaSet struct {
	doc  *openapi3.T
	defs map[string]any
}

func newSchemaSet(doc *openapi3.T) *schemaSet { return &schemaSet{doc: doc, defs: map[string]any{}} }

// convert returns the JSON Schema of ref; referenced components are added to s.defs.
func (s *schemaSet) convert(ref *openapi3.SchemaRef) (map[string]any, error) {
	raw, err := json.Marshal(ref)
	if err != nil {
		return nil, err
	}
	var v map[string]any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, err
	}
	out, err := s.walk(v)
	if err != nil {
		return nil, err
	}
	m, _ := out.(map[string]any)
	return m, nil
}

// inline returns the schema of ref with a top-level component reference resolved in place, so
// that the result carries its own type (an MCP tool schema must say type object at the top).
func (s *schemaSet) inline(ref *openapi3.SchemaRef) (map[string]any, error) {
	if ref == nil {
		return nil, nil
	}
	if ref.Ref != "" && ref.Value != nil {
		return s.convert(openapi3.NewSchemaRef("", ref.Value))
	}
	return s.convert(ref)
}

const componentPrefix = "#/components/schemas/"

func (s *schemaSet) walk(v any) (any, error) {
	switch t := v.(type) {
	case map[string]any:
		if ref, ok := t["$ref"].(string); ok {
			name, found := strings.CutPrefix(ref, componentPrefix)
			if !found {
				return nil, fmt.Errorf("unsupported reference %s", ref)
			}
			if err := s.addDef(name); err != nil {
				return nil, err
			}
			return map[string]any{"$ref": "#/$defs/" + name}, nil
		}
		out := make(map[string]any, len(t))
		for k, val := range t {
			switch {
			case strings.HasPrefix(k, "x-"), k == "example", k == "discriminator", k == "xml", k == "externalDocs", k == "nullable":
				continue
			case k == "properties" || k == "patternProperties":
				props, _ := val.(map[string]any)
				conv := make(map[string]any, len(props))
				for name, p := range props {
					c, err := s.walk(p)
					if err != nil {
						return nil, err
					}
					conv[name] = c
				}
				out[k] = conv
				continue
			}
			c, err := s.walk(val)
			if err != nil {
				return nil, err
			}
			out[k] = c
		}
		// OpenAPI 3.0's boolean exclusive bounds are JSON Schema's numeric ones.
		for _, b := range [][2]string{{"exclusiveMinimum", "minimum"}, {"exclusiveMaximum", "maximum"}} {
			if ex, ok := out[b[0]].(bool); ok {
				delete(out, b[0])
				if ex {
					out[b[0]] = out[b[1]]
					delete(out, b[1])
				}
			}
		}
		if nullable, _ := t["nullable"].(bool); nullable {
			// anyOf with single-type branches: the most portable spelling of a nullable value.
			return map[string]any{"anyOf": []any{out, map[string]any{"type": "null"}}}, nil
		}
		return out, nil
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			c, err := s.walk(e)
			if err != nil {
				return nil, err
			}
			out[i] = c
		}
		return out, nil
	default:
		return v, nil
	}
}

func (s *schemaSet) addDef(name string) error {
	if _, done := s.defs[name]; done {
		return nil
	}
	ref := s.doc.Components.Schemas[name]
	if ref == nil || ref.Value == nil {
		return fmt.Errorf("unknown schema %s", name)
	}
	s.defs[name] = true // placeholder against cycles
	conv, err := s.convert(openapi3.NewSchemaRef("", ref.Value))
	if err != nil {
		return err
	}
	s.defs[name] = conv
	return nil
}

// withDefs returns schema with the definitions it refers to (nothing when none).
func (s *schemaSet) withDefs(schema map[string]any) map[string]any {
	if len(s.defs) > 0 {
		names := make([]string, 0, len(s.defs))
		for n := range s.defs {
			names = append(names, n)
		}
		sort.Strings(names)
		defs := make(map[string]any, len(names))
		for _, n := range names {
			defs[n] = s.defs[n]
		}
		schema["$defs"] = defs
	}
	return schema
}
