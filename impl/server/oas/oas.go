// Package oas derives the server's operation table from its embedded OpenAPI document: the one
// place where an operation id is tied to its route, permission and credentials.
package oas

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/sdods/sdods/impl/server/authz"
)

// Operation is one operation of the document with what the server needs to know about it.
type Operation struct {
	ID         string
	Method     string
	Path       string // the document's path template, e.g. /api/runs/{id}
	Tag        string
	Summary    string
	Permission authz.Permission
	// Cookie and Bearer say which credentials the operation accepts.
	Cookie, Bearer bool
	// SuccessStatus is the operation's first 2xx response code.
	SuccessStatus int
	// Wildcards are path parameters whose value may contain '/' (x-wildcard: true).
	Wildcards []string
}

// Table is every operation of a document, by id.
type Table struct {
	Ops  []Operation
	byID map[string]*Operation
}

// Get returns the operation with the given id.
func (t *Table) Get(id string) (*Operation, bool) {
	op, ok := t.byID[normalizeID(id)]
	return op, ok
}

// Build reads every operation of doc; it refuses a document in which an operation lacks an
// operationId or a valid x-permission, so that no route can exist outside the policy.
func Build(doc *openapi3.T) (*Table, error) {
	t := &Table{byID: map[string]*Operation{}}
	var problems []string
	for _, path := range doc.Paths.InMatchingOrder() {
		item := doc.Paths.Value(path)
		for method, op := range item.Operations() {
			o, err := operation(doc, path, method, item, op)
			if err != nil {
				problems = append(problems, fmt.Sprintf("%s %s: %v", method, path, err))
				continue
			}
			if _, dup := t.byID[o.ID]; dup {
				problems = append(problems, fmt.Sprintf("%s %s: operationId %s used twice", method, path, o.ID))
				continue
			}
			t.Ops = append(t.Ops, o)
			t.byID[o.ID] = &t.Ops[len(t.Ops)-1]
		}
	}
	if len(problems) > 0 {
		sort.Strings(problems)
		return nil, fmt.Errorf("openapi document: %s", strings.Join(problems, "; "))
	}
	sort.Slice(t.Ops, func(i, j int) bool { return t.Ops[i].ID < t.Ops[j].ID })
	for i := range t.Ops {
		t.byID[t.Ops[i].ID] = &t.Ops[i]
	}
	return t, nil
}

func operation(doc *openapi3.T, path, method string, item *openapi3.PathItem, op *openapi3.Operation) (Operation, error) {
	o := Operation{ID: normalizeID(op.OperationID), Method: method, Path: path, Summary: op.Summary}
	if o.ID == "" {
		return o, fmt.Errorf("no operationId")
	}
	if len(op.Tags) > 0 {
		o.Tag = op.Tags[0]
	}
	raw, ok := op.Extensions["x-permission"]
	if !ok {
		return o, fmt.Errorf("no x-permission")
	}
	b, err := json.Marshal(raw)
	if err != nil {
		return o, fmt.Errorf("x-permission: %w", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&o.Permission); err != nil {
		return o, fmt.Errorf("x-permission: %w", err)
	}
	if err := o.Permission.Valid(); err != nil {
		return o, fmt.Errorf("x-permission: %w", err)
	}
	security := doc.Security
	if op.Security != nil {
		security = *op.Security
	}
	for _, req := range security {
		for name := range req {
			scheme := doc.Components.SecuritySchemes[name]
			if scheme == nil || scheme.Value == nil {
				return o, fmt.Errorf("unknown security scheme %s", name)
			}
			switch {
			case scheme.Value.In == "cookie":
				o.Cookie = true
			case scheme.Value.Type == "http" && strings.EqualFold(scheme.Value.Scheme, "bearer"):
				o.Bearer = true
			}
		}
	}
	if o.Permission.Target == authz.TargetPublic && (o.Cookie || o.Bearer) {
		return o, fmt.Errorf("public operation declares security")
	}
	if o.Permission.Target != authz.TargetPublic && !o.Cookie && !o.Bearer {
		return o, fmt.Errorf("operation needs a principal but accepts no credential")
	}
	o.SuccessStatus = 200
	if op.Responses != nil {
		best := 0
		for code := range op.Responses.Map() {
			if n, err := strconv.Atoi(code); err == nil && n >= 200 && n < 300 && (best == 0 || n < best) {
				best = n
			}
		}
		if best != 0 {
			o.SuccessStatus = best
		}
	}
	params := append(openapi3.Parameters{}, item.Parameters...)
	params = append(params, op.Parameters...)
	for _, p := range params {
		if p.Value != nil && p.Value.In == "path" {
			if w, _ := p.Value.Extensions["x-wildcard"].(bool); w {
				o.Wildcards = append(o.Wildcards, p.Value.Name)
			}
		}
	}
	return o, nil
}

// normalizeID returns the lowerCamel operation id of the document. oapi-codegen's embedded copy
// of the document carries the ids converted to UpperCamel; the document itself writes lowerCamel.
func normalizeID(id string) string {
	r, size := utf8.DecodeRuneInString(id)
	if r == utf8.RuneError {
		return id
	}
	lower := unicode.ToLower(r)
	if lower == r {
		return id // the usual case: no copy
	}
	return string(lower) + id[size:]
}
