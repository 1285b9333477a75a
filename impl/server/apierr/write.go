package apierr

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
)

// body is the wire shape of every error response.
type body struct {
	Error wireError `json:"error"`
}

type wireError struct {
	Code    Code   `json:"code"`
	Message string `json:"message"`
	Hint    string `json:"hint"`
	Details any    `json:"details,omitempty"`
}

// Write writes err as the one error body with the status its code maps to. Internal errors are
// logged with their cause and written without it.
func Write(w http.ResponseWriter, r *http.Request, log *slog.Logger, err error) {
	e := From(err)
	status := e.Code.Status()
	if started(w) {
		// The response began before the error (typically the client went away in the middle of
		// the body, so the handler's write failed): a second status cannot be sent, and the
		// first one stays the response's.
		if log != nil {
			attrs := []any{"request_id", w.Header().Get("X-Request-Id"), "method", bounded(r.Method, 32), "path", bounded(r.URL.Path, 512)}
			if e.Cause != nil {
				attrs = append(attrs, "cause", bounded(e.Cause.Error(), 4096))
			}
			log.InfoContext(r.Context(), "response not completed", attrs...)
		}
		return
	}
	recordCode(w, e.Code)
	if log != nil {
		// The request id the client is told to quote (set on the response by the pipeline).
		attrs := []any{"request_id", w.Header().Get("X-Request-Id"), "code", e.Code, "status", status, "method", bounded(r.Method, 32), "path", bounded(r.URL.Path, 512)}
		if e.Cause != nil {
			attrs = append(attrs, "cause", bounded(e.Cause.Error(), 4096))
		}
		if status >= 500 && e.Code != NotImplemented {
			log.ErrorContext(r.Context(), "request failed", attrs...)
		} else {
			log.DebugContext(r.Context(), "request refused", attrs...)
		}
	}
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("X-Content-Type-Options", "nosniff")
	if e.RetryAfter > 0 {
		h.Set("Retry-After", strconv.Itoa(e.RetryAfter))
	}
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body{Error: wireError{Code: e.Code, Message: e.Message, Hint: e.Hint, Details: e.Details}})
}

// recordCode tells the first CodeRecorder among w and the writers it wraps.
func recordCode(w http.ResponseWriter, c Code) {
	for w != nil {
		if cr, ok := w.(CodeRecorder); ok {
			cr.RecordErrorCode(c)
			return
		}
		u, ok := w.(interface{ Unwrap() http.ResponseWriter })
		if !ok {
			return
		}
		w = u.Unwrap()
	}
}

// started reports whether the first StartRecorder among w and the writers it wraps has sent a
// status; without one, nothing is known and the error is written.
func started(w http.ResponseWriter) bool {
	for w != nil {
		if sr, ok := w.(StartRecorder); ok {
			return sr.ResponseStarted()
		}
		u, ok := w.(interface{ Unwrap() http.ResponseWriter })
		if !ok {
			return false
		}
		w = u.Unwrap()
	}
	return false
}

// StartRecorder is a response writer that knows whether the response's status was sent.
type StartRecorder interface {
	ResponseStarted() bool
}

// CodeRecorder is a response writer that keeps the error code of the response (for the access
// log and the errors-by-code metric).
type CodeRecorder interface {
	RecordErrorCode(Code)
}

// bounded cuts a text that may carry request input before it is logged.
func bounded(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + fmt.Sprintf("… (%d bytes more)", len(s)-n)
}
