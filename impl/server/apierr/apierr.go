// Package apierr is the one error type of the test automation server's HTTP boundary and its
// single writer: every handler error, validation failure, 404, 405 and panic leaves the server as
// { "error": { "code", "message", "hint" } } with the status its code maps to.
package apierr

import (
	"errors"
	"fmt"
	"net/http"
)

// Code is a stable, machine-readable error code; the set equals the ErrorCode enum of openapi/server.yaml.
type Code string

// The error codes, exactly the ErrorCode enum of openapi/server.yaml (a test keeps them equal).
const (
	BadRequest           Code = "bad_request"
	ValidationFailed     Code = "validation_failed"
	Unauthorized         Code = "unauthorized"
	CSRFInvalid          Code = "csrf_invalid"
	Forbidden            Code = "forbidden"
	ScopeMissing         Code = "scope_missing"
	SessionRequired      Code = "session_required"
	NotFound             Code = "not_found"
	MethodNotAllowed     Code = "method_not_allowed"
	Conflict             Code = "conflict"
	PreconditionFailed   Code = "precondition_failed"
	PayloadTooLarge      Code = "payload_too_large"
	RangeNotSatisfiable  Code = "range_not_satisfiable"
	UnsupportedMediaType Code = "unsupported_media_type"
	Unprocessable        Code = "unprocessable"
	RateLimited          Code = "rate_limited"
	NotImplemented       Code = "not_implemented"
	Unavailable          Code = "unavailable"
	Internal             Code = "internal"
)

// statusByCode is the single code → HTTP status map of the server.
var statusByCode = map[Code]int{
	BadRequest:           http.StatusBadRequest,
	ValidationFailed:     http.StatusBadRequest,
	Unauthorized:         http.StatusUnauthorized,
	CSRFInvalid:          http.StatusForbidden,
	Forbidden:            http.StatusForbidden,
	ScopeMissing:         http.StatusForbidden,
	SessionRequired:      http.StatusForbidden,
	NotFound:             http.StatusNotFound,
	MethodNotAllowed:     http.StatusMethodNotAllowed,
	Conflict:             http.StatusConflict,
	PreconditionFailed:   http.StatusPreconditionFailed,
	PayloadTooLarge:      http.StatusRequestEntityTooLarge,
	RangeNotSatisfiable:  http.StatusRequestedRangeNotSatisfiable,
	UnsupportedMediaType: http.StatusUnsupportedMediaType,
	Unprocessable:        http.StatusUnprocessableEntity,
	RateLimited:          http.StatusTooManyRequests,
	NotImplemented:       http.StatusNotImplemented,
	Unavailable:          http.StatusServiceUnavailable,
	Internal:             http.StatusInternalServerError,
}

// Codes returns every known code, in no particular order.
func Codes() []Code {
	out := make([]Code, 0, len(statusByCode))
	for c := range statusByCode {
		out = append(out, c)
	}
	return out
}

// Status returns the HTTP status for a code; unknown codes are 500.
func (c Code) Status() int {
	if s, ok := statusByCode[c]; ok {
		return s
	}
	return http.StatusInternalServerError
}

// Error is an error a client may see: its Message and Hint are written to the response as they are,
// so they must never contain secrets. Cause is logged, never written.
type Error struct {
	Code    Code
	Message string
	Hint    string
	// Details is an optional extra member of the error object (for example feature diagnostics).
	Details any
	// RetryAfter, in seconds, becomes the Retry-After header when positive.
	RetryAfter int
	Cause      error
}

func (e *Error) Error() string {
	if e.Cause != nil {
		return fmt.Sprintf("%s: %s: %v", e.Code, e.Message, e.Cause)
	}
	return fmt.Sprintf("%s: %s", e.Code, e.Message)
}

func (e *Error) Unwrap() error { return e.Cause }

// New returns an error with a code, message and hint.
func New(code Code, message, hint string) *Error {
	return &Error{Code: code, Message: message, Hint: hint}
}

// Wrap returns an error with a code and message that keeps cause for the log.
func Wrap(cause error, code Code, message, hint string) *Error {
	return &Error{Code: code, Message: message, Hint: hint, Cause: cause}
}

// NotImplementedOp returns the error every not-yet-built operation answers with.
func NotImplementedOp(operationID string) *Error {
	return New(NotImplemented, fmt.Sprintf("operation %s is not implemented yet", operationID),
		"see docs/api-status.md for the operations this server implements")
}

// From returns the *Error in err's chain, or an internal error wrapping err.
func From(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{Code: Internal, Message: "internal error", Hint: "the server logged the cause; retry or report it with the request id", Cause: err}
}
