package mcp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/sdods/sdods/impl/server/app/apptest"
)

// BenchmarkToolCallVsREST compares one listProjects over REST with the same operation as an MCP
// tool call (stateless 2026-07-28 and the 2025-11-25 session protocol), each over loopback HTTP
// against the real server: the tool call's extra cost is the JSON-RPC envelope and the in-process
// request through the pipeline. It also reports the size of tools/list for a full token, and for
// one toolset. Recorded in docs/benchmarks.md.
func BenchmarkToolCallVsREST(b *testing.B) {
	s := apptest.Start(b)
	admin := s.Setup(b)
	token := apptest.Token(b, admin, "mcp", "account:read", "admin:read", "admin:write", "agents:read", "agents:write", "artifacts:read",
		"features:read", "features:write", "projects:read", "projects:write", "runs:ingest", "runs:read", "runs:write",
		"schedules:read", "schedules:write", "stats:read", "tokens:read", "tokens:write")
	b.Run("rest", func(b *testing.B) {
		req, _ := http.NewRequest(http.MethodGet, s.URL+"/api/projects", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		for b.Loop() {
			resp, err := http.DefaultClient.Do(req)
			if err != nil || resp.StatusCode != 200 {
				b.Fatal(err)
			}
			resp.Body.Close()
		}
	})
	for _, legacy := range []bool{false, true} {
		name := "mcp-2026-07-28"
		if legacy {
			name = "mcp-2025-11-25"
		}
		b.Run(name, func(b *testing.B) {
			c := connectB(b, s.URL, token, legacy)
			req := mcp.CallToolRequest{}
			req.Params.Name = "listProjects"
			for b.Loop() {
				res, err := c.CallTool(context.Background(), req)
				if err != nil || res.IsError {
					b.Fatal(err)
				}
			}
		})
	}
	for _, sel := range []string{"", "?toolsets=runs"} {
		c := connectB(b, s.URL+sel, token, false)
		res, err := c.ListTools(context.Background(), mcp.ListToolsRequest{})
		if err != nil {
			b.Fatal(err)
		}
		raw, _ := json.Marshal(res.Tools)
		b.Logf("tools/list%s: %d tools, %d bytes", sel, len(res.Tools), len(raw))
	}
}
