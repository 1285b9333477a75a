// Package derive turns the constraints of an OpenAPI component schema into a baseline sdods
// ruleset: one rule per constraint, whose finding code comes from the schema name and the JSON
// pointer of the constraint, so re-deriving an unchanged schema gives identical codes. What it
// cannot express exactly is never emitted as a rule that could pass what the schema forbids or
// flag what it allows: it is listed in the lossiness report instead.
package derive

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// Rule is one derived rule with what a test needs to violate it.
type Rule struct {
	Code    string   `json:"code"`
	Pointer string   `json:"pointer"` // of the constraint in the component schema
	Path    []string `json:"path"`    // data path of the constrained value; "*" for every element
	Kind    string   `json:"kind"`    // the keyword: required, type, maxLength, …
	Message string   `json:"message"`
	When    any      `json:"when"`
	// Entity binds the rule to each element of the array at Entity (a data path): it runs once
	// per element I and field F of Fields with value = the element's F, and its findings carry
	// the element's index (Entity.I.F); the ruleset targets the wildcard field Entity.*.F.
	// Without Entity, Fields are data paths the rule targets. A segment "*" in Fields stands for
	// every element of an inner array (…members.*.emails.*): the finding's field carries these
	// indices too (spec/v1 ruleset.md §3).
	Entity string   `json:"entity,omitempty"`
	Fields []string `json:"fields,omitempty"`
}

// Loss is a constraint the ruleset does not express.
type Loss struct {
	Pointer string `json:"pointer"`
	Reason  string `json:"reason"`
}

// Result is a derivation.
type Result struct {
	Schema string `json:"schema"`
	Rules  []Rule `json:"rules"`
	Lossy  []Loss `json:"lossy"`
}

// Options choose the direction: a request body ignores readOnly properties, a response body
// writeOnly ones.
type Options struct{ Response bool }

type walker struct {
	name  string
	opt   Options
	res   *Result
	depth int
}

// ctx is where a value is checked: wrap places a violation of an array element inside the
// some() of its enclosing arrays; entity and fields bind rules to each element of an array of
// objects, or to enumerated indices of a bounded array, instead (see Rule).
type ctx struct {
	wrap   func(any) any
	entity string
	// self: the value is the entity's element itself, which cannot be bound; its members can.
	self bool
	// fields: the value is {"var":"value"}, read at each of these paths (relative to entity).
	fields []string
	// frozen: the value is read through some() inside the bound fields; it reports there.
	frozen bool
	// optional: the value is a member that may be absent, so null cannot be told from absence.
	optional bool
	inArray  bool // checked through some() over an enclosing array
	// element: the value is an element bound by some(), so null is a null element.
	element bool
	// noBind: the conditions are reused inside another rule's condition (a variant of a oneOf
	// or anyOf without discriminator), so they must read data paths, not a run's value.
	noBind bool
}

// bound reports whether the value is read through the run's binding (value).
func (c ctx) bound() bool { return (c.self || c.fields != nil) && !c.frozen }

func suffix(fields []string, seg string) []string {
	out := make([]string, len(fields))
	for i, f := range fields {
		out[i] = f + "." + seg
	}
	return out
}

func identity(e any) any { return e }

// Derive derives the rules of the component schema name of doc.
func Derive(doc *openapi3.T, name string, opt Options) (*Result, error) {
	if doc.Components == nil || doc.Components.Schemas[name] == nil || doc.Components.Schemas[name].Value == nil {
		return nil, fmt.Errorf("component schema %q not found", name)
	}
	w := &walker{name: name, opt: opt, res: &Result{Schema: name, Rules: []Rule{}, Lossy: []Loss{}}}
	if t := doc.Components.Schemas[name].Value.Type; t != nil && len(t.Slice()) > 0 && !t.Permits("object") {
		w.lossy("/type", "a body of type %s cannot be checked: a request's data is an object (or null)", strings.Join(t.Slice(), " or "))
	}
	w.walk(doc.Components.Schemas[name].Value, "", nil, map[string]any{"var": "data"}, ctx{wrap: identity})
	sort.SliceStable(w.res.Lossy, func(i, j int) bool { return w.res.Lossy[i].Pointer < w.res.Lossy[j].Pointer })
	return w.res, nil
}

var nonCode = regexp.MustCompile(`[^A-Z0-9]+`)

// code is NAME_SEGMENTS_KEYWORD from the schema name and the constraint's pointer, dropping the
// structural segments properties and items' wrapper names that carry no meaning.
func (w *walker) code(ptr string) string {
	var parts []string
	parts = append(parts, w.name)
	for _, seg := range strings.Split(strings.TrimPrefix(ptr, "/"), "/") {
		if seg == "properties" || seg == "" {
			continue
		}
		parts = append(parts, seg)
	}
	c := strings.Trim(nonCode.ReplaceAllString(strings.ToUpper(strings.Join(parts, "_")), "_"), "_")
	if c == "" || c[0] < 'A' || c[0] > 'Z' {
		c = "S_" + c // a finding code starts with a letter
	}
	return c
}

func op(name string, args ...any) map[string]any { return map[string]any{"op": name, "args": args} }
func typeIs(e any, t string) any                 { return op("==", op("typeOf", e), t) }
func num(f float64) json.Number                  { return json.Number(strconv.FormatFloat(f, 'g', -1, 64)) }

func (w *walker) lossy(ptr, format string, args ...any) {
	w.res.Lossy = append(w.res.Lossy, Loss{Pointer: ptr, Reason: fmt.Sprintf(format, args...)})
}

func (w *walker) rule(c ctx, ptr string, path []string, kind, msg string, when any) {
	w.res.Rules = append(w.res.Rules, Rule{Code: w.code(ptr), Pointer: ptr, Path: append([]string(nil), path...), Kind: kind, Message: msg, When: c.wrap(when), Entity: c.entity, Fields: append([]string(nil), c.fields...)})
}

func jsonPtr(base, key string) string {
	return base + "/" + strings.ReplaceAll(strings.ReplaceAll(key, "~", "~0"), "/", "~1")
}

// walk derives the rules of schema s for the value v at data path path; wrap places a
// violation of an element inside the some() of every enclosing array.
func (w *walker) walk(s *openapi3.Schema, ptr string, path []string, v any, c ctx) {
	if w.depth > 12 {
		w.lossy(ptr, "nested deeper than 12 schemas (a recursive schema): not derived further")
		return
	}
	w.depth++
	defer func() { w.depth-- }()
	field := strings.Join(path, ".")
	if field == "" {
		field = "the body"
	}
	for i, sub := range s.AllOf {
		if sub.Value != nil {
			w.walk(sub.Value, ptr+"/allOf/"+strconv.Itoa(i), path, v, c)
		}
	}
	if s.Not != nil {
		w.lossy(ptr+"/not", "not is not derived")
	}
	nullable := s.Nullable || (s.Type != nil && s.Type.IncludesNull())
	if s.Type != nil && len(s.Type.Slice()) > 0 {
		var alts []any
		names := []string{}
		for _, t := range s.Type.Slice() {
			switch t {
			case "integer":
				alts = append(alts, op("and", typeIs(v, "number"), op("==", op("mod", v, json.Number("1")), json.Number("0"))))
				w.lossy(ptr+"/type", "integer is judged on the number's 15-significant-digit decimal (spec/v1/numbers.md): 1.0000000000000002 passes as 1")
			case "null":
				continue
			default:
				alts = append(alts, typeIs(v, t))
			}
			names = append(names, t)
		}
		if len(alts) > 0 {
			when := op("and", op("!=", v, nil), op("not", op("or", alts...)))
			if c.element && !nullable {
				when = op("not", op("or", alts...)) // a null element is the wrong type
			}
			w.rule(c, ptr+"/type", path, "type", fmt.Sprintf("%s must be of type %s", field, strings.Join(names, " or ")), when)
		}
		if !nullable && c.optional {
			w.lossy(ptr+"/type", "null is not detected where the member may be absent: sdods reads an absent member and null alike")
		}
	}
	if len(s.Enum) > 0 {
		w.rule(c, ptr+"/enum", path, "enum", fmt.Sprintf("%s must be one of the allowed values", field),
			(op("and", op("!=", v, nil), op("not", op("in", v, op("literal", s.Enum))))))
	}
	if s.Const != nil {
		w.rule(c, ptr+"/const", path, "const", fmt.Sprintf("%s must be the constant value", field),
			(op("and", op("!=", v, nil), op("!=", v, op("literal", s.Const)))))
	}
	isStr := typeIs(v, "string")
	if s.MinLength > 0 {
		w.rule(c, ptr+"/minLength", path, "minLength", fmt.Sprintf("%s must be at least %d characters", field, s.MinLength),
			(op("and", isStr, op("<", op("length", v), num(float64(s.MinLength))))))
	}
	if s.MaxLength != nil {
		w.rule(c, ptr+"/maxLength", path, "maxLength", fmt.Sprintf("%s must be at most %d characters", field, *s.MaxLength),
			(op("and", isStr, op(">", op("length", v), num(float64(*s.MaxLength))))))
	}
	if s.Pattern != "" {
		w.pattern(s.Pattern, ptr+"/pattern", path, field, v, c)
	}
	if s.Format != "" {
		w.format(s.Format, ptr+"/format", path, field, v, c)
	}
	isNum := typeIs(v, "number")
	bound := func(kw string, b float64, cmp string, what string) {
		w.rule(c, ptr+"/"+kw, path, kw, fmt.Sprintf("%s must be %s %s", field, what, strconv.FormatFloat(b, 'g', -1, 64)),
			(op("and", isNum, op(cmp, v, num(b)))))
	}
	if s.Min != nil {
		if s.ExclusiveMin.Bool != nil && *s.ExclusiveMin.Bool {
			bound("exclusiveMinimum", *s.Min, "<=", "greater than")
		} else {
			bound("minimum", *s.Min, "<", "at least")
		}
	}
	if s.ExclusiveMin.Value != nil {
		bound("exclusiveMinimum", *s.ExclusiveMin.Value, "<=", "greater than")
	}
	if s.Max != nil {
		if s.ExclusiveMax.Bool != nil && *s.ExclusiveMax.Bool {
			bound("exclusiveMaximum", *s.Max, ">=", "less than")
		} else {
			bound("maximum", *s.Max, ">", "at most")
		}
	}
	if s.ExclusiveMax.Value != nil {
		bound("exclusiveMaximum", *s.ExclusiveMax.Value, ">=", "less than")
	}
	if s.MultipleOf != nil {
		w.lossy(ptr+"/multipleOf", "multipleOf is computed on 15-significant-digit decimals: a number with more digits is judged on its rounded value")
		w.rule(c, ptr+"/multipleOf", path, "multipleOf", fmt.Sprintf("%s must be a multiple of %v", field, *s.MultipleOf),
			(op("and", isNum, op("!=", op("mod", v, num(*s.MultipleOf)), json.Number("0")))))
	}
	isArr := typeIs(v, "array")
	if s.MinItems > 0 {
		w.rule(c, ptr+"/minItems", path, "minItems", fmt.Sprintf("%s must have at least %d items", field, s.MinItems),
			(op("and", isArr, op("<", op("length", v), num(float64(s.MinItems))))))
	}
	if s.MaxItems != nil {
		w.rule(c, ptr+"/maxItems", path, "maxItems", fmt.Sprintf("%s must have at most %d items", field, *s.MaxItems),
			(op("and", isArr, op(">", op("length", v), num(float64(*s.MaxItems))))))
	}
	if s.UniqueItems {
		a, b := fmt.Sprintf("u%d", w.depth), fmt.Sprintf("w%d", w.depth)
		w.rule(c, ptr+"/uniqueItems", path, "uniqueItems", fmt.Sprintf("%s must not repeat an item", field),
			(op("and", isArr, op("some", v, a, op(">", op("length", op("filter", v, b, op("==", map[string]any{"var": b}, map[string]any{"var": a}))), json.Number("1"))))))
	}
	isObj := typeIs(v, "object")
	if s.MinProps > 0 {
		w.rule(c, ptr+"/minProperties", path, "minProperties", fmt.Sprintf("%s must have at least %d members", field, s.MinProps),
			(op("and", isObj, op("<", op("length", v), num(float64(s.MinProps))))))
	}
	if s.MaxProps != nil {
		w.rule(c, ptr+"/maxProperties", path, "maxProperties", fmt.Sprintf("%s must have at most %d members", field, *s.MaxProps),
			(op("and", isObj, op(">", op("length", v), num(float64(*s.MaxProps))))))
	}
	if s.AdditionalProperties.Has != nil && !*s.AdditionalProperties.Has {
		w.lossy(ptr+"/additionalProperties", "additionalProperties: false is not derived: sdods cannot list an object's member names")
	} else if s.AdditionalProperties.Schema != nil {
		w.lossy(ptr+"/additionalProperties", "additionalProperties with a schema is not derived: sdods cannot list an object's member names")
	}
	vpath, _ := v.(map[string]any)["var"].(string)
	names := make([]string, 0, len(s.Properties))
	for n := range s.Properties {
		names = append(names, n)
	}
	sort.Strings(names)
	required := map[string]bool{}
	for _, r := range s.Required {
		required[r] = true
	}
	for _, n := range names {
		p := s.Properties[n]
		pp := jsonPtr(ptr+"/properties", n)
		if p.Value == nil {
			continue
		}
		if (!w.opt.Response && p.Value.ReadOnly) || (w.opt.Response && p.Value.WriteOnly) {
			w.lossy(pp, "readOnly or writeOnly for this direction: not checked")
			continue
		}
		if strings.Contains(n, ".") || n == "" {
			w.lossy(pp, "a member name with '.' cannot be addressed by an sdods variable")
			continue
		}
		w.walk(p.Value, pp, appendPath(path, n), w.member(c, vpath, n), w.memberCtx(c, n, !required[n]))
	}
	for _, r := range s.Required {
		rp := ptr + "/required/" + r
		if strings.Contains(r, ".") {
			w.lossy(rp, "a member name with '.' cannot be addressed")
			continue
		}
		if p := s.Properties[r]; p != nil && p.Value != nil && ((!w.opt.Response && p.Value.ReadOnly) || (w.opt.Response && p.Value.WriteOnly)) {
			continue // not sent in this direction: its absence is right
		}
		if p := s.Properties[r]; p != nil && p.Value != nil && (p.Value.Nullable || (p.Value.Type != nil && p.Value.Type.IncludesNull())) {
			w.lossy(rp, "required and nullable: sdods reads an absent member and null alike")
			continue
		}
		mc := w.memberCtx(c, r, false)
		when := op("and", isObj, op("==", w.member(c, vpath, r), nil))
		switch {
		case c.self && !c.frozen:
			// A member of the element itself: bound to the member (the element cannot be
			// bound), it reads null for a missing member and for an element that is not an
			// object, which its type rule reports anyway.
			when = op("==", map[string]any{"var": "value"}, nil)
		case c.bound():
			// A member of a bound object (or of an enumerated element, which reads null
			// beyond the array's end): reported on the object, whose field is bound.
			mc = c
			mc.optional = false
			when = op("and", isObj, op("==", map[string]any{"var": "value." + r}, nil))
		}
		w.rule(mc, rp, appendPath(path, r), "required", strings.Join(appendPath(path, r), ".")+" is required", when)
	}
	if s.Items != nil && s.Items.Value != nil {
		w.items(s, ptr, path, v, c)
	}
	if len(s.OneOf) > 0 || len(s.AnyOf) > 0 {
		w.branches(s, ptr, path, v, c)
	}
}

func appendPath(path []string, seg string) []string {
	return append(append([]string(nil), path...), seg)
}

// member is the variable of member n of the object read by vpath. Inside an element bound per
// index, the element's own members are read through their own binding (value).
func (w *walker) member(c ctx, vpath, n string) any {
	if c.bound() {
		return map[string]any{"var": "value"}
	}
	return map[string]any{"var": vpath + "." + n}
}

func (w *walker) memberCtx(c ctx, n string, optional bool) ctx {
	c.optional, c.element = optional, false
	switch {
	case c.frozen:
	case c.self:
		c.self, c.fields = false, []string{n}
	case c.fields != nil:
		c.fields = suffix(c.fields, n)
	}
	return c
}

// items derives the rules of an array's elements. Members of object elements of an array at a
// data path (not inside another array) are bound per element: the finding's field carries the
// index. Elements whose value can be bound — scalar elements, arrays of arrays, arrays inside
// bound elements — are bound through a wildcard field ("tags.*", "lines.*.parts.*.pn"), one run
// per element. The rest (elements with allOf/oneOf/anyOf, arrays inside a variant without
// discriminator) is checked with some() over the elements and reported on the array.
func (w *walker) items(s *openapi3.Schema, ptr string, path []string, v any, c ctx) {
	it := s.Items.Value
	ip := ptr + "/items"
	vpath, _ := v.(map[string]any)["var"].(string)
	isArr := typeIs(v, "array")
	el := fmt.Sprintf("e%d", w.depth)
	elemCtx := ctx{wrap: func(e any) any { return c.wrap(op("and", isArr, op("some", v, el, e))) }, entity: c.entity, self: c.self, fields: c.fields, frozen: true, inArray: true, element: true, noBind: c.noBind}
	elemPath := appendPath(path, "*")
	objectElems := len(it.Properties) > 0 && len(it.AllOf) == 0 && len(it.OneOf) == 0 && len(it.AnyOf) == 0
	composed := len(it.AllOf) > 0 || len(it.OneOf) > 0 || len(it.AnyOf) > 0
	topLevel := !c.frozen && !c.self && c.fields == nil && c.entity == "" && strings.HasPrefix(vpath, "data.")
	if c.noBind {
		w.walk(it, ip, elemPath, map[string]any{"var": el}, elemCtx)
		return
	}
	if topLevel && objectElems && !it.Nullable {
		// The element itself (its type, its member count) through a wildcard field; its members
		// bound per element.
		shallow := *it
		shallow.Properties, shallow.Required, shallow.Items = nil, nil, nil
		whole := ctx{wrap: c.wrap, fields: []string{strings.TrimPrefix(vpath, "data.") + ".*"}, inArray: true, element: true}
		w.walk(&shallow, ip, elemPath, map[string]any{"var": "value"}, whole)
		deep := &openapi3.Schema{Properties: it.Properties, Required: it.Required}
		bound := ctx{wrap: identity, entity: strings.TrimPrefix(vpath, "data."), self: true}
		w.walk(deep, ip, elemPath, map[string]any{"var": "value"}, bound)
		return
	}
	base := c.fields
	if topLevel {
		base = []string{strings.TrimPrefix(vpath, "data.")}
	}
	if base != nil && !c.frozen && !composed {
		// Every element, whatever the array's length: a wildcard field (ruleset.md §3) runs
		// the rule once per element, the finding's field carrying its index. An element that
		// is null is a run whose value is null, the array's end is no run.
		ec := ctx{wrap: c.wrap, entity: c.entity, fields: suffix(base, "*"), inArray: true, element: true}
		w.walk(it, ip, elemPath, map[string]any{"var": "value"}, ec)
		return
	}
	w.walk(it, ip, elemPath, map[string]any{"var": el}, elemCtx)
}

// branches derives oneOf and anyOf. With a discriminator, each branch's rules apply when the
// discriminator names that branch, and an unknown discriminator value is a finding. Without
// one, a rule reports a body that matches no branch (and, for oneOf, more than one), and each
// branch's rules report why, only when no branch matches. A branch's "matches" is the absence
// of its findings; when a branch has constraints derive cannot express, it may seem to match
// when it does not, so oneOf's "more than one" rule would flag valid bodies: it is then lossy.
func (w *walker) branches(s *openapi3.Schema, ptr string, path []string, v any, c ctx) {
	kw, refs := "oneOf", s.OneOf
	if len(refs) == 0 {
		kw, refs = "anyOf", s.AnyOf
	}
	if c.entity != "" || c.inArray || c.fields != nil {
		w.lossy(ptr+"/"+kw, "%s inside an array element is not derived", kw)
		return
	}
	field := strings.Join(path, ".")
	if field == "" {
		field = "the body"
	}
	if d := s.Discriminator; d != nil && d.PropertyName != "" {
		vpath, _ := v.(map[string]any)["var"].(string)
		tagVar := map[string]any{"var": vpath + "." + d.PropertyName}
		var tags []any
		for i, ref := range refs {
			if ref.Value == nil {
				continue
			}
			tag := branchTag(d, ref.Ref)
			if tag == "" {
				w.lossy(fmt.Sprintf("%s/%s/%d", ptr, kw, i), "the discriminator has no value for this branch")
				continue
			}
			tags = append(tags, tag)
			bc := ctx{wrap: func(e any) any { return op("and", op("==", tagVar, tag), e) }, optional: c.optional}
			w.walk(ref.Value, fmt.Sprintf("%s/%s/%d", ptr, kw, i), path, v, bc)
		}
		w.rule(c, ptr+"/discriminator", appendPath(path, d.PropertyName), "discriminator",
			fmt.Sprintf("%s.%s must name one of the variants", field, d.PropertyName),
			op("and", typeIs(v, "object"), op("not", op("in", tagVar, op("literal", tags)))))
		return
	}
	var matches []any
	var branchRules [][]int
	lossy := false
	for i, ref := range refs {
		if ref.Value == nil {
			continue
		}
		start, lossStart := len(w.res.Rules), len(w.res.Lossy)
		w.walk(ref.Value, fmt.Sprintf("%s/%s/%d", ptr, kw, i), path, v, ctx{wrap: identity, optional: c.optional, noBind: true})
		var idx []int
		var viol []any
		for j := start; j < len(w.res.Rules); j++ {
			idx = append(idx, j)
			viol = append(viol, w.res.Rules[j].When)
		}
		if len(w.res.Lossy) > lossStart {
			lossy = true
		}
		branchRules = append(branchRules, idx)
		if len(viol) == 0 {
			matches = append(matches, true)
		} else {
			matches = append(matches, op("not", op("or", viol...)))
		}
	}
	none := op("not", op("or", matches...))
	if c.optional || len(path) > 0 {
		none = op("and", op("!=", v, nil), none)
	}
	for _, idx := range branchRules {
		for _, j := range idx {
			w.res.Rules[j].When = op("and", none, w.res.Rules[j].When)
		}
	}
	w.rule(c, ptr+"/"+kw, path, kw, fmt.Sprintf("%s must match %s of the variants", field, map[string]string{"oneOf": "exactly one", "anyOf": "at least one"}[kw]), none)
	if lossy {
		w.lossy(ptr+"/"+kw, "%s has a variant with constraints derive cannot express: a body breaking only those seems to match it (no finding), and a body matching more than one variant is not reported", kw)
		return
	}
	if kw != "oneOf" {
		return
	}
	var count []any
	for _, m := range matches {
		count = append(count, op("if", m, json.Number("1"), json.Number("0")))
	}
	total := any(count[0])
	if len(count) > 1 {
		total = op("+", count...)
	}
	w.rule(c, ptr+"/oneOf/multiple", path, "oneOf", field+" matches more than one variant", op(">", total, json.Number("1")))
}

// branchTag is the discriminator value naming the branch $ref: its mapping key, else the
// referenced schema's name.
func branchTag(d *openapi3.Discriminator, ref string) string {
	var keys []string
	for k, m := range d.Mapping {
		if m.Ref == ref {
			keys = append(keys, k)
		}
	}
	if len(keys) > 0 {
		sort.Strings(keys)
		return keys[0]
	}
	if i := strings.LastIndex(ref, "/"); i >= 0 {
		return ref[i+1:]
	}
	return ""
}

// Formats derive checks for these formats; any other format is listed as lossy.
var formatPatterns = map[string]string{
	// RFC 9562 UUIDs (versions 1-8, the nil and the max UUID), as kin-openapi's predefined format.
	"uuid": "^(?:[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[1-8][0-9a-fA-F]{3}-[89abAB][0-9a-fA-F]{3}-[0-9a-fA-F]{12}|00000000-0000-0000-0000-000000000000|[fF]{8}-[fF]{4}-[fF]{4}-[fF]{4}-[fF]{12})$",
	// kin-openapi's predefined email format (one @, no space, quote or angle bracket after it),
	// with its \s spelled out: the portable subset has no \s.
	"email": `^[^@]+@[^@<>",\t\n\f\r ]+$`,
	// A scheme (RFC 3986 §3.1), a colon, then no white space or control character.
	"uri": `^[A-Za-z][A-Za-z0-9+.-]*:[^\x00-\x20\x7f]*$`,
}

func (w *walker) format(f, ptr string, path []string, field string, v any, c ctx) {
	isStr := typeIs(v, "string")
	switch f {
	case "date":
		w.rule(c, ptr, path, "format", field+" must be a date (YYYY-MM-DD)", (op("and", isStr, op("or", op("not", op("isDate", v)), op("!=", op("length", v), json.Number("10"))))))
		w.lossy(ptr, "the year 0000, which RFC 3339 allows, is reported: sdods dates lie in 0001-9999")
	case "date-time":
		w.rule(c, ptr, path, "format", field+" must be a date-time (RFC 3339)", (op("and", isStr, op("or", op("not", op("isDate", v)), op("<=", op("length", v), json.Number("10"))))))
		w.lossy(ptr, "the year 0000 and a leap second (:60), which RFC 3339 allows, are reported: sdods date-times lie in 0001-9999 without leap seconds")
	case "uuid", "email", "uri":
		w.rule(c, ptr, path, "format", field+" must be a "+f, (op("and", isStr, op("not", op("matches", v, formatPatterns[f])))))
	default:
		w.lossy(ptr, "format %q is not checked", f)
	}
}

// pattern emits a matches rule with the pattern translated to the portable subset
// (TranslatePattern); a pattern it cannot translate is lossy with the reason, and so is each
// atom ECMA-262 and Go's regexp read differently (the rule takes the stricter reading).
func (w *walker) pattern(p, ptr string, path []string, field string, v any, c ctx) {
	tr, err := TranslatePattern(p)
	if err != nil {
		w.lossy(ptr, "the pattern is not translated to the portable subset: %v", err)
		return
	}
	for _, n := range tr.Notes {
		w.lossy(ptr, "%s", n)
	}
	w.rule(c, ptr, path, "pattern", field+" must match "+p, (op("and", typeIs(v, "string"), op("not", op("matches", v, tr.Portable)))))
}

// Ruleset writes the derivation as a ruleset document: rules in pointer order, each targeting
// its field, with the messages in the default locale's catalog (the skeleton to translate).
func (r *Result) Ruleset(id string) map[string]any {
	rules := []any{}
	catalog := map[string]any{}
	seen := map[string]int{}
	for _, ru := range r.Rules {
		code := ru.Code
		seen[code]++
		if seen[code] > 1 {
			code = fmt.Sprintf("%s_%d", code, seen[code])
		}
		rule := map[string]any{"id": strings.ToLower(code), "code": code, "when": ru.When, "message": code}
		var field []string
		for _, seg := range ru.Path {
			if seg == "*" {
				break
			}
			field = append(field, seg)
		}
		switch {
		case ru.Entity != "":
			// every element of the array at Entity: a wildcard field per member
			fs := make([]any, len(ru.Fields))
			for i, f := range ru.Fields {
				fs[i] = ru.Entity + ".*." + f
			}
			rule["target"] = map[string]any{"fields": fs}
		case len(ru.Fields) > 0:
			fs := make([]any, len(ru.Fields))
			for i, f := range ru.Fields {
				fs[i] = f
			}
			rule["target"] = map[string]any{"fields": fs}
		case len(field) > 0:
			rule["target"] = map[string]any{"fields": []any{strings.Join(field, ".")}}
		}
		rules = append(rules, rule)
		catalog[code] = strings.NewReplacer("{", "{{", "}", "}}").Replace(ru.Message)
	}
	return map[string]any{"ruleset": map[string]any{
		"id": id, "version": "1", "defaultLocale": "en",
		"description": "derived from the component schema " + r.Schema + "; regenerate rather than edit",
		"rules":       rules, "locales": map[string]any{"en": catalog},
	}}
}
