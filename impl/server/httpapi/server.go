// Package httpapi is the HTTP adapter of the test automation server: the request pipeline in
// front of the generated routes, and the handlers behind the generated strict interface, one
// file per OpenAPI tag.
package httpapi

import (
	"errors"
	"log/slog"
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/sdods/sdods/gen/serverapi"
	"github.com/sdods/sdods/gen/serverstub"
	"github.com/sdods/sdods/impl/server/agents"
	"github.com/sdods/sdods/impl/server/apierr"
	"github.com/sdods/sdods/impl/server/authz"
	"github.com/sdods/sdods/impl/server/blob"
	"github.com/sdods/sdods/impl/server/egress"
	"github.com/sdods/sdods/impl/server/features"
	"github.com/sdods/sdods/impl/server/identity"
	"github.com/sdods/sdods/impl/server/metrics"
	"github.com/sdods/sdods/impl/server/oas"
	"github.com/sdods/sdods/impl/server/runs"
	"github.com/sdods/sdods/impl/server/schedules"
	"github.com/sdods/sdods/impl/textclip"
)

// Deps are what the handlers need.
type Deps struct {
	Log      *slog.Logger
	Version  string
	Table    *oas.Table
	BaseURL  string
	Identity *identity.Service
	Enforcer *authz.Enforcer
	// Runs queues, cancels and streams runs.
	Runs *runs.Service
	// Agents creates, cancels and streams agent jobs and decides proposals.
	Agents *agents.Service
	// Blobs holds dataset content.
	Blobs blob.Store
	// MaxDatasetBytes is the largest dataset upload (413 beyond).
	MaxDatasetBytes int64
	// MaxIngestBytes is the largest ingested results document (413 beyond; 0: 16 MiB).
	MaxIngestBytes int64
	// Egress is the policy of steps and Git integrations, shown to instance admins by GetHealth.
	Egress *egress.Policy
	// Steps is the built-in step library; nil disables the unknown-step and ambiguous-step rules.
	Steps features.Library
	// Schedules owns schedules and their firings.
	Schedules *schedules.Service
	// MCP describes the MCP endpoint for GetMcpInfo (nil: no tools).
	MCP MCPDescriber
	// Metrics is the registry GET /metrics serves (required: app.New always builds one).
	Metrics *metrics.Metrics
	// Services are the domain services the handlers call.
	Services
}

// Server implements the generated strict server interface. Operations without a method here
// answer 501 through the embedded stub.
type Server struct {
	serverstub.Unimplemented
	Deps
}

var _ serverapi.StrictServerInterface = (*Server)(nil)

// NewServer returns the handlers.
func NewServer(d Deps) *Server { return &Server{Deps: d} }

// Routes mounts the strict handlers on a chi router; errors from parameter binding and from
// handlers go through the one error writer.
func Routes(s *Server, log *slog.Logger) http.Handler {
	writeErr := func(w http.ResponseWriter, r *http.Request, err error) { apierr.Write(w, r, log, err) }
	badRequest := func(w http.ResponseWriter, r *http.Request, err error) {
		// Bounded: a binding error may quote the parameter it failed on.
		msg := textclip.Counted(err.Error(), maxProblemLength)
		apierr.Write(w, r, log, apierr.Wrap(errors.New(msg), apierr.ValidationFailed, "the request is invalid", msg))
	}
	strict := serverapi.NewStrictHandlerWithOptions(s, nil, serverapi.StrictHTTPServerOptions{
		RequestErrorHandlerFunc:  badRequest,
		ResponseErrorHandlerFunc: writeErr,
	})
	r := chi.NewRouter()
	r.NotFound(func(w http.ResponseWriter, r *http.Request) {
		writeErr(w, r, apierr.New(apierr.NotFound, "no route "+r.Method+" "+r.URL.Path, "see openapi/server.yaml"))
	})
	r.MethodNotAllowed(func(w http.ResponseWriter, r *http.Request) {
		writeErr(w, r, apierr.New(apierr.MethodNotAllowed, r.Method+" is not allowed on "+r.URL.Path, "see openapi/server.yaml"))
	})
	return serverapi.HandlerWithOptions(strict, serverapi.ChiServerOptions{BaseRouter: r, ErrorHandlerFunc: badRequest})
}
