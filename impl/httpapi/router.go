package httpapi

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/routers/gorillamux"

	"github.com/sdods/sdods/impl/apierr"
	"github.com/sdods/sdods/impl/authz"
	"github.com/sdods/sdods/impl/oas"
)

// Authenticator finds the principal of a request. It returns nil and no error when the request
// carries no credential, and an *apierr.Error for a credential it refuses (unknown, expired,
// wrong kind for the operation, missing CSRF token).
type Authenticator interface {
	Authenticate(r *http.Request, op *oas.Operation) (*authz.Principal, error)
}

// PrincipalFrom returns the authenticated caller, or nil.
func PrincipalFrom(ctx context.Context) *authz.Principal {
	p, _ := ctx.Value(ctxPrincipal).(*authz.Principal)
	return p
}

// WithPrincipal returns ctx carrying p (used by the MCP adapter, which authenticates itself).
func WithPrincipal(ctx context.Context, p *authz.Principal) context.Context {
	return context.WithValue(ctx, ctxPrincipal, p)
}

// Pipeline is what sits in front of every operation of a document.
type Pipeline struct {
	Log      *slog.Logger
	Doc      *openapi3.T
	Table    *oas.Table
	Auth     Authenticator
	Enforcer *authz.Enforcer
	// MaxBody caps request bodies in bytes.
	MaxBody int64
}

// Handler wraps api (the generated routes) in the pipeline: request id, logging, recovery, body
// limit, routing by the document (404/405), authentication, validation, authorization.
func (p Pipeline) Handler(api http.Handler) (http.Handler, error) {
	registerBodyDecoders()
	doc := *p.Doc
	doc.Servers = nil // route on paths alone, whatever host the server is reached by
	router, err := gorillamux.NewRouter(&doc)
	if err != nil {
		return nil, fmt.Errorf("build OpenAPI router: %w", err)
	}
	v := &validator{router: router}
	guarded := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		route, params, err := router.FindRoute(r)
		if err != nil {
			apierr.Write(w, r, p.Log, routeError(r, err))
			return
		}
		op, ok := p.Table.Get(route.Operation.OperationID)
		if !ok { // cannot happen with a table built from the same document; fail closed anyway
			apierr.Write(w, r, p.Log, apierr.New(apierr.Forbidden, "operation unknown to the policy", ""))
			return
		}
		ctx := context.WithValue(r.Context(), ctxOperation, op)
		r = r.WithContext(ctx)
		principal, err := p.Auth.Authenticate(r, op)
		if err != nil {
			apierr.Write(w, r, p.Log, err)
			return
		}
		if err := v.validate(ctx, r, route, params); err != nil {
			apierr.Write(w, r, p.Log, validationError(err))
			return
		}
		if err := p.Enforcer.CheckOperation(principal, op.Permission); err != nil {
			apierr.Write(w, r, p.Log, err)
			return
		}
		api.ServeHTTP(w, r.WithContext(WithPrincipal(ctx, principal)))
	})
	var h http.Handler = guarded
	h = withWildcardPaths(wildcardRoutes(p.Table.Ops))(h)
	h = withBodyLimit(p.MaxBody)(h)
	h = withRecovery(p.Log)(h)
	h = withLogging(p.Log)(h)
	h = withRequestID(h)
	return h, nil
}
