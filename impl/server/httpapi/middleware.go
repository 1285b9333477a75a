package httpapi

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/sdods/sdods/impl/httpkit"
	"github.com/sdods/sdods/impl/server/apierr"
	"github.com/sdods/sdods/impl/server/oas"
	"github.com/sdods/sdods/impl/textclip"
)

type ctxKey int

const (
	_ ctxKey = iota // was the request id, now httpkit's
	ctxOperation
	ctxPrincipal
)

// RequestID returns the id of the request being served ("" outside one).
func RequestID(ctx context.Context) string { return httpkit.RequestID(ctx) }

// OperationFrom returns the operation being served.
func OperationFrom(ctx context.Context) (*oas.Operation, bool) {
	op, ok := ctx.Value(ctxOperation).(*oas.Operation)
	return op, ok
}

type statusRecorder struct {
	http.ResponseWriter
	status int
	bytes  int64
	code   apierr.Code
	op     *oas.Operation
}

// recordOperation tells the access log's recorder, under whatever wraps w, which operation the
// request is (the request's context, where the operation is kept, is a later one).
func recordOperation(w http.ResponseWriter, op *oas.Operation) {
	for w != nil {
		if sr, ok := w.(*statusRecorder); ok {
			sr.op = op
			return
		}
		u, ok := w.(interface{ Unwrap() http.ResponseWriter })
		if !ok {
			return
		}
		w = u.Unwrap()
	}
}

// RecordErrorCode keeps the error code of the response, for the recorders around this one too.
func (s *statusRecorder) RecordErrorCode(c apierr.Code) {
	s.code = c
	if cr, ok := s.ResponseWriter.(apierr.CodeRecorder); ok {
		cr.RecordErrorCode(c)
	}
}

// ResponseStarted tells apierr.Write that an error can no longer be the response.
func (s *statusRecorder) ResponseStarted() bool { return s.status != 0 }

func (s *statusRecorder) WriteHeader(code int) {
	if s.status == 0 && code >= 200 { // an informational status precedes the response's own
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	n, err := s.ResponseWriter.Write(b)
	s.bytes += int64(n)
	return n, err
}

// Flush lets server-sent event handlers flush through the recorder.
func (s *statusRecorder) Flush() {
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection.
func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// RequestObserver counts requests (metrics.Metrics).
type RequestObserver interface {
	ObserveRequest(operation string, status int, code string, d time.Duration)
}

// withLogging logs one line per request and counts it. It logs the path, never the query string
// or headers, which may carry secrets.
func withLogging(log *slog.Logger, obs RequestObserver) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			start := time.Now()
			rec := &statusRecorder{ResponseWriter: w}
			next.ServeHTTP(rec, r)
			status := rec.status
			if status == 0 {
				status = http.StatusOK
			}
			took := time.Since(start)
			// Typed attributes on the stack: no boxing of the values, no slice per request.
			var buf [8]slog.Attr
			attrs := append(buf[:0], slog.String("request_id", RequestID(r.Context())), slog.String("method", textclip.Counted(r.Method, 32)),
				slog.String("path", textclip.Counted(escapePath(r.URL.Path), 512)), slog.Int("status", status), slog.Int64("bytes", rec.bytes),
				slog.Int64("duration_ms", took.Milliseconds()))
			opID := ""
			if op := rec.op; op != nil {
				opID = op.ID
				attrs = append(attrs, slog.String("operation", op.ID))
			}
			if rec.code != "" {
				attrs = append(attrs, slog.String("code", string(rec.code)))
			}
			log.LogAttrs(r.Context(), slog.LevelInfo, "request", attrs...)
			if obs != nil {
				obs.ObserveRequest(opID, status, string(rec.code), took)
			}
		})
	}
}

// withRecovery turns a panic into an internal error response; the stack goes to the log only.
func withRecovery(log *slog.Logger) func(http.Handler) http.Handler {
	return httpkit.Recovery(log,
		func(r *http.Request) []any { return []any{"request_id", RequestID(r.Context())} },
		func(w http.ResponseWriter, r *http.Request, err error) { apierr.Write(w, r, nil, err) })
}

// withBodyLimit caps every request body; reading past the cap fails and is answered 413. A body
// announced larger than the cap is refused by the pipeline, once the request has an audit record.
func withBodyLimit(limit int64) func(http.Handler) http.Handler {
	return httpkit.BodyLimit{Limit: limit}.Middleware
}

// wildcardRoute is an operation route whose last path parameter may span several segments.
type wildcardRoute struct {
	method   string
	segments []string // template segments before the wildcard
}

// wildcardRoutes lists the routes of operations with an x-wildcard path parameter in last place.
func wildcardRoutes(ops []oas.Operation) []wildcardRoute {
	var out []wildcardRoute
	for _, op := range ops {
		if len(op.Wildcards) == 0 {
			continue
		}
		segs := strings.Split(strings.TrimPrefix(op.Path, "/"), "/")
		last := segs[len(segs)-1]
		if last != "{"+op.Wildcards[len(op.Wildcards)-1]+"}" {
			continue
		}
		out = append(out, wildcardRoute{method: op.Method, segments: segs[:len(segs)-1]})
	}
	return out
}

// withWildcardPaths percent-encodes the slashes inside a wildcard parameter (for example the
// feature path in /api/projects/p/features/auth/login.feature) so that both the OpenAPI router
// and chi see it as a single path parameter.
func withWildcardPaths(routes []wildcardRoute) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			raw := r.URL.EscapedPath()
			segs := strings.Split(strings.TrimPrefix(raw, "/"), "/")
			for _, route := range routes {
				static := route.method == http.MethodGet && route.method == r.Method && route.segments[0] != "api"
				if static && len(segs) == len(route.segments) && segmentsMatch(route.segments, segs) {
					// /reports/{runId} and /trace: the folder, so that the page's relative links resolve.
					target := r.URL.EscapedPath() + "/"
					if r.URL.RawQuery != "" {
						target += "?" + r.URL.RawQuery
					}
					http.Redirect(w, r, target, http.StatusMovedPermanently)
					return
				}
				if static && len(segs) == len(route.segments)+1 && segs[len(segs)-1] == "" && segmentsMatch(route.segments, segs) {
					// A static route's folder (/reports/{runId}/, /trace/) serves its index.html.
					u := *r.URL
					u.Path += "index.html"
					if u.RawPath != "" {
						u.RawPath += "index.html"
					}
					r2 := r.Clone(r.Context())
					r2.URL = &u
					next.ServeHTTP(w, r2)
					return
				}
				if route.method != r.Method || len(segs) <= len(route.segments)+1 {
					continue
				}
				if !segmentsMatch(route.segments, segs) {
					continue
				}
				tail := strings.Join(segs[len(route.segments):], "%2F")
				u := *r.URL
				u.RawPath = "/" + strings.Join(segs[:len(route.segments)], "/") + "/" + tail
				r2 := r.Clone(r.Context())
				r2.URL = &u
				next.ServeHTTP(w, r2)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

func segmentsMatch(template, segs []string) bool {
	for i, t := range template {
		if strings.HasPrefix(t, "{") {
			if segs[i] == "" {
				return false
			}
			continue
		}
		if t != segs[i] {
			return false
		}
	}
	return true
}
