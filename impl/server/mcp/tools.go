package mcp

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/sdods/sdods/impl/server/authz"
	"github.com/sdods/sdods/impl/server/oas"
)

// Toolsets are the groups of tools a client may select; an operation names its toolset in the
// document's x-mcp extension.
var Toolsets = []string{"runs", "features", "projects", "stats", "schedules", "agents", "admin"}

// Decision is an operation's x-mcp extension: a toolset, or an exclusion with its reason.
type Decision struct {
	Toolset string `json:"toolset,omitempty"`
	Exclude string `json:"exclude,omitempty"`
}

// Decisions reads the x-mcp decision of every operation of doc; missing lists the operations
// without one (or with an invalid one), which the drift test refuses.
func Decisions(doc *openapi3.T, table *oas.Table) (decisions map[string]Decision, missing []string) {
	decisions = map[string]Decision{}
	for _, op := range table.Ops {
		o := doc.Paths.Find(op.Path).GetOperation(op.Method)
		raw, ok := o.Extensions["x-mcp"]
		if !ok {
			missing = append(missing, op.ID+": no x-mcp")
			continue
		}
		b, _ := json.Marshal(raw)
		var d Decision
		dec := json.NewDecoder(strings.NewReader(string(b)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&d); err != nil {
			missing = append(missing, fmt.Sprintf("%s: x-mcp: %v", op.ID, err))
			continue
		}
		switch {
		case (d.Toolset == "") == (d.Exclude == ""):
			missing = append(missing, op.ID+": x-mcp needs exactly one of toolset and exclude")
			continue
		case d.Toolset != "" && !validToolset(d.Toolset):
			missing = append(missing, fmt.Sprintf("%s: x-mcp: unknown toolset %q (one of %s)", op.ID, d.Toolset, strings.Join(Toolsets, ", ")))
			continue
		case d.Toolset != "" && (!op.Bearer || op.Permission.Target == authz.TargetPublic):
			missing = append(missing, op.ID+": x-mcp: a tool must accept bearer tokens and have a non-public permission")
			continue
		}
		decisions[op.ID] = d
	}
	sort.Strings(missing)
	return decisions, missing
}

func validToolset(name string) bool {
	for _, t := range Toolsets {
		if t == name {
			return true
		}
	}
	return false
}

// param is one parameter of a generated tool.
type param struct {
	name     string
	in       string // path, query or header
	wildcard bool
}

// opTool is a tool generated from an operation.
type opTool struct {
	tool      mcp.Tool
	op        *oas.Operation
	toolset   string
	params    []param
	hasBody   bool
	hasOutput bool
}

// buildTool makes the tool of one operation.
func buildTool(doc *openapi3.T, op *oas.Operation, toolset string) (*opTool, error) {
	item := doc.Paths.Find(op.Path)
	o := item.GetOperation(op.Method)
	set := newSchemaSet(doc)
	props := map[string]any{}
	var required []string
	t := &opTool{op: op, toolset: toolset}
	params := append(openapi3.Parameters{}, item.Parameters...)
	params = append(params, o.Parameters...)
	for _, pr := range params {
		p := pr.Value
		if p == nil || p.In == "cookie" {
			continue
		}
		s, err := set.convert(p.Schema)
		if err != nil {
			return nil, fmt.Errorf("%s parameter %s: %w", op.ID, p.Name, err)
		}
		if s == nil {
			s = map[string]any{"type": "string"}
		}
		if p.Description != "" {
			if _, isRef := s["$ref"]; isRef {
				s = map[string]any{"allOf": []any{s}}
			}
			s["description"] = p.Description
		}
		props[p.Name] = s
		if p.Required {
			required = append(required, p.Name)
		}
		w, _ := p.Extensions["x-wildcard"].(bool)
		t.params = append(t.params, param{name: p.Name, in: p.In, wildcard: w})
	}
	if o.RequestBody != nil && o.RequestBody.Value != nil {
		if mt := o.RequestBody.Value.Content.Get("application/json"); mt != nil && mt.Schema != nil {
			s, err := set.inline(mt.Schema)
			if err != nil {
				return nil, fmt.Errorf("%s body: %w", op.ID, err)
			}
			desc := "The JSON request body."
			if d := o.RequestBody.Value.Description; d != "" {
				desc = d
			}
			if _, has := s["description"]; !has {
				s["description"] = desc
			}
			props["body"] = s
			t.hasBody = true
			if o.RequestBody.Value.Required {
				required = append(required, "body")
			}
		}
	}
	input := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		sort.Strings(required)
		input["required"] = required
	}
	input = set.withDefs(input)
	rawIn, err := json.Marshal(input)
	if err != nil {
		return nil, err
	}

	desc := strings.TrimSpace(o.Summary)
	if d := strings.TrimSpace(o.Description); d != "" {
		if desc != "" {
			desc += "\n\n"
		}
		desc += d
	}
	desc += fmt.Sprintf("\n\n(%s %s)", op.Method, op.Path)
	t.tool = mcp.Tool{Name: op.ID, Title: o.Summary, Description: desc, RawInputSchema: rawIn}

	// The output schema: the success response's JSON object schema.
	if r := o.Responses.Status(op.SuccessStatus); r != nil && r.Value != nil {
		if mt := r.Value.Content.Get("application/json"); mt != nil && mt.Schema != nil && mt.Schema.Value != nil && isObject(mt.Schema.Value) {
			outSet := newSchemaSet(doc)
			s, err := outSet.inline(mt.Schema)
			if err != nil {
				return nil, fmt.Errorf("%s output: %w", op.ID, err)
			}
			s["type"] = "object"
			rawOut, err := json.Marshal(outSet.withDefs(s))
			if err != nil {
				return nil, err
			}
			t.tool.RawOutputSchema = rawOut
			t.hasOutput = true
		}
	}
	readOnly := op.Method == http.MethodGet || op.Permission.Action == authz.ActionRead
	destructive := op.Method == http.MethodDelete || strings.HasPrefix(op.ID, "accept") || strings.HasPrefix(op.ID, "cancel")
	t.tool.Annotations = mcp.ToolAnnotation{
		Title:           o.Summary,
		ReadOnlyHint:    mcp.ToBoolPtr(readOnly),
		DestructiveHint: mcp.ToBoolPtr(destructive && !readOnly),
		IdempotentHint:  mcp.ToBoolPtr(readOnly || op.Method == http.MethodPut || op.Method == http.MethodDelete),
		OpenWorldHint:   mcp.ToBoolPtr(false),
	}
	return t, nil
}

// isObject reports whether a schema describes a JSON object (MCP structured content is one).
func isObject(s *openapi3.Schema) bool {
	if s.Type != nil && s.Type.Is("object") {
		return true
	}
	if s.Type == nil && len(s.Properties) > 0 {
		return true
	}
	if s.Type == nil && len(s.AllOf) > 0 {
		for _, a := range s.AllOf {
			if a.Value == nil || !isObject(a.Value) {
				return false
			}
		}
		return true
	}
	return false
}
