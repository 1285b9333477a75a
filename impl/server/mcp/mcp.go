// Package mcp serves the Model Context Protocol at /mcp (streamable HTTP, mark3labs/mcp-go): the
// stateless 2026-07-28 revision and, for older clients, the session revisions up to 2025-11-25
// with their sessions kept in PostgreSQL. Every tool is generated from an operation of
// openapi/server.yaml (its x-mcp extension decides) and a call runs as an in-process request
// through the same pipeline as the REST route, with the caller's own token: authentication,
// validation, policy, handler and audit (marked via "mcp"). MCP can do nothing the token could
// not do over REST.
package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync/atomic"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"

	"github.com/sdods/sdods/gen/serverapi"
	"github.com/sdods/sdods/impl/server/apierr"
	"github.com/sdods/sdods/impl/server/authz"
	"github.com/sdods/sdods/impl/server/httpapi"
	"github.com/sdods/sdods/impl/server/oas"
	"github.com/sdods/sdods/impl/server/store"
	"github.com/sdods/sdods/impl/textclip"
)

// Path is where the endpoint is served.
const Path = "/mcp"

// ToolsetsHeader and ToolsetsQuery select toolsets (comma-separated names, or "all").
const (
	ToolsetsHeader = "Mcp-Toolsets"
	ToolsetsQuery  = "toolsets"
)

// ProtocolVersions are the revisions served, newest first: 2026-07-28 is stateless, the others
// open a session with initialize.
var ProtocolVersions = []string{mcp.ProtocolVersion20260728, mcp.ProtocolVersion20251125, mcp.ProtocolVersion20250618, mcp.ProtocolVersion20250326}

// Config is what the endpoint needs.
type Config struct {
	Log      *slog.Logger
	Doc      *openapi3.T
	Table    *oas.Table
	Enforcer *authz.Enforcer
	Store    *store.Store
	Version  string
	// BaseURL is the server's public URL: an Origin header must name it (or the Host the request
	// was sent to, or one of AllowedOrigins).
	BaseURL        string
	AllowedOrigins []string
}

// Server is the MCP endpoint.
type Server struct {
	cfg       Config
	tools     []*tool // sorted by name
	byName    map[string]*tool
	ops       map[string]*opTool // the generated tools, by operation id (the composites call them)
	sessions  *sessions
	mcp       *mcpserver.MCPServer
	transport *mcpserver.StreamableHTTPServer
	dispatch  atomic.Pointer[http.Handler]
}

// tool is one tool: generated from an operation, or composed of several.
type tool struct {
	name    string
	toolset string
	// ops are the operations the tool performs: a caller may use it when the policy lets it
	// call every one of them (the REST pipeline still decides each call).
	ops      []*oas.Operation
	readOnly bool
	desc     string
}

// New builds the endpoint's tools from the document.
func New(cfg Config) (*Server, error) {
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	s := &Server{cfg: cfg, byName: map[string]*tool{}, ops: map[string]*opTool{}}
	s.mcp = mcpserver.NewMCPServer("sdods", cfg.Version,
		mcpserver.WithToolCapabilities(false),
		mcpserver.WithResourceCapabilities(false, false),
		mcpserver.WithToolFilter(s.filter),
		mcpserver.WithRecovery(),
		mcpserver.WithInstructions("sdods test automation server. Tools mirror the REST API (openapi/server.yaml) and run with your token's scopes and roles. "+
			"Select toolsets with ?toolsets=runs,features or the Mcp-Toolsets header. runAndWait starts a run and waits for its end; failedRunSummary explains a failed run."),
	)
	decisions, missing := Decisions(cfg.Doc, cfg.Table)
	for _, m := range missing {
		cfg.Log.Warn("mcp: operation without a valid x-mcp decision is not a tool", "problem", m)
	}
	for i := range cfg.Table.Ops {
		op := &cfg.Table.Ops[i]
		d, ok := decisions[op.ID]
		if !ok || d.Exclude != "" {
			continue
		}
		t, err := buildTool(cfg.Doc, op, d.Toolset)
		if err != nil {
			return nil, fmt.Errorf("mcp tool %s: %w", op.ID, err)
		}
		s.ops[op.ID] = t
		s.add(&tool{name: op.ID, toolset: d.Toolset, ops: []*oas.Operation{op}, readOnly: *t.tool.Annotations.ReadOnlyHint, desc: op.Summary},
			mcpserver.ServerTool{Tool: t.tool, Handler: s.opHandler(t)})
	}
	if err := s.addComposites(); err != nil {
		return nil, err
	}
	if err := s.addWebLink(); err != nil {
		return nil, err
	}
	if err := s.addResources(); err != nil {
		return nil, err
	}
	sort.Slice(s.tools, func(i, j int) bool { return s.tools[i].name < s.tools[j].name })
	s.sessions = &sessions{store: cfg.Store, log: cfg.Log}
	s.transport = mcpserver.NewStreamableHTTPServer(s.mcp,
		mcpserver.WithEndpointPath(Path),
		mcpserver.WithSessionIdManagerResolver(s.sessions),
		mcpserver.WithStreamableHTTPProtocolVersions(ProtocolVersions...),
		// Origin is checked here (checkOrigin) and the credential is a bearer token, never ambient:
		// the loopback Host check of mcp-go would refuse a server behind a local reverse proxy.
		mcpserver.WithDisableLocalhostProtection(true),
		mcpserver.WithHTTPContextFunc(initializeSession),
		mcpserver.WithStreamableHTTPLogger(cfg.Log),
	)
	return s, nil
}

func (s *Server) add(t *tool, st mcpserver.ServerTool) {
	if _, dup := s.byName[t.name]; dup {
		panic("mcp: tool " + t.name + " defined twice")
	}
	s.tools = append(s.tools, t)
	s.byName[t.name] = t
	s.mcp.AddTools(st)
}

// SetDispatch sets the handler tool calls are dispatched to: the whole REST pipeline.
func (s *Server) SetDispatch(h http.Handler) { s.dispatch.Store(&h) }

// Routes serves /mcp with the endpoint and everything else with api. It sits behind the REST
// pipeline, which has authenticated the bearer token and checked its mcp scope by then.
func (s *Server) Routes(api http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == Path {
			s.ServeHTTP(w, r)
			return
		}
		api.ServeHTTP(w, r)
	})
}

// ServeHTTP checks what the transport does not (Origin, toolset selection, the session of a GET or
// DELETE) and hands the request to mcp-go's streamable HTTP transport.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	log := s.cfg.Log
	p := httpapi.PrincipalFrom(r.Context())
	if p == nil || p.Method != authz.MethodToken {
		apierr.Write(w, r, log, apierr.New(apierr.Unauthorized, "the MCP endpoint accepts bearer tokens only", "send Authorization: Bearer amx_… (a token with the mcp scope)"))
		return
	}
	if err := s.checkOrigin(r); err != nil {
		apierr.Write(w, r, log, err)
		return
	}
	toolsets, err := selectedToolsets(r)
	if err != nil {
		apierr.Write(w, r, log, err)
		return
	}
	c := &call{authorization: r.Header.Get("Authorization"), remoteAddr: r.RemoteAddr, host: r.Host,
		forwardedFor: r.Header.Get("X-Forwarded-For"), userAgent: r.UserAgent(),
		requestID: httpapi.RequestID(r.Context()), toolsets: toolsets}
	switch r.Method {
	case http.MethodPost:
		body, err := io.ReadAll(r.Body)
		if err != nil {
			apierr.Write(w, r, log, apierr.Wrap(err, apierr.PayloadTooLarge, "the request body could not be read", "send a smaller message"))
			return
		}
		var msg struct {
			Method string `json:"method"`
		}
		_ = json.Unmarshal(body, &msg)
		c.method = msg.Method
		r.Body = io.NopCloser(bytes.NewReader(body))
	case http.MethodGet, http.MethodDelete:
		if !mcp.IsModernProtocol(r.Header.Get(mcp.HeaderProtocolVersion)) {
			id := r.Header.Get(mcp.HeaderSessionID)
			if id == "" {
				apierr.Write(w, r, log, apierr.New(apierr.BadRequest, "Mcp-Session-Id is required", "send the session id the initialize response returned"))
				return
			}
			m := s.sessions.ResolveSessionIdManager(r).(*sessionManager)
			exists, ended, err := m.state(id)
			if err != nil {
				apierr.Write(w, r, log, err)
				return
			}
			if !exists || ended {
				apierr.Write(w, r, log, apierr.New(apierr.NotFound, "no such MCP session", "initialize a new session"))
				return
			}
		}
	}
	s.transport.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), callKey{}, c)))
}

// initializeSession marks the per-request session of a legacy request that carries a session id
// (validated against PostgreSQL by then) as initialized: the initialize request may have reached
// another process, and progress notifications need an initialized session.
func initializeSession(ctx context.Context, _ *http.Request) context.Context {
	if c := callFrom(ctx); c != nil && c.method != string(mcp.MethodInitialize) {
		if sess := mcpserver.ClientSessionFromContext(ctx); sess != nil && !sess.Initialized() {
			sess.Initialize()
		}
	}
	return ctx
}

// checkOrigin refuses a request whose Origin is neither this server's (BaseURL), one of
// AllowedOrigins, nor, for a server whose BaseURL is on loopback, a loopback origin (DNS
// rebinding and cross-site requests). Clients other than browsers send no Origin.
func (s *Server) checkOrigin(r *http.Request) *apierr.Error {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return nil
	}
	u, err := url.Parse(origin)
	if err == nil && u.Host != "" {
		allowed := append([]string{s.cfg.BaseURL}, s.cfg.AllowedOrigins...)
		for _, a := range allowed {
			if au, err := url.Parse(a); err == nil && au.Host != "" && strings.EqualFold(au.Scheme, u.Scheme) && strings.EqualFold(au.Host, u.Host) {
				return nil
			}
		}
		if base, err := url.Parse(s.cfg.BaseURL); err == nil && isLoopback(base.Hostname()) && isLoopback(u.Hostname()) {
			return nil
		}
	}
	return apierr.New(apierr.Forbidden, "the Origin of this request is not allowed", "MCP clients send no Origin; a browser page must be served by this server")
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// selectedToolsets reads the client's toolset selection; nil means every toolset.
func selectedToolsets(r *http.Request) (map[string]bool, *apierr.Error) {
	raw := r.URL.Query().Get(ToolsetsQuery)
	if raw == "" {
		raw = r.Header.Get(ToolsetsHeader)
	}
	raw = strings.TrimSpace(raw)
	if raw == "" || raw == "all" {
		return nil, nil
	}
	out := map[string]bool{}
	for _, name := range strings.Split(raw, ",") {
		name = strings.TrimSpace(name)
		if !validToolset(name) {
			return nil, apierr.New(apierr.ValidationFailed, fmt.Sprintf("unknown toolset %q", textclip.Clip(name, 40)), "toolsets are "+strings.Join(Toolsets, ", "))
		}
		out[name] = true
	}
	return out, nil
}

// mayUse reports whether the policy lets p call every operation of t (scopes, instance roles;
// workspace roles are checked per object by the handlers).
func (s *Server) mayUse(p *authz.Principal, t *tool) bool {
	for _, op := range t.ops {
		if s.cfg.Enforcer.CheckOperation(p, op.Permission) != nil {
			return false
		}
	}
	return true
}

// filter keeps the tools of the selected toolsets; a listing also leaves out the tools the
// caller's token may not use, while a call of one goes through and is refused by the REST
// pipeline exactly as the REST request would be.
func (s *Server) filter(ctx context.Context, tools []mcp.Tool) []mcp.Tool {
	c := callFrom(ctx)
	p := httpapi.PrincipalFrom(ctx)
	listing := c != nil && c.method == string(mcp.MethodToolsList)
	out := tools[:0:0]
	for _, mt := range tools {
		t := s.byName[mt.Name]
		if t == nil {
			continue
		}
		if c != nil && c.toolsets != nil && !c.toolsets[t.toolset] {
			continue
		}
		if listing && !s.mayUse(p, t) {
			continue
		}
		out = append(out, mt)
	}
	return out
}

// opHandler runs a generated tool: its REST request, dispatched through the pipeline.
func (s *Server) opHandler(t *opTool) mcpserver.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		rec, err := s.do(ctx, t, req.GetArguments())
		if err != nil {
			return mcp.NewToolResultError(err.Error()), nil
		}
		return t.result(rec), nil
	}
}

// do dispatches the REST request of t with args through the pipeline.
func (s *Server) do(ctx context.Context, t *opTool, args map[string]any) (*recorder, error) {
	c := callFrom(ctx)
	h := s.dispatch.Load()
	if c == nil || h == nil {
		return nil, fmt.Errorf("the MCP endpoint is not ready")
	}
	if args == nil {
		args = map[string]any{}
	}
	req, err := t.request(ctx, c, args)
	if err != nil {
		return nil, err
	}
	rec := newRecorder()
	(*h).ServeHTTP(rec, req)
	return rec, nil
}

// Info describes the endpoint as p sees it: the tools p's token may use.
func (s *Server) Info(p *authz.Principal) serverapi.McpInfo {
	out := serverapi.McpInfo{Endpoint: Path, Transport: "streamable-http", Auth: "bearer",
		ProtocolVersion: ProtocolVersions[0], ProtocolVersions: append([]string{}, ProtocolVersions...),
		Tools: []serverapi.McpTool{}, Toolsets: []serverapi.McpToolset{}}
	counts := map[string]int{}
	if p != nil {
		for _, t := range s.tools {
			if s.mayUse(p, t) {
				out.Tools = append(out.Tools, serverapi.McpTool{Name: t.name, Description: t.desc, Toolset: t.toolset, ReadOnly: t.readOnly})
				counts[t.toolset]++
			}
		}
	}
	for _, ts := range Toolsets {
		out.Toolsets = append(out.Toolsets, serverapi.McpToolset{Name: ts, Tools: counts[ts]})
	}
	return out
}
