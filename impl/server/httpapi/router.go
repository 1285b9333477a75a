package httpapi

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"time"

	"github.com/google/uuid"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/sdods/sdods/impl/httpkit"
	"github.com/sdods/sdods/impl/server/apierr"
	"github.com/sdods/sdods/impl/server/audit"
	"github.com/sdods/sdods/impl/server/authz"
	"github.com/sdods/sdods/impl/server/oas"
	"github.com/sdods/sdods/impl/server/store"
	"github.com/sdods/sdods/impl/textclip"
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
	// Store receives the audit entries of refused and failed mutating requests.
	Store *store.Store
	// SecureCookies marks cookies Secure even on plain HTTP (the server sits behind a TLS proxy).
	SecureCookies bool
	// TrustedProxies are the peers whose X-Forwarded-For header names the client; from anyone
	// else the header is ignored.
	TrustedProxies []netip.Prefix
	// Metrics counts every request by operation and status (nil: not counted).
	Metrics RequestObserver
}

// noStoreTags are the tags of operations whose responses carry credentials or account data:
// never stored by a browser or a shared cache.
var noStoreTags = map[string]bool{"Auth": true, "Account": true, "Users": true, "Tokens": true, "Audit": true}

// Handler wraps api (the generated routes) in the pipeline: request id, logging, recovery, body
// limit, routing by the document (404/405), authentication, validation, authorization.
func (p Pipeline) Handler(api http.Handler) (http.Handler, error) {
	registerBodyDecoders()
	doc := *p.Doc
	doc.Servers = nil // route on paths alone, whatever host the server is reached by
	router, err := newRouteFinder(&doc)
	if err != nil {
		return nil, err
	}
	v, err := newValidator(&doc)
	if err != nil {
		return nil, err
	}
	guarded := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		route, params, err := router.FindRoute(r)
		if err != nil {
			e := routeError(r, err)
			apierr.Write(w, r, p.Log, e)
			if !safeMethod(r.Method) {
				// A refused mutation without an operation is audited too (operation empty).
				p.recordRefusal(r, &audit.Request{Method: textclip.Counted(r.Method, 32), Path: escapePath(r.URL.Path), RequestID: RequestID(r.Context()),
					ClientAddr: clientAddress(r, p.TrustedProxies), Actor: audit.Actor{Kind: "anonymous"}}, e.Code.Status())
			}
			return
		}
		op, ok := p.Table.Get(route.Operation.OperationID)
		if !ok { // cannot happen with a table built from the same document; fail closed anyway
			apierr.Write(w, r, p.Log, apierr.New(apierr.Forbidden, "operation unknown to the policy", ""))
			return
		}
		recordOperation(w, op)
		if noStoreTags[op.Tag] {
			w.Header().Set("Cache-Control", "no-store")
		} else if isEventStream(route.Operation) {
			// A server-sent event stream is live: no cache or proxy may keep or replay it.
			w.Header().Set("Cache-Control", "no-cache")
		}
		meta := clientMeta{UserAgent: r.UserAgent(), ClientAddr: clientAddress(r, p.TrustedProxies), Secure: p.SecureCookies || r.TLS != nil}
		rec := &audit.Request{Operation: op.ID, Method: textclip.Counted(r.Method, 32), Path: escapePath(r.URL.Path), RequestID: RequestID(r.Context()),
			ClientAddr: meta.ClientAddr, SuccessStatus: op.SuccessStatus, Actor: audit.Actor{Kind: "anonymous"}, Via: viaFrom(r.Context())}
		ctx := context.WithValue(r.Context(), ctxOperation, op)
		ctx = context.WithValue(ctx, ctxClientMeta, meta)
		ctx = audit.WithRequest(ctx, rec)
		r = r.WithContext(ctx)
		sw := httpkit.NewStatusRecorder(w)
		defer p.auditOutcome(r, op, rec, sw)
		if r.ContentLength > p.MaxBody {
			apierr.Write(sw, r, p.Log, apierr.New(apierr.PayloadTooLarge,
				fmt.Sprintf("the request body is %d bytes; the limit is %d", r.ContentLength, p.MaxBody), "send a smaller body"))
			return
		}
		principal, err := p.Auth.Authenticate(r, op)
		if err != nil {
			apierr.Write(sw, r, p.Log, err)
			return
		}
		if principal == nil {
			// Nobody answers for an anonymous request: its body gets a small cap, so that decoding
			// and validating it (linear, but tens of milliseconds per hundred kilobytes) stays cheap.
			if r.ContentLength > AnonymousMaxBody {
				apierr.Write(sw, r, p.Log, apierr.New(apierr.PayloadTooLarge,
					fmt.Sprintf("the request body is %d bytes; the limit without credentials is %d", r.ContentLength, AnonymousMaxBody), "send a smaller body"))
				return
			}
			if r.Body != nil {
				r.Body = http.MaxBytesReader(sw, r.Body, AnonymousMaxBody)
			}
		}
		if principal != nil {
			rec.Actor = actorOf(principal)
			if principal.Method == authz.MethodSession {
				// The session slides: so does the cookie's expiry.
				if c, err := r.Cookie(SessionCookie); err == nil {
					sw.Header().Set("Set-Cookie", sessionCookie(c.Value, principal.ExpiresAt, meta.Secure))
				}
			}
		}
		if err := checkJSONBody(r, MaxJSONDepth); err != nil {
			apierr.Write(sw, r, p.Log, err)
			return
		}
		if err := v.validate(ctx, r, route, params); err != nil {
			apierr.Write(sw, r, p.Log, validationError(err))
			return
		}
		if err := p.Enforcer.CheckOperation(principal, op.Permission); err != nil {
			apierr.Write(sw, r, p.Log, err)
			return
		}
		// After authorization, so that only a caller allowed to make the request learns about its text.
		if err := checkText(r, route, params, !testOutputOps[op.ID]); err != nil {
			apierr.Write(sw, r, p.Log, err)
			return
		}
		api.ServeHTTP(sw, r.WithContext(WithPrincipal(ctx, principal)))
	})
	var h http.Handler = guarded
	h = withWildcardPaths(wildcardRoutes(p.Table.Ops))(h)
	h = withBodyLimit(p.MaxBody)(h)
	h = withRecovery(p.Log)(h)
	h = withLogging(p.Log, p.Metrics)(h)
	h = httpkit.WithRequestID(h)
	return h, nil
}

// isEventStream reports whether an operation answers text/event-stream.
func isEventStream(op *openapi3.Operation) bool {
	if op == nil || op.Responses == nil {
		return false
	}
	ok := op.Responses.Status(http.StatusOK)
	return ok != nil && ok.Value != nil && ok.Value.Content.Get("text/event-stream") != nil
}

func actorOf(p *authz.Principal) audit.Actor {
	id, _ := uuid.Parse(p.UserID)
	kind := "user"
	if p.Method == authz.MethodToken {
		kind = "token"
	}
	return audit.Actor{Kind: kind, ID: id, Name: p.Label}
}

// auditOutcome records a refused or failed mutating request, and reports a successful one whose
// handler recorded nothing (a bug: every change must be audited in its transaction).
func (p Pipeline) auditOutcome(r *http.Request, op *oas.Operation, rec *audit.Request, sw *httpkit.StatusRecorder) {
	if safeMethod(r.Method) || op.Tag == "MCP" {
		return
	}
	status := sw.Status()
	if status == 0 {
		status = http.StatusOK
	}
	if status < 400 {
		// A read-only POST (validate, lint) changes nothing by its permission; a handler may say
		// so of one request (a recording not saved).
		if !rec.Recorded() && !rec.Unchanged() && op.Permission.Action != authz.ActionRead {
			p.Log.ErrorContext(r.Context(), "mutating operation recorded no audit entry", "operation", op.ID, "request_id", rec.RequestID)
		}
		return
	}
	if rec.Recorded() {
		return
	}
	p.recordRefusal(r, rec, status)
}

// recordRefusal appends the entry of a refused ("denied") or failed request.
func (p Pipeline) recordRefusal(r *http.Request, rec *audit.Request, status int) {
	if p.Store == nil {
		return
	}
	outcome := "failed"
	if status == http.StatusUnauthorized || status == http.StatusForbidden || status == http.StatusTooManyRequests {
		outcome = "denied"
	}
	// The request's own context may be cancelled by now; the entry must still be written.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), 5*time.Second)
	defer cancel()
	if err := audit.RecordOutcome(ctx, p.Store.Queries, rec, outcome, status); err != nil {
		p.Log.ErrorContext(ctx, "audit entry lost", "operation", rec.Operation, "error", err)
	}
}
