package steplib

import (
	"fmt"
	"math/big"
	"regexp"
	"sort"
	"strings"
	"unicode/utf8"
)

// SchemaViolation is one place where an instance breaks a schema.
type SchemaViolation struct {
	// Path is where in the instance, as a JSONPath ("$.items[2].id").
	Path string
	// Keyword is the schema keyword that failed ("type", "required", ...).
	Keyword string
	Message string
}

func (v SchemaViolation) String() string { return v.Path + ": " + v.Message }

// ValidateJSONSchema validates a decoded instance against a decoded JSON Schema and returns every
// violation. The subset of draft 2020-12 it applies: boolean schemas, type (with integer), enum,
// const, properties, required, additionalProperties, items, prefixItems, minItems, maxItems,
// uniqueItems, minimum, maximum, exclusiveMinimum, exclusiveMaximum, multipleOf, minLength,
// maxLength, pattern (Go RE2 syntax), minProperties, maxProperties, allOf, anyOf, oneOf, not, and
// $ref to "#" or "#/$defs/name" (or any JSON pointer inside the schema). Other keywords, "format"
// among them, are annotations and ignored. It refuses a schema it cannot read with an error.
func ValidateJSONSchema(schema, instance any) ([]SchemaViolation, error) {
	v := &schemaValidator{root: schema}
	if err := v.validate(schema, instance, "$", 0); err != nil {
		return nil, err
	}
	return v.out, nil
}

type schemaValidator struct {
	root any
	out  []SchemaViolation
}

func (v *schemaValidator) add(path, keyword, format string, args ...any) {
	v.out = append(v.out, SchemaViolation{Path: path, Keyword: keyword, Message: fmt.Sprintf(format, args...)})
}

// sub validates against a subschema in a fresh validator and returns its violations.
func (v *schemaValidator) sub(schema, instance any, path string, depth int) ([]SchemaViolation, error) {
	s := &schemaValidator{root: v.root}
	err := s.validate(schema, instance, path, depth)
	return s.out, err
}

func (v *schemaValidator) validate(schema, inst any, path string, depth int) error {
	if depth > 64 {
		return fmt.Errorf("schema: $ref nesting deeper than 64 (a cycle?)")
	}
	switch s := schema.(type) {
	case bool:
		if !s {
			v.add(path, "false", "no value is allowed here")
		}
		return nil
	case map[string]any:
		return v.validateObject(s, inst, path, depth)
	default:
		return fmt.Errorf("schema at %s: a schema must be an object or a boolean, not %s", path, jsonKind(schema))
	}
}

func (v *schemaValidator) validateObject(s map[string]any, inst any, path string, depth int) error {
	if ref, ok := s["$ref"].(string); ok {
		target, err := v.resolve(ref)
		if err != nil {
			return err
		}
		if err := v.validate(target, inst, path, depth+1); err != nil {
			return err
		}
	}
	if t, ok := s["type"]; ok {
		var types []string
		switch x := t.(type) {
		case string:
			types = []string{x}
		case []any:
			for _, e := range x {
				if str, ok := e.(string); ok {
					types = append(types, str)
				}
			}
		default:
			return fmt.Errorf("schema at %s: \"type\" must be a string or an array of strings", path)
		}
		matched := false
		for _, ty := range types {
			if hasType(inst, ty) {
				matched = true
			}
		}
		if !matched {
			v.add(path, "type", "is %s, expected %s", instanceType(inst), strings.Join(types, " or "))
		}
	}
	if e, ok := s["enum"]; ok {
		list, ok := e.([]any)
		if !ok {
			return fmt.Errorf("schema at %s: \"enum\" must be an array", path)
		}
		found := false
		for _, x := range list {
			if JSONEqual(inst, x) {
				found = true
			}
		}
		if !found {
			v.add(path, "enum", "%s is not one of %s", showJSON(inst), showJSON(list))
		}
	}
	if c, ok := s["const"]; ok && !JSONEqual(inst, c) {
		v.add(path, "const", "%s is not %s", showJSON(inst), showJSON(c))
	}
	switch x := inst.(type) {
	case map[string]any:
		if err := v.validateMembers(s, x, path, depth); err != nil {
			return err
		}
	case []any:
		if err := v.validateItems(s, x, path, depth); err != nil {
			return err
		}
	case string:
		n := utf8.RuneCountInString(x)
		if m, ok, err := schemaInt(s, "minLength", path); err != nil {
			return err
		} else if ok && n < m {
			v.add(path, "minLength", "has %d character(s), fewer than %d", n, m)
		}
		if m, ok, err := schemaInt(s, "maxLength", path); err != nil {
			return err
		} else if ok && n > m {
			v.add(path, "maxLength", "has %d character(s), more than %d", n, m)
		}
		if p, ok := s["pattern"].(string); ok {
			re, err := regexp.Compile(p)
			if err != nil {
				return fmt.Errorf("schema at %s: pattern %q: %v", path, p, err)
			}
			if !re.MatchString(x) {
				v.add(path, "pattern", "%s does not match the pattern %q", showJSON(x), p)
			}
		}
	default:
		if n, ok := numberRat(inst); ok {
			if err := v.validateNumber(s, n, inst, path); err != nil {
				return err
			}
		}
	}
	for _, kw := range []string{"allOf", "anyOf", "oneOf"} {
		raw, ok := s[kw]
		if !ok {
			continue
		}
		list, ok := raw.([]any)
		if !ok || len(list) == 0 {
			return fmt.Errorf("schema at %s: %q must be a non-empty array", path, kw)
		}
		passed := 0
		var firstFail []SchemaViolation
		for _, sub := range list {
			out, err := v.sub(sub, inst, path, depth+1)
			if err != nil {
				return err
			}
			if len(out) == 0 {
				passed++
			} else if firstFail == nil {
				firstFail = out
			}
		}
		switch {
		case kw == "allOf" && passed < len(list):
			v.out = append(v.out, firstFail...)
		case kw == "anyOf" && passed == 0:
			v.add(path, kw, "matches none of the %d schemas of anyOf (first: %s)", len(list), firstFail[0].Message)
		case kw == "oneOf" && passed != 1:
			v.add(path, kw, "matches %d of the schemas of oneOf, expected exactly 1", passed)
		}
	}
	if n, ok := s["not"]; ok {
		out, err := v.sub(n, inst, path, depth+1)
		if err != nil {
			return err
		}
		if len(out) == 0 {
			v.add(path, "not", "matches the schema of \"not\"")
		}
	}
	return nil
}

func (v *schemaValidator) validateMembers(s map[string]any, obj map[string]any, path string, depth int) error {
	if req, ok := s["required"]; ok {
		list, ok := req.([]any)
		if !ok {
			return fmt.Errorf("schema at %s: \"required\" must be an array of strings", path)
		}
		for _, r := range list {
			name, _ := r.(string)
			if _, ok := obj[name]; !ok {
				v.add(path, "required", "has no member %q", name)
			}
		}
	}
	props, _ := s["properties"].(map[string]any)
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		p := path + "." + k
		if sub, ok := props[k]; ok {
			if err := v.validate(sub, obj[k], p, depth+1); err != nil {
				return err
			}
			continue
		}
		if ap, ok := s["additionalProperties"]; ok {
			if b, isBool := ap.(bool); isBool && !b {
				v.add(path, "additionalProperties", "has the member %q, which the schema does not allow", k)
				continue
			}
			if err := v.validate(ap, obj[k], p, depth+1); err != nil {
				return err
			}
		}
	}
	if m, ok, err := schemaInt(s, "minProperties", path); err != nil {
		return err
	} else if ok && len(obj) < m {
		v.add(path, "minProperties", "has %d member(s), fewer than %d", len(obj), m)
	}
	if m, ok, err := schemaInt(s, "maxProperties", path); err != nil {
		return err
	} else if ok && len(obj) > m {
		v.add(path, "maxProperties", "has %d member(s), more than %d", len(obj), m)
	}
	return nil
}

func (v *schemaValidator) validateItems(s map[string]any, arr []any, path string, depth int) error {
	prefix, _ := s["prefixItems"].([]any)
	for i, item := range arr {
		p := fmt.Sprintf("%s[%d]", path, i)
		if i < len(prefix) {
			if err := v.validate(prefix[i], item, p, depth+1); err != nil {
				return err
			}
			continue
		}
		if items, ok := s["items"]; ok {
			if err := v.validate(items, item, p, depth+1); err != nil {
				return err
			}
		}
	}
	if m, ok, err := schemaInt(s, "minItems", path); err != nil {
		return err
	} else if ok && len(arr) < m {
		v.add(path, "minItems", "has %d item(s), fewer than %d", len(arr), m)
	}
	if m, ok, err := schemaInt(s, "maxItems", path); err != nil {
		return err
	} else if ok && len(arr) > m {
		v.add(path, "maxItems", "has %d item(s), more than %d", len(arr), m)
	}
	if u, _ := s["uniqueItems"].(bool); u {
		for i := range arr {
			for j := i + 1; j < len(arr); j++ {
				if JSONEqual(arr[i], arr[j]) {
					v.add(path, "uniqueItems", "items %d and %d are equal", i, j)
					return nil
				}
			}
		}
	}
	return nil
}

func (v *schemaValidator) validateNumber(s map[string]any, n *big.Rat, inst any, path string) error {
	bound := func(kw string) (*big.Rat, bool, error) {
		raw, ok := s[kw]
		if !ok {
			return nil, false, nil
		}
		r, ok := numberRat(raw)
		if !ok {
			return nil, false, fmt.Errorf("schema at %s: %q must be a number", path, kw)
		}
		return r, true, nil
	}
	checks := []struct {
		kw   string
		fail func(c int) bool
		verb string
	}{
		{"minimum", func(c int) bool { return c < 0 }, "less than"},
		{"maximum", func(c int) bool { return c > 0 }, "greater than"},
		{"exclusiveMinimum", func(c int) bool { return c <= 0 }, "not greater than"},
		{"exclusiveMaximum", func(c int) bool { return c >= 0 }, "not less than"},
	}
	for _, c := range checks {
		b, ok, err := bound(c.kw)
		if err != nil {
			return err
		}
		if ok && c.fail(n.Cmp(b)) {
			v.add(path, c.kw, "%s is %s %s", showJSON(inst), c.verb, b.RatString())
		}
	}
	if m, ok, err := bound("multipleOf"); err != nil {
		return err
	} else if ok && m.Sign() > 0 {
		q := new(big.Rat).Quo(n, m)
		if !q.IsInt() {
			v.add(path, "multipleOf", "%s is not a multiple of %s", showJSON(inst), m.RatString())
		}
	}
	return nil
}

func (v *schemaValidator) resolve(ref string) (any, error) {
	if !strings.HasPrefix(ref, "#") {
		return nil, fmt.Errorf("schema: $ref %q: only references inside the schema (#/...) are supported", ref)
	}
	cur := v.root
	ptr := strings.TrimPrefix(ref, "#")
	if ptr == "" {
		return cur, nil
	}
	if !strings.HasPrefix(ptr, "/") {
		return nil, fmt.Errorf("schema: $ref %q: anchors are not supported; use a JSON pointer", ref)
	}
	for _, tok := range strings.Split(ptr[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch c := cur.(type) {
		case map[string]any:
			next, ok := c[tok]
			if !ok {
				return nil, fmt.Errorf("schema: $ref %q: no member %q", ref, tok)
			}
			cur = next
		case []any:
			var i int
			if _, err := fmt.Sscanf(tok, "%d", &i); err != nil || i < 0 || i >= len(c) {
				return nil, fmt.Errorf("schema: $ref %q: bad index %q", ref, tok)
			}
			cur = c[i]
		default:
			return nil, fmt.Errorf("schema: $ref %q: cannot descend into %s", ref, jsonKind(cur))
		}
	}
	return cur, nil
}

func schemaInt(s map[string]any, kw, path string) (int, bool, error) {
	raw, ok := s[kw]
	if !ok {
		return 0, false, nil
	}
	r, ok := numberRat(raw)
	if !ok || !r.IsInt() || r.Sign() < 0 {
		return 0, false, fmt.Errorf("schema at %s: %q must be a non-negative integer", path, kw)
	}
	return int(r.Num().Int64()), true, nil
}

func hasType(v any, t string) bool {
	switch t {
	case "null":
		return v == nil
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "string":
		_, ok := v.(string)
		return ok
	case "array":
		_, ok := v.([]any)
		return ok
	case "object":
		_, ok := v.(map[string]any)
		return ok
	case "number":
		_, ok := numberRat(v)
		return ok
	case "integer":
		r, ok := numberRat(v)
		return ok && r.IsInt()
	}
	return false
}

func instanceType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	if r, ok := numberRat(v); ok {
		if r.IsInt() {
			return "integer"
		}
		return "number"
	}
	return fmt.Sprintf("%T", v)
}
