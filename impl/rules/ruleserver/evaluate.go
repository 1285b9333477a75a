package ruleserver

import (
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/sdods/sdods/gen/rulesapi"
	"github.com/sdods/sdods/impl/httpkit"
)

// POST /evaluations is most of a rule server's traffic, and the general pipeline cost as much
// as the engine per request (BenchmarkEvaluationsWrk, docs/benchmarks.md): chi and gorilla
// routing, kin-openapi's validation (which has nothing to check on this operation but the
// security requirement the token check has already met), a context value and a request copy for
// the body, a copy of the result. evaluateRoute answers it directly, with the same checks in the
// same order, each refusal written as the general pipeline writes it:
//
//	body limit on Content-Length (413) ─► bearer token (401) ─► body read under the limit
//	(413/400) ─► media type (415) ─► Server.evaluate
//
// Only the exact path without a query string takes it; everything else (a query string to check,
// an escaped path, other methods) goes through the general pipeline. checkEvaluateRoute refuses
// to start when openapi/rules.yaml gives the operation something to validate, so the two cannot
// drift apart unnoticed.
type evaluateRoute struct {
	s       *Server
	maxBody int64
	token   bool
	want    *[32]byte
}

func (e *evaluateRoute) match(r *http.Request) bool {
	return r.Method == http.MethodPost && r.URL.Path == "/evaluations" && r.URL.RawPath == "" && r.URL.RawQuery == ""
}

// bufs are a request's body and answer buffers, reused across requests.
type bufs struct{ body, out []byte }

var bufPool = sync.Pool{New: func() any { return &bufs{body: make([]byte, 0, 4096), out: make([]byte, 0, 4096)} }}

// jsonType is the Content-Type header value, shared so that setting it allocates nothing
// (net/http only reads header values).
var jsonType = []string{"application/json"}

// maxAutoLength is net/http's buffer before chunking: an answer that fits and is written at once
// gets its Content-Length from net/http, without an allocation here.
const maxAutoLength = 2048

func (e *evaluateRoute) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.ContentLength > e.maxBody {
		e.fail(w, r, newError(rulesapi.ErrorCodePAYLOADTOOLARGE, "send a smaller body",
			"the request body is %d bytes; the limit is %d", r.ContentLength, e.maxBody))
		return
	}
	if e.token && !tokenOK(r, e.want) {
		e.fail(w, r, newError(rulesapi.ErrorCodeUNAUTHORIZED, "send Authorization: Bearer <RULE_SERVER_TOKEN>", "a valid bearer token is required"))
		return
	}
	b := bufPool.Get().(*bufs)
	defer func() {
		if cap(b.body) <= 1<<16 && cap(b.out) <= 1<<16 {
			bufPool.Put(b)
		}
	}()
	body, err := readBody(w, r, b.body[:0], e.maxBody)
	b.body = body[:0]
	if err != nil {
		e.fail(w, r, bodyError(err, e.maxBody))
		return
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" {
			e.fail(w, r, newError(rulesapi.ErrorCodeUNSUPPORTEDMEDIATYPE, "send Content-Type: application/json",
				"the request body must be application/json, not %q", ct))
			return
		}
	}
	out, err := e.s.evaluate(body, b.out[:0])
	if err != nil {
		e.fail(w, r, err)
		return
	}
	b.out = out[:0]
	h := w.Header()
	h["Content-Type"] = jsonType
	if len(out) > maxAutoLength {
		h["Content-Length"] = []string{strconv.Itoa(len(out))}
	}
	if e.s.draining.Load() {
		h["Connection"] = connClose
	}
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(out)
}

var connClose = []string{"close"}

func (e *evaluateRoute) fail(w http.ResponseWriter, r *http.Request, err error) {
	if e.s.draining.Load() {
		w.Header().Set("Connection", "close")
	}
	writeError(w, r, e.s.log, err)
}

// readBody appends the request body to b. A body of declared length is already cut at that
// length by net/http (and that length was checked against the limit); any other is read
// through http.MaxBytesReader, which also makes net/http close the connection after refusing it.
func readBody(w http.ResponseWriter, r *http.Request, b []byte, limit int64) ([]byte, error) {
	if r.Body == nil || r.Body == http.NoBody {
		return b, nil
	}
	var rd io.Reader = r.Body
	if r.ContentLength < 0 {
		rd = http.MaxBytesReader(httpkit.RawWriter(w), r.Body, limit)
	} else if int64(cap(b)) < r.ContentLength {
		b = make([]byte, 0, r.ContentLength+1)
	}
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := rd.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			// Read to its end and closed, the body needs no discarding by net/http after
			// the answer (an io.CopyN per request otherwise).
			_ = r.Body.Close()
			return b, nil
		}
		if err != nil {
			return b, err
		}
	}
}

// checkEvaluateRoute refuses a document in which POST /evaluations has something evaluateRoute
// does not check: parameters, a security requirement other than the bearer token, a body of
// another media type.
func checkEvaluateRoute(doc *openapi3.T) error {
	item := doc.Paths.Value("/evaluations")
	if item == nil || item.Post == nil || !strings.EqualFold(item.Post.OperationID, "evaluate") {
		return fmt.Errorf("openapi/rules.yaml: POST /evaluations (evaluate) is missing")
	}
	op := item.Post
	if len(item.Parameters) > 0 || len(op.Parameters) > 0 {
		return fmt.Errorf("openapi/rules.yaml: POST /evaluations has parameters the direct route does not validate")
	}
	if public(op) || op.RequestBody == nil || op.RequestBody.Value == nil || len(op.RequestBody.Value.Content) != 1 ||
		op.RequestBody.Value.Content.Get("application/json") == nil {
		return fmt.Errorf("openapi/rules.yaml: POST /evaluations must take the bearer token and an application/json body")
	}
	return nil
}
