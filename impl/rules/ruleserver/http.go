package ruleserver

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
	"github.com/go-chi/chi/v5"

	"github.com/sdods/sdods/gen/rulesapi"
	"github.com/sdods/sdods/impl/httpkit"
)

// DefaultMaxBody is the default request body limit: 1 MiB.
const DefaultMaxBody = 1 << 20

// HandlerOptions configures the HTTP pipeline.
type HandlerOptions struct {
	// Token is the bearer token every route but the probes requires; empty serves every route
	// without one (RULE_SERVER_ALLOW_OPEN=1, private networks only).
	Token string
	// MaxBody caps request bodies in bytes; <= 0 means DefaultMaxBody.
	MaxBody int64
}

type ctxKey int

const ctxBody ctxKey = iota

// rawBody returns the request body read by the pipeline.
func rawBody(ctx context.Context) []byte {
	b, _ := ctx.Value(ctxBody).([]byte)
	return b
}

// Handler returns the HTTP pipeline in front of the generated routes:
//
//	recovery ─► access log ─► percent-encoding check (400) ─► body limit (413 on Content-Length)
//	─► route by openapi/rules.yaml (404/405) ─► bearer token (401, not for the probes)
//	─► body read under the limit (413) ─► kin-openapi request validation (400/415)
//	─► generated strict server (gen/rulesapi) ─► Server
//
// Every refusal is written in the error body of openapi/rules.yaml.
func (s *Server) Handler(o HandlerOptions) (http.Handler, error) {
	if o.MaxBody <= 0 {
		o.MaxBody = DefaultMaxBody
	}
	doc, err := rulesapi.GetSpec()
	if err != nil {
		return nil, fmt.Errorf("load openapi/rules.yaml: %w", err)
	}
	doc.Servers = nil // route on paths alone, whatever host the server is reached by
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		return nil, fmt.Errorf("build the OpenAPI router: %w", err)
	}
	fail := func(w http.ResponseWriter, r *http.Request, err error) { writeError(w, r, s.log, err) }
	strict := rulesapi.NewStrictHandlerWithOptions(s, nil, rulesapi.StrictHTTPServerOptions{
		RequestErrorHandlerFunc: func(w http.ResponseWriter, r *http.Request, err error) {
			fail(w, r, &Error{Code: rulesapi.ErrorCodeBADREQUEST, Message: err.Error(), Hint: "send a JSON body as openapi/rules.yaml describes", Cause: err})
		},
		ResponseErrorHandlerFunc: fail,
	})
	mux := chi.NewRouter()
	mux.NotFound(func(w http.ResponseWriter, r *http.Request) { fail(w, r, notFound(r)) })
	mux.MethodNotAllowed(func(w http.ResponseWriter, r *http.Request) { fail(w, r, methodNotAllowed(r)) })
	api := rulesapi.HandlerWithOptions(rawEvaluate{ServerInterface: strict, s: s, fail: fail}, rulesapi.ChiServerOptions{
		BaseRouter: mux,
		ErrorHandlerFunc: func(w http.ResponseWriter, r *http.Request, err error) {
			fail(w, r, &Error{Code: rulesapi.ErrorCodeBADREQUEST, Message: err.Error(), Hint: "see openapi/rules.yaml for the parameters", Cause: err})
		},
	})
	var want [32]byte
	if o.Token != "" {
		want = sha256.Sum256([]byte(o.Token))
	}
	valOpts := &openapi3filter.Options{
		MultiError:         true,
		AuthenticationFunc: openapi3filter.NoopAuthenticationFunc, // the token is checked before
	}
	bodyless := &openapi3filter.Options{MultiError: true, AuthenticationFunc: openapi3filter.NoopAuthenticationFunc, ExcludeRequestBody: true}
	guarded := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		route, params, err := router.FindRoute(r)
		if err != nil {
			var rerr *routers.RouteError
			if errors.As(err, &rerr) && errors.Is(rerr, routers.ErrMethodNotAllowed) {
				fail(w, r, methodNotAllowed(r))
			} else {
				fail(w, r, notFound(r))
			}
			return
		}
		if o.Token != "" && !public(route.Operation) && !tokenOK(r, &want) {
			fail(w, r, newError(rulesapi.ErrorCodeUNAUTHORIZED, "send Authorization: Bearer <RULE_SERVER_TOKEN>", "a valid bearer token is required"))
			return
		}
		if route.Operation.RequestBody != nil && r.Body != nil && r.Body != http.NoBody {
			b, err := io.ReadAll(r.Body)
			if err != nil {
				fail(w, r, bodyError(err, o.MaxBody))
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(b))
			r = r.WithContext(context.WithValue(r.Context(), ctxBody, b))
		}
		opts := valOpts
		if strings.EqualFold(route.Operation.OperationID, "evaluate") {
			// The evaluation body gets the engine's shape check, the one every runtime applies
			// and which implements the EvaluationRequest schema member for member (the handler
			// runs it on the raw bytes); a second, generic pass over the same bytes would only
			// cost time and word the same problems differently. Its media type is checked here.
			if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
				fail(w, r, newError(rulesapi.ErrorCodeUNSUPPORTEDMEDIATYPE, "send Content-Type: application/json",
					"the request body must be application/json, not %q", r.Header.Get("Content-Type")))
				return
			}
			opts = bodyless
		}
		in := &openapi3filter.RequestValidationInput{Request: r, PathParams: params, Route: route, Options: opts}
		if err := openapi3filter.ValidateRequest(r.Context(), in); err != nil {
			fail(w, r, validationError(err))
			return
		}
		api.ServeHTTP(w, r)
	})
	var general http.Handler = guarded
	general = withIfNoneMatchList(general)
	general = withBodyLimit(o.MaxBody, s.log)(general)
	general = withEscapeCheck(s.log)(general)
	general = s.withDrainClose(general)
	if err := checkEvaluateRoute(doc); err != nil {
		return nil, err
	}
	evaluate := &evaluateRoute{s: s, maxBody: o.MaxBody, token: o.Token != "", want: &want}
	var h http.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if evaluate.match(r) {
			evaluate.ServeHTTP(w, r)
			return
		}
		general.ServeHTTP(w, r)
	})
	h = withAccessLog(s.log)(h)
	h = withRecovery(s.log)(h)
	return h, nil
}

func notFound(r *http.Request) *Error {
	return newError(rulesapi.ErrorCodeNOTFOUND, "see openapi/rules.yaml for the routes", "no route %s %s", r.Method, r.URL.Path)
}

func methodNotAllowed(r *http.Request) *Error {
	return newError(rulesapi.ErrorCodeMETHODNOTALLOWED, "see openapi/rules.yaml for the methods of this path", "%s is not allowed on %s", r.Method, r.URL.Path)
}

// public reports whether the operation declares no security (the probes).
func public(op *openapi3.Operation) bool { return op.Security != nil && len(*op.Security) == 0 }

// tokenOK checks Authorization: Bearer <token>. Both sides are hashed first so the comparison
// takes the same time whatever the length of the presented token.
func tokenOK(r *http.Request, want *[32]byte) bool {
	scheme, tok, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return false
	}
	got := sha256.Sum256([]byte(strings.TrimLeft(tok, " ")))
	return subtle.ConstantTimeCompare(got[:], want[:]) == 1
}

func bodyError(err error, limit int64) error {
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return &Error{Code: rulesapi.ErrorCodePAYLOADTOOLARGE, Message: fmt.Sprintf("the request body exceeds the limit of %d bytes", limit),
			Hint: "send a smaller body", Cause: err}
	}
	return &Error{Code: rulesapi.ErrorCodeBADREQUEST, Message: "the request body could not be read: " + err.Error(), Hint: "", Cause: err}
}

// validationError turns what kin-openapi reports into 400 (415 for a content type) naming each
// offending member, parameter or header.
func validationError(err error) error {
	code := rulesapi.ErrorCodeBADREQUEST
	var problems []string
	var walk func(error)
	walk = func(err error) {
		if multi, ok := err.(openapi3.MultiError); ok {
			for _, e := range multi {
				walk(e)
			}
			return
		}
		var reqErr *openapi3filter.RequestError
		if !errors.As(err, &reqErr) {
			problems = append(problems, err.Error())
			return
		}
		switch {
		case reqErr.Parameter != nil:
			problems = append(problems, fmt.Sprintf("%s parameter %q: %s", reqErr.Parameter.In, reqErr.Parameter.Name, reason(reqErr.Err, reqErr.Reason)))
		case reqErr.RequestBody != nil:
			if strings.Contains(reqErr.Reason, "Content-Type") || strings.Contains(reason(reqErr.Err, ""), "unsupported content type") ||
				strings.Contains(reqErr.Reason, "header Content-Type") {
				code = rulesapi.ErrorCodeUNSUPPORTEDMEDIATYPE
			}
			var multi openapi3.MultiError
			if errors.As(reqErr.Err, &multi) {
				for _, e := range multi {
					problems = append(problems, bodyProblem(e))
				}
			} else if reqErr.Err != nil {
				problems = append(problems, bodyProblem(reqErr.Err))
			} else {
				problems = append(problems, "body: "+reqErr.Reason)
			}
		default:
			problems = append(problems, reason(reqErr.Err, reqErr.Reason))
		}
	}
	walk(err)
	if code == rulesapi.ErrorCodeUNSUPPORTEDMEDIATYPE {
		return &Error{Code: code, Message: "the request body must be application/json", Hint: strings.Join(problems, "; "), Cause: err}
	}
	msg := "the request is invalid: " + strings.Join(problems, "; ")
	return &Error{Code: code, Message: msg, Hint: "see openapi/rules.yaml for the request's shape", Cause: err}
}

func reason(err error, fallback string) string {
	var se *openapi3.SchemaError
	if errors.As(err, &se) && se.Reason != "" {
		return se.Reason
	}
	if err != nil {
		return err.Error()
	}
	return fallback
}

func bodyProblem(err error) string {
	var se *openapi3.SchemaError
	if errors.As(err, &se) {
		return fmt.Sprintf("body member /%s: %s", strings.Join(se.JSONPointer(), "/"), reason(se, ""))
	}
	var pe *openapi3filter.ParseError
	if errors.As(err, &pe) {
		return "body: " + pe.Error()
	}
	return "body: " + err.Error()
}

// withRecovery turns a panic into INTERNAL; the stack goes to the log only.
func withRecovery(log *slog.Logger) func(http.Handler) http.Handler {
	return httpkit.Recovery(log,
		func(r *http.Request) []any { return []any{"path", r.URL.Path} },
		func(w http.ResponseWriter, r *http.Request, err error) {
			w.Header().Set("Connection", "close") // whatever the panic left behind goes with the connection
			writeError(w, r, nil, err)
		})
}

// withAccessLog logs one line per request at debug level (RULE_SERVER_LOG_LEVEL=debug): the
// path, never the query string or headers, which may carry secrets.
func withAccessLog(log *slog.Logger) func(http.Handler) http.Handler {
	return httpkit.AccessLog(log, slog.LevelDebug, func(r *http.Request, rec *httpkit.StatusRecorder, d time.Duration) []any {
		return []any{"method", r.Method, "path", r.URL.Path, "status", rec.Status(), "duration_ms", float64(d.Microseconds()) / 1000}
	})
}

// withEscapeCheck refuses malformed percent-encoding in the path or the query with 400. (The
// request line itself is checked by net/http; errorListener gives that refusal the error body.)
func withEscapeCheck(log *slog.Logger) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if _, err := url.PathUnescape(r.URL.EscapedPath()); err != nil {
				writeError(w, r, log, &Error{Code: rulesapi.ErrorCodeBADREQUEST, Message: "the path has malformed percent-encoding: " + err.Error(),
					Hint: "'%' must be followed by two hexadecimal digits", Cause: err})
				return
			}
			if _, err := url.ParseQuery(r.URL.RawQuery); err != nil {
				writeError(w, r, log, &Error{Code: rulesapi.ErrorCodeBADREQUEST, Message: "the query has malformed percent-encoding: " + err.Error(),
					Hint: "'%' must be followed by two hexadecimal digits", Cause: err})
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

// withBodyLimit refuses a declared Content-Length over the limit at once, without reading the
// body, and caps every other body so that reading past the limit fails (answered 413 by the
// pipeline). net/http then closes the connection instead of draining the rest.
func withBodyLimit(limit int64, log *slog.Logger) func(http.Handler) http.Handler {
	return httpkit.BodyLimit{Limit: limit, CloseConnection: true, Refuse: func(w http.ResponseWriter, r *http.Request) {
		writeError(w, r, log, newError(rulesapi.ErrorCodePAYLOADTOOLARGE, "send a smaller body",
			"the request body is %d bytes; the limit is %d", r.ContentLength, limit))
	}}.Middleware
}

// withIfNoneMatchList joins several If-None-Match lines into one list, as RFC 9110 section 5.3
// allows, so the generated parameter binding sees one value.
func withIfNoneMatchList(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if v := r.Header.Values("If-None-Match"); len(v) > 1 {
			r.Header.Set("If-None-Match", strings.Join(v, ", "))
		}
		next.ServeHTTP(w, r)
	})
}

// rawEvaluate is the generated strict handler, except that POST /evaluations reaches
// Server.Evaluate without the strict wrapper first decoding the body into maps: Evaluate reads
// the raw bytes (the engine keeps every number exactly as written and checks the nesting depth
// before building anything), so that decoding would be thrown away.
type rawEvaluate struct {
	rulesapi.ServerInterface
	s    *Server
	fail func(http.ResponseWriter, *http.Request, error)
}

func (h rawEvaluate) Evaluate(w http.ResponseWriter, r *http.Request) {
	resp, err := h.s.Evaluate(r.Context(), rulesapi.EvaluateRequestObject{})
	if err == nil {
		err = resp.VisitEvaluateResponse(w)
	}
	if err != nil {
		h.fail(w, r, err)
	}
}

// withDrainClose asks keep-alive clients to reconnect once draining has begun (a connection
// kept open would bypass the load balancer that has already taken this instance out), also in
// answers to requests that started before.
func (s *Server) withDrainClose(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(&closeOnDrain{ResponseWriter: w, draining: &s.draining}, r)
	})
}
