package mcp

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/sdods/sdods/gen/serverapi"
	"github.com/sdods/sdods/impl/server/authz"
	"github.com/sdods/sdods/impl/server/oas"
)

// TestEveryOperationHasAnMCPDecision is the drift check: an operation added to openapi/server.yaml
// must say in its x-mcp extension which toolset its tool belongs to, or why it is no tool.
func TestEveryOperationHasAnMCPDecision(t *testing.T) {
	doc, err := serverapi.GetSpec()
	if err != nil {
		t.Fatal(err)
	}
	table, err := oas.Build(doc)
	if err != nil {
		t.Fatal(err)
	}
	decisions, missing := Decisions(doc, table)
	for _, m := range missing {
		t.Errorf("openapi/server.yaml: %s (add x-mcp: {toolset: NAME} or x-mcp: {exclude: REASON})", m)
	}
	if len(decisions) != len(table.Ops) {
		t.Errorf("%d decisions for %d operations", len(decisions), len(table.Ops))
	}
}

// TestGeneratedTools checks the tools built from the document: schemas that are JSON objects
// without OpenAPI-only keywords or dangling references, annotations from the method.
func TestGeneratedTools(t *testing.T) {
	doc, err := serverapi.GetSpec()
	if err != nil {
		t.Fatal(err)
	}
	table, err := oas.Build(doc)
	if err != nil {
		t.Fatal(err)
	}
	enforcer, err := authz.New()
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{Doc: doc, Table: table, Enforcer: enforcer})
	if err != nil {
		t.Fatal(err)
	}
	tools := s.mcp.ListTools()
	if len(tools) < 60 {
		t.Fatalf("only %d tools", len(tools))
	}
	for name, st := range tools {
		raw, err := json.Marshal(st.Tool)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var m struct {
			InputSchema  map[string]any `json:"inputSchema"`
			OutputSchema map[string]any `json:"outputSchema"`
		}
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatal(err)
		}
		for what, sch := range map[string]map[string]any{"input": m.InputSchema, "output": m.OutputSchema} {
			if sch == nil {
				continue
			}
			if sch["type"] != "object" {
				t.Errorf("%s %s schema is not an object: %v", name, what, sch["type"])
			}
			text, _ := json.Marshal(sch)
			for _, bad := range []string{`"nullable":true`, `#/components/`} {
				if strings.Contains(string(text), bad) {
					t.Errorf("%s %s schema contains %s", name, what, bad)
				}
			}
			defs, _ := sch["$defs"].(map[string]any)
			for _, ref := range refs(sch) {
				if _, ok := defs[strings.TrimPrefix(ref, "#/$defs/")]; !ok {
					t.Errorf("%s %s schema: dangling %s", name, what, ref)
				}
			}
		}
	}
	get := func(name string) map[string]any {
		raw, _ := json.Marshal(tools[name].Tool)
		var m map[string]any
		_ = json.Unmarshal(raw, &m)
		return m
	}
	for name, want := range map[string][2]bool{ // readOnly, destructive
		"getRun": {true, false}, "listRuns": {true, false}, "createRun": {false, false}, "cancelRun": {false, true},
		"deleteFeature": {false, true}, "acceptBaselines": {false, true}, "putFeature": {false, false}, "lintFeatures": {true, false},
	} {
		ann, _ := get(name)["annotations"].(map[string]any)
		if ann["readOnlyHint"] != want[0] || ann["destructiveHint"] != want[1] {
			t.Errorf("%s annotations %v, want readOnly %v destructive %v", name, ann, want[0], want[1])
		}
	}
	if in := get("getFeature")["inputSchema"].(map[string]any); in["required"] == nil {
		t.Errorf("getFeature: path parameters not required: %v", in)
	}
	if _, ok := get("getRun")["outputSchema"]; !ok {
		t.Error("getRun has no output schema")
	}
	for _, excluded := range []string{"mcpPost", "login", "streamRunEvents", "createToken", "getWebUi"} {
		if _, ok := tools[excluded]; ok {
			t.Errorf("%s is excluded by its x-mcp but is a tool", excluded)
		}
	}
}

func refs(v any) []string {
	var out []string
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if s, ok := e.(string); ok && k == "$ref" {
				out = append(out, s)
			}
			out = append(out, refs(e)...)
		}
	case []any:
		for _, e := range x {
			out = append(out, refs(e)...)
		}
	}
	return out
}
