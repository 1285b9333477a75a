package mcp

import (
	"context"
	"encoding/json"
	"net/url"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"
)

// webLink answers the web UI's address of an object, after reading the object through the
// pipeline: a link is only given for what the caller may see, and never for something that does
// not exist. The paths are the web UI's routes (web/src/App.tsx, pages/Project.tsx).
func (s *Server) addWebLink() error {
	ops, err := s.needOps("getWorkspace", "getProject", "getFeature", "getRun", "getRunScenario")
	if err != nil {
		return err
	}
	in, _ := json.Marshal(map[string]any{"type": "object", "required": []string{"kind"}, "additionalProperties": false,
		"properties": map[string]any{
			"kind":       map[string]any{"type": "string", "enum": []string{"workspace", "project", "feature", "run", "scenario"}, "description": "What to link to."},
			"workspace":  map[string]any{"type": "string", "description": "Workspace slug (kind workspace)."},
			"slug":       map[string]any{"type": "string", "description": "Project slug (kinds project and feature)."},
			"path":       map[string]any{"type": "string", "description": "Feature path, e.g. auth/login.feature (kind feature)."},
			"runId":      map[string]any{"type": "string", "format": "uuid", "description": "Run id (kinds run and scenario)."},
			"scenarioId": map[string]any{"type": "string", "description": "Scenario id within the run (kind scenario)."},
		}})
	out, _ := json.Marshal(map[string]any{"type": "object", "required": []string{"url"}, "properties": map[string]any{
		"url": map[string]any{"type": "string", "format": "uri", "description": "The object's page in the web UI."}}})
	// Listed for callers who may read runs; each kind's own read is checked when it is called.
	s.add(&tool{name: "webLink", toolset: "runs", ops: ops[3:4], readOnly: true, desc: "A link into the web UI"},
		mcpserver.ServerTool{Tool: mcp.Tool{Name: "webLink", Title: "A link into the web UI",
			Description: "Gives the web UI's address of a workspace, project, feature, run or scenario of a run, for a person to open. " +
				"The object is read first with the caller's token, so a link is only given for what the caller may see.",
			RawInputSchema: in, RawOutputSchema: out,
			Annotations: mcp.ToolAnnotation{Title: "Link into the web UI", ReadOnlyHint: mcp.ToBoolPtr(true), DestructiveHint: mcp.ToBoolPtr(false),
				IdempotentHint: mcp.ToBoolPtr(true), OpenWorldHint: mcp.ToBoolPtr(false)}},
			Handler: s.webLink})
	return nil
}

func (s *Server) webLink(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	args := req.GetArguments()
	str := func(k string) string { v, _ := args[k].(string); return v }
	need := func(keys ...string) *mcp.CallToolResult {
		for _, k := range keys {
			if str(k) == "" {
				return mcp.NewToolResultError("webLink: kind " + str("kind") + " needs " + strings.Join(keys, " and "))
			}
		}
		return nil
	}
	var (
		page string
		op   string
		call map[string]any
	)
	switch str("kind") {
	case "workspace":
		if r := need("workspace"); r != nil {
			return r, nil
		}
		page, op, call = "/workspaces/"+url.PathEscape(str("workspace")), "getWorkspace", map[string]any{"workspaceSlug": str("workspace")}
	case "project":
		if r := need("slug"); r != nil {
			return r, nil
		}
		page, op, call = "/projects/"+url.PathEscape(str("slug")), "getProject", map[string]any{"slug": str("slug")}
	case "feature":
		if r := need("slug", "path"); r != nil {
			return r, nil
		}
		segs := strings.Split(str("path"), "/")
		for i, p := range segs {
			segs[i] = url.PathEscape(p)
		}
		page = "/projects/" + url.PathEscape(str("slug")) + "/features/" + strings.Join(segs, "/")
		op, call = "getFeature", map[string]any{"slug": str("slug"), "path": str("path")}
	case "run":
		if r := need("runId"); r != nil {
			return r, nil
		}
		page, op, call = "/runs/"+url.PathEscape(str("runId")), "getRun", map[string]any{"runId": str("runId")}
	case "scenario":
		if r := need("runId", "scenarioId"); r != nil {
			return r, nil
		}
		page = "/runs/" + url.PathEscape(str("runId")) + "/scenarios/" + url.PathEscape(str("scenarioId"))
		op, call = "getRunScenario", map[string]any{"runId": str("runId"), "scenarioId": str("scenarioId")}
	default:
		return mcp.NewToolResultError("webLink: kind must be one of workspace, project, feature, run, scenario"), nil
	}
	var seen json.RawMessage
	if res, err := s.json(ctx, op, call, &seen); res != nil || err != nil {
		return res, err
	}
	link := strings.TrimSuffix(s.cfg.BaseURL, "/") + page
	return mcp.NewToolResultStructured(map[string]any{"url": link}, link), nil
}
