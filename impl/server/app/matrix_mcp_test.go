package app_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/sdods/sdods/impl/server/app/apptest"
	"github.com/sdods/sdods/impl/server/authz"
	"github.com/sdods/sdods/impl/server/oas"
)

// mcpCaller is a column of the policy matrix that calls an operation's MCP tool (tools/call on
// /mcp, stateless 2026-07-28) instead of its REST route; the status is the REST status the tool's
// request got (the result's _meta), or the MCP endpoint's own when it refused the call. "-" marks
// an operation that is no tool (its x-mcp excludes it).
type mcpCaller struct {
	name  string
	token string
}

// sendMCP calls op's tool with the arguments send would put in the REST request.
func sendMCP(t *testing.T, s *apptest.Server, doc *openapi3.T, op oas.Operation, params map[string]string, c mcpCaller) (string, []byte) {
	t.Helper()
	o := doc.Paths.Value(op.Path).GetOperation(op.Method)
	if d, _ := o.Extensions["x-mcp"].(map[string]any); d == nil || d["toolset"] == nil {
		return "-", nil
	}
	args := map[string]any{}
	all := append(append(openapi3.Parameters{}, doc.Paths.Value(op.Path).Parameters...), o.Parameters...)
	for _, p := range all {
		v := p.Value
		val, ok := params[v.Name]
		if !ok && v.Schema != nil {
			raw, _ := json.Marshal(example(v.Schema.Value, 0))
			val = strings.Trim(string(raw), `"`)
		}
		if v.In == "path" || v.Required {
			args[v.Name] = val
		}
	}
	if op.ID == "putFeature" {
		args["If-Match"] = "*"
	}
	if o.RequestBody != nil && o.RequestBody.Value != nil {
		if mt := o.RequestBody.Value.Content.Get("application/json"); mt != nil {
			raw, _ := json.Marshal(example(mt.Schema.Value, 0))
			if b, ok := bodyOverride[op.ID]; ok {
				raw = []byte(b)
			}
			var body any
			_ = json.Unmarshal(raw, &body)
			args["body"] = body
		}
	}
	msg, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": map[string]any{
		"name": op.ID, "arguments": args,
		"_meta": map[string]any{"io.modelcontextprotocol/protocolVersion": "2026-07-28",
			"io.modelcontextprotocol/clientInfo": map[string]any{"name": "matrix", "version": "1"}, "io.modelcontextprotocol/clientCapabilities": map[string]any{}}}})
	req, _ := http.NewRequest(http.MethodPost, s.URL+"/mcp", bytes.NewReader(msg))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", op.ID)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s as %s: %v", op.ID, c.name, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var out struct {
		Result *struct {
			Meta    map[string]any `json:"_meta"`
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"result"`
	}
	if json.Unmarshal(b, &out) == nil && out.Result != nil {
		if st, ok := out.Result.Meta["sdods/httpStatus"].(float64); ok {
			var text []byte
			if len(out.Result.Content) > 0 {
				text = []byte(out.Result.Content[0].Text)
			}
			return strconv.Itoa(int(st)), text
		}
	}
	return "mcp" + strconv.Itoa(resp.StatusCode), b
}

// checkMCPInvariant: a tool call can do nothing its REST request could not.
func checkMCPInvariant(t *testing.T, op oas.Operation, c mcpCaller, status string, body []byte) {
	t.Helper()
	if status == "-" {
		return
	}
	fail := func(why string) { t.Errorf("MCP %s as %s: %s %s — %s", op.ID, c.name, status, body, why) }
	ok := len(status) == 3 && status[0] == '2'
	switch {
	case strings.HasPrefix(status, "5") && status != "501", strings.HasPrefix(status, "mcp5"):
		fail("a server error")
	case c.name == "mcp-without-scope" && !bytes.Contains(body, []byte("scope_missing")):
		fail("a token without the operation's scope must be refused")
	case c.name == "mcp-viewer" && op.Permission.Target == authz.TargetWorkspace && op.Permission.Action != authz.ActionRead && ok:
		fail("a viewer changed a workspace resource through MCP")
	case c.name == "mcp-viewer" && op.Permission.Target == authz.TargetInstance && op.Permission.Action != authz.ActionRead && ok:
		fail("a plain user managed the instance through MCP")
	}
}
