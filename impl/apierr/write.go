package apierr

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"strconv"
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
	if log != nil {
		attrs := []any{"code", e.Code, "status", status, "method", r.Method, "path", r.URL.Path}
		if e.Cause != nil {
			attrs = append(attrs, "cause", e.Cause.Error())
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
