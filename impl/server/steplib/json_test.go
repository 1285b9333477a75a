package steplib_test

import (
	"strings"
	"testing"

	"github.com/sdods/sdods/impl/server/steplib"
)

const doc = `{
  "a": {"b": [{"c": 1}, {"c": 2.5, "d": null}], "e": "text"},
  "items": [{"id": 1, "tags": ["x"]}, {"id": 2, "tags": ["y", "z"]}, {"id": 3, "tags": [], "price": 9.5}],
  "odd key": {"with]bracket": true},
  "user-id": 7,
  "m": {"z": 1, "y": 2, "x": 3, "w": {"z": 4}},
  "big": 12345678901234567890
}`

func mustDecode(tb testing.TB, s string) any {
	tb.Helper()
	v, err := steplib.DecodeJSON([]byte(s))
	if err != nil {
		tb.Fatalf("DecodeJSON(%s): %v", s, err)
	}
	return v
}

func TestEvalJSONPath(t *testing.T) {
	root := mustDecode(t, doc)
	tests := []struct {
		path, want, err string
	}{
		{"$", "", ""}, // checked separately: the whole document
		{"$.a.b[0].c", "1", ""},
		{"$.a.b[1].c", "2.5", ""},
		{"$.a.b[1].d", "null", ""},
		{"$.a.b[-1].c", "2.5", ""},
		{"$.a.e", "text", ""},
		{"a.e", "text", ""},
		{"$['a']['e']", "text", ""},
		{`$["odd key"]["with]bracket"]`, "true", ""},
		{"$.items[*].id", "[1,2,3]", ""},
		{"$.items[*].tags[1]", `["z"]`, ""},
		{"$.items.*.id", "[1,2,3]", ""},
		{"items[0].id", "1", ""},
		{"[\"a\"].e", "text", ""},
		{"$.big", "12345678901234567890", ""},
		// Older forms RFC 9535 spells with brackets.
		{"$.user-id", "7", ""},
		{"user-id", "7", ""},
		// RFC 9535: filters, slices, recursive descent, functions.
		{"$.items[?(@.id==2)].tags", `[["y","z"]]`, ""},
		{"$.items[?@.id==2].tags[0]", `["y"]`, ""},
		{"$.items[?@.id > 1 && @.price].id", "[3]", ""},
		{"$.items[?length(@.tags) == 2].id", "[2]", ""},
		{"$.items[?match(@.tags[0], '[xy]')].id", "[1,2]", ""},
		{"$.items[0:2].id", "[1,2]", ""},
		{"$.items[::-1].id", "[3,2,1]", ""},
		{"$.items[-1:].id", "[3]", ""},
		{"$..c", "[1,2.5]", ""},
		{"$..id", "[1,2,3]", ""},
		{"$.m.*", `[{"z":4},3,2,1]`, ""}, // an object's members by name: w, x, y, z
		{"$.m..z", "[1,4]", ""},
		{"$.items[?@.id==9]", "[]", ""},
		// Errors.
		{"$.a.x", "", `$.a has no member "x" (members: b, e)`},
		{"$.a.b[2]", "", "$.a.b has 2 element(s); index 2 is out of range"},
		{"$.a.e.f", "", "$.a.e is a string, not an object"},
		{"$.a[0]", "", "$.a is an object, not an array"},
		{"$['odd key'].x", "", `$['odd key'] has no member "x" (members: with]bracket)`},
		{"$x", "", `JSONPath "$x": unexpected identifier`},
		{"$.a[0", "", "unexpected eof"},
		{"a[", "", `JSONPath "a[" (read as "$.a[")`},
		{"$.items[?@.id==]", "", "JSONPath"},
		{"$.items[?@.id==12345678901234567890]", "", "out of range"}, // RFC 9535 integers are I-JSON's
		{"", "", "empty JSONPath"},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			v, err := steplib.EvalJSONPath(root, tt.path)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want one containing %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tt.path == "$" {
				if !steplib.JSONEqual(v, root) {
					t.Fatal("$ is not the document")
				}
				return
			}
			if got := steplib.JSONText(v); got != tt.want {
				t.Fatalf("got %s, want %s", got, tt.want)
			}
		})
	}
}

// TestJSONPathSingular: a path of names and indexes selects one value, others a list.
func TestJSONPathSingular(t *testing.T) {
	root := mustDecode(t, doc)
	for path, want := range map[string]bool{"$.a.b[0]": true, "a['e']": true, "$.items[*]": false, "$..id": false, "$.items[0:1]": false, "$.items[?@.id==1]": false} {
		_, singular, err := steplib.SelectJSONPath(root, path)
		if err != nil || singular != want {
			t.Errorf("%s: singular %v, %v; want %v", path, singular, err, want)
		}
	}
}

func TestJSONEqualAndContains(t *testing.T) {
	tests := []struct {
		a, b          string
		equal, within bool // within: a contains b
	}{
		{`1`, `1.0`, true, true},
		{`1e2`, `100`, true, true},
		{`"1"`, `1`, false, false},
		{`{"a":1,"b":[1,2]}`, `{"b":[1,2],"a":1}`, true, true},
		{`{"a":1,"b":2}`, `{"a":1}`, false, true},
		{`{"a":{"x":1,"y":2}}`, `{"a":{"y":2}}`, false, true},
		{`[1,2]`, `[1]`, false, false},
		{`[{"a":1,"b":2}]`, `[{"a":1}]`, false, true},
		{`null`, `null`, true, true},
		{`true`, `false`, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.a+" vs "+tt.b, func(t *testing.T) {
			a, b := mustDecode(t, tt.a), mustDecode(t, tt.b)
			if got := steplib.JSONEqual(a, b); got != tt.equal {
				t.Errorf("JSONEqual = %v", got)
			}
			if got, why := steplib.JSONContains(a, b, "$"); got != tt.within {
				t.Errorf("JSONContains = %v (%s)", got, why)
			}
		})
	}
}

func TestValidateJSONSchema(t *testing.T) {
	const user = `{
	  "type": "object",
	  "required": ["id", "name"],
	  "properties": {
	    "id": {"type": "integer", "minimum": 1},
	    "name": {"type": "string", "minLength": 2, "maxLength": 5, "pattern": "^[A-Z]"},
	    "role": {"enum": ["admin", "user"]},
	    "score": {"type": "number", "exclusiveMaximum": 10, "multipleOf": 0.5},
	    "tags": {"type": "array", "items": {"type": "string"}, "minItems": 1, "uniqueItems": true},
	    "address": {"$ref": "#/$defs/address"},
	    "nick": {"type": ["string", "null"]}
	  },
	  "additionalProperties": false,
	  "$defs": {"address": {"type": "object", "required": ["city"], "properties": {"city": {"const": "London"}}}}
	}`
	tests := []struct {
		name, schema, instance string
		want                   []string // each violation as "path keyword"
	}{
		{"valid", user, `{"id": 1, "name": "Ada", "role": "admin", "score": 9.5, "tags": ["a"], "address": {"city": "London"}, "nick": null}`, nil},
		{"missing required", user, `{"id": 1}`, []string{"$ required"}},
		{"wrong types", user, `{"id": 1.5, "name": 3}`, []string{"$.id type", "$.name type"}},
		{"integer written as 1.0", user, `{"id": 1.0, "name": "Ada"}`, nil},
		{"bounds", user, `{"id": 0, "name": "A"}`, []string{"$.id minimum", "$.name minLength"}},
		{"string rules", user, `{"id": 2, "name": "adaLovelace"}`, []string{"$.name maxLength", "$.name pattern"}},
		{"enum", user, `{"id": 2, "name": "Ada", "role": "root"}`, []string{"$.role enum"}},
		{"number rules", user, `{"id": 2, "name": "Ada", "score": 10}`, []string{"$.score exclusiveMaximum"}},
		{"multipleOf", user, `{"id": 2, "name": "Ada", "score": 0.3}`, []string{"$.score multipleOf"}},
		{"items", user, `{"id": 2, "name": "Ada", "tags": ["a", 1, "a"]}`, []string{"$.tags uniqueItems", "$.tags[1] type"}},
		{"minItems", user, `{"id": 2, "name": "Ada", "tags": []}`, []string{"$.tags minItems"}},
		{"additional", user, `{"id": 2, "name": "Ada", "extra": 1}`, []string{"$ additionalProperties"}},
		{"ref", user, `{"id": 2, "name": "Ada", "address": {"city": "Paris"}}`, []string{"$.address.city const"}},
		{"type union", user, `{"id": 2, "name": "Ada", "nick": 5}`, []string{"$.nick type"}},
		{"not an object", user, `[1]`, []string{"$ type"}},
		{"boolean schema false", `false`, `1`, []string{"$ false"}},
		{"boolean schema true", `true`, `1`, nil},
		{"anyOf", `{"anyOf": [{"type": "string"}, {"type": "integer"}]}`, `1.5`, []string{"$ anyOf"}},
		{"oneOf", `{"oneOf": [{"minimum": 0}, {"maximum": 10}]}`, `5`, []string{"$ oneOf"}},
		{"allOf", `{"allOf": [{"minimum": 0}, {"maximum": 10}]}`, `11`, []string{"$ maximum"}},
		{"not", `{"not": {"type": "null"}}`, `null`, []string{"$ not"}},
		{"prefixItems", `{"prefixItems": [{"type": "string"}], "items": {"type": "integer"}}`, `["a", 1, "b"]`, []string{"$[2] type"}},
		{"maxProperties", `{"maxProperties": 1}`, `{"a": 1, "b": 2}`, []string{"$ maxProperties"}},
		{"format is an annotation in 2020-12", `{"type": "string", "format": "email"}`, `"not an email"`, nil},
		{"format is asserted in draft-07", `{"$schema": "http://json-schema.org/draft-07/schema#", "format": "email"}`, `"not an email"`, []string{"$ format"}},
		{"draft-04 exclusiveMaximum is a boolean", `{"$schema": "http://json-schema.org/draft-04/schema#", "maximum": 10, "exclusiveMaximum": true}`, `10`, []string{"$ exclusiveMaximum"}},
		{"unicode length", `{"maxLength": 3}`, `"äöü"`, nil},
		// The keywords the hand-written validator ignored (issue 19).
		{"dependentRequired", `{"dependentRequired": {"card": ["cvv"]}}`, `{"card": "4111"}`, []string{"$ dependentRequired"}},
		{"contains", `{"type": "array", "contains": {"type": "integer"}}`, `["a", "b"]`, []string{"$ contains"}},
		{"minContains", `{"contains": {"const": 1}, "minContains": 2}`, `[1, 2]`, []string{"$ minContains"}},
		{"patternProperties", `{"patternProperties": {"^n_": {"type": "number"}}}`, `{"n_a": "x", "s": "y"}`, []string{"$.n_a type"}},
		{"if then", `{"if": {"properties": {"kind": {"const": "paid"}}}, "then": {"required": ["price"]}}`, `{"kind": "paid"}`, []string{"$ required"}},
		{"if else", `{"if": {"required": ["a"]}, "then": true, "else": {"required": ["b"]}}`, `{}`, []string{"$ required"}},
		{"unevaluatedProperties", `{"properties": {"a": {}}, "allOf": [{"properties": {"b": {}}}], "unevaluatedProperties": false}`, `{"a": 1, "b": 2, "odd key": 3}`, []string{"$['odd key'] unevaluatedProperties"}},
		{"unevaluatedItems", `{"prefixItems": [{}], "unevaluatedItems": false}`, `[1, 2]`, []string{"$[1] unevaluatedItems"}},
		{"propertyNames", `{"propertyNames": {"maxLength": 2}}`, `{"abc": 1}`, []string{"$ propertyNames"}},
		{"dependentSchemas", `{"dependentSchemas": {"a": {"required": ["b"]}}}`, `{"a": 1}`, []string{"$ required"}},
		{"ref cycle", `{"$defs": {"a": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"}`, `"x"`, []string{"$ $ref"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vs, err := steplib.ValidateJSONSchema(mustDecode(t, tt.schema), mustDecode(t, tt.instance))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, v := range vs {
				got = append(got, v.Path+" "+v.Keyword)
				if v.Message == "" {
					t.Errorf("violation %+v has no message", v)
				}
			}
			if strings.Join(got, "; ") != strings.Join(tt.want, "; ") {
				t.Fatalf("violations %q, want %q (%v)", got, tt.want, vs)
			}
		})
	}
}

func TestValidateJSONSchemaRefusesBadSchemas(t *testing.T) {
	tests := []struct{ name, schema, want string }{
		{"not a schema", `1`, "the JSON Schema is invalid: at schema: got number, want boolean or object (type)"},
		{"bad type", `{"type": 1}`, "at schema.type: matches none of the anyOf subschemas"},
		{"bad pattern", `{"pattern": "("}`, "at schema.pattern: '(' is not valid regex"},
		{"bad minLength", `{"minLength": -1}`, "at schema.minLength: minimum: got -1, want 0"},
		{"remote ref", `{"$ref": "http://example.test/s.json"}`, "only references inside the schema are allowed"},
		{"file ref", `{"$ref": "file:///etc/passwd"}`, "only references inside the schema are allowed"},
		{"unknown metaschema", `{"$schema": "http://example.test/meta.json"}`, "only references inside the schema are allowed"},
		{"missing ref", `{"$ref": "#/$defs/x"}`, `"#/$defs/x" not found`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := steplib.ValidateJSONSchema(mustDecode(t, tt.schema), mustDecode(t, `"x"`))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want one containing %q", err, tt.want)
			}
		})
	}
}

func TestValidateJSONSchemaFormats(t *testing.T) {
	tests := []struct {
		format, value string
		valid         bool
	}{
		{"email", `"ada@example.test"`, true},
		{"email", `"not an email"`, false},
		{"date-time", `"2026-11-26T10:00:00Z"`, true},
		{"date-time", `"yesterday"`, false},
		{"uuid", `"0b6f4e3a-5c1d-4d2e-9f00-1a2b3c4d5e6f"`, true},
		{"uuid", `"0b6f4e3a"`, false},
		{"ipv4", `"256.0.0.1"`, false},
		{"email", `42`, true}, // formats apply to strings only
	}
	for _, tt := range tests {
		t.Run(tt.format+" "+tt.value, func(t *testing.T) {
			schema := mustDecode(t, `{"format": "`+tt.format+`"}`)
			vs, err := steplib.ValidateJSONSchemaWith(schema, mustDecode(t, tt.value), steplib.SchemaOptions{AssertFormat: true})
			if err != nil {
				t.Fatal(err)
			}
			if got := len(vs) == 0; got != tt.valid {
				t.Fatalf("valid = %v, want %v (%v)", got, tt.valid, vs)
			}
			if vs, _ := steplib.ValidateJSONSchema(schema, mustDecode(t, tt.value)); len(vs) != 0 {
				t.Fatalf("without AssertFormat: %v", vs)
			}
		})
	}
}

func TestVariables(t *testing.T) {
	v := steplib.NewVariables(map[string]string{"host": "env-host", "token": "tok-123"}, map[string]string{"host": "example-host"}, []string{"tok-123"})
	v.SetAccount(map[string]string{"username": "ada", "password": "pw-secret"})
	v.Set("id", "42")
	tests := []struct{ in, want, err string }{
		{"plain", "plain", ""},
		{"${id}", "42", ""},
		{"${host}/x", "example-host/x", ""}, // the example row wins over the environment
		{"${ user.username }", "ada", ""},
		{"a ${id} b ${id}", "a 42 b 42", ""},
		{"$${id} stays", "${id} stays", ""},
		{"$ {id} and $id", "$ {id} and $id", ""},
		{"${nope}", "", "undefined variable ${nope}; defined: host, id, token, user.password, user.username"},
		{"${id", "", "unclosed variable reference"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := v.Interpolate(tt.in)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("got %q, %v; want %q", got, err, tt.want)
			}
		})
	}
	if got := v.Mask("token tok-123, password pw-secret"); got != "token ***, password ***" {
		t.Errorf("Mask = %q", got)
	}
}
