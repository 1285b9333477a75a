package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/mail"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"

	"github.com/sdods/sdods/impl/server/apierr"
	"github.com/sdods/sdods/impl/textclip"
)

var registerDecoders sync.Once

// registerBodyDecoders teaches kin-openapi the text content types ingest accepts; their content
// is parsed by the handler, the validator only checks the content type.
func registerBodyDecoders() {
	registerDecoders.Do(func() {
		raw := func(body io.Reader, _ http.Header, _ *openapi3.SchemaRef, _ openapi3filter.EncodingFn) (any, error) {
			b, err := io.ReadAll(body)
			return string(b), err
		}
		for _, ct := range []string{"application/x-ndjson", "application/xml", "text/xml", "text/event-stream", "text/html"} {
			if openapi3filter.RegisteredBodyDecoder(ct) == nil {
				openapi3filter.RegisterBodyDecoder(ct, raw)
			}
		}
	})
}

// routeError maps the OpenAPI router's refusal to the error body.
func routeError(r *http.Request, err error) *apierr.Error {
	var rerr *routers.RouteError
	if errors.As(err, &rerr) && errors.Is(rerr, routers.ErrMethodNotAllowed) {
		return apierr.New(apierr.MethodNotAllowed, fmt.Sprintf("%s is not allowed on %s", textclip.Counted(r.Method, 32), textclip.Counted(r.URL.Path, 200)), "see openapi/server.yaml for the methods of this path")
	}
	return apierr.New(apierr.NotFound, fmt.Sprintf("no route %s %s", textclip.Counted(r.Method, 32), textclip.Counted(r.URL.Path, 200)), "see openapi/server.yaml for the API's routes")
}

// validationError turns what kin-openapi reports into a 400 (or 413/415) whose hint names each
// offending member or parameter.
func validationError(err error) *apierr.Error {
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return apierr.Wrap(err, apierr.PayloadTooLarge, fmt.Sprintf("the request body exceeds the limit of %d bytes", tooLarge.Limit), "send a smaller body")
	}
	var problems []string
	code := apierr.ValidationFailed
	var walk func(error)
	walk = func(err error) {
		// A RequestError unwraps to its cause, which may itself be a MultiError: look at the
		// outermost error's own type first.
		if multi, ok := err.(openapi3.MultiError); ok {
			for _, e := range multi {
				walk(e)
			}
			return
		}
		var reqErr *openapi3filter.RequestError
		if errors.As(err, &reqErr) {
			switch {
			case reqErr.Parameter != nil:
				problems = append(problems, fmt.Sprintf("%s parameter %q: %s", reqErr.Parameter.In, reqErr.Parameter.Name, innerReason(reqErr)))
			case reqErr.RequestBody != nil:
				if strings.Contains(reqErr.Reason, "Content-Type") || strings.Contains(innerReason(reqErr), "unsupported content type") {
					code = apierr.UnsupportedMediaType
				}
				if isMalformedJSON(reqErr.Err) {
					code = apierr.BadRequest // not JSON at all: docs/api.md's bad_request
				} else if desc := oneOfDescription(reqErr.RequestBody); desc != "" {
					// The alternatives' own complaints ("property all is unsupported; property
					// names is unsupported") contradict each other; the schema says what is accepted.
					problems = append(problems, "body: matches none of the accepted forms: "+desc)
					return
				}
				var multi openapi3.MultiError
				if errors.As(reqErr.Err, &multi) {
					for _, e := range multi {
						problems = append(problems, bodyProblem(e))
					}
				} else {
					problems = append(problems, bodyProblem(reqErr))
				}
			default:
				problems = append(problems, innerReason(reqErr))
			}
			return
		}
		var secErr *openapi3filter.SecurityRequirementsError
		if errors.As(err, &secErr) {
			problems = append(problems, "credentials missing")
			return
		}
		problems = append(problems, err.Error())
	}
	walk(err)
	if len(problems) == 0 {
		problems = append(problems, "the request does not match the API document")
	}
	hint := boundedProblems(problems)
	// The cause that is logged is the hint, not kin-openapi's error: that one carries the values
	// of the request (a password, a secret, a megabyte-long member) and is unbounded.
	cause := errors.New(hint)
	if code == apierr.UnsupportedMediaType {
		return apierr.Wrap(cause, code, "the request body has a content type this operation does not accept", hint)
	}
	if code == apierr.BadRequest {
		return apierr.Wrap(cause, code, "the request body is not valid JSON", hint)
	}
	msg := "the request is invalid"
	if len(problems) > 1 {
		msg = fmt.Sprintf("the request has %d problems", len(problems))
	}
	return apierr.Wrap(cause, code, msg, hint)
}

// At most this many problems, each at most this long, are reported: they name members and
// parameters of the request, which its sender chooses.
const (
	maxProblems      = 20
	maxProblemLength = 300
)

func boundedProblems(problems []string) string {
	shown := problems
	if len(shown) > maxProblems {
		shown = shown[:maxProblems]
	}
	out := make([]string, len(shown), len(shown)+1)
	for i, p := range shown {
		out[i] = textclip.Counted(p, maxProblemLength)
	}
	if len(problems) > len(shown) {
		out = append(out, fmt.Sprintf("and %d more", len(problems)-len(shown)))
	}
	return strings.Join(out, "; ")
}

// parseProblem describes a parameter or body that could not be parsed, without its value
// (ParseError.Error() prints it).
func parseProblem(pe *openapi3filter.ParseError) string {
	var parts []string
	if p := pe.Path(); len(p) > 0 {
		segs := make([]string, len(p))
		for i, v := range p {
			segs[i] = fmt.Sprint(v)
		}
		parts = append(parts, "at "+strings.Join(segs, "."))
	}
	for e := pe; e != nil; {
		if e.Reason != "" {
			parts = append(parts, e.Reason)
		}
		next, ok := e.Cause.(*openapi3filter.ParseError)
		if !ok {
			if e.Cause != nil {
				parts = append(parts, causeKind(e.Cause))
			}
			break
		}
		e = next
	}
	if len(parts) == 0 {
		return "cannot be parsed"
	}
	return strings.Join(parts, ": ")
}

// causeKind describes a parse failure's cause without quoting the input it failed on.
func causeKind(err error) string {
	var syntaxErr *json.SyntaxError
	var numErr *strconv.NumError
	switch {
	case errors.As(err, &syntaxErr):
		return fmt.Sprintf("not valid JSON (offset %d)", syntaxErr.Offset)
	case errors.As(err, &numErr):
		return "not a valid number"
	}
	return "cannot be parsed"
}

func innerReason(e *openapi3filter.RequestError) string {
	if multi, ok := e.Err.(openapi3.MultiError); ok {
		reasons := make([]string, 0, len(multi))
		for _, m := range multi {
			reasons = append(reasons, innerReason(&openapi3filter.RequestError{Err: m}))
		}
		return strings.Join(reasons, ", ")
	}
	if e.Err != nil {
		var se *openapi3.SchemaError
		if errors.As(e.Err, &se) {
			return schemaReason(se)
		}
		var pe *openapi3filter.ParseError
		if errors.As(e.Err, &pe) {
			return parseProblem(pe)
		}
		return e.Err.Error()
	}
	return e.Reason
}

// isMalformedJSON reports whether a body failed to decode as JSON (as opposed to decoding to
// something the schema refuses).
func isMalformedJSON(err error) bool {
	var syntaxErr *json.SyntaxError
	if errors.As(err, &syntaxErr) || errors.Is(err, io.ErrUnexpectedEOF) {
		return true
	}
	var pe *openapi3filter.ParseError
	if errors.As(err, &pe) {
		for e := pe; e != nil; {
			if errors.As(e.Cause, &syntaxErr) || errors.Is(e.Cause, io.ErrUnexpectedEOF) {
				return true
			}
			next, ok := e.Cause.(*openapi3filter.ParseError)
			if !ok {
				break
			}
			e = next
		}
	}
	return false
}

// oneOfDescription returns the description of a JSON request body whose schema is a oneOf.
func oneOfDescription(rb *openapi3.RequestBody) string {
	if rb == nil {
		return ""
	}
	mt := rb.Content.Get("application/json")
	if mt == nil || mt.Schema == nil || mt.Schema.Value == nil || len(mt.Schema.Value.OneOf) == 0 {
		return ""
	}
	return mt.Schema.Value.Description
}

func bodyProblem(err error) string {
	var se *openapi3.SchemaError
	if errors.As(err, &se) {
		ptr := "/" + strings.Join(se.JSONPointer(), "/")
		return fmt.Sprintf("body member %s: %s", ptr, schemaReason(se))
	}
	var syntaxErr *json.SyntaxError
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &syntaxErr) || errors.As(err, &typeErr) || errors.Is(err, io.ErrUnexpectedEOF) {
		return "body: not valid JSON: " + err.Error()
	}
	var pe *openapi3filter.ParseError
	if errors.As(err, &pe) {
		return "body: " + parseProblem(pe)
	}
	var reqErr *openapi3filter.RequestError
	if errors.As(err, &reqErr) {
		if reqErr.Err != nil {
			return bodyProblem(reqErr.Err)
		}
		return "body: " + reqErr.Reason
	}
	return "body: " + err.Error()
}

// schemaReason says why a value does not match its schema, never quoting the value
// (SchemaError.Error() does).
func schemaReason(se *openapi3.SchemaError) string {
	if se.Reason != "" {
		return se.Reason
	}
	if se.SchemaField != "" {
		return fmt.Sprintf("does not match the schema (%s)", se.SchemaField)
	}
	return "does not match the schema"
}

var uuidRE = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// stringFormats are the string formats the document uses that kin-openapi leaves unchecked by
// default; without them a malformed id would reach a handler.
var stringFormats = map[string]openapi3.StringFormatValidator{
	"uuid": openapi3.NewCallbackValidator(func(s string) error {
		if !uuidRE.MatchString(s) {
			return fmt.Errorf("not a UUID")
		}
		return nil
	}),
	"email": openapi3.NewCallbackValidator(func(s string) error {
		addr, err := mail.ParseAddress(s)
		if err != nil || addr.Address != s || addr.Name != "" {
			return fmt.Errorf("not an email address")
		}
		return nil
	}),
}

// validator checks a request against the OpenAPI document before any handler sees it.
//
// Its options are built once. The request's security requirements are not given to kin-openapi:
// with an authentication function that accepts everything, all it checked was that each scheme a
// requirement names is declared, which depends on the document alone and is checked once by
// newValidator (the pipeline authenticates the request itself); and to give that function a
// fresh copy of the body, it read every request's body whole into memory, a streamed ingest's
// included.
type validator struct {
	// opts validates parameters and body; binary without the body (binaryBody).
	opts, binary *openapi3filter.Options
	// spec is the document without its security requirements, and ops the operations that have
	// their own, each copied without them: what kin-openapi is given in place of the route's.
	spec *openapi3.T
	ops  map[*openapi3.Operation]*openapi3.Operation
}

func newValidator(doc *openapi3.T) (*validator, error) {
	if err := securitySchemesDeclared(doc); err != nil {
		return nil, err
	}
	opts := func(excludeBody bool) *openapi3filter.Options {
		return &openapi3filter.Options{
			MultiError:              true,
			AuthenticationFunc:      openapi3filter.NoopAuthenticationFunc,
			SchemaValidationOptions: []openapi3.SchemaValidationOption{openapi3.WithStringFormatValidators(stringFormats)},
			// A binary body has nothing to validate but its media type, checked here: kin-openapi
			// would read it whole into memory, and ingest streams documents of any size (issue 31).
			ExcludeRequestBody: excludeBody,
		}
	}
	v := &validator{opts: opts(false), binary: opts(true), ops: map[*openapi3.Operation]*openapi3.Operation{}}
	spec := *doc
	spec.Security = nil
	v.spec = &spec
	for _, item := range doc.Paths.Map() {
		for _, op := range item.Operations() {
			if op.Security != nil {
				bare := *op
				bare.Security = nil
				v.ops[op] = &bare
			}
		}
	}
	return v, nil
}

// securitySchemesDeclared fails unless every security scheme that the document's or an
// operation's requirements name is declared in its components (what kin-openapi's request
// validation refused, per request, with an authentication function that accepts anything).
func securitySchemesDeclared(doc *openapi3.T) error {
	var declared openapi3.SecuritySchemes
	if doc.Components != nil {
		declared = doc.Components.SecuritySchemes
	}
	check := func(where string, reqs openapi3.SecurityRequirements) error {
		for _, req := range reqs {
			for name := range req {
				if ref := declared[name]; ref == nil || ref.Value == nil {
					return fmt.Errorf("%s: security scheme %q is not declared", where, name)
				}
			}
		}
		return nil
	}
	if err := check("document", doc.Security); err != nil {
		return err
	}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			if op.Security != nil {
				if err := check(method+" "+path, *op.Security); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func (v *validator) validate(ctx context.Context, r *http.Request, route *routers.Route, params map[string]string) error {
	opts := v.opts
	if binaryBody(route, r) {
		opts = v.binary
	}
	bare := *route
	bare.Spec = v.spec
	if op, ok := v.ops[route.Operation]; ok {
		bare.Operation = op
	}
	return openapi3filter.ValidateRequest(ctx, &openapi3filter.RequestValidationInput{
		Request:    r,
		PathParams: params,
		Route:      &bare,
		Options:    opts,
	})
}

// binaryBody reports whether the request's body is of a media type the operation takes as
// binary (type: string, format: binary).
func binaryBody(route *routers.Route, r *http.Request) bool {
	if route == nil || route.Operation == nil || route.Operation.RequestBody == nil || route.Operation.RequestBody.Value == nil {
		return false
	}
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil {
		return false
	}
	media := route.Operation.RequestBody.Value.Content.Get(mt)
	if media == nil || media.Schema == nil || media.Schema.Value == nil {
		return false
	}
	sc := media.Schema.Value
	return sc.Type != nil && sc.Type.Is("string") && sc.Format == "binary"
}
