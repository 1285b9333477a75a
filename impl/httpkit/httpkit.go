// Package httpkit is the HTTP plumbing both servers share (the test automation server's
// impl/server/httpapi and the rule server's impl/rules/ruleserver): request ids, panic recovery,
// a status recorder, body limits and the access log. Each server keeps its own error type and
// error writer and passes them in, so this package knows neither product.
package httpkit

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/http"
	"regexp"
	"runtime/debug"
	"time"
)

type ctxKey int

const ctxRequestID ctxKey = iota

// RequestID returns the id of the request being served ("" outside one, or behind a server
// without WithRequestID).
func RequestID(ctx context.Context) string {
	id, _ := ctx.Value(ctxRequestID).(string)
	return id
}

var safeRequestID = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

// WithRequestID adopts a well-formed incoming X-Request-Id, or makes one, puts it in the
// request's context (RequestID) and echoes it in the response.
func WithRequestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get("X-Request-Id")
		if !safeRequestID.MatchString(id) {
			var b [8]byte
			_, _ = rand.Read(b[:])
			id = hex.EncodeToString(b[:])
		}
		w.Header().Set("X-Request-Id", id)
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), ctxRequestID, id)))
	})
}

// StatusRecorder remembers the status and counts the bytes of a response.
type StatusRecorder struct {
	http.ResponseWriter
	status int
	bytes  int64
}

// NewStatusRecorder wraps w.
func NewStatusRecorder(w http.ResponseWriter) *StatusRecorder {
	return &StatusRecorder{ResponseWriter: w}
}

// Status returns the status written so far, 0 when nothing was written.
func (s *StatusRecorder) Status() int { return s.status }

// Bytes returns the number of body bytes written.
func (s *StatusRecorder) Bytes() int64 { return s.bytes }

// WriteHeader records the first status and passes it on.
func (s *StatusRecorder) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

// Write records an implicit 200 and counts the bytes.
func (s *StatusRecorder) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	n, err := s.ResponseWriter.Write(b)
	s.bytes += int64(n)
	return n, err
}

// Flush lets server-sent event handlers flush through the recorder.
func (s *StatusRecorder) Flush() {
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection.
func (s *StatusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// RawWriter returns the ResponseWriter of net/http under any wrappers: http.MaxBytesReader
// tells it to close the connection after the answer only when it is given that one.
func RawWriter(w http.ResponseWriter) http.ResponseWriter {
	for {
		u, ok := w.(interface{ Unwrap() http.ResponseWriter })
		if !ok {
			return w
		}
		w = u.Unwrap()
	}
}

// Recovery turns a panic into the server's internal error: the panic and its stack go to log
// with the attributes of attrs (never to the client), then answer writes the response.
// http.ErrAbortHandler is passed on, as net/http expects.
func Recovery(log *slog.Logger, attrs func(*http.Request) []any, answer func(http.ResponseWriter, *http.Request, error)) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			defer func() {
				if v := recover(); v != nil {
					if v == http.ErrAbortHandler {
						panic(v)
					}
					fields := append(attrs(r), "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
					log.ErrorContext(r.Context(), "panic", fields...)
					answer(w, r, fmt.Errorf("panic: %v", v))
				}
			}()
			next.ServeHTTP(w, r)
		})
	}
}

// BodyLimit caps every request body at Limit bytes: reading past it fails with
// *http.MaxBytesError, which the server answers 413.
type BodyLimit struct {
	Limit int64
	// Refuse, when set, answers a request whose declared Content-Length is over Limit at once,
	// without reading the body.
	Refuse func(http.ResponseWriter, *http.Request)
	// CloseConnection makes net/http close the connection after a body over the limit instead of
	// reading the rest of it.
	CloseConnection bool
}

// Middleware returns the limit as middleware.
func (b BodyLimit) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if b.Refuse != nil && r.ContentLength > b.Limit {
			b.Refuse(w, r)
			return
		}
		if r.Body != nil {
			rw := w
			if b.CloseConnection {
				rw = RawWriter(w)
			}
			r.Body = http.MaxBytesReader(rw, r.Body, b.Limit)
		}
		next.ServeHTTP(w, r)
	})
}

// AccessLog logs one line "request" per request at level, with the attributes attrs makes of the
// request, its recorded response and its duration. It skips the recording when log does not
// log at level. attrs must not log the query string or headers, which may carry secrets.
func AccessLog(log *slog.Logger, level slog.Level, attrs func(r *http.Request, rec *StatusRecorder, d time.Duration) []any) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !log.Enabled(r.Context(), level) {
				next.ServeHTTP(w, r)
				return
			}
			start := time.Now()
			rec := NewStatusRecorder(w)
			next.ServeHTTP(rec, r)
			log.Log(r.Context(), level, "request", attrs(r, rec, time.Since(start))...)
		})
	}
}
