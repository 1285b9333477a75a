package ruleserver

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/sdods/sdods/gen/rulesapi"
)

// Error is the one error type of the rule server: a code of openapi/rules.yaml's ErrorCode enum,
// a message, a hint naming what to change, and the cause (logged, never written).
type Error struct {
	Code    rulesapi.ErrorCode
	Message string
	Hint    string
	Cause   error
}

// Error returns "CODE: message".
func (e *Error) Error() string { return string(e.Code) + ": " + e.Message }

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Cause }

func newError(code rulesapi.ErrorCode, hint, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...), Hint: hint}
}

// Status returns the HTTP status of code: the single code → status map of the rule server.
// Load codes (they appear only in readiness detail) and unknown codes are 500.
func Status(code rulesapi.ErrorCode) int {
	switch code {
	case rulesapi.ErrorCodeBADREQUEST:
		return http.StatusBadRequest
	case rulesapi.ErrorCodeUNAUTHORIZED:
		return http.StatusUnauthorized
	case rulesapi.ErrorCodeNOTFOUND, rulesapi.ErrorCodeCHANNELUNAVAILABLE:
		return http.StatusNotFound
	case rulesapi.ErrorCodeMETHODNOTALLOWED:
		return http.StatusMethodNotAllowed
	case rulesapi.ErrorCodePAYLOADTOOLARGE:
		return http.StatusRequestEntityTooLarge
	case rulesapi.ErrorCodeUNSUPPORTEDMEDIATYPE:
		return http.StatusUnsupportedMediaType
	case rulesapi.ErrorCodeEVALUATIONERROR:
		return http.StatusUnprocessableEntity
	case rulesapi.ErrorCodeNOTREADY:
		return http.StatusServiceUnavailable
	case rulesapi.ErrorCodeHEADERSTOOLARGE:
		return http.StatusRequestHeaderFieldsTooLarge
	case rulesapi.ErrorCodeTRANSFERENCODINGUNSUPPORTED:
		return http.StatusNotImplemented
	case rulesapi.ErrorCodeHTTPVERSIONNOTSUPPORTED:
		return http.StatusHTTPVersionNotSupported
	}
	return http.StatusInternalServerError
}

// errorBody returns the wire form of err: an *Error as it is, anything else as INTERNAL without
// its text.
func errorBody(err error) (*Error, rulesapi.Error) {
	var e *Error
	if !errors.As(err, &e) || Status(e.Code) == http.StatusInternalServerError {
		e = &Error{Code: rulesapi.ErrorCodeINTERNAL, Message: "internal error", Hint: "the server logged the cause", Cause: err}
	}
	return e, rulesapi.Error{Error: rulesapi.ErrorBody{Code: e.Code, Message: e.Message, Hint: e.Hint}}
}

// writeError writes err as the error body of openapi/rules.yaml with the status its code maps
// to. Internal errors are logged with their cause.
func writeError(w http.ResponseWriter, r *http.Request, log *slog.Logger, err error) {
	e, body := errorBody(err)
	status := Status(e.Code)
	if status >= 500 && log != nil {
		log.ErrorContext(r.Context(), "request failed", "method", r.Method, "path", r.URL.Path, "code", e.Code, "cause", fmt.Sprint(err))
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("X-Content-Type-Options", "nosniff")
	if e.Code == rulesapi.ErrorCodeUNAUTHORIZED {
		h.Set("WWW-Authenticate", `Bearer realm="rule server"`)
	}
	if e.Code == rulesapi.ErrorCodePAYLOADTOOLARGE {
		// The rest of the body is never read; the connection cannot be reused.
		h.Set("Connection", "close")
	}
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(body)
}

// requestError is engineError for a body ParseRequest refused. When the body is not JSON at all,
// the message and hint also say where: the line, the column (in characters) and the byte offset
// (from 0) of the first byte encoding/json cannot accept, or of the end of a truncated body.
func requestError(body []byte, err error) error {
	e := engineError(err)
	var re *Error
	if !errors.As(e, &re) || re.Code != rulesapi.ErrorCodeBADREQUEST {
		return e
	}
	var se *json.SyntaxError
	if !errors.As(json.Unmarshal(body, new(json.RawMessage)), &se) {
		return e // JSON, refused for another reason: the engine's pointer says where
	}
	off := int(se.Offset)
	if off > 0 && off <= len(body) && !strings.HasPrefix(se.Error(), "unexpected end") {
		off-- // Offset counts the offending byte
	}
	line, col := 1, 1
	for i := 0; i < off; {
		r, n := utf8.DecodeRune(body[i:])
		if r == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
		i += n
	}
	where := fmt.Sprintf("line %d, column %d (byte offset %d)", line, col, off)
	return &Error{Code: re.Code, Message: re.Message + " at " + where, Hint: "fix the JSON at " + where + " of the body", Cause: err}
}
