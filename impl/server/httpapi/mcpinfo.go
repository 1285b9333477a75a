package httpapi

import (
	"context"

	"github.com/sdods/sdods/gen/serverapi"
	"github.com/sdods/sdods/impl/server/authz"
)

// MCPDescriber describes the MCP endpoint as a given caller sees it (impl/server/mcp).
type MCPDescriber interface {
	Info(p *authz.Principal) serverapi.McpInfo
}

// GetMcpInfo tells an MCP client where and how to connect, the protocol versions and toolsets
// served, and the tools the caller's token may use.
func (s *Server) GetMcpInfo(ctx context.Context, _ serverapi.GetMcpInfoRequestObject) (serverapi.GetMcpInfoResponseObject, error) {
	if s.MCP == nil {
		return serverapi.GetMcpInfo200JSONResponse{Endpoint: "/mcp", Transport: "streamable-http", Auth: "bearer",
			ProtocolVersions: []string{}, Toolsets: []serverapi.McpToolset{}, Tools: []serverapi.McpTool{}}, nil
	}
	return serverapi.GetMcpInfo200JSONResponse(s.MCP.Info(PrincipalFrom(ctx))), nil
}
