package derive_test

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"net/url"
	"regexp"
	"regexp/syntax"
	"sort"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/sdods/sdods/engine"
	"github.com/sdods/sdods/impl/rules/rulecheck/derive"
)

// requestSchemas lists the component schemas used as JSON request bodies.
func requestSchemas(doc *openapi3.T) []string {
	set := map[string]bool{}
	for _, item := range doc.Paths.Map() {
		for _, o := range item.Operations() {
			if o.RequestBody == nil || o.RequestBody.Value == nil {
				continue
			}
			for _, mt := range o.RequestBody.Value.Content {
				if mt.Schema != nil && strings.HasPrefix(mt.Schema.Ref, "#/components/schemas/") {
					set[strings.TrimPrefix(mt.Schema.Ref, "#/components/schemas/")] = true
				}
			}
		}
	}
	var out []string
	for n := range set {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// valid builds a body the schema accepts: every member (but readOnly ones: these are request
// bodies), each with a small valid value; ok is false where this generator cannot make a value
// (a pattern without an example).
func valid(s *openapi3.Schema, depth int) (any, bool) {
	if depth > 10 {
		return nil, false
	}
	switch {
	case len(s.Enum) > 0:
		return s.Enum[0], true
	case s.Const != nil:
		return s.Const, true
	case s.Example != nil:
		return s.Example, true
	case len(s.OneOf) > 0:
		v, ok := valid(s.OneOf[0].Value, depth+1)
		if m, isObj := v.(map[string]any); isObj && s.Discriminator != nil {
			m[s.Discriminator.PropertyName] = tagOf(s.Discriminator, s.OneOf[0].Ref)
		}
		return v, ok
	case len(s.AnyOf) > 0:
		return valid(s.AnyOf[0].Value, depth+1)
	}
	t := ""
	if s.Type != nil && len(s.Type.Slice()) > 0 {
		t = s.Type.Slice()[0]
	}
	if len(s.AllOf) > 0 || len(s.Properties) > 0 {
		t = "object"
	}
	switch t {
	case "object":
		obj := map[string]any{}
		for _, sub := range s.AllOf {
			v, ok := valid(sub.Value, depth+1)
			m, isObj := v.(map[string]any)
			if !ok || !isObj {
				return nil, false
			}
			for k, x := range m {
				obj[k] = x
			}
		}
		for n, p := range s.Properties {
			if p.Value == nil || p.Value.ReadOnly {
				continue
			}
			v, ok := valid(p.Value, depth+1)
			if !ok {
				if contains(s.Required, n) {
					return nil, false
				}
				continue
			}
			obj[n] = v
		}
		if s.MaxProps != nil && uint64(len(obj)) > *s.MaxProps {
			return nil, false
		}
		return obj, true
	case "array":
		n := max(int(s.MinItems), 1)
		if s.MaxItems != nil && uint64(n) > *s.MaxItems {
			n = int(*s.MaxItems)
		}
		arr := []any{}
		for i := 0; i < n; i++ {
			v, ok := valid(s.Items.Value, depth+1)
			if !ok {
				return nil, false
			}
			if s.UniqueItems && i > 0 {
				if str, isStr := v.(string); isStr {
					v = str + strings.Repeat("b", i)
				}
			}
			arr = append(arr, v)
		}
		return arr, true
	case "string":
		if s.Pattern != "" {
			return patternValue(s)
		}
		switch s.Format {
		case "date":
			return "2024-01-31", true
		case "date-time":
			return "2024-01-31T10:00:00Z", true
		case "uuid":
			return "123e4567-e89b-12d3-a456-426614174000", true
		case "email":
			return "a@example.com", true
		case "uri":
			return "https://example.com/x", true
		}
		return strings.Repeat("a", max(int(s.MinLength), 1)), true
	case "integer", "number":
		switch {
		case s.Min != nil:
			return *s.Min + 1, true
		case s.ExclusiveMin.Value != nil:
			return *s.ExclusiveMin.Value + 1, true
		}
		return 1, true
	case "boolean":
		return true, true
	}
	return nil, s.Type == nil
}

// patternValue is a string Go's regexp (kin-openapi) matches with the pattern of s, within its
// length bounds, drawn from the pattern itself (deterministically).
func patternValue(s *openapi3.Schema) (any, bool) {
	re, err := syntax.Parse(derive.KinGoPattern(s.Pattern), syntax.Perl)
	if err != nil {
		return nil, false
	}
	goRe := regexp.MustCompile(derive.KinGoPattern(s.Pattern))
	r := rand.New(rand.NewSource(1))
	for i := 0; i < 200; i++ {
		var b strings.Builder
		sample(r, re, &b)
		v := b.String()
		n := uint64(utf8.RuneCountInString(v))
		if goRe.MatchString(v) && n >= s.MinLength && (s.MaxLength == nil || n <= *s.MaxLength) && !strings.ContainsAny(v, "\r\u2028\u2029\v") {
			return v, true
		}
	}
	return nil, false
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func tagOf(d *openapi3.Discriminator, ref string) string {
	for k, m := range d.Mapping {
		if m.Ref == ref {
			return k
		}
	}
	return ref[strings.LastIndex(ref, "/")+1:]
}

// violation returns a value that breaks rule r, given the valid value at r's path; the schema
// s holds the constraint (for required, the parent object).
func violation(r derive.Rule, s *openapi3.Schema, validValue any) (any, bool) {
	switch r.Kind {
	case "maxLength":
		return strings.Repeat("a", int(*s.MaxLength)+1), true
	case "minLength":
		return strings.Repeat("a", int(s.MinLength)-1), true
	case "enum":
		if s.Type != nil && (s.Type.Permits("integer") || s.Type.Permits("number")) {
			return 987654, true
		}
		return "not-in-enum", true
	case "const":
		return "not the constant", true
	case "type":
		if s.Type.Permits("string") {
			return 12, true
		}
		if s.Type.Permits("integer") && !s.Type.Permits("number") {
			return 1.5, true
		}
		return "wrong type", true
	case "minimum":
		return *s.Min - 1, true
	case "maximum":
		return *s.Max + 1, true
	case "exclusiveMinimum":
		if s.ExclusiveMin.Value != nil {
			return *s.ExclusiveMin.Value, true
		}
		return *s.Min, true
	case "exclusiveMaximum":
		if s.ExclusiveMax.Value != nil {
			return *s.ExclusiveMax.Value, true
		}
		return *s.Max, true
	case "multipleOf":
		return *s.MultipleOf * 1.5, true
	case "minItems":
		return []any{}, true
	case "maxItems", "uniqueItems":
		arr, ok := validValue.([]any)
		if !ok || len(arr) == 0 {
			return nil, false
		}
		n := 2
		if r.Kind == "maxItems" {
			n = int(*s.MaxItems) + 1
		}
		out := make([]any, n)
		for i := range out {
			out[i] = arr[0]
		}
		return out, true
	case "minProperties":
		return map[string]any{}, true
	case "maxProperties":
		m := map[string]any{}
		for i := 0; i <= int(*s.MaxProps); i++ {
			m[fmt.Sprintf("k%d", i)] = "v"
		}
		return m, true
	case "format":
		return "not a " + s.Format + " value", true
	case "pattern":
		return " ", true
	case "discriminator":
		return "no-such-variant", true
	case "oneOf", "anyOf":
		if strings.HasSuffix(r.Pointer, "/multiple") {
			return nil, false
		}
		return true, true
	}
	return nil, false
}

// constraintSchema is the schema holding the rule's constraint: the one its pointer names.
func constraintSchema(root *openapi3.Schema, ptr string) *openapi3.Schema {
	segs := strings.Split(strings.TrimPrefix(ptr, "/"), "/")
	s := root
	for i := 0; i < len(segs)-1; i++ {
		seg := strings.ReplaceAll(strings.ReplaceAll(segs[i], "~1", "/"), "~0", "~")
		switch seg {
		case "properties":
			i++
			p := s.Properties[segs[i]]
			if p == nil {
				return nil
			}
			s = p.Value
		case "items":
			s = s.Items.Value
		case "allOf", "oneOf", "anyOf":
			i++
			var list openapi3.SchemaRefs
			switch seg {
			case "allOf":
				list = s.AllOf
			case "oneOf":
				list = s.OneOf
			default:
				list = s.AnyOf
			}
			var k int
			fmt.Sscan(segs[i], &k)
			s = list[k].Value
		case "required", "discriminator":
			return s
		default:
			return s
		}
	}
	return s
}

// roundTrip makes a body JSON data as a server would decode it.
func roundTrip(v any) any {
	b, _ := json.Marshal(v)
	var out any
	_ = json.Unmarshal(b, &out)
	return out
}

// kinValid is kin-openapi's verdict on a request body: formats checked (its predefined email
// and RFC 9562 uuid patterns, and uri by net/url with a scheme), JSON Schema 2020-12 for 3.1.
func kinValid(doc *openapi3.T, s *openapi3.Schema, body any) error {
	opts := []openapi3.SchemaValidationOption{openapi3.VisitAsRequest(), openapi3.EnableFormatValidation(), openapi3.MultiErrors(),
		openapi3.WithStringFormatValidator("email", openapi3.NewRegexpFormatValidator(openapi3.FormatOfStringForEmail)),
		openapi3.WithStringFormatValidator("uuid", openapi3.NewRegexpFormatValidator(openapi3.FormatOfStringForUUIDOfRFC9562)),
		openapi3.WithStringFormatValidator("uri", openapi3.NewCallbackValidator(func(v string) error {
			u, err := url.Parse(v)
			if err != nil || u.Scheme == "" || strings.ContainsAny(v, " \t\n\r") {
				return fmt.Errorf("not a URI")
			}
			return nil
		}))}
	if strings.HasPrefix(doc.OpenAPI, "3.1") {
		opts = append(opts, openapi3.EnableJSONSchema2020())
	}
	return s.VisitJSON(body, opts...)
}

// setAt writes v at path (array elements by index) in body, or reports that the path is not there.
func setAt(body any, path []string, v any, del bool) bool {
	cur := body
	for i, seg := range path {
		last := i == len(path)-1
		switch c := cur.(type) {
		case map[string]any:
			if last {
				if del {
					delete(c, seg)
				} else {
					c[seg] = v
				}
				return true
			}
			next, ok := c[seg]
			if !ok {
				return false
			}
			cur = next
		case []any:
			var k int
			if _, err := fmt.Sscan(seg, &k); err != nil || k >= len(c) {
				return false
			}
			if last {
				c[k] = v
				return true
			}
			cur = c[k]
		default:
			return false
		}
	}
	return false
}

func getAt(body any, path []string) any {
	cur := body
	for _, seg := range path {
		switch c := cur.(type) {
		case map[string]any:
			cur = c[seg]
		case []any:
			var k int
			if _, err := fmt.Sscan(seg, &k); err != nil || k >= len(c) {
				return nil
			}
			cur = c[k]
		default:
			return nil
		}
	}
	return cur
}

type stats struct{ schemas, checked, violations, indexed int }

// indexOf is the position of the first element index ("*") in a rule's path, or -1.
func indexOf(_ []string, rulePath []string) int {
	for i, seg := range rulePath {
		if seg == "*" {
			return i
		}
	}
	return -1
}

// checkSchema derives one schema and checks it against kin-openapi: the valid body has no
// finding; each single-constraint violation is rejected by kin-openapi and raises the rule's
// code, with the element's index in the field of rules bound per element.
func checkSchema(t *testing.T, doc *openapi3.T, name string, st *stats) *derive.Result {
	t.Helper()
	st.schemas++
	schema := doc.Components.Schemas[name].Value
	res, err := derive.Derive(doc, name, derive.Options{})
	if err != nil {
		t.Fatal(err)
	}
	src, _ := json.Marshal(res.Ruleset("derived-" + strings.ToLower(name)))
	rs, err := engine.Compile(src)
	if err != nil {
		t.Fatalf("%s: derived ruleset does not load: %v", name, err)
	}
	again, _ := derive.Derive(doc, name, derive.Options{})
	if a, b := mustJSON(res), mustJSON(again); a != b {
		t.Errorf("%s: two derivations differ", name)
	}
	body, ok := valid(schema, 0)
	if !ok {
		t.Logf("%s: no valid body generated (a pattern without example); rules compiled only", name)
		return res
	}
	body = roundTrip(body)
	if _, isObj := body.(map[string]any); !isObj {
		t.Logf("%s: the body is not an object; sdods data is an object", name)
		return res
	}
	if err := kinValid(doc, schema, body); err != nil {
		t.Logf("%s: the generated body is not valid for kin-openapi (%v); rules compiled only", name, firstLine(err))
		return res
	}
	st.checked++
	if got := findings(t, rs, body); len(got) > 0 {
		t.Errorf("%s: valid body %s raised %v", name, mustJSON(body), got)
	}
	for _, r := range res.Rules {
		path := make([]string, len(r.Path))
		for i, seg := range r.Path {
			path[i] = seg
			if seg == "*" {
				path[i] = "0"
			}
		}
		if len(path) == 0 {
			continue
		}
		bad := roundTrip(body)
		if r.Kind == "required" {
			if !setAt(bad, path, nil, true) {
				continue
			}
		} else {
			holder := constraintSchema(schema, r.Pointer)
			if holder == nil {
				continue
			}
			v, ok := violation(r, holder, getAt(body, path))
			if !ok || !setAt(bad, path, v, false) {
				continue
			}
		}
		bad = roundTrip(bad)
		kinErr := kinValid(doc, schema, bad)
		got := findings(t, rs, bad)
		inBranch := strings.Contains(r.Pointer, "/oneOf/") || strings.Contains(r.Pointer, "/anyOf/")
		if kinErr == nil {
			// Breaking one variant's constraint may leave the body matching another variant:
			// then the rules must agree that it is valid.
			if !inBranch {
				t.Errorf("%s: %s: kin-openapi accepts %s, which the rule's violation was built to break", name, r.Code, mustJSON(bad))
			} else if len(got) > 0 {
				t.Errorf("%s: kin-openapi accepts %s but the findings are %v", name, mustJSON(bad), got)
			}
			continue
		}
		st.violations++
		found := false
		for _, f := range got {
			// Inside a variant, the right code may be the variant's rule or the rule of the
			// oneOf, anyOf or discriminator that encloses it.
			if strings.HasPrefix(f.Code, r.Code) || (inBranch && enclosing(r.Code, f.Code)) {
				found = true
				if i := indexOf(path, r.Path); i >= 0 && (r.Entity != "" || len(r.Fields) > 0) {
					// Bound per element: the field carries the element's index, and every
					// inner index the rule binds (up to where some() takes over).
					want := strings.Join(path, ".")
					full := f.Field == want || (r.Kind == "required" && f.Field == strings.Join(path[:len(path)-1], "."))
					if !full && (!strings.HasPrefix(want, f.Field+".") || !strings.HasPrefix(f.Field+".", strings.Join(path[:i+1], ".")+".")) {
						t.Errorf("%s: %s: finding field %q does not carry the element's index (%s)", name, r.Code, f.Field, want)
					}
					if full {
						st.indexed++
					}
				}
			}
		}
		if !found && inBranch && lossyBranch(res, r.Pointer) {
			t.Logf("%s: %s: not reported, as the lossiness report says (%s)", name, r.Code, firstLine(kinErr))
			continue
		}
		if !found {
			t.Errorf("%s: body %s violates %s (kin-openapi: %v) but the findings are %v", name, mustJSON(bad), r.Code, firstLine(kinErr), got)
		}
	}
	return res
}

func lossyAt(res *derive.Result, ptr string) bool {
	for _, l := range res.Lossy {
		if l.Pointer == ptr {
			return true
		}
	}
	return false
}

// lossyBranch reports whether the oneOf or anyOf enclosing the constraint at ptr is in the
// lossiness report.
func lossyBranch(res *derive.Result, ptr string) bool {
	for _, l := range res.Lossy {
		if (strings.HasSuffix(l.Pointer, "/oneOf") || strings.HasSuffix(l.Pointer, "/anyOf")) && strings.HasPrefix(ptr, l.Pointer+"/") {
			return true
		}
	}
	return false
}

// enclosing reports whether code is the oneOf, anyOf or discriminator rule of a schema that
// encloses the variant rule inner.
func enclosing(inner, code string) bool {
	for _, kw := range []string{"_ONEOF", "_ANYOF"} {
		if i := strings.LastIndex(inner, kw+"_"); i >= 0 {
			base := inner[:i]
			if code == base+kw || code == base+kw+"_MULTIPLE" || code == base+"_DISCRIMINATOR" {
				return true
			}
		}
	}
	return false
}

func findings(t *testing.T, rs *engine.RuleSet, body any) []engine.Finding {
	t.Helper()
	res, err := rs.Evaluate(&engine.Request{Data: body})
	if err != nil {
		t.Fatalf("evaluate: %v", err)
	}
	return res.Findings
}

// TestDeriveProjectDocuments derives every request-body schema of both of the project's
// OpenAPI documents and checks each against kin-openapi.
func TestDeriveProjectDocuments(t *testing.T) {
	var st stats
	for _, file := range []string{"../../../../openapi/server.yaml", "../../../../openapi/rules.yaml"} {
		doc, err := openapi3.NewLoader().LoadFromFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range requestSchemas(doc) {
			checkSchema(t, doc, name, &st)
		}
	}
	t.Logf("%d request-body schemas derived, %d checked with a valid body, %d violations agreed, %d findings with every element index", st.schemas, st.checked, st.violations, st.indexed)
	if st.schemas < 30 || st.checked < st.schemas*2/3 || st.violations < 150 {
		t.Errorf("derived %d schemas, checked %d, %d violations", st.schemas, st.checked, st.violations)
	}
}

// TestDeriveFeatures covers every keyword derive handles, in OpenAPI 3.0 and 3.1 fixtures.
func TestDeriveFeatures(t *testing.T) {
	var st stats
	kinds := map[string]bool{}
	lossy := map[string]bool{}
	for _, file := range []string{"testdata/features-3.0.yaml", "testdata/features-3.1.yaml"} {
		doc, err := openapi3.NewLoader().LoadFromFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range requestSchemas(doc) {
			res := checkSchema(t, doc, name, &st)
			for _, r := range res.Rules {
				kinds[r.Kind] = true
			}
			for _, l := range res.Lossy {
				lossy[l.Pointer] = true
			}
		}
	}
	for _, k := range []string{"required", "type", "enum", "const", "minLength", "maxLength", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "minItems", "maxItems", "uniqueItems", "minProperties", "maxProperties", "pattern", "format", "discriminator", "oneOf", "anyOf"} {
		if !kinds[k] {
			t.Errorf("no rule of kind %s derived from the fixtures", k)
		}
	}
	for _, p := range []string{"/additionalProperties", "/properties/lines/items/additionalProperties", "/properties/meta/additionalProperties", "/properties/id", "/properties/lines/items/properties/price/type"} {
		if !lossy[p] {
			t.Errorf("lossiness report lacks %s: %v", p, lossy)
		}
	}
	// Element indices in the findings' fields, whatever the arrays' lengths (wildcard fields,
	// spec/v1 ruleset.md §3): object elements, scalars, arrays in elements, arrays of arrays,
	// an array without maxItems, and a null element.
	batchDoc, err := openapi3.NewLoader().LoadFromFile("testdata/features-3.0.yaml")
	if err != nil {
		t.Fatal(err)
	}
	batch, _ := derive.Derive(batchDoc, "Batch", derive.Options{})
	batchSrc, _ := json.Marshal(batch.Ruleset("batch"))
	batchRS, err := engine.Compile(batchSrc)
	if err != nil {
		t.Fatal(err)
	}
	var batchBody any
	json.Unmarshal([]byte(`{"matrix":[[1],[2,3],[4,10]],"labels":["ok","toolong",null],"codes":["C01","bad"],
		"lines":[{"sku":"a","parts":[{"pn":"p"},{"pn":"q","dims":{"w":-1}}]},{"sku":"b","serials":["S1","x"],"parts":[{"pn":"p"},{}]}]}`), &batchBody)
	if kinValid(batchDoc, batchDoc.Components.Schemas["Batch"].Value, batchBody) == nil {
		t.Fatal("kin-openapi accepts the invalid batch")
	}
	got := map[string]string{}
	for _, f := range findings(t, batchRS, batchBody) {
		got[f.Code] = f.Field
	}
	for code, field := range map[string]string{
		"BATCH_MATRIX_ITEMS_ITEMS_MAXIMUM":             "matrix.2.1",
		"BATCH_CODES_ITEMS_PATTERN":                    "codes.1",
		"BATCH_LINES_ITEMS_SERIALS_ITEMS_PATTERN":      "lines.1.serials.1",
		"BATCH_LINES_ITEMS_PARTS_ITEMS_REQUIRED_PN":    "lines.1.parts.1",
		"BATCH_LINES_ITEMS_PARTS_ITEMS_DIMS_W_MINIMUM": "lines.0.parts.1.dims.w",
		"BATCH_LABELS_ITEMS_MAXLENGTH":                 "labels.1", // an array without maxItems
		"BATCH_LABELS_ITEMS_TYPE":                      "labels.2", // a null element
	} {
		if got[code] != field {
			t.Errorf("%s: field %q, want %q (findings %v)", code, got[code], field, got)
		}
	}
	if len(got) != 7 {
		t.Errorf("findings %v, want 7", got)
	}
	// A body matching both variants of a oneOf without discriminator.
	doc, err := openapi3.NewLoader().LoadFromFile("testdata/features-3.0.yaml")
	if err != nil {
		t.Fatal(err)
	}
	res, _ := derive.Derive(doc, "Contact", derive.Options{})
	src, _ := json.Marshal(res.Ruleset("contact"))
	rs, err := engine.Compile(src)
	if err != nil {
		t.Fatal(err)
	}
	both := roundTrip(map[string]any{"reach": map[string]any{"email": "a@example.com", "phone": "0123456"}})
	if kinValid(doc, doc.Components.Schemas["Contact"].Value, both) == nil {
		t.Fatal("kin-openapi accepts a body matching both variants of a oneOf")
	}
	if got := findings(t, rs, both); len(got) != 1 || got[0].Code != "CONTACT_REACH_ONEOF_MULTIPLE" {
		t.Errorf("a body matching both variants: findings %v, want CONTACT_REACH_ONEOF_MULTIPLE", got)
	}
	// What the lossiness report says about integers is so: kin-openapi rejects a count of
	// 1.0000000000000002, the ruleset judges its 15-digit decimal, 1.
	doc31, err := openapi3.NewLoader().LoadFromFile("testdata/features-3.1.yaml")
	if err != nil {
		t.Fatal(err)
	}
	reading, _ := derive.Derive(doc31, "Reading", derive.Options{})
	src31, _ := json.Marshal(reading.Ruleset("reading"))
	rs31, err := engine.Compile(src31)
	if err != nil {
		t.Fatal(err)
	}
	var body31 any
	json.Unmarshal([]byte(`{"sensor":"a","celsius":20,"unit":"C","comment":null,"count":1.0000000000000002}`), &body31)
	if kinValid(doc31, doc31.Components.Schemas["Reading"].Value, body31) == nil || len(findings(t, rs31, body31)) != 0 || !lossyAt(reading, "/properties/count/type") {
		t.Errorf("a count of 1.0000000000000002: kin-openapi rejects it, the ruleset passes it, and the report lists it")
	}
	// Direction: a request does not check readOnly members, a response not writeOnly ones.
	for _, dir := range []struct {
		opt         derive.Options
		has, hasNot string
	}{{derive.Options{}, "ORDER_PASSWORD_MINLENGTH", "ORDER_ID_FORMAT"}, {derive.Options{Response: true}, "ORDER_ID_FORMAT", "ORDER_PASSWORD_MINLENGTH"}} {
		res, _ := derive.Derive(doc, "Order", dir.opt)
		codes := map[string]bool{}
		for _, r := range res.Rules {
			codes[r.Code] = true
		}
		if !codes[dir.has] || codes[dir.hasNot] {
			t.Errorf("response=%v: want %s and not %s", dir.opt.Response, dir.has, dir.hasNot)
		}
	}
	if st.checked != st.schemas || st.violations < 40 {
		t.Errorf("%d schemas, %d checked, %d violations", st.schemas, st.checked, st.violations)
	}
	t.Logf("%d schemas, %d violations agreed", st.schemas, st.violations)
}

func firstLine(err error) string { s, _, _ := strings.Cut(err.Error(), "\n"); return s }

func mustJSON(v any) string { b, _ := json.Marshal(v); return string(b) }

// TestFormatsAgree compares the derived format rules with kin-openapi's format checks on edge
// cases: they agree except where the lossiness report says they do not.
func TestFormatsAgree(t *testing.T) {
	doc, err := openapi3.NewLoader().LoadFromFile("testdata/features-3.0.yaml")
	if err != nil {
		t.Fatal(err)
	}
	res, _ := derive.Derive(doc, "Order", derive.Options{})
	src, _ := json.Marshal(res.Ruleset("order"))
	rs, err := engine.Compile(src)
	if err != nil {
		t.Fatal(err)
	}
	s := doc.Components.Schemas["Order"].Value
	known := map[string]bool{"placedOn 0000-01-01": true, "deliverAt 2024-01-01T23:59:60Z": true}
	for _, field := range []string{"placedOn", "deliverAt", "customerEmail", "website"} {
		code := "ORDER_" + strings.ToUpper(field) + "_FORMAT"
		for _, v := range []string{"2024-01-01", "2024-01-01T10:00Z", "2024-01-01t10:00:00z", "2024-01-01T10:00:00", "2024-01-01 10:00:00Z",
			"2024-01-01T24:00:00Z", "2024-01-01T23:59:60Z", "0000-01-01", "2024-1-1", "2024-02-30", "2024-02-29", "2023-02-29",
			"2024-01-01T10:00:00.5+01:00", "2024-01-01T10:00:00+24:00", "2024-01-01T10:00:00-23:59", "a@b", "a b@c", "@b", "a@b c", "a@@b",
			"x@y.z", "http://x", "mailto:a", "x:", "1http://x", "http://a b", "urn:x\u00e9", ""} {
			body, _ := valid(s, 0)
			m := roundTrip(body).(map[string]any)
			m[field] = v
			kinOK := kinValid(doc, s, m) == nil
			ours := true
			for _, f := range findings(t, rs, m) {
				if f.Code == code {
					ours = false
				}
			}
			if kinOK != ours && !known[field+" "+v] {
				t.Errorf("%s %q: kin-openapi valid=%v, derived rules valid=%v", field, v, kinOK, ours)
			}
			if known[field+" "+v] && !lossyAt(res, "/properties/"+field+"/format") {
				t.Errorf("%s %q: the disagreement is not in the lossiness report", field, v)
			}
		}
	}
}

// matchesPattern is the pattern of the matches operation in a rule's condition.
func matchesPattern(e any) string {
	switch x := e.(type) {
	case map[string]any:
		if x["op"] == "matches" {
			return x["args"].([]any)[1].(string)
		}
		for _, v := range x {
			if p := matchesPattern(v); p != "" {
				return p
			}
		}
	case []any:
		for _, v := range x {
			if p := matchesPattern(v); p != "" {
				return p
			}
		}
	}
	return ""
}

// TestPatternsAgree compares every pattern rule derive emits for the project's documents (the
// schema's pattern translated to the portable subset) with Go's regexp on the schema's pattern
// (as kin-openapi validates) on strings chosen to tell dialects apart; TestPatternTranslation
// is the full differential test.
func TestPatternsAgree(t *testing.T) {
	samples := []string{"", "a", "A", "z", "0", "9", "١", "a-b", "a_b", "a b", "a\nb", "ab\n", "\na", "é", "😀", "-a", "a-", "abc123",
		"ABC-1234", "x.y", "a/b", "a@b", "${x}", "{{x}}", "key=value", "a\tb", strings.Repeat("a", 70), "a1-b2-c3", "a.b", "a\u2028b", "a\rb"}
	n := 0
	for _, file := range []string{"../../../../openapi/server.yaml", "../../../../openapi/rules.yaml", "testdata/features-3.0.yaml"} {
		doc, err := openapi3.NewLoader().LoadFromFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range requestSchemas(doc) {
			res, _ := derive.Derive(doc, name, derive.Options{})
			for _, r := range res.Rules {
				if r.Kind != "pattern" {
					continue
				}
				p := r.Message[strings.Index(r.Message, " must match ")+len(" must match "):] // the message names the pattern
				portable := matchesPattern(r.When)
				re, err := regexp.Compile(derive.KinGoPattern(p))
				if err != nil {
					t.Errorf("%s: %v", r.Code, err)
					continue
				}
				n++
				for _, s := range samples {
					raw, _ := json.Marshal(map[string]any{"op": "matches", "args": []any{s, portable}})
					e, err := engine.CompileExpression(raw)
					if err != nil {
						t.Fatalf("%s: %v", r.Code, err)
					}
					got, err := e.Evaluate(map[string]any{})
					if err != nil {
						t.Fatal(err)
					}
					if got != re.MatchString(s) {
						t.Errorf("%s: pattern %q on %q: sdods %v, Go regexp %v", r.Code, p, s, got, re.MatchString(s))
					}
				}
			}
		}
	}
	if n == 0 {
		t.Fatal("no pattern rule derived")
	}
	t.Logf("%d patterns compared on %d strings", n, len(samples))
}
